"""What a parsed SOR file holds (``SorFile``, ``SorEvent``, ``Checksum``), the block map entry,
``SorError`` and the unit constants."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

C_M_PER_S = 299_792_458.0
DEFAULT_MAX_BYTES = 8 * 1024 * 1024
INT32_SENTINEL = -2_000_000  # reflectance below this (in 0.001 dB) is "no value"
PLOT_POINTS = 600


class SorError(ValueError):
    """The file cannot be read; ``reason`` says why in plain words."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass
class SorEvent:
    number: int
    distance_m: float
    code: str
    kind: str  # reflective | saturated | non-reflective | end
    loss_db: float | None
    reflectance_db: float | None
    slope_db_km: float | None = None
    comment: str = ""

    @property
    def reflective(self) -> bool:
        return self.kind in ("reflective", "saturated") or (
            self.kind == "end" and self.reflectance_db is not None
        )

    def as_dict(self) -> dict:
        return {
            "number": self.number,
            "distance_m": round(self.distance_m, 2),
            "code": self.code,
            "kind": self.kind,
            "loss_db": None if self.loss_db is None else round(self.loss_db, 3),
            "reflectance_db": None if self.reflectance_db is None else round(self.reflectance_db, 2),
            "slope_db_km": None if self.slope_db_km is None else round(self.slope_db_km, 3),
            "comment": self.comment,
        }


@dataclass
class Checksum:
    """``ok``: True (a known convention reproduces the stored CRC), False (none does: damaged, or
    a maker we have no convention for), None (not checked: no checksum block, the instrument
    wrote 0000, or a maker whose convention is not reproducible; ``convention`` says which)."""

    stored: int | None
    ok: bool | None
    convention: str = ""


@dataclass
class SorFile:
    version: str  # "1.x" or "2.0"
    make: str = ""
    model: str = ""
    module: str = ""
    serial: str = ""
    software: str = ""
    measured_at: datetime | None = None
    wavelength_nm: float | None = None
    actual_wavelength_nm: float | None = None
    pulse_width_ns: float | None = None
    index_of_refraction: float | None = None
    range_m: float | None = None
    sample_spacing_m: float | None = None  # metres between data points (the distance resolution)
    fibre_length_m: float | None = None
    # Where the fibre under test starts, in the events' frame (0 m): negative when a launch lead
    # sits between the instrument and the fibre (EXFO writes -150 to -1,045 m), so the trace,
    # which begins at the instrument, is drawn from this distance. None: the file says nothing.
    fibre_start_offset_m: float | None = None
    # "summary" (the KeyEvents summary's end marker), "end event", "last event" or "" (no events).
    fibre_length_source: str = ""
    has_event_table: bool = True  # False: a trace-only file (no KeyEvents block)
    total_loss_db: float | None = None
    orl_db: float | None = None
    fibre_id: str = ""
    cable_id: str = ""
    events: list[SorEvent] = field(default_factory=list)
    trace: list[tuple[float, float]] = field(default_factory=list)
    raw_trace: tuple | None = field(default=None, repr=False)  # (points, scale factor, metres per point)
    checksum: Checksum = field(default_factory=lambda: Checksum(None, None))
    warnings: list[str] = field(default_factory=list)
    blocks: list[str] = field(default_factory=list)

    @property
    def instrument(self) -> str:
        return " ".join(x for x in (self.make, self.model, self.module) if x).strip()

    def events_as_dicts(self) -> list[dict]:
        return [e.as_dict() for e in self.events]


@dataclass
class Block:
    """One entry of the block map: the block's name, revision, size and where it starts."""

    name: str
    revision: int
    size: int
    offset: int
