from .accounts import ApiToken
from .alerts import Alert, AlertNotification, MaintenanceWindow, PortBaseline
from .base import UntrackedWriteError, sanctioned_bulk_write
from .cables import Cable, CableEnd, Link, LinkSegment
from .devices import Cage, Device, Port, PortAlias, PortMapping, Vendor
from .external import ExternalRef, SyncRun
from .fieldwork import FieldNote
from .labels import LabelBatch
from .locations import Rack, Room, Row, Site, Team
from .reliability import IdempotencyRecord, OutboxMessage
from .retests import (
    ReminderDigest,
    RetestPolicy,
    RetestReminder,
    RetestSweepRun,
    RetestTrigger,
    UserProfile,
)
from .telemetry import ForecastSnapshot, TelemetrySample
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
    "IdempotencyRecord",
    "Inspection",
    "InstrumentMapping",
    "LabelBatch",
    "Link",
    "LinkSegment",
    "MaintenanceWindow",
    "OtdrTrace",
    "OutboxMessage",
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
