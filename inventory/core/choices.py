"""Every enumeration of the domain, in one place, with the facts that belong to its values."""

from typing import NamedTuple

from django.db import models


class DeviceRole(models.TextChoices):
    GPU_NODE = "gpu_node", "GPU node"
    LEAF = "leaf", "Leaf switch"
    SPINE = "spine", "Spine switch"
    STORAGE = "storage", "Storage"
    MGMT_SWITCH = "mgmt_switch", "Management switch"
    PATCH_PANEL = "patch_panel", "Patch panel"
    CASSETTE = "cassette", "Cassette"
    OTHER = "other", "Other"


class PortKind(models.TextChoices):
    INTERFACE = "interface", "Logical interface"
    FRONT = "front", "Panel front port"
    REAR = "rear", "Panel rear port"


class Fabric(models.TextChoices):
    ETHERNET = "ethernet", "Ethernet"
    INFINIBAND = "infiniband", "InfiniBand"
    OOB = "oob", "Out-of-band copper"


class FormFactor(models.TextChoices):
    OSFP = "OSFP", "OSFP"
    QSFP_DD = "QSFP-DD", "QSFP-DD"
    QSFP112 = "QSFP112", "QSFP112"
    QSFP56 = "QSFP56", "QSFP56"
    QSFP28 = "QSFP28", "QSFP28"
    SFP28 = "SFP28", "SFP28"
    RJ45 = "RJ45", "RJ45"


class ConnectorType(models.TextChoices):
    LC = "LC", "LC duplex"
    MPO = "MPO", "MPO/MTP"
    RJ45 = "RJ45", "RJ45"
    NONE = "none", "Sealed (DAC/ACC/AOC plug)"


class Polish(models.TextChoices):
    UPC = "UPC", "UPC"
    APC = "APC", "APC"
    NONE = "", "n/a"


class Polarity(models.TextChoices):
    """TIA-568.3 polarity of a cable: how fibre i at end A maps to end B."""

    A = "A", "Method A (straight, 1-1)"
    B = "B", "Method B (reversed, 1-N)"
    C = "C", "Method C (pair-flipped)"
    AB = "AB", "Duplex A-to-B (crossed)"
    AA = "AA", "Duplex A-to-A (straight)"
    NONE = "", "n/a"


class CableKind(models.TextChoices):
    SMF_OS2 = "SMF_OS2", "Single-mode OS2"
    MMF_OM3 = "MMF_OM3", "Multi-mode OM3"
    MMF_OM4 = "MMF_OM4", "Multi-mode OM4"
    MMF_OM5 = "MMF_OM5", "Multi-mode OM5"
    DAC = "DAC", "Direct-attach copper (passive)"
    ACC = "ACC", "Active copper"
    AOC = "AOC", "Active optical cable"
    CAT6A = "CAT6A", "Cat6A copper"

    @classmethod
    def fibre(cls) -> set[str]:
        return {cls.SMF_OS2, cls.MMF_OM3, cls.MMF_OM4, cls.MMF_OM5}

    @classmethod
    def sealed(cls) -> set[str]:
        return {cls.DAC, cls.ACC, cls.AOC}


class CableRole(models.TextChoices):
    JUMPER = "jumper", "Patch cord / jumper"
    TRUNK = "trunk", "Trunk"
    DIRECT = "direct", "Direct (point to point)"
    BREAKOUT = "breakout", "Breakout"


class CableStatus(models.TextChoices):
    PLANNED = "planned", "Planned"
    INSTALLED = "installed", "Installed"
    TESTED = "tested", "Tested"
    IN_PRODUCTION = "in_production", "In production"
    DEGRADED = "degraded", "Degraded"
    FAULTY = "faulty", "Faulty"
    RETIRED = "retired", "Retired"


# The plant as it stands: every status but retired (a retired cable is kept as history). The
# home page counts these as its "cables" and links to the cable list filtered to them.
CURRENT_CABLE_STATUSES = [s for s in CableStatus if s != CableStatus.RETIRED]

