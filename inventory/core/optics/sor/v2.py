"""Version 2 files, read through ``otdrs`` (LGPL-3.0, Rust)."""

from __future__ import annotations

import otdrs

from inventory.core.optics.sor.data import Block, SorError, SorEvent, SorFile
from inventory.core.optics.sor.fields import decode_event, summary_markers, timestamp, wavelength_nm
from inventory.core.optics.sor.trace import read_trace


def _read(data: bytes, blocks: list[Block], warnings: list[str]):
    """The file as ``otdrs`` reads it, or a :class:`SorError` saying why it cannot.

    A GenParams language code that is not text (Anritsu CMA4500 writes ``00 b8``) makes ``otdrs``
    refuse the whole file; the code means nothing to us, so a copy with it blanked is read instead
    and the file is kept when everything else reads (a warning says so)."""
    try:
        return otdrs.parse_bytes(data)
    except Exception as exc:  # otdrs raises one generic error for every unreadable file
        gen = next(b for b in blocks if b.name == "GenParams")
        at = gen.offset + len("GenParams") + 1
        lang = data[at : at + 2]
        if len(lang) == 2 and not all(32 <= c < 127 for c in lang):
            try:
                sor = otdrs.parse_bytes(data[:at] + b"  " + data[at + 2 :])
            except Exception:
                raise SorError(
                    f"The GenParams block is damaged or non-standard: its language code is not text "
                    f"(bytes {lang.hex(' ')}), and the file does not read with it set aside either."
                ) from None
            warnings.append(
                f"The GenParams language code is not text (bytes {lang.hex(' ')}); it was ignored "
                "and the rest of the file reads normally."
            )
            return sor
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
    out = SorFile(version="2.0", blocks=[b.name for b in blocks])
    sor = _read(data, blocks, out.warnings)
    gp = sor.general_parameters
    if gp is None or sor.fixed_parameters is None:
        raise SorError("The file lacks its general or fixed-parameter block.")
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
    if ke is None:
        out.has_event_table = False  # a trace-only file: the trace is read below
    else:
        for e in ke.key_events or []:
            out.events.append(_key_event(e, index))
        last = ke.last_key_event
        if last is not None:
            out.events.append(_key_event(last, index))
            out.total_loss_db = last.end_to_end_loss / 1000.0
            out.orl_db = last.optical_return_loss / 1000.0
            if index:
                summary_markers(
                    out, last.end_to_end_marker_position_1, last.end_to_end_marker_position_2, index
                )
    dp = next((b for b in blocks if b.name == "DataPts"), None)
    if fp.data_spacing:
        read_trace(out, data, dp, len("DataPts") + 1, fp.data_spacing[0], index)
    return out
