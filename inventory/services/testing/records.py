"""Test records: power meter (OLTS), OTDR files, end-face inspection, link qualification.

Every write here computes the verdict against the right budget, marks the first passing test
the baseline, and raises a ``loss_increase`` finding (an ``Alert`` row) when a retest lost
ground against that baseline. The pure maths lives in ``inventory.core.optics``.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from inventory.conf import app_settings
from inventory.core.choices import (
    FEC_LIMITS,
    PASSING,
    AlertRule,
    CableKind,
    ConnectorType,
    Direction,
    FecType,
    ReferenceMethod,
    Severity,
    TestKind,
    Verdict,
)
from inventory.core.optics import budgets
from inventory.core.optics.sor.data import SorError, SorFile
from inventory.core.optics.sor.parse import parse_sor
from inventory.models import Alert, Cable, CableEnd, CableTest, FibreResult, Inspection, Link, OtdrTrace, Port
from inventory.selectors.plant.trace import port_trace
from inventory.selectors.testing.results import latest_tests
from inventory.services.retests.due import retest_due_refresh_on_commit

WAVELENGTHS_MM = (850, 953, 1300)
WAVELENGTHS_SM = (1310, 1383, 1490, 1550, 1625)
IEC_ZONES = ("core", "cladding", "adhesive", "contact")


def sor_max_bytes() -> int:
    return app_settings.sor_max_bytes


def loss_increase_db() -> float:
    return app_settings.loss_increase_db


def marginal_db() -> float:
    return app_settings.marginal_db


def otdr_min_length_m() -> float:
    return app_settings.otdr_min_length_m


def retest_interval() -> timedelta:
    return timedelta(days=app_settings.retest_interval_days)


# --- cable facts the budgets need -------------------------------------------------------------


def cable_polish(cable: Cable, ends: Sequence[CableEnd] | None = None) -> str:
    ends = ends if ends is not None else list(cable.ends.all())
    return next((e.polish for e in ends if e.polish), "")


def fibres_in_use(cable: Cable, ends: Sequence[CableEnd] | None = None) -> int:
    """How many fibres a power-meter test must cover: duplex LC 2, MPO-12 parallel optics 8
    (positions 1-4 and 9-12 carry light), other MPOs every fibre."""
    ends = ends if ends is not None else list(cable.ends.all())
    counts = [e.fibre_count for e in ends if e.fibre_count]
    types = {e.connector_type for e in ends}
    if ConnectorType.MPO in types and counts:
        n = max(counts)
        return 8 if n == 12 else n
    if ConnectorType.LC in types:
        return 2
    return max(counts) if counts else 1


def cable_component_budget(cable: Cable, wavelength_nm: int | None) -> budgets.ComponentBudget | None:
    """TIA-568.3 component budget of one installed cable: two mated pairs, its length."""
    if cable.kind not in CableKind.fibre() or not wavelength_nm:
        return None
    try:
        return budgets.tia_component_budget(
            fibre=cable.kind,
            wavelength_nm=int(wavelength_nm),
            length_m=float(cable.length_m or 0),
            connector_pairs=2,
        )
    except budgets.BudgetError:
        return None


def link_channel_limit(link: Link, fibre_kind: str) -> tuple[float | None, str]:
    """The PMD channel insertion-loss limit of a link, and where it comes from."""
    if link.loss_budget_db is not None:
        return link.loss_budget_db, f"{link.pmd or 'link'} budget recorded on the link"
    lim = budgets.pmd_limit(link.pmd, fibre_kind)
    if lim is None or lim.channel_il_db is None:
        return None, f"no published channel limit for {link.pmd or 'an unknown PMD'} on {fibre_kind}"
    return lim.channel_il_db, lim.source


# --- findings (alerts) ------------------------------------------------------------------------


def _path_segments(link: Link | None, cable: Cable) -> list[tuple[str, float | None, str]]:
    """(label, length m, far end) along the link's path, or the cable alone."""
    if link is None:
        return [(cable.label, float(cable.length_m) if cable.length_m else None, "its far end")]
    trace = port_trace(link.a_port)
    lengths = dict(Cable.objects.filter(pk__in=trace.cable_ids).values_list("pk", "length_m"))
    out = []
    for s in trace.segments:
        ln = lengths.get(s.cable_id)
        out.append((s.label, float(ln) if ln else None, str(s.far)))
    return out


