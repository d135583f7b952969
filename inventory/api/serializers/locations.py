"""API representations of sites, rooms, rows and racks."""

from rest_framework import serializers

from inventory.api.strict import StrictModelSerializer
from inventory.core.elevation import rack_units_problem
from inventory.models import Rack, Room, Row, Site


class SiteSerializer(StrictModelSerializer):
    class Meta:
        model = Site
        fields = ["id", "name", "slug", "description", "team", "retest_interval_days"]


class RoomSerializer(StrictModelSerializer):
    class Meta:
        model = Room
        fields = ["id", "site", "name"]


class RowSerializer(StrictModelSerializer):
    class Meta:
        model = Row
        fields = ["id", "room", "name", "team"]


class RackSerializer(StrictModelSerializer):
    site = serializers.CharField(source="row.room.site.slug", read_only=True)

    class Meta:
        model = Rack
        fields = ["id", "name", "row", "site", "u_height", "position", "team"]
        extra_kwargs = {"u_height": {"min_value": 1, "max_value": 60}}  # rack_u_height_range

    def validate(self, attrs):
        """A rack stays tall enough for the devices in it (``core.elevation.rack_units_problem``)."""
        if self.instance is not None and "u_height" in attrs:
            placed = self.instance.devices.filter(retired_at__isnull=True, position_u__isnull=False)
            for name, position, height in placed.values_list("name", "position_u", "height_u"):
                problem = rack_units_problem(
                    rack=self.instance.name, u_height=attrs["u_height"], position_u=position, height_u=height
                )
                if problem:
                    raise serializers.ValidationError({"u_height": [f"{name}: {problem}"]})
        return attrs
