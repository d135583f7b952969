"""An OTDR trace checked against the cable it was uploaded to, and a retest compared with its
baseline event by event. Pure code: no ORM, plain values in and out.

* **Wavelength against fibre type.** A single-mode OTDR shoots 1310/1383/1490/1550/1625 nm, and
  1650 nm to monitor live fibre (ITU-T L.301 maintenance band, outside every traffic band); a
  multi-mode one 850 and 1300 nm (953 nm on OM5). A trace at the other medium's wavelength is a
  wrong file or a wrong cable, and no component budget judges it: it is refused, as the
  power-meter form refuses 850 nm on single-mode.
* **Fibre end against the recorded length.** The end-of-fibre event must fall where the cable
  ends. How far off it may be: the OTDR's event location accuracy (about 1 m plus one sample
  spacing, the common datasheet figure), the group-index uncertainty (the index set on the
  instrument differs from the fibre's by up to a few tenths of a percent, and the fibre in a
  cable is longer than the sheath by its lay: together ``CABLETRACK_OTDR_LENGTH_TOLERANCE_PCT``
  of the length) and the launch and receive leads the tester left in the trace
  (``CABLETRACK_OTDR_LEADS_M``; 0 when the instrument subtracts them). Past that, the trace is
  flagged and not judged: its verdict is "unknown", which never satisfies the production gate.
* **Event by event against the baseline.** Each event of the retest is matched to the
  baseline's nearest event at the same place (``budgets.same_place``). An unmatched event with
  loss or reflection is new; a matched one whose loss more than doubled (and rose by at least
  ``WORSE_LOSS_MIN_DB``) or whose reflectance rose by ``WORSE_REFLECTANCE_DB`` or more worsened.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from inventory.core.optics.budgets import (
    Finding,
    TraceEvent,
    _within_fibre,
    new_events,
    same_place,
)

# Test wavelengths by medium (nominal, nm). The power-meter form and the OTDR upload share them.
WAVELENGTHS_MM = (850, 953, 1300)
WAVELENGTHS_SM = (1310, 1383, 1490, 1550, 1625)
MONITORING_SM = (1650,)  # OTDR only: live-fibre monitoring; no power-meter source sits there
OTDR_WAVELENGTHS_SM = WAVELENGTHS_SM + MONITORING_SM
WAVELENGTH_SLACK_NM = 5  # a nominal 1300 nm source written as 1302 is still 1300 (1310 is not)
MULTIMODE_KINDS = ("MMF_OM3", "MMF_OM4", "MMF_OM5")

EVENT_LOCATION_M = 1.0  # OTDR event location accuracy: about 1 m plus the sample spacing
WORSE_LOSS_FACTOR = 2.0  # an event whose loss more than doubled...
WORSE_LOSS_MIN_DB = 0.1  # ...and rose by at least this much, worsened
WORSE_REFLECTANCE_DB = 10.0  # an event whose reflectance rose this much worsened (-60 -> -50 dB)


def wavelengths_for(cable_kind: str) -> tuple[int, ...]:
    """The wavelengths an OTDR tests a fibre of this kind at."""
    if cable_kind not in MULTIMODE_KINDS:
        return OTDR_WAVELENGTHS_SM
    return WAVELENGTHS_MM if cable_kind == "MMF_OM5" else tuple(w for w in WAVELENGTHS_MM if w != 953)


def wavelength_misfit(cable_kind: str, wavelength_nm: float | None) -> str:
    """Why a trace at ``wavelength_nm`` cannot be a test of this fibre ('' when it can)."""
    if wavelength_nm is None:
        return ""
    allowed = wavelengths_for(cable_kind)
    if any(abs(wavelength_nm - w) <= WAVELENGTH_SLACK_NM for w in allowed):
        return ""
    medium = "multi-mode" if cable_kind in MULTIMODE_KINDS else "single-mode"
    return (
        f"{wavelength_nm:.0f} nm is not a {medium} test wavelength ({', '.join(map(str, allowed))} nm): "
        "the wrong file or the wrong cable"
    )


@dataclass(frozen=True)
class LengthCheck:
    fibre_end_m: float
    cable_length_m: float
    tolerance_m: float
    message: str  # '' when the end is where the cable ends

    @property
    def ok(self) -> bool:
        return not self.message


def length_tolerance_m(
    cable_length_m: float, *, sample_spacing_m: float | None, tolerance_pct: float, leads_m: float
) -> float:
    """How far the fibre end may sit from the recorded length: event location accuracy
    (1 m + one sample spacing), group index and cable lay (``tolerance_pct`` of the length)
    and the launch and receive leads left in the trace."""
    return round(
        EVENT_LOCATION_M + (sample_spacing_m or 0.0) + cable_length_m * tolerance_pct / 100.0 + leads_m, 2
    )


def fibre_end_check(
    *,
    fibre_end_m: float | None,
    cable_length_m: float | None,
    sample_spacing_m: float | None,
    tolerance_pct: float,
    leads_m: float,
) -> LengthCheck | None:
    """The trace's fibre end against the cable's recorded length (None: nothing to compare)."""
    if fibre_end_m is None or cable_length_m is None or cable_length_m <= 0:
        return None
    tol = length_tolerance_m(
        cable_length_m, sample_spacing_m=sample_spacing_m, tolerance_pct=tolerance_pct, leads_m=leads_m
    )
    off = fibre_end_m - cable_length_m
    msg = ""
    if abs(off) > tol:
        where = "past" if off > 0 else "short of"
        msg = (
            f"the fibre ends at {fibre_end_m:.1f} m, {abs(off):.1f} m {where} the cable's recorded "
            f"{cable_length_m:.1f} m (tolerance {tol:.1f} m: event location, group index and lay, leads): "
            + ("another cable's trace, or leads left in" if off > 0 else "a break, or another cable's trace")
            + "; not judged"
        )
    return LengthCheck(round(fibre_end_m, 2), cable_length_m, tol, msg)


def worsened_events(baseline: Sequence[TraceEvent], retest: Sequence[TraceEvent]) -> list[Finding]:
    """Events of ``retest`` matched (by distance) to a baseline event that lost ground."""
    base = [e for e in _within_fibre(baseline) if e.kind != "end"]
    found = []
    for e in _within_fibre(retest):
        if e.kind == "end" or not base:
            continue
        twin = min(base, key=lambda b: abs(b.distance_m - e.distance_m))
        if not same_place(twin.distance_m, e.distance_m):
            continue
        why = []
        if e.loss_db is not None:
            before = max(twin.loss_db or 0.0, 0.0)
            if e.loss_db > WORSE_LOSS_FACTOR * before and e.loss_db - before >= WORSE_LOSS_MIN_DB - 1e-9:
                why.append(f"loss {before:.2f} -> {e.loss_db:.2f} dB")
        if (
            e.reflectance_db is not None
            and twin.reflectance_db is not None
            and e.reflectance_db - twin.reflectance_db >= WORSE_REFLECTANCE_DB - 1e-9
        ):
            why.append(f"reflectance {twin.reflectance_db:.1f} -> {e.reflectance_db:.1f} dB")
        if why:
            found.append(
                Finding(
                    "worsened_event",
                    e.distance_m,
                    f"Event at {e.distance_m:.1f} m worsened since the baseline: {', '.join(why)}.",
                )
            )
    return found


def event_changes(baseline: Sequence[TraceEvent], retest: Sequence[TraceEvent]) -> list[Finding]:
    """New and worsened events of a retest against its baseline, in distance order."""
    out = new_events(baseline, retest) + worsened_events(baseline, retest)
    return sorted(out, key=lambda f: f.distance_m or 0.0)