def _raise_loss_increase(
    *, test: CableTest, findings: list[str], evidence: dict, now: datetime
) -> Alert | None:
    """Insert a ``loss_increase`` alert (the alert helper owns its lifecycle)."""
    link = test.link or (
        Link.objects.filter(active=True, segments__cable=test.cable).select_related("a_port").first()
    )
    key = f"{AlertRule.LOSS_INCREASE}:cable:{test.cable_id}"  # one open alert per key (a constraint)
    existing = Alert.objects.filter(key=key, state="open").first()
    if existing:
        return existing
    port_id = link.a_port_id if link else None
    if port_id and Alert.objects.filter(rule=AlertRule.LOSS_INCREASE, state="open", port_id=port_id).exists():
        port_id = None  # one open alert per (rule, port): the cable still gets its own row
    return Alert.objects.create(
        key=key,
        rule=AlertRule.LOSS_INCREASE,
        severity=Severity.NOTIFY,
        state="open",
        link=link,
        port_id=port_id,
        cable=test.cable,
        opened_at=now,
        updated_at=now,
        summary=f"{test.cable.label}: " + "; ".join(findings)[:280],
        recommendation=(
            "Inspect and clean the connectors near the event, check the route for a bend or crush; "
            "replace the segment if the loss stays."
        )[:300],
        evidence={"test_id": test.pk, "kind": test.kind, **evidence},
    )


def _baseline(cable: Cable, kind: str, exclude: int | None = None) -> CableTest | None:
    qs = CableTest.objects.filter(cable=cable, kind=kind, is_baseline=True)
    if exclude:
        qs = qs.exclude(pk=exclude)
    return qs.order_by("tested_at").first()


# --- power meter (OLTS) -----------------------------------------------------------------------


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


def olts_validate(*, cable: Cable, data: OltsInput, ends: Sequence[CableEnd] | None = None) -> list[str]:
    """Check readings; returns warnings, raises ValidationError with field errors."""
    errors: dict[str, list[str]] = {}
    warnings: list[str] = []
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
        elif not -1.0 <= r.loss_db <= 40.0:
            errors.setdefault(key, []).append(f"A loss of {r.loss_db} dB is not a plausible reading.")
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
    if data.calibration_date and data.calibration_date < data.tested_at.date() - timedelta(days=365):
        warnings.append(f"The instrument's calibration ({data.calibration_date}) is over a year old.")
    if errors:
        raise ValidationError(errors)
    return warnings


@transaction.atomic
def cable_test_record_olts(*, cable: Cable, data: OltsInput, now: datetime | None = None) -> CableTest:
    """Record a power-meter session: verdict per fibre, worst fibre for the session."""
    now = now or timezone.now()
    ends = list(cable.ends.all())
    warnings = olts_validate(cable=cable, data=data, ends=ends)
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
    _after_test(test, now=now)
    return test


def _after_test(test: CableTest, *, now: datetime) -> None:
    """Baseline on the first pass; compare a retest with the baseline; move the retest due date."""
    retest_due_refresh_on_commit(
        cable_id=test.cable_id, now=now, reason=f"{test.kind} test recorded: {test.verdict}"
    )
    base = _baseline(test.cable, test.kind, exclude=test.pk)
    if base is None:
        if test.verdict in PASSING:
            test.is_baseline = True
            test.save(update_fields=["is_baseline"])
        return
    if test.kind == TestKind.OLTS:
        _compare_olts(test, base, now=now)
    elif test.kind == TestKind.OTDR:
        _compare_otdr(test, base, now=now)


