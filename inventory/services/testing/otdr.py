"""OTDR sessions: the original .sor files stored under generated names, each trace's verdict
(loss against the component budget, connector reflectance against the polish) and bends."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from inventory.core.choices import CableKind, TestKind
from inventory.core.optics import budgets
from inventory.core.optics.sor.data import SorError, SorFile
from inventory.core.optics.sor.parse import parse_sor
from inventory.models import Cable, CableTest, Link, OtdrTrace
from inventory.selectors.testing.facts import cable_component_budget, cable_polish, marginal_db, sor_max_bytes
from inventory.services.testing.dates import test_date_problem
from inventory.services.testing.findings import after_test


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
    tested_at = min((s.measured_at for s in parsed if s.measured_at), default=now)
    if problem := test_date_problem(install_date=cable.install_date, at=tested_at, now=now):
        # the instrument's clock (a reset OTDR says 1970 or 2000): dated at upload instead
        warnings.append(f"The trace's own date is not usable ({problem}); recorded at upload time.")
        tested_at = now
    test = CableTest.objects.create(
        cable=cable,
        link=link,
        kind=TestKind.OTDR,
        tested_at=tested_at,
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
    after_test(test, now=now)
    return test


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
