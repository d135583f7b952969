"""Bellcore/Telcordia SR-4731 OTDR files (``.sor``), versions 1 and 2. Pure code: no ORM.

* :func:`sniff` looks at the first bytes and the block map and says, in words a technician
  understands, why a file is not a readable SOR (an HTML page saved under a .sor name, a
  truncated copy, a file over the size cap, something else entirely).
* Version 2 files are parsed by ``otdrs`` (LGPL-3.0, Rust); ``otdrs`` cannot read version 1,
  so a small reader of our own (:func:`_parse_v1`) handles those.
* The CRC-16 is checked under every convention instruments are known to use (which bytes it
  covers, initial value, byte order); no match is a *warning*, never a refusal, because most
  real files match no single convention.
* Parsed values are sanity-checked: a mutated file that still "parses" but says the fibre has
  an index of refraction of 40 is refused with that reason.

Units in the file: times of flight in 100 ps (one way, as the distance formula of SR-4731
uses them: ``d = t * c / n``), losses and reflectances in 0.001 dB, index of refraction
x 100000, wavelengths in 0.1 nm (some instruments write whole nanometres; normalised here),
data spacing in 100 ps per 10,000 points.
"""

from __future__ import annotations

import binascii
import struct
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np
import otdrs

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
    fibre_length_m: float | None = None
    total_loss_db: float | None = None
    orl_db: float | None = None
    fibre_id: str = ""
    cable_id: str = ""
    events: list[SorEvent] = field(default_factory=list)
    trace: list[tuple[float, float]] = field(default_factory=list)
    checksum: Checksum = field(default_factory=lambda: Checksum(None, None))
    warnings: list[str] = field(default_factory=list)
    blocks: list[str] = field(default_factory=list)

    @property
    def instrument(self) -> str:
        return " ".join(x for x in (self.make, self.model, self.module) if x).strip()

    def events_as_dicts(self) -> list[dict]:
        return [e.as_dict() for e in self.events]


@dataclass
class _Block:
    name: str
    revision: int
    size: int
    offset: int


# --- sniffing ---------------------------------------------------------------------------------

_MAGIC = {
    b"%PDF": "a PDF document",
    b"PK\x03\x04": "a zip archive (upload the .sor files inside it, or use the tester project import)",
    b"\x89PNG": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"GIF8": "a GIF image",
    b"\x1f\x8b": "a gzip archive",
}


def _map_entries(data: bytes, start: int, count: int, map_size: int) -> list[tuple[str, int, int]]:
    pos = start
    out = []
    for _ in range(count - 1):
        end = data.find(b"\0", pos, min(pos + 64, map_size))
        if end < 0 or end + 7 > map_size:
            raise SorError("The block map is damaged: a block name does not end where the map says.")
        try:
            name = data[pos:end].decode("ascii")
        except UnicodeDecodeError:
            raise SorError("The block map is damaged: a block name is not text.") from None
        rev, size = struct.unpack_from("<HI", data, end + 1)
        out.append((name, rev, size))
        pos = end + 7
    return out


