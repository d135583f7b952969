"""Power-meter (OLTS) sessions: readings checked, a verdict per fibre against the right budget,
the worst fibre for the session."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from inventory.core.choices import PASSING, CableKind, Direction, ReferenceMethod, TestKind
from inventory.core.optics import budgets
from inventory.core.optics.trace_checks import WAVELENGTHS_MM, WAVELENGTHS_SM
from inventory.models import Cable, CableEnd, CableTest, FibreResult, Link
from inventory.selectors.testing.facts import (
    cable_component_budget,
    cable_polish,
    fibres_in_use,
    link_channel_limit,
    marginal_db,
)
from inventory.services.testing.dates import calibration_date_problem, test_date_problem
from inventory.services.testing.findings import after_test


@dataclass
class FibreReading:
    fibre: int
    wavelength_nm: int
    loss_db: float | None = None
    direction: str = Direction.A_TO_B
    reference_dbm: float | None = None
    measured_dbm: float | None = None


@dataclass
class OltsInput:
    readings: list[FibreReading]
    tested_at: datetime
    technician: object | None = None
    instrument: str = ""
    instrument_serial: str = ""
    calibration_date: date | None = None
    reference_method: str = ReferenceMethod.ONE_JUMPER
    launch_condition: str = ""
    notes: str = ""
    link: Link | None = None
    source: str = "manual"
    extra: dict = field(default_factory=dict)


# A fibre's loss a power meter can read: a little below zero is a reference taken through a
# better jumper than the test's; above 40 dB no light arrives.
LOSS_MIN_DB, LOSS_MAX_DB = -1.0, 40.0


def olts_validate(
    *, cable: Cable, data: OltsInput, ends: Sequence[CableEnd] | None = None, now: datetime | None = None
) -> list[str]:
    """Check readings; returns warnings, raises ValidationError with field errors."""
    errors: dict[str, list[str]] = {}
    warnings: list[str] = []
    when = test_date_problem(install_date=cable.install_date, at=data.tested_at, now=now or timezone.now())
    if when:
        errors["tested_at"] = [when]
    if cable.kind not in CableKind.fibre():
        errors.setdefault("cable", []).append(
            f"{cable.label} is {cable.get_kind_display()}: power-meter tests are for fibre cables."
        )
    if not data.readings:
        errors.setdefault("readings", []).append("Enter at least one fibre reading.")
    if data.reference_method and data.reference_method not in ReferenceMethod.values:
        errors.setdefault("reference_method", []).append("Choose 1, 2 or 3 jumpers (TIA-526-14 B/A/C).")
    mm = cable.kind in (CableKind.MMF_OM3, CableKind.MMF_OM4, CableKind.MMF_OM5)
    allowed = WAVELENGTHS_MM if mm else WAVELENGTHS_SM
    max_fibre = max(
        fibres_in_use(cable, ends), max((e.fibre_count or 0 for e in (ends or [])), default=0), 24
    )
    seen = set()
    for i, r in enumerate(data.readings):
        key = f"readings[{i}]"
        if r.loss_db is None and r.reference_dbm is not None and r.measured_dbm is not None:
            r.loss_db = round(r.reference_dbm - r.measured_dbm, 3)
        if not 1 <= r.fibre <= max_fibre:
            errors.setdefault(key, []).append(
                f"Fibre {r.fibre} does not exist on {cable.label} (1-{max_fibre})."
            )
        if r.wavelength_nm not in allowed:
            errors.setdefault(key, []).append(
                f"{r.wavelength_nm} nm is not a {'multi' if mm else 'single'}-mode test wavelength "
                f"({', '.join(map(str, allowed))})."
            )
        if r.loss_db is None:
            errors.setdefault(key, []).append("Enter the loss, or the reference and measured power.")
        elif not LOSS_MIN_DB <= r.loss_db <= LOSS_MAX_DB:
            errors.setdefault(key, []).append(
                f"A loss of {r.loss_db:g} dB is not plausible: enter {LOSS_MIN_DB:g} to {LOSS_MAX_DB:g} dB "
                "(check the meter and its reference)."
            )
        if r.direction not in Direction.values:
            errors.setdefault(key, []).append(f"Unknown direction {r.direction!r}.")
        ident = (r.fibre, r.wavelength_nm, r.direction)
        if ident in seen:
            errors.setdefault(key, []).append(
                f"Fibre {r.fibre} at {r.wavelength_nm} nm {r.direction} is entered twice."
            )
        seen.add(ident)
    if mm and not data.launch_condition:
        warnings.append("Multi-mode test without a launch condition: record encircled flux (IEC 61280-4-1).")
    calibration = calibration_date_problem(calibration=data.calibration_date, tested_at=data.tested_at)
    if calibration:
        errors["calibration_date"] = [calibration]
    elif (
        not when
        and data.calibration_date
        and data.calibration_date < data.tested_at.date() - timedelta(days=365)
    ):
        warnings.append(f"The instrument's calibration ({data.calibration_date}) is over a year old.")
    if errors:
        raise ValidationError(errors)
    return warnings


@transaction.atomic
def cable_test_record_olts(*, cable: Cable, data: OltsInput, now: datetime | None = None) -> CableTest:
    """Record a power-meter session: verdict per fibre, worst fibre for the session."""
    now = now or timezone.now()
    ends = list(cable.ends.all())
    warnings = olts_validate(cable=cable, data=data, ends=ends, now=now)
    polish = cable_polish(cable, ends)
    wl = min(r.wavelength_nm for r in data.readings)
    tia = cable_component_budget(cable, wl)
    details: dict = {"source": data.source, **data.extra}
    budget_db, budget_source = (
        (tia.budget_db, f"TIA-568.3 component method: {tia.breakdown}") if tia else (None, "")
    )
    if data.link is not None:
        limit, src = link_channel_limit(data.link, cable.kind)
        details["pmd"] = {"limit_db": limit, "source": src}
        budget_db, budget_source = limit, src
    if tia:
        details["tia"] = {"budget_db": tia.budget_db, "breakdown": tia.breakdown}
    details["budget_source"] = budget_source
    fibres = [
        budgets.FibreLoss(r.fibre, r.wavelength_nm, float(r.loss_db), r.direction) for r in data.readings
    ]
    # Each wavelength has its own component budget (fibre attenuation differs).
    per_budget = {}
    for r in data.readings:
        if data.link is None:
            b = cable_component_budget(cable, r.wavelength_nm)
            per_budget[r.wavelength_nm] = b.budget_db if b else None
        else:
            per_budget[r.wavelength_nm] = budget_db
    per = [
        budgets.verdict_for(f.loss_db, per_budget[f.wavelength_nm], marginal_db=marginal_db()) for f in fibres
    ]
    session = budgets.worst(v.verdict for v in per)
    warnings += budgets.bend_from_olts(fibres) if cable.kind == CableKind.SMF_OS2 else []
    worst_i = min(range(len(per)), key=lambda i: per[i].margin_db if per[i].margin_db is not None else 99)
    test = CableTest.objects.create(
        cable=cable,
        link=data.link,
        kind=TestKind.OLTS,
        tested_at=data.tested_at,
        technician=data.technician,
        instrument=data.instrument,
        instrument_serial=data.instrument_serial,
        calibration_date=data.calibration_date,
        reference_method=data.reference_method or "",
        launch_condition=data.launch_condition,
        wavelength_nm=wl,
        loss_db=max(f.loss_db for f in fibres),
        budget_db=per[worst_i].budget_db,
        margin_db=per[worst_i].margin_db,
        verdict=session,
        fibres_passed=len({r.fibre for r, v in zip(data.readings, per, strict=True) if v.verdict in PASSING}),
        warnings=warnings,
        details={**details, "polish": polish},
        notes=data.notes,
    )
    FibreResult.objects.bulk_create(
        [
            FibreResult(
                test=test,
                fibre=r.fibre,
                wavelength_nm=r.wavelength_nm,
                direction=r.direction,
                reference_dbm=r.reference_dbm,
                measured_dbm=r.measured_dbm,
                loss_db=float(r.loss_db),
                verdict=v.verdict,
            )
            for r, v in zip(data.readings, per, strict=True)
        ]
    )
    after_test(test, now=now)
    return test