def _compare_olts(test: CableTest, base: CableTest, *, now: datetime) -> None:
    threshold = loss_increase_db()
    old = {(r.fibre, r.wavelength_nm, r.direction): r.loss_db for r in base.fibres.all()}
    rises = []
    for r in test.fibres.all():
        before = old.get((r.fibre, r.wavelength_nm, r.direction))
        if before is not None and r.loss_db - before >= threshold - 1e-9:
            rises.append((r.fibre, r.wavelength_nm, round(before, 2), round(r.loss_db, 2)))
    if not rises:
        return
    msgs = [f"fibre {f} @{wl} nm {a} -> {b} dB" for f, wl, a, b in rises]
    test.warnings = [
        *test.warnings,
        f"Loss rose by {threshold} dB or more since the baseline: " + ", ".join(msgs),
    ]
    test.details = {**test.details, "loss_increase": {"baseline_test": base.pk, "fibres": rises}}
    test.save(update_fields=["warnings", "details"])
    _raise_loss_increase(
        test=test,
        findings=[f"loss up since baseline {base.tested_at:%Y-%m-%d}: " + ", ".join(msgs)],
        evidence={"baseline_test": base.pk, "threshold_db": threshold, "fibres": rises},
        now=now,
    )


def _compare_otdr(test: CableTest, base: CableTest, *, now: datetime) -> None:
    base_traces = {(t.fibre, round(t.wavelength_nm or 0)): t for t in base.traces.all()}
    segments = None
    found = []
    threshold = loss_increase_db()
    for t in test.traces.all():
        b = base_traces.get((t.fibre, round(t.wavelength_nm or 0)))
        if b is None:
            continue
        new = budgets.new_events(
            [budgets.TraceEvent.from_dict(e) for e in b.events],
            [budgets.TraceEvent.from_dict(e) for e in t.events],
        )
        if (
            t.total_loss_db is not None
            and b.total_loss_db is not None
            and t.total_loss_db - b.total_loss_db >= threshold - 1e-9
        ):
            found.append(
                {
                    "fibre": t.fibre,
                    "distance_m": None,
                    "message": f"fibre {t.fibre}: total loss {b.total_loss_db:.2f} -> {t.total_loss_db:.2f} dB",
                }
            )
        for f in new:
            if segments is None:
                segments = _path_segments(test.link, test.cable)
            where = budgets.locate(f.distance_m or 0.0, segments)
            found.append(
                {
                    "fibre": t.fibre,
                    "distance_m": round(f.distance_m or 0, 1),
                    "message": f"{f.message} Location: {where}.",
                }
            )
    if not found:
        return
    test.warnings = [*test.warnings, *[f["message"] for f in found]]
    test.details = {**test.details, "loss_increase": {"baseline_test": base.pk, "findings": found}}
    test.save(update_fields=["warnings", "details"])
    _raise_loss_increase(
        test=test,
        findings=[f["message"] for f in found],
        evidence={"baseline_test": base.pk, "findings": found},
        now=now,
    )


# --- OTDR -------------------------------------------------------------------------------------


@dataclass
class SorUpload:
    name: str
    data: bytes
    fibre: int = 1


def sor_parse_many(files: Sequence[SorUpload]) -> list[SorFile]:
    """Parse every file first; any refusal names the file and writes nothing."""
    errors: dict[str, list[str]] = {}
    parsed = []
    cap = sor_max_bytes()
    for i, f in enumerate(files):
        try:
            parsed.append(parse_sor(f.data, max_bytes=cap))
        except SorError as exc:
            errors.setdefault("file" if len(files) == 1 else f"file[{i}]", []).append(
                f"{f.name}: {exc.reason}"
            )
    if errors:
        raise ValidationError(errors)
    return parsed


