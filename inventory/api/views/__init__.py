"""REST API: thin viewsets over the selectors and services, one module per kind of thing."""

from inventory.api.views.base import NoDeleteModelViewSet
from inventory.api.views.cables import CableViewSet, LinkViewSet
from inventory.api.views.devices import CageViewSet, DeviceViewSet, PortViewSet, VendorViewSet
from inventory.api.views.locations import RackViewSet, RoomViewSet, RowViewSet, SiteViewSet
from inventory.api.views.transceivers import TransceiverModelViewSet, TransceiverViewSet

__all__ = [
    "CableViewSet",
    "CageViewSet",
    "DeviceViewSet",
    "LinkViewSet",
    "NoDeleteModelViewSet",
    "PortViewSet",
    "RackViewSet",
    "RoomViewSet",
    "RowViewSet",
    "SiteViewSet",
    "TransceiverModelViewSet",
    "TransceiverViewSet",
    "VendorViewSet",
]
