from .accounts import ApiToken
from .base import UntrackedWriteError, sanctioned_bulk_write
from .cables import Cable, CableEnd, Link, LinkSegment
from .devices import Cage, Device, Port, PortAlias, PortMapping, Vendor
from .external import ExternalRef, SyncRun
from .labels import LabelBatch
from .locations import Rack, Room, Row, Site, Team
from .telemetry import Alert, ForecastSnapshot, MaintenanceWindow, TelemetrySample
from .telemetry_storage import (
    FecBinLayout,
    PortObservation,
    PortRollup,
    PortTelemetryState,
    TelemetryHistogram,
    TelemetryLaneSample,
)
from .testing import CableTest, FibreResult, Inspection, OtdrTrace
from .transceivers import RmaCase, Transceiver, TransceiverModel, TransceiverPlacement

__all__ = [
    "TelemetryLaneSample",
    "TelemetryHistogram",
    "PortTelemetryState",
    "PortRollup",
    "PortObservation",
    "FecBinLayout",
    "Alert",
    "ApiToken",
    "Cable",
    "CableEnd",
    "CableTest",
    "Cage",
    "Device",
    "ExternalRef",
    "SyncRun",
    "FibreResult",
    "ForecastSnapshot",
    "Inspection",
    "LabelBatch",
    "Link",
    "LinkSegment",
    "MaintenanceWindow",
    "OtdrTrace",
    "Port",
    "PortAlias",
    "PortMapping",
    "Rack",
    "RmaCase",
    "Room",
    "Row",
    "Site",
    "Team",
    "TelemetrySample",
    "Transceiver",
    "TransceiverModel",
    "TransceiverPlacement",
    "UntrackedWriteError",
    "Vendor",
    "sanctioned_bulk_write",
]
