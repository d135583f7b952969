"""API representations of transceiver models, modules and their placements, and the install and
remove actions' bodies."""

from rest_framework import serializers

from inventory.api.strict import StrictModelSerializer
from inventory.models import Cage, Transceiver, TransceiverModel, TransceiverPlacement
from inventory.services.plant.transceivers import serial_problem


class TransceiverModelSerializer(StrictModelSerializer):
    vendor_name = serializers.CharField(source="vendor.name", read_only=True)

    class Meta:
        model = TransceiverModel
        fields = [
            "id",
            "vendor",
            "vendor_name",
            "part_number",
            "form_factor",
            "pmd",
            "speed_gbps",
            "lanes",
            "lane_rate_gbps",
            "logical_ports",
            "connector_type",
            "connector_count",
            "fibre_count",
            "polish",
            "pinned",
            "wavelength_nm",
            "single_mode",
            "reach_m",
        ]


class PlacementSerializer(StrictModelSerializer):
    cage_name = serializers.CharField(source="cage.__str__", read_only=True)

    class Meta:
        model = TransceiverPlacement
        fields = ["cage", "cage_name", "installed_at", "removed_at", "end_reason", "notes"]


class TransceiverSerializer(StrictModelSerializer):
    part_number = serializers.CharField(source="model.part_number", read_only=True)
    vendor = serializers.CharField(source="model.vendor.name", read_only=True)
    location = serializers.SerializerMethodField()

    class Meta:
        model = Transceiver
        fields = [
            "id",
            "model",
            "part_number",
            "vendor",
            "serial",
            "firmware",
            "date_code",
            "status",
            "cage",
            "location",
            "stock_site",
            "acquired_on",
        ]
        read_only_fields = ["status", "cage"]
        # The serial is checked by ``validate`` (any case, the vendor's every model), said at
        # ``serial``; DRF's own check of the (model, serial) rule said it under non_field_errors.
        validators = []

    def validate(self, attrs):
        current = self.instance
        model = attrs.get("model", getattr(current, "model", None))
        serial = attrs.get("serial", getattr(current, "serial", ""))
        if model is not None and ("serial" in attrs or "model" in attrs):
            problem = serial_problem(model=model, serial=serial, exclude_pk=getattr(current, "pk", None))
            if problem:
                raise serializers.ValidationError({"serial": [problem]})
        return attrs

    def get_location(self, obj) -> str | None:
        return str(obj.cage) if obj.cage_id else None


class TransceiverDetailSerializer(TransceiverSerializer):
    placements = PlacementSerializer(many=True, read_only=True)

    class Meta(TransceiverSerializer.Meta):
        fields = [*TransceiverSerializer.Meta.fields, "placements"]


class InstallSerializer(serializers.Serializer):
    cage = serializers.PrimaryKeyRelatedField(queryset=Cage.objects.all())


class RemoveSerializer(serializers.Serializer):
    failed = serializers.BooleanField(default=False)
    notes = serializers.CharField(required=False, allow_blank=True, default="")