# A person may put a cable in these states (the API's ``POST /api/cables/<label>/status/``, the
# desk's bulk status, creation); ``tested`` and ``in_production`` come only from the test gate.
MANUAL_CABLE_STATUSES = [
    CableStatus.PLANNED,
    CableStatus.INSTALLED,
    CableStatus.DEGRADED,
    CableStatus.FAULTY,
    CableStatus.RETIRED,
]


class TransceiverStatus(models.TextChoices):
    SPARE = "spare", "Spare (in stock)"
    INSTALLED = "installed", "Installed"
    FAILED = "failed", "Failed"
    RMA = "rma", "Out for RMA"
    RETIRED = "retired", "Retired"


class PlacementEnd(models.TextChoices):
    """Why a placement ended."""

    REMOVED = "removed", "Removed to spare"
    SWAPPED = "swapped", "Swapped out"
    FAILED = "failed", "Failed"


class RmaOutcome(models.TextChoices):
    PENDING = "pending", "Pending"
    CONFIRMED = "confirmed", "Failure confirmed"
    NO_TROUBLE_FOUND = "ntf", "No trouble found"


class SparesRate(models.TextChoices):
    """Which failure rate the spares forecast follows (the planner picks; see README "Failure forecast")."""

    LEARNED = "learned", "Learned rate of each lot"
    BUDGET = "budget", "Budget AFR"


class FecType(models.TextChoices):
    NONE = "none", "None"
    KR4 = "RS528", "RS(528,514) KR4"
    KP4 = "RS544", "RS(544,514) KP4"


class FecLimit(NamedTuple):
    """What one FEC type tolerates."""

    pre_fec_ber: float  # above this the FEC no longer reaches its post-FEC target
    correctable_symbols: int  # symbol errors per codeword it corrects (T)


# KP4 RS(544,514): 2.4e-4, T=15 (IEEE 802.3 cl. 91/119). KR4 RS(528,514): T=7; 5e-5 is the
# pre-FEC BER figure commonly used for 25G-lane links.
FEC_LIMITS: dict[str, FecLimit] = {
    FecType.KP4: FecLimit(2.4e-4, 15),
    FecType.KR4: FecLimit(5e-5, 7),
    FecType.NONE: FecLimit(1e-12, 0),
}


class TestKind(models.TextChoices):
    OTDR = "otdr", "OTDR"
    OLTS = "olts", "Power meter (OLTS)"
    INSPECTION = "inspection", "End-face inspection"
    QUALIFICATION = "qualification", "Link qualification"


class Verdict(models.TextChoices):
    PASS = "pass", "Pass"
    MARGINAL = "marginal", "Marginal"
    FAIL = "fail", "Fail"
    UNKNOWN = "unknown", "Not evaluated"


# The verdicts that pass: a marginal result passes (one dirty end from failing, but passing).
PASSING = (Verdict.PASS, Verdict.MARGINAL)


class Direction(models.TextChoices):
    A_TO_B = "AB", "A to B"
    B_TO_A = "BA", "B to A"
    BIDIRECTIONAL = "bidi", "Bidirectional average"


class ReferenceMethod(models.TextChoices):
    ONE_JUMPER = "1", "1 jumper (TIA-526-14 B / IEC method 1)"
    TWO_JUMPER = "2", "2 jumpers (TIA-526-14 A / IEC method 2)"
    THREE_JUMPER = "3", "3 jumpers (TIA-526-14 C / IEC method 3)"


class Severity(models.TextChoices):
    INFO = "info", "Info"
    WARNING = "warning", "Warning"
    NOTIFY = "notify", "Notify"
    CRITICAL = "critical", "Critical"
    PAGE = "page", "Page"


# Severity rank, lowest first, in the order declared above: info 0 ... critical 3, page 4.
SEVERITY_ORDER: dict[str, int] = {s.value: rank for rank, s in enumerate(Severity)}


class AlertState(models.TextChoices):
    OPEN = "open", "Open"
    RESOLVED = "resolved", "Resolved"


