"""REST API: sites, rooms, rows and racks."""

from inventory.api import serializers as s
from inventory.api.views.base import MovesCablesMixin, NoDeleteModelViewSet
from inventory.models import Rack, Room, Row, Site


class SiteViewSet(NoDeleteModelViewSet):
    queryset = Site.objects.all()
    serializer_class = s.SiteSerializer
    filterset_fields = ["slug", "name"]


class RoomViewSet(MovesCablesMixin, NoDeleteModelViewSet):
    queryset = Room.objects.all()
    serializer_class = s.RoomSerializer
    filterset_fields = ["site"]


class RowViewSet(MovesCablesMixin, NoDeleteModelViewSet):
    queryset = Row.objects.all()
    serializer_class = s.RowSerializer
    filterset_fields = ["room"]


class RackViewSet(MovesCablesMixin, NoDeleteModelViewSet):
    queryset = Rack.objects.select_related("row__room__site")
    serializer_class = s.RackSerializer
    filterset_fields = ["row", "name"]
    lookup_field = "name"
    # Any name stored, "/" (sent as %2F) and an older line break included (core.names).
    lookup_value_regex = r"[\s\S]+"
