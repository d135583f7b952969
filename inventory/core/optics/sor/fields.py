"""Reading SOR fields: the bounds-checked byte reader, units (wavelength, time stamp, distance), key events."""

from __future__ import annotations

import struct
from datetime import UTC, datetime

from inventory.core.optics.sor.data import C_M_PER_S, INT32_SENTINEL, SorError, SorEvent, SorFile


class ByteReader:
    """Little-endian fields of one block, refusing to read past its end (a damaged file)."""

    def __init__(self, data: bytes, start: int, end: int):
        self.data, self.pos, self.end = data, start, end

    def _take(self, fmt: str):
        size = struct.calcsize(fmt)
        if self.pos + size > self.end:
            raise SorError("A block ends before its fields do (truncated or damaged file).")
        v = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return v[0] if len(v) == 1 else v

    def u16(self) -> int:
        return self._take("<H")

    def i16(self) -> int:
        return self._take("<h")

    def u32(self) -> int:
        return self._take("<I")

    def i32(self) -> int:
        return self._take("<i")

    def fixed(self, n: int) -> str:
        if self.pos + n > self.end:
            raise SorError("A block ends before its fields do (truncated or damaged file).")
        s = self.data[self.pos : self.pos + n]
        self.pos += n
        return s.decode("latin-1")

    def string(self) -> str:
        end = self.data.find(b"\0", self.pos, self.end)
        if end < 0:
            raise SorError("A text field has no end inside its block (damaged file).")
        s = self.data[self.pos : end].decode("latin-1").strip()
        self.pos = end + 1
        return s


def wavelength_nm(raw: int) -> float | None:
    """Wavelength field: 0.1 nm per the standard; some instruments write whole nanometres."""
    if not raw:
        return None
    return float(raw) if raw < 2000 else raw / 10.0


def timestamp(value: int) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromtimestamp(value, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def distance_m(t: int, index: float) -> float:
    return t * 1e-10 * C_M_PER_S / index


def spacing_m(spacing: int, index: float) -> float:
    """Metres between data points: spacing is 100 ps units per 10,000 points."""
    return spacing * 1e-14 * C_M_PER_S / index


_KINDS = {"0": "non-reflective", "1": "reflective", "2": "saturated"}


def decode_event(num, t, slope, loss, refl, code, comment, index) -> SorEvent:
    code = (code or "").strip("\0 ")
    kind = "end" if len(code) > 1 and code[1] == "E" else _KINDS.get(code[:1], "unknown")
    reflectance = refl / 1000.0 if refl and refl > INT32_SENTINEL else None
    if (code[:1] == "0" and not refl) or (reflectance is not None and 0 < reflectance <= 60):
        reflectance = None  # non-reflective, or a positive figure some instruments write for "n/a"
    return SorEvent(
        number=int(num),
        distance_m=distance_m(int(t) if t < 2**31 else int(t) - 2**32, index),
        code=code,
        kind=kind,
        loss_db=loss / 1000.0,
        reflectance_db=reflectance,
        slope_db_km=slope / 1000.0 if slope else None,
        comment=(comment or "").strip(),
    )


def summary_markers(out: SorFile, start: int, end: int, index: float) -> None:
    """The KeyEvents summary's end-to-end loss markers (start, end; times of flight in the events'
    frame). A negative start is the fibre-start offset: the instrument sits that far before the
    fibre under test, whose start is 0 m (EXFO's launch-lead setting; otdrparser reads the same
    field as "fiber_start_position"). A positive end is where the file itself says the fibre
    ends: its length, which wins over the end event (Noyes puts them 0.14 m apart)."""
    if start < 0:
        out.fibre_start_offset_m = distance_m(start, index)
    if end > 0:
        out.fibre_length_m = distance_m(end, index) - max(0.0, distance_m(start, index))
        out.fibre_length_source = "summary"
