from .accounts import ApiToken
from .alerts import Alert, AlertNotification, MaintenanceWindow, PortBaseline
from .base import UntrackedWriteError, sanctioned_bulk_write
from .cables import Cable, CableEnd, Link, LinkSegment
from .devices import Cage, Device, Port, PortAlias, PortMapping, Vendor
from .external import ExternalRef, SyncRun
from .labels import LabelBatch
from .fieldwork import FieldNote
from .locations import Rack, Room, Row, Site, Team
from .telemetry import ForecastSnapshot, TelemetrySample
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
    TelemetryIngestBatch,
    TelemetryLaneSample,
)
from .testing import CableTest, FibreResult, Inspection, InstrumentMapping, OtdrTrace
from .transceivers import RmaCase, Transceiver, TransceiverModel, TransceiverPlacement

__all__ = [
    "TelemetryIngestBatch",
    "TelemetryLaneSample",
    "TelemetryHistogram",
    "PortTelemetryState",
    "PortRollup",
    "PortObservation",
    "FecBinLayout",
    "Alert",
    "AlertNotification",
    "ApiToken",
    "Cable",
    "CableEnd",
    "CableTest",
    "Cage",
    "Device",
    "ExternalRef",
    "SyncRun",
    "FibreResult",
    "FieldNote",
    "ForecastSnapshot",
    "Inspection",
    "InstrumentMapping",
    "LabelBatch",
    "Link",
    "LinkSegment",
    "MaintenanceWindow",
    "OtdrTrace",
    "Port",
    "PortBaseline",
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