class AlertRule(models.TextChoices):
    LINK_FLAP = "link_flap", "Link flap"
    LINK_DEGRADED = "link_degraded", "Link degraded (speed/width)"
    FEC_DEGRADATION = "fec_degradation", "FEC degradation"
    FEC_TAIL = "fec_tail", "FEC histogram tail"
    FEC_UNCORRECTABLE = "fec_uncorrectable", "Uncorrectable FEC codewords"
    RX_POWER_DRIFT = "rx_power_drift", "Rx power drift"
    PFC_STORM = "pfc_storm", "PFC storm"
    MISWIRE = "miswire", "Miswire"
    UNRECORDED_SWAP = "unrecorded_swap", "Unrecorded module swap"
    LOSS_INCREASE = "loss_increase", "Loss increase"
    TAIL_LATENCY_SPIKE = "tail_latency_spike", "Tail latency spike (collectives)"


class RepairAction(models.TextChoices):
    """What a technician did about an alert (``Repair``); the ranked recommendations rank these."""

    CLEAN = "clean", "Clean the connectors"
    RESEAT = "reseat", "Re-seat"
    SWAP_MODULE = "swap_module", "Swap the module"
    REPLACE_CABLE = "replace_cable", "Replace the cable"
    OTHER = "other", "Other"


class RepairEnd(models.TextChoices):
    """Where: the cable's end as its label and the alert page name it."""

    A = "A", "End A"
    B = "B", "End B"
    BOTH = "both", "Both ends"
    NA = "na", "No particular end"


class RepairSource(models.TextChoices):
    """Where a repair was recorded: on the alert (its page or API), or by the replace-cable or
    swap-module form of the cable, which records it on the open alerts it moves."""

    ALERT = "alert", "On the alert"
    REPLACE = "replace", "By the cable replacement"
    SWAP = "swap", "By the module swap"


class RepairOutcome(models.TextChoices):
    """Judged by the telemetry after the repair (``core.repairs.repair_outcome``)."""

    PENDING = "pending", "Pending"
    FIXED = "fixed", "Fixed"
    CAME_BACK = "came_back", "Came back"


class TokenKind(models.TextChoices):
    FULL = "full", "Full (the user's own permissions)"
    READ_ONLY = "read_only", "Read-only"
    INGEST = "ingest", "Telemetry ingest only"


class LabelBatchStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Rendering"
    DONE = "done", "Ready"
    FAILED = "failed", "Failed"


class LabelKind(models.TextChoices):
    CABLE = "cable", "Cable labels"
    RACK = "rack", "Rack labels"


class FieldNoteKind(models.TextChoices):
    """A journal entry: what someone saw or did at a cable, module, device or rack."""

    FAULT = "fault", "Fault reported"
    RESEATED = "reseated", "Re-seated"
    CLEANED = "cleaned", "Cleaned"
    RESEATED_CLEANED = "reseated_cleaned", "Re-seated and cleaned"
    NOTE = "note", "Note"
    SERVICE = "service", "Service action"


# --- Retests and reminders ------------------------------------------------------------------


class RetestTriggerReason(models.TextChoices):
    FAILED_TEST = "failed_test", "Failed test"
    FAULT = "fault", "Fault report"
    RESEAT = "reseat", "Re-seat"
    LOSS_INCREASE = "loss_increase", "Loss increase finding"


class ReminderKind(models.TextChoices):
    DUE_SOON = "due_soon", "Due soon"
    OVERDUE = "overdue", "Overdue"
    ESCALATION = "escalation", "Escalation (overdue)"


class DigestStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    SENDING = "sending", "Sending"
    RETRY = "retry", "Waiting to retry"
    SENT = "sent", "Sent"
    FAILED = "failed", "Failed (permanent)"
    CLEARED = "cleared", "Cleared before sending"


class ReminderMode(models.TextChoices):
    IMMEDIATE = "immediate", "Immediately, after each sweep"
    DAILY = "daily", "Daily digest"
    WEEKLY = "weekly", "Weekly digest"


class Weekday(models.IntegerChoices):
    MONDAY = 0, "Monday"
    TUESDAY = 1, "Tuesday"
    WEDNESDAY = 2, "Wednesday"
    THURSDAY = 3, "Thursday"
    FRIDAY = 4, "Friday"
    SATURDAY = 5, "Saturday"
    SUNDAY = 6, "Sunday"