def sniff(data: bytes, *, max_bytes: int = DEFAULT_MAX_BYTES) -> tuple[str, list[_Block], int]:
    """Say whether ``data`` is a SOR file: ``(version, blocks, map_size)`` or :class:`SorError`."""
    if len(data) == 0:
        raise SorError("The file is empty.")
    if len(data) > max_bytes:
        raise SorError(f"The file is {len(data):,} bytes, over the {max_bytes:,}-byte limit for OTDR files.")
    head = data[:1024].lstrip().lower()
    if head.startswith((b"<!doctype", b"<html", b"<?xml", b"<head", b"<body")) or b"<html" in head[:512]:
        raise SorError(
            "This is a web page (HTML), not an OTDR file; it was probably saved from a browser "
            "under a .sor name. Export the .sor from the instrument or its software."
        )
    for magic, what in _MAGIC.items():
        if data.startswith(magic):
            raise SorError(f"This is {what}, not an OTDR .sor file.")
    if len(data) < 16:
        raise SorError(f"The file is only {len(data)} bytes: too short to be an OTDR file (truncated?).")
    if data.startswith(b"Map\0"):
        version = "2.0"
        rev, map_size, count = struct.unpack_from("<HIH", data, 4)
        first = 12
    else:
        rev, map_size, count = struct.unpack_from("<HIH", data, 0)
        first = 8
        if not (100 <= rev < 200 and data[first : first + 9] == b"GenParams"):
            raise SorError(
                "This is not a Bellcore/Telcordia SR-4731 (.sor) OTDR file: it does not start with "
                "the block map every SOR file begins with."
            )
        version = "1.x"
    if not 2 <= count <= 200 or map_size < first or map_size > len(data):
        if map_size > len(data):
            raise SorError(
                f"The file is truncated: its block map alone needs {map_size:,} bytes but the file has "
                f"{len(data):,}."
            )
        raise SorError("The block map is damaged (impossible block count or size).")
    entries = _map_entries(data, first, count, map_size)
    blocks: list[_Block] = []
    offset = map_size
    for name, brev, size in entries:
        blocks.append(_Block(name, brev, size, offset))
        offset += size
    if offset > len(data):
        raise SorError(
            f"The file is truncated: its blocks add up to {offset:,} bytes but only {len(data):,} "
            "arrived. Copy the file again from the instrument."
        )
    names = {b.name for b in blocks}
    missing = [n for n in ("GenParams", "FxdParams", "KeyEvents") if n not in names]
    if missing:
        raise SorError(f"The file has no {', '.join(missing)} block, so it holds no usable OTDR result.")
    return version, blocks, map_size


# --- checksum ---------------------------------------------------------------------------------


def check_crc(data: bytes, blocks: list[_Block], version: str) -> Checksum:
    """Try every known CRC-16 convention; say which one matched (if any)."""
    ck = next((b for b in blocks if b.name == "Cksum"), None)
    if ck is None:
        return Checksum(None, None, "no checksum block")
    at = ck.offset + (6 if version == "2.0" else 0)
    if at + 2 > len(data):
        return Checksum(None, None, "checksum block is empty")
    raw = data[at : at + 2]
    stored_le = struct.unpack("<H", raw)[0]
    stored_be = struct.unpack(">H", raw)[0]
    map_end = blocks[0].offset if blocks else 0
    # Chained CRCs (crc_hqx takes the running value): every range costs one pass in total.
    for init, iname in ((0xFFFF, "CCITT-FALSE"), (0x0000, "XMODEM")):
        before_block = binascii.crc_hqx(data[: ck.offset], init)
        before_value = binascii.crc_hqx(data[ck.offset : at], before_block)
        zeroed = binascii.crc_hqx(b"\0\0" + data[at + 2 :], before_value)
        after_map = binascii.crc_hqx(data[map_end:at], init)
        candidates = (
            (before_value, "bytes before the checksum value"),
            (zeroed, "whole file with the checksum zeroed"),
            (before_block, "bytes before the checksum block"),
            (after_map, "blocks after the map, before the checksum"),
        )
        for crc, rname in candidates:
            if crc == stored_le:
                return Checksum(stored_le, True, f"CRC-16/{iname} over {rname}, little-endian")
            if crc == stored_be:
                return Checksum(stored_le, True, f"CRC-16/{iname} over {rname}, big-endian")
    return Checksum(stored_le, False, "matches no known CRC-16 convention")


# --- version 1 reader (ours) ------------------------------------------------------------------


class _Reader:
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