def _otdr_verdict(cable: Cable, sor: SorFile, polish: str) -> tuple[budgets.Verdict, list[str]]:
    """Loss against the TIA component budget; connector reflectance against the polish."""
    tia = cable_component_budget(cable, int(sor.wavelength_nm or 0))
    loss = sor.total_loss_db
    if loss is None:
        inside = budgets._within_fibre([budgets.TraceEvent.from_dict(e) for e in sor.events_as_dicts()])
        loss = round(sum(e.loss_db or 0 for e in inside if e.kind != "end"), 3) if inside else None
    v = budgets.verdict_for(loss, tia.budget_db if tia else None, marginal_db=marginal_db())
    notes = []
    events = [budgets.TraceEvent.from_dict(e) for e in sor.events_as_dicts()]
    dirty = budgets.dirty_connectors(events, polish=polish)
    worst = v.verdict
    for d in dirty:
        notes.append(d.message)
        rv, _ = budgets.reflectance_verdict(
            next((e.reflectance_db for e in events if e.distance_m == d.distance_m), None), polish
        )
        worst = budgets.worst([worst, rv])
    if worst != v.verdict:
        v = budgets.Verdict(worst, v.margin_db, v.loss_db, v.budget_db, "connector reflectance")
    return v, notes


@transaction.atomic
def cable_test_upload_otdr(
    *,
    cable: Cable,
    files: Sequence[SorUpload],
    technician=None,
    link: Link | None = None,
    notes: str = "",
    now: datetime | None = None,
    source: str = "upload",
) -> CableTest:
    """Store one OTDR session: the original files (generated names) and what they say."""
    now = now or timezone.now()
    if cable.kind not in CableKind.fibre():
        raise ValidationError({"cable": f"{cable.label} is {cable.get_kind_display()}: OTDR is for fibre."})
    if not files:
        raise ValidationError({"file": "Choose at least one .sor file."})
    parsed = sor_parse_many(files)
    polish = cable_polish(cable)
    verdicts, warnings = [], []
    for f, sor in zip(files, parsed, strict=True):
        v, n = _otdr_verdict(cable, sor, polish)
        verdicts.append(v)
        warnings += [f"{f.name}: {w}" for w in sor.warnings + n]
    # Bend: the same fibre at 1310 and 1550 nm in this session (single-mode only).
    if cable.kind == CableKind.SMF_OS2:
        by_fibre: dict[int, dict[int, SorFile]] = {}
        for f, sor in zip(files, parsed, strict=True):
            by_fibre.setdefault(f.fibre, {})[round(sor.wavelength_nm or 0)] = sor
        for fibre, waves in by_fibre.items():
            if 1310 in waves and 1550 in waves:
                for b in budgets.bends(
                    [budgets.TraceEvent.from_dict(e) for e in waves[1310].events_as_dicts()],
                    [budgets.TraceEvent.from_dict(e) for e in waves[1550].events_as_dicts()],
                ):
                    warnings.append(f"fibre {fibre}: {b.message}")
    worst_i = min(
        range(len(verdicts)), key=lambda i: verdicts[i].margin_db if verdicts[i].margin_db is not None else 99
    )
    first = parsed[0]
    test = CableTest.objects.create(
        cable=cable,
        link=link,
        kind=TestKind.OTDR,
        tested_at=min((s.measured_at for s in parsed if s.measured_at), default=now),
        technician=technician,
        instrument=first.instrument[:100],
        instrument_serial=first.serial[:64],
        wavelength_nm=round(first.wavelength_nm) if first.wavelength_nm else None,
        loss_db=verdicts[worst_i].loss_db,
        budget_db=verdicts[worst_i].budget_db,
        margin_db=verdicts[worst_i].margin_db,
        verdict=budgets.worst(v.verdict for v in verdicts),
        warnings=warnings,
        details={"source": source, "polish": polish, "files": len(files)},
        notes=notes,
    )
    rows, written = [], []
    for f, sor in zip(files, parsed, strict=True):
        rows.append(
            OtdrTrace(
                test=test,
                fibre=f.fibre,
                file=f"sor/{now:%Y/%m}/{uuid.uuid4().hex}.sor",
                original_name=f.name[:255],
                sha256=_sha256(f.data),
                sor_version=sor.version,
                make=sor.make[:64],
                model=(sor.model or sor.module)[:64],
                serial=sor.serial[:64],
                measured_at=sor.measured_at,
                wavelength_nm=sor.wavelength_nm,
                pulse_width_ns=sor.pulse_width_ns,
                index_of_refraction=sor.index_of_refraction,
                fibre_length_m=sor.fibre_length_m,
                total_loss_db=sor.total_loss_db,
                orl_db=sor.orl_db,
                checksum_ok=sor.checksum.ok,
                checksum_convention=sor.checksum.convention[:100],
                events=sor.events_as_dicts(),
                trace=sor.trace,
            )
        )
    OtdrTrace.objects.bulk_create(rows)
    try:
        for row, f in zip(rows, files, strict=True):
            written.append(default_storage.save(row.file.name, ContentFile(f.data)))
            if written[-1] != row.file.name:  # storage renamed it; keep the row truthful
                OtdrTrace.objects.filter(pk=row.pk).update(file=written[-1])
    except Exception:
        for name in written:
            default_storage.delete(name)
        raise
    _after_test(test, now=now)
    return test


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- inspection -------------------------------------------------------------------------------

