"""What the phone's test forms show beside their fields: each end with its latest inspection, the
loss budget the power-meter readings are judged against, and the technician's instruments as
they last used them."""

from __future__ import annotations

from dataclasses import dataclass

from inventory.core.choices import CableKind, TestKind
from inventory.core.optics.trace_checks import WAVELENGTHS_MM, WAVELENGTHS_SM
from inventory.models import Cable, CableEnd, CableTest, Inspection
from inventory.selectors.testing.facts import cable_component_budget

MULTIMODE = (CableKind.MMF_OM3, CableKind.MMF_OM4, CableKind.MMF_OM5)
# The wavelengths a power meter is set to for each medium, the usual one first.
FORM_WAVELENGTHS = {"single": (1310, 1550), "multi": (850, 1300)}
assert set(FORM_WAVELENGTHS["single"]) <= set(WAVELENGTHS_SM)  # noqa: S101 - one list, checked at import
assert set(FORM_WAVELENGTHS["multi"]) <= set(WAVELENGTHS_MM)  # noqa: S101


@dataclass
class InspectionEnd:
    end: CableEnd
    words: str  # "A at S01-G06 U20 gpu-0023 OSFP3"
    latest: Inspection | None


def inspection_ends(cable: Cable) -> list[InspectionEnd]:
    """The cable's ends as the rack shows them, each with its latest inspection. Two queries."""
    ends = list(
        cable.ends.filter(active=True)
        .select_related("port__device__rack", "cage__device__rack")
        .order_by("side", "leg")
    )
    latest: dict[int, Inspection] = {}
    for insp in (
        Inspection.objects.filter(cable_end__in=ends)
        .select_related("technician")
        .order_by("-inspected_at", "-id")
    ):
        latest.setdefault(insp.cable_end_id, insp)
    out = []
    for e in ends:
        dev = e.cage.device if e.cage_id else (e.port.device if e.port_id else None)
        if dev is None:
            where = "unterminated"
        else:
            spot = (
                f"{e.cage.name}{f'/{e.connector}' if (e.connector or 1) > 1 else ''}"
                if e.cage_id
                else e.port.name
            )
            rack = f"{dev.rack.name} U{dev.position_u or '?'} " if dev.rack_id else ""
            where = f"{rack}{dev.name} {spot}"
        out.append(InspectionEnd(end=e, words=f"{e.side}{e.leg or ''} at {where}", latest=latest.get(e.pk)))
    return out


def is_multimode(cable: Cable) -> bool:
    return cable.kind in MULTIMODE


def olts_wavelengths(cable: Cable) -> tuple[int, ...]:
    return FORM_WAVELENGTHS["multi" if is_multimode(cable) else "single"]


def olts_budgets(cable: Cable) -> list[dict]:
    """Per wavelength offered, the TIA-568.3 component budget the form's readings are judged
    against (the service computes the same: ``cable_component_budget``)."""
    out = []
    for wl in olts_wavelengths(cable):
        b = cable_component_budget(cable, wl)
        out.append(
            {
                "wavelength_nm": wl,
                "budget_db": b.budget_db if b else None,
                "breakdown": b.breakdown if b else "",
            }
        )
    return out


INSTRUMENT_FIELDS = (
    "instrument",
    "instrument_serial",
    "calibration_date",
    "reference_method",
    "launch_condition",
)


def instruments_of(user, limit: int = 5) -> list[dict]:
    """The instruments ``user`` recorded power-meter tests with, most recent first, each with the
    settings of its latest test (the form fills them in when the instrument is picked). One query
    of the user's latest 50 tests."""
    if user is None or not user.is_authenticated:
        return []
    rows = (
        CableTest.objects.filter(technician=user, kind=TestKind.OLTS)
        .exclude(instrument="", instrument_serial="")
        .order_by("-tested_at", "-id")
        .values(*INSTRUMENT_FIELDS)[:50]
    )
    seen: dict[tuple[str, str], dict] = {}
    for r in rows:
        key = (r["instrument"], r["instrument_serial"])
        if key not in seen:
            seen[key] = {
                **r,
                "calibration_date": r["calibration_date"].isoformat() if r["calibration_date"] else "",
            }
        if len(seen) >= limit:
            break
    return list(seen.values())