def _parse_v1(data: bytes, blocks: list[_Block]) -> SorFile:
    by = {b.name: b for b in blocks}

    def reader(name: str) -> _Reader:
        b = by[name]
        return _Reader(data, b.offset, b.offset + b.size)

    out = SorFile(version="1.x", blocks=[b.name for b in blocks])
    g = reader("GenParams")
    g.fixed(2)
    out.cable_id = g.string()
    out.fibre_id = g.string()
    nominal = g.u16()
    if "SupParams" in by:
        s = reader("SupParams")
        out.make, out.model, serial, out.module, module_sn, out.software = (s.string() for _ in range(6))
        out.serial = serial or module_sn
    f = reader("FxdParams")
    stamp = f.u32()
    f.fixed(2)  # distance units
    wl = f.u16()
    f.i32()  # acquisition offset
    npw = f.u16()
    if not 1 <= npw <= 16:
        raise SorError(f"FxdParams says {npw} pulse widths; the block is damaged.")
    pulses = [f.u16() for _ in range(npw)]
    spacing = [f.u32() for _ in range(npw)]
    [f.u32() for _ in range(npw)]
    index = f.u32() / 100000.0
    out.pulse_width_ns = float(pulses[0])
    out.index_of_refraction = index
    out.measured_at = _stamp(stamp)
    out.wavelength_nm = float(nominal) if nominal else _nm(wl)
    out.actual_wavelength_nm = _nm(wl)
    k = reader("KeyEvents")
    n = k.u16()
    if n > 1000:
        raise SorError(f"KeyEvents says {n} events; the block is damaged.")
    raw_events = []
    for _ in range(n):
        num = k.u16()
        t = k.u32()
        slope = k.i16()
        loss = k.i16()
        refl = k.i32()
        code = k.fixed(8)
        comment = k.string()
        raw_events.append((num, t, slope, loss, refl, code, comment))
    total = k.i32()
    k.u32()
    k.u32()
    orl = k.u16()
    out.total_loss_db = total / 1000.0
    out.orl_db = orl / 1000.0
    out.events = [
        _event(num, t, slope, loss, refl, code, comment, index)
        for (num, t, slope, loss, refl, code, comment) in raw_events
    ]
    _trace(out, data, by.get("DataPts"), 0, spacing[0], index)
    return out


# --- version 2 (otdrs) ------------------------------------------------------------------------


def _parse_v2(data: bytes, blocks: list[_Block]) -> SorFile:
    try:
        sor = otdrs.parse_bytes(data)
    except Exception as exc:  # otdrs raises one generic error for every unreadable file
        gen = next(b for b in blocks if b.name == "GenParams")
        lang = data[gen.offset + 10 : gen.offset + 12]
        if len(lang) == 2 and not all(32 <= c < 127 or c == 0 for c in lang):
            raise SorError(
                f"The GenParams block is damaged or non-standard: its language code is not text "
                f"(bytes {lang.hex(' ')}), so no standard reader accepts the file."
            ) from None
        raise SorError(
            "The file has a valid SOR 2 block map, but its blocks could not be read: it is damaged "
            f"or uses a non-standard layout ({exc})."
        ) from None
    out = SorFile(version="2.0", blocks=[b.name for b in blocks])
    gp = sor.general_parameters
    if gp is None or sor.fixed_parameters is None or sor.key_events is None:
        raise SorError("The file lacks its general, fixed-parameter or key-event block.")
    out.cable_id = (gp.cable_id or "").strip()
    out.fibre_id = (gp.fiber_id or "").strip()
    sp = sor.supplier_parameters
    if sp is not None:
        out.make = (sp.supplier_name or "").strip()
        out.model = (sp.otdr_mainframe_id or "").strip()
        out.module = (sp.optical_module_id or "").strip()
        out.serial = (sp.otdr_mainframe_sn or "").strip() or (sp.optical_module_sn or "").strip()
        out.software = (sp.software_revision or "").strip()
    fp = sor.fixed_parameters
    index = fp.group_index / 100000.0
    out.index_of_refraction = index
    out.measured_at = _stamp(fp.date_time_stamp)
    out.actual_wavelength_nm = _nm(fp.actual_wavelength)
    out.wavelength_nm = float(gp.nominal_wavelength) if gp.nominal_wavelength else out.actual_wavelength_nm
    out.pulse_width_ns = float(fp.pulse_widths_used[0]) if fp.pulse_widths_used else None
    ke = sor.key_events
    events = list(ke.key_events or [])
    last = ke.last_key_event
    for e in events:
        out.events.append(
            _event(
                e.event_number,
                e.event_propogation_time,
                e.attenuation_coefficient_lead_in_fiber,
                e.event_loss,
                e.event_reflectance,
                e.event_code + (e.loss_measurement_technique or ""),
                e.comment,
                index,
            )
        )
    if last is not None:
        out.events.append(
            _event(
                last.event_number,
                last.event_propogation_time,
                last.attenuation_coefficient_lead_in_fiber,
                last.event_loss,
                last.event_reflectance,
                last.event_code + (last.loss_measurement_technique or ""),
                last.comment,
                index,
            )
        )
        out.total_loss_db = last.end_to_end_loss / 1000.0
        out.orl_db = last.optical_return_loss / 1000.0
    dp = next((b for b in blocks if b.name == "DataPts"), None)
    if fp.data_spacing:
        _trace(out, data, dp, len("DataPts") + 1, fp.data_spacing[0], index)
    return out


