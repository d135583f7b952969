"""Version 1 files, read by our own small reader (``otdrs`` cannot read them)."""

from __future__ import annotations

from inventory.core.optics.sor.data import Block, SorError, SorFile
from inventory.core.optics.sor.fields import (
    ByteReader,
    decode_event,
    summary_markers,
    timestamp,
    wavelength_nm,
)
from inventory.core.optics.sor.trace import read_trace


def parse_v1(data: bytes, blocks: list[Block]) -> SorFile:
    by = {b.name: b for b in blocks}

    def reader(name: str) -> ByteReader:
        b = by[name]
        return ByteReader(data, b.offset, b.offset + b.size)

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
    out.measured_at = timestamp(stamp)
    out.wavelength_nm = float(nominal) if nominal else wavelength_nm(wl)
    out.actual_wavelength_nm = wavelength_nm(wl)
    if "KeyEvents" not in by:
        out.has_event_table = False
    else:
        _key_events(out, reader("KeyEvents"), index)
    read_trace(out, data, by.get("DataPts"), 0, spacing[0], index)
    return out


def _key_events(out: SorFile, k: ByteReader, index: float) -> None:
    """The events, then the summary: total loss, the loss markers (start, end), ORL and its markers."""
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
    start = k.i32()
    end = k.u32()
    orl = k.u16()
    out.total_loss_db = total / 1000.0
    out.orl_db = orl / 1000.0
    out.events = [
        decode_event(num, t, slope, loss, refl, code, comment, index)
        for (num, t, slope, loss, refl, code, comment) in raw_events
    ]
    summary_markers(out, start, end, index)
