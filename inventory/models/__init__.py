from inventory.models.accounts import ApiToken
from inventory.models.alerts import (
    Alert,
    AlertNotification,
    LinkDrain,
    MaintenanceWindow,
    PortBaseline,
    Repair,
)
from inventory.models.base import UntrackedWriteError, sanctioned_bulk_write
from inventory.models.cables import Cable, CableEnd, Link, LinkSegment
from inventory.models.collectives import (
    CollectiveJob,
    CollectiveRecord,
    Communicator,
    CommunicatorRank,
    GpuNicMap,
    JobRank,
)
from inventory.models.devices import Cage, Device, Port, PortAlias, PortMapping, Vendor
from inventory.models.external import ExternalRef, SyncRun
from inventory.models.fieldwork import FieldNote
from inventory.models.labels import LabelBatch
from inventory.models.locations import Rack, Room, Row, Site, Team
from inventory.models.reliability import IdempotencyRecord, OutboxMessage
from inventory.models.retests import (
    ReminderDigest,
    RetestPolicy,
    RetestReminder,
    RetestSweepRun,
    RetestTrigger,
    UserProfile,
)
from inventory.models.telemetry import ForecastSnapshot, TelemetrySample
from inventory.models.telemetry_storage import (
    FecBinLayout,
    PortObservation,
    PortRollup,
    PortTelemetryState,
    TelemetryHistogram,
    TelemetryIngestBatch,
    TelemetryLaneSample,
)
from inventory.models.testing import (
    CableTest,
    CableTestLatest,
    FibreResult,
    Inspection,
    InstrumentMapping,
    OtdrTrace,
)
from inventory.models.transceivers import RmaCase, Transceiver, TransceiverModel, TransceiverPlacement

__all__ = [
    "CollectiveJob",
    "CollectiveRecord",
    "Communicator",
    "CommunicatorRank",
    "GpuNicMap",
    "JobRank",
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
    "CableTestLatest",
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
    "LinkDrain",
    "LinkSegment",
    "MaintenanceWindow",
    "OtdrTrace",
    "OutboxMessage",
    "Port",
    "PortBaseline",
    "Repair",
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