PHOTO_TYPES = {b"\xff\xd8\xff": "jpg", b"\x89PNG": "png"}


@transaction.atomic
def cable_inspect(
    *,
    cable: Cable | None = None,
    end: CableEnd | None = None,
    port: Port | None = None,
    passed: bool,
    zones: dict | None = None,
    cleaned: bool = False,
    photo: bytes | None = None,
    technician=None,
    inspected_at: datetime | None = None,
    now: datetime | None = None,
) -> Inspection:
    """Record an IEC 61300-3-35 end-face inspection of a cable end or a port (module socket,
    panel port). ``zones`` maps core/cladding/adhesive/contact to pass/fail."""
    now = now or timezone.now()
    errors: dict[str, str] = {}
    if end is None and port is None:
        errors["end"] = "Choose the cable end or the port you inspected."
    if end is not None and cable is not None and end.cable_id != cable.pk:
        errors["end"] = f"That end does not belong to {cable.label}."
    zones = zones or {}
    bad = [z for z in zones if z not in IEC_ZONES]
    if bad:
        errors["zones"] = (
            f"Unknown zone(s) {', '.join(bad)}; IEC 61300-3-35 zones are {', '.join(IEC_ZONES)}."
        )
    if zones and passed and any(v in ("fail", False) for v in zones.values()):
        errors["passed"] = "A zone failed, so the inspection cannot pass."
    photo_name = ""
    if photo:
        ext = next((e for m, e in PHOTO_TYPES.items() if photo.startswith(m)), None)
        if ext is None:
            errors["photo"] = "The photo must be a JPEG or PNG image."
        elif len(photo) > app_settings.photo_max_bytes:
            errors["photo"] = "The photo is too large."
        else:
            photo_name = f"inspections/{now:%Y/%m}/{uuid.uuid4().hex}.{ext}"
    if errors:
        raise ValidationError(errors)
    cable = cable or (end.cable if end else None)
    test = None
    if cable is not None:
        test = CableTest.objects.create(
            cable=cable,
            kind=TestKind.INSPECTION,
            tested_at=inspected_at or now,
            technician=technician,
            verdict=Verdict.PASS if passed else Verdict.FAIL,
            details={"end": str(end) if end else "", "port": str(port) if port else "", "cleaned": cleaned},
        )
    insp = Inspection.objects.create(
        cable_end=end,
        port=port,
        test=test,
        inspected_at=inspected_at or now,
        technician=technician,
        passed=passed,
        zones=zones,
        cleaned=cleaned,
        photo=photo_name,
    )
    if photo_name:
        saved = default_storage.save(photo_name, ContentFile(photo))
        if saved != photo_name:
            insp.photo = saved
            insp.save(update_fields=["photo"])
    return insp