def _trace(out: SorFile, data: bytes, block: _Block | None, skip: int, spacing: int, index: float) -> None:
    """Read the first scale factor's points straight from the bytes (numpy, no Python lists)."""
    if block is None or not index:
        return
    d = _Reader(data, block.offset + skip, block.offset + block.size)
    npts = d.u32()
    if d.u16() < 1:
        return
    cnt = min(d.u32(), npts)
    sf = d.u16()
    cnt = min(cnt, (d.end - d.pos) // 2)
    if cnt <= 0:
        return
    pts = np.frombuffer(data, dtype="<u2", count=cnt, offset=d.pos)
    step = _spacing_m(spacing, index)
    out.trace = _decimate(pts, sf, step)
    out.range_m = cnt * step


# --- shared helpers ---------------------------------------------------------------------------


def _nm(raw: int) -> float | None:
    """Wavelength field: 0.1 nm per the standard; some instruments write whole nanometres."""
    if not raw:
        return None
    return float(raw) if raw < 2000 else raw / 10.0


def _stamp(value: int) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromtimestamp(value, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _distance(t: int, index: float) -> float:
    return t * 1e-10 * C_M_PER_S / index


def _spacing_m(spacing: int, index: float) -> float:
    """Metres between data points: spacing is 100 ps units per 10,000 points."""
    return spacing * 1e-14 * C_M_PER_S / index


_KINDS = {"0": "non-reflective", "1": "reflective", "2": "saturated"}


def _event(num, t, slope, loss, refl, code, comment, index) -> SorEvent:
    code = (code or "").strip("\0 ")
    kind = "end" if len(code) > 1 and code[1] == "E" else _KINDS.get(code[:1], "unknown")
    reflectance = refl / 1000.0 if refl and refl > INT32_SENTINEL else None
    if (code[:1] == "0" and not refl) or (reflectance is not None and 0 < reflectance <= 60):
        reflectance = None  # non-reflective, or a positive figure some instruments write for "n/a"
    return SorEvent(
        number=int(num),
        distance_m=_distance(int(t) if t < 2**31 else int(t) - 2**32, index),
        code=code,
        kind=kind,
        loss_db=loss / 1000.0,
        reflectance_db=reflectance,
        slope_db_km=slope / 1000.0 if slope else None,
        comment=(comment or "").strip(),
    )


def _decimate(pts: np.ndarray, scale_factor: int, step_m: float) -> list[tuple[float, float]]:
    """Reduce the trace to about ``PLOT_POINTS`` (distance m, relative dB) pairs, keeping peaks."""
    if len(pts) == 0 or step_m <= 0:
        return []
    values = pts.astype(np.float64) * (scale_factor or 1000) / 1_000_000.0
    bucket = max(1, len(values) // PLOT_POINTS)
    usable = len(values) - len(values) % bucket
    if usable == 0:
        return []
    peaks = values[:usable].reshape(-1, bucket).min(axis=1)  # smallest loss = strongest signal
    top = float(values.min())
    xs = np.round(np.arange(len(peaks)) * bucket * step_m, 2).tolist()
    ys = np.round(top - peaks, 3).tolist()
    return list(zip(xs, ys, strict=True))


def _sanity(out: SorFile) -> None:
    problems = []
    if out.index_of_refraction is None or not 1.3 <= out.index_of_refraction <= 1.7:
        problems.append(f"index of refraction {out.index_of_refraction}")
    if out.wavelength_nm is None or not 600 <= out.wavelength_nm <= 1700:
        problems.append(f"wavelength {out.wavelength_nm} nm")
    if out.pulse_width_ns is not None and not 0 < out.pulse_width_ns <= 100_000:
        problems.append(f"pulse width {out.pulse_width_ns} ns")
    if len(out.events) > 1000:
        problems.append(f"{len(out.events)} events")
    for e in out.events:
        if abs(e.distance_m) > 500_000:
            problems.append(f"event {e.number} at {e.distance_m / 1000:.0f} km")
            break
        if e.loss_db is not None and abs(e.loss_db) > 60:
            problems.append(f"event {e.number} loss {e.loss_db} dB")
            break
        if e.reflectance_db is not None and not -120 <= e.reflectance_db <= 0:
            problems.append(f"event {e.number} reflectance {e.reflectance_db} dB")
            break
    if out.total_loss_db is not None and not -5 <= out.total_loss_db <= 100:
        problems.append(f"total loss {out.total_loss_db} dB")
    if out.orl_db is not None and not 0 <= out.orl_db <= 100:
        problems.append(f"optical return loss {out.orl_db} dB")
    if problems:
        raise SorError(
            "The file parses but its values are impossible (" + "; ".join(problems) + "); it is damaged."
        )
    if out.measured_at is None or not 1985 <= out.measured_at.year <= 2100:
        out.warnings.append("The file's measurement date is missing or implausible.")
        out.measured_at = None


def parse_sor(data: bytes, *, max_bytes: int = DEFAULT_MAX_BYTES) -> SorFile:
    """Parse a SOR v1 or v2 file, or raise :class:`SorError` with a clear reason."""
    version, blocks, _ = sniff(data, max_bytes=max_bytes)
    try:
        out = _parse_v2(data, blocks) if version == "2.0" else _parse_v1(data, blocks)
    except SorError:
        raise
    except (struct.error, ValueError, TypeError, IndexError, AttributeError, OverflowError) as exc:
        raise SorError(f"The file is damaged: a block could not be read ({type(exc).__name__}).") from None
    _sanity(out)
    ends = [e for e in out.events if e.kind == "end"]
    if ends:
        out.fibre_length_m = ends[0].distance_m
    elif out.events:
        out.fibre_length_m = out.events[-1].distance_m
    out.checksum = check_crc(data, blocks, version)
    if out.checksum.ok is False:
        out.warnings.append(
            "Checksum mismatch: the stored CRC-16 matches no known convention. Instruments disagree "
            "on which bytes it covers, so the file was kept; compare it with the instrument's copy."
        )
    elif out.checksum.ok is None:
        out.warnings.append(f"Checksum not verified: {out.checksum.convention}.")
    if out.total_loss_db == 0:
        out.total_loss_db = None
        out.warnings.append("The instrument did not fill in the end-to-end loss.")
    if out.orl_db == 0:
        out.orl_db = None
    return out
