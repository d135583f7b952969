"""``parse_sor``: sniff, read v1 or v2, sanity-check the values, checksum and warnings."""

from __future__ import annotations

import struct

from inventory.core.optics.sor.checksum import check_crc
from inventory.core.optics.sor.data import DEFAULT_MAX_BYTES, SorError, SorFile
from inventory.core.optics.sor.sniff import sniff
from inventory.core.optics.sor.trace import plot_points
from inventory.core.optics.sor.v1 import parse_v1
from inventory.core.optics.sor.v2 import parse_v2


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


def _length_and_start(out: SorFile) -> None:
    """The fibre length: the file's own KeyEvents summary where it has one (``summary_markers``),
    else the first end-of-fibre event, else the last event. The trace starts at the instrument:
    with a fibre-start offset it is moved so that 0 m is the start of the fibre under test, the
    frame the events are in."""
    if out.fibre_length_source == "summary" and not 0 < (out.fibre_length_m or 0) <= 500_000:
        out.fibre_length_m, out.fibre_length_source = None, ""  # a summary no fibre can have
    if out.fibre_length_source != "summary":
        ends = [e for e in out.events if e.kind == "end"]
        if ends:
            out.fibre_length_m, out.fibre_length_source = ends[0].distance_m, "end event"
        elif out.events:
            out.fibre_length_m, out.fibre_length_source = out.events[-1].distance_m, "last event"
    off = out.fibre_start_offset_m
    if off is not None and not -100_000 <= off < 0:
        out.fibre_start_offset_m = None
    plot_points(out)


def parse_sor(data: bytes, *, max_bytes: int = DEFAULT_MAX_BYTES) -> SorFile:
    """Parse a SOR v1 or v2 file, or raise :class:`SorError` with a clear reason."""
    version, blocks, _ = sniff(data, max_bytes=max_bytes)
    try:
        out = parse_v2(data, blocks) if version == "2.0" else parse_v1(data, blocks)
    except SorError:
        raise
    except (struct.error, ValueError, TypeError, IndexError, AttributeError, OverflowError) as exc:
        raise SorError(f"The file is damaged: a block could not be read ({type(exc).__name__}).") from None
    _sanity(out)
    _length_and_start(out)
    out.checksum = check_crc(data, blocks, version, out.make)
    if out.checksum.ok is False:
        out.warnings.append(
            f"Checksum mismatch ({out.checksum.convention}): the file changed after the instrument "
            "wrote it (a damaged or edited copy). It was kept; compare it with the instrument's copy."
        )
    if not out.has_event_table:
        out.warnings.append(
            "The instrument stored no event table (a trace-only file): the trace is plotted, but there "
            "are no events, loss or reflectance to judge, so the test has no verdict."
        )
    if out.total_loss_db == 0:
        out.total_loss_db = None
        out.warnings.append("The instrument did not fill in the end-to-end loss.")
    if out.orl_db == 0:
        out.orl_db = None
    return out
