"""Version 2 files, read through ``otdrs`` (LGPL-3.0, Rust)."""

from __future__ import annotations

import otdrs

from inventory.core.optics.sor.data import Block, SorError, SorEvent, SorFile
from inventory.core.optics.sor.fields import decode_event, timestamp, wavelength_nm
from inventory.core.optics.sor.trace import read_trace


def _read(data: bytes, blocks: list[Block]):
    """The file as ``otdrs`` reads it, or a :class:`SorError` saying why it cannot."""
    try:
        return otdrs.parse_bytes(data)
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


def _key_event(e, index: float) -> SorEvent:
    """A key event (or the last key event, which has the same fields) as a :class:`SorEvent`."""
    return decode_event(
        e.event_number,
        e.event_propogation_time,
        e.attenuation_coefficient_lead_in_fiber,
        e.event_loss,
        e.event_reflectance,
        e.event_code + (e.loss_measurement_technique or ""),
        e.comment,
        index,
    )


def parse_v2(data: bytes, blocks: list[Block]) -> SorFile:
    sor = _read(data, blocks)
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
    out.measured_at = timestamp(fp.date_time_stamp)
    out.actual_wavelength_nm = wavelength_nm(fp.actual_wavelength)
    out.wavelength_nm = float(gp.nominal_wavelength) if gp.nominal_wavelength else out.actual_wavelength_nm
    out.pulse_width_ns = float(fp.pulse_widths_used[0]) if fp.pulse_widths_used else None
    ke = sor.key_events
    events = list(ke.key_events or [])
    last = ke.last_key_event
    for e in events:
        out.events.append(_key_event(e, index))
    if last is not None:
        out.events.append(_key_event(last, index))
        out.total_loss_db = last.end_to_end_loss / 1000.0
        out.orl_db = last.optical_return_loss / 1000.0
    dp = next((b for b in blocks if b.name == "DataPts"), None)
    if fp.data_spacing:
        read_trace(out, data, dp, len("DataPts") + 1, fp.data_spacing[0], index)
    return out
