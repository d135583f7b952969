"""API representations of vendors, devices, cages and logical ports (with their aliases)."""

from rest_framework import serializers

from inventory.api.strict import StrictModelSerializer
from inventory.core.elevation import rack_units_problem
from inventory.models import Cage, Device, Port, PortAlias, Vendor


class VendorSerializer(StrictModelSerializer):
    class Meta:
        model = Vendor
        fields = ["id", "name", "slug"]


class DeviceSerializer(StrictModelSerializer):
    rack_name = serializers.CharField(source="rack.name", read_only=True, default=None, allow_null=True)

    class Meta:
        model = Device
        fields = [
            "id",
            "name",
            "role",
            "rack",
            "rack_name",
            "position_u",
            "height_u",
            "vendor",
            "model",
            "serial",
            "asset_tag",
            "retired_at",
        ]
        read_only_fields = ["retired_at"]
        extra_kwargs = {"height_u": {"min_value": 1}}  # device_height_positive

    def validate(self, attrs):
        """The device fits its rack (``core.elevation.rack_units_problem``), said at ``position_u``."""
        current = self.instance
        rack = attrs["rack"] if "rack" in attrs else getattr(current, "rack", None)
        position = attrs["position_u"] if "position_u" in attrs else getattr(current, "position_u", None)
        height = attrs.get("height_u", getattr(current, "height_u", 1))
        if rack is not None:
            problem = rack_units_problem(
                rack=rack.name, u_height=rack.u_height, position_u=position, height_u=height
            )
            if problem:
                raise serializers.ValidationError({"position_u": [problem]})
        return attrs


class CageSerializer(StrictModelSerializer):
    class Meta:
        model = Cage
        fields = ["id", "device", "name", "index", "form_factor", "lanes"]


class PortAliasSerializer(StrictModelSerializer):
    class Meta:
        model = PortAlias
        fields = ["name", "source", "valid_from", "valid_to"]


class PortSerializer(StrictModelSerializer):
    device_name = serializers.CharField(source="device.name", read_only=True)
    aliases = PortAliasSerializer(many=True, read_only=True)

    class Meta:
        model = Port
        fields = [
            "id",
            "device",
            "device_name",
            "name",
            "kind",
            "fabric",
            "cage",
            "connector",
            "lane_start",
            "lane_count",
            "speed_gbps",
            "positions",
            "connector_type",
            "fibre_count",
            "pinned",
            "polish",
            "aliases",
            "retired_at",
        ]
        read_only_fields = ["retired_at"]
        extra_kwargs = {"lane_count": {"min_value": 1}}  # port_lane_count_positive

    def validate(self, attrs):
        """A port sits in a cage of its own device, on lanes the cage has. Before, a port of one
        device in another's cage was taken: its page and trace showed the other device's module
        and cable; a port on lanes 4 to 30003 of an 8-lane cage left its link without a lane rate,
        so no BER rule ever judged it."""
        current = self.instance

        def value(name, default=None):
            return attrs[name] if name in attrs else getattr(current, name, default)

        cage, device = value("cage"), value("device")
        if cage is None:
            return attrs
        if device is not None and cage.device_id != device.pk:
            raise serializers.ValidationError(
                {"cage": [f"Cage {cage.name} is on {cage.device.name}, not on {device.name}."]}
            )
        start, count = value("lane_start", 0), value("lane_count", 1)
        if start + count > cage.lanes:
            key = "lane_start" if start >= cage.lanes else "lane_count"
            raise serializers.ValidationError(
                {
                    key: [
                        f"Cage {cage.name} has lanes 0 to {cage.lanes - 1}: lanes {start} to "
                        f"{start + count - 1} are not all in it."
                    ]
                }
            )
        return attrs


class PortAliasWriteSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=128)
    source = serializers.CharField(max_length=32, required=False, allow_blank=True, default="")
