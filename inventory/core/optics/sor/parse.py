"""``parse_sor``: sniff, read v1 or v2, sanity-check the values, checksum and warnings."""

from __future__ import annotations

import struct

from inventory.core.optics.sor.checksum import check_crc
from inventory.core.optics.sor.data import DEFAULT_MAX_BYTES, SorError, SorFile
from inventory.core.optics.sor.sniff import sniff
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
