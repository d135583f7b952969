"""API representations of sites, rooms, rows and racks."""

from rest_framework import serializers

from inventory.api.strict import StrictModelSerializer
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