# --- link qualification (sealed DAC/ACC/AOC) --------------------------------------------------


@dataclass
class QualificationInput:
    """What was observed on the running link. The telemetry helper will fill these in."""

    serial_a: str = ""
    serial_b: str = ""
    part_number: str = ""
    link_up: bool = False
    speed_gbps: int | None = None
    lanes: int | None = None
    pre_fec_ber: float | None = None
    uncorrectable_codewords: int | None = None
    soak_minutes: float = 0
    tested_at: datetime | None = None
    technician: object | None = None


def qualification_check(
    *, cable: Cable, link: Link | None, data: QualificationInput
) -> tuple[str, list[str]]:
    """Pure checks: identity, speed/width, BER soak. Returns (verdict, problems)."""
    problems = []
    recorded = {s for s in (cable.serial_a, cable.serial_b) if s}
    seen = {s for s in (data.serial_a, data.serial_b) if s}
    if not seen:
        problems.append("No EEPROM serial read from the cable ends.")
    elif recorded and seen != recorded:
        problems.append(
            f"EEPROM serial(s) {', '.join(sorted(seen))} do not match the record ({', '.join(sorted(recorded))})."
        )
    if data.part_number and cable.part_number and data.part_number.strip() != cable.part_number.strip():
        problems.append(f"EEPROM part {data.part_number} is not the recorded {cable.part_number}.")
    if not data.link_up:
        problems.append("The link is not up.")
    if link is not None:
        if link.speed_gbps and data.speed_gbps != link.speed_gbps:
            problems.append(f"Link runs at {data.speed_gbps}G, expected {link.speed_gbps}G.")
        if link.lanes and data.lanes != link.lanes:
            problems.append(f"Link runs {data.lanes} lanes wide, expected {link.lanes}.")
    min_soak = app_settings.ber_soak_minutes
    if data.soak_minutes < min_soak:
        problems.append(f"BER soak of {data.soak_minutes:g} min is shorter than the {min_soak} min required.")
    limit = FEC_LIMITS.get(link.fec if link else FecType.KP4, FEC_LIMITS[FecType.KP4]).pre_fec_ber
    if data.pre_fec_ber is None:
        problems.append("No pre-FEC BER from the soak.")
    elif data.pre_fec_ber >= limit:
        problems.append(f"Pre-FEC BER {data.pre_fec_ber:.2e} is at or over the {limit:.1e} limit.")
    if data.uncorrectable_codewords:
        problems.append(f"{data.uncorrectable_codewords} uncorrectable codewords during the soak.")
    return (Verdict.FAIL if problems else Verdict.PASS), problems


@transaction.atomic
def link_qualify(
    *, cable: Cable, data: QualificationInput, link: Link | None = None, now: datetime | None = None
) -> CableTest:
    """Record a link qualification of a sealed DAC/ACC/AOC: a test like any other."""
    now = now or timezone.now()
    if cable.kind not in CableKind.sealed():
        raise ValidationError({"cable": f"{cable.label} is not a DAC/ACC/AOC; fibre gets OLTS and OTDR."})
    if link is None:
        link = Link.objects.filter(active=True, segments__cable=cable).first()
    verdict, problems = qualification_check(cable=cable, link=link, data=data)
    test = CableTest.objects.create(
        cable=cable,
        link=link,
        kind=TestKind.QUALIFICATION,
        tested_at=data.tested_at or now,
        technician=data.technician,
        verdict=verdict,
        warnings=problems,
        details={
            "serial_a": data.serial_a,
            "serial_b": data.serial_b,
            "part_number": data.part_number,
            "link_up": data.link_up,
            "speed_gbps": data.speed_gbps,
            "lanes": data.lanes,
            "pre_fec_ber": data.pre_fec_ber,
            "uncorrectable_codewords": data.uncorrectable_codewords,
            "soak_minutes": data.soak_minutes,
        },
    )
    _after_test(test, now=now)
    return test


