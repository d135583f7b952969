from .accounts import ApiToken
from .base import UntrackedWriteError, sanctioned_bulk_write
from .cables import Cable, CableEnd, Link, LinkSegment
from .devices import Cage, Device, Port, PortAlias, PortMapping, Vendor
from .external import ExternalRef
from .locations import Rack, Room, Row, Site, Team
from .retests import (
    ReminderDigest,
    RetestPolicy,
    RetestReminder,
    RetestSweepRun,
    RetestTrigger,
    UserProfile,
)
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
    "FibreResult",
    "ForecastSnapshot",
    "Inspection",
    "Link",
    "LinkSegment",
    "MaintenanceWindow",
    "OtdrTrace",
    "Port",
    "PortAlias",
    "PortMapping",
    "Rack",
    "ReminderDigest",
    "RetestPolicy",
    "RetestReminder",
    "RetestSweepRun",
    "RetestTrigger",
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
    "UserProfile",
    "Vendor",
    "sanctioned_bulk_write",
]