# --- the production gate ----------------------------------------------------------------------


def cables_gate(*, cables: Sequence[Cable], now: datetime | None = None) -> dict[int, list[str]]:
    """What each cable still needs before it may go into production (empty list: nothing).

    Set-based: one query for the latest tests of every cable, one for their ends.
    Fibre: a passing power-meter test on every fibre in use and, unless the cable is shorter
    than the OTDR dead-zone limit, a passing OTDR, both newer than the retest interval.
    Sealed DAC/ACC/AOC: a passing link qualification. Cat6A: nothing optical.
    """
    now = now or timezone.now()
    ids = [c.pk for c in cables]
    latest = latest_tests(cable_ids=ids)
    ends: dict[int, list[CableEnd]] = {}
    for e in CableEnd.objects.filter(cable_id__in=ids).only(
        "cable_id", "connector_type", "fibre_count", "polish"
    ):
        ends.setdefault(e.cable_id, []).append(e)
    return gate_missing(cables=cables, latest=latest, ends=ends, now=now)


def gate_missing(*, cables: Sequence[Cable], latest: dict, ends: dict, now: datetime) -> dict[int, list[str]]:
    """The gate over already-loaded latest tests (``selectors.testing.latest_tests``) and ends."""
    oldest = now - retest_interval()
    min_len = otdr_min_length_m()
    out: dict[int, list[str]] = {}
    for c in cables:
        need: list[str] = []
        mine = latest.get(c.pk, {})
        if c.kind in CableKind.fibre():
            olts = mine.get(TestKind.OLTS)
            n = fibres_in_use(c, ends.get(c.pk, []))
            if olts is None:
                need.append(f"a power-meter (OLTS) test of all {n} fibres")
            elif olts.verdict not in PASSING:
                need.append(f"a passing power-meter test (the last one, {olts.tested_at:%Y-%m-%d}, failed)")
            elif olts.tested_at < oldest:
                need.append(
                    f"a power-meter test newer than {retest_interval().days} days (last {olts.tested_at:%Y-%m-%d})"
                )
            elif olts.fibres_passed < n:
                need.append(f"power-meter results on all {n} fibres (only {olts.fibres_passed} pass)")
            exempt = c.length_m is not None and float(c.length_m) < min_len
            if not exempt:
                otdr = mine.get(TestKind.OTDR)
                why = "" if c.length_m is not None else " (length not recorded)"
                if otdr is None:
                    need.append(f"an OTDR trace{why}")
                elif otdr.verdict not in PASSING:
                    need.append(f"a passing OTDR trace (the last one, {otdr.tested_at:%Y-%m-%d}, failed)")
                elif otdr.tested_at < oldest:
                    need.append(
                        f"an OTDR trace newer than {retest_interval().days} days (last {otdr.tested_at:%Y-%m-%d})"
                    )
        elif c.kind in CableKind.sealed():
            q = mine.get(TestKind.QUALIFICATION)
            if q is None:
                need.append("a link qualification (EEPROM identity, speed and width, BER soak)")
            elif q.verdict not in PASSING:
                need.append(f"a passing link qualification (the last one, {q.tested_at:%Y-%m-%d}, failed)")
        out[c.pk] = need
    return out


def cable_gate_check(*, cable: Cable, now: datetime | None = None) -> list[str]:
    return cables_gate(cables=[cable], now=now)[cable.pk]


def gate_message(cable: Cable, missing: list[str]) -> str:
    return f"{cable.label} cannot go into production: it needs " + "; ".join(missing) + "."


__all__ = [
    "FibreReading",
    "OltsInput",
    "QualificationInput",
    "SorUpload",
    "cable_gate_check",
    "cable_inspect",
    "cable_test_record_olts",
    "cable_test_upload_otdr",
    "cables_gate",
    "link_qualify",
]
