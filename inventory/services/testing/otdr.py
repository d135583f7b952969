"""OTDR sessions: the original .sor files stored under generated names, each trace's verdict
(loss against the component budget, connector reflectance against the polish, the trace checked
against the cable: wavelength and fibre end), bends across uploads, and the comparison with the
baseline event by event.

One path, set-based, for one file or a tester's whole project: ``otdr_sessions_upload`` parses
every file, reads what the batch compares with in a fixed number of queries
(``selectors.testing.otdr_history``), decides everything in memory, then writes every test (with
its history rows) and every trace in one statement each, and recomputes the retest dates of the
batch's cables once, after commit. ``cable_test_upload_otdr`` is the one-session call of it.
"""

from __future__ import annotations

import hashlib
import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from inventory.core.choices import PASSING, CableKind, TestKind
from inventory.core.optics import budgets, trace_checks
from inventory.core.optics.sor.data import SorError, SorFile
from inventory.core.optics.sor.parse import parse_sor
from inventory.core.safetext import one_line
from inventory.core.words import human_date
from inventory.db import bulk
from inventory.models import Cable, CableEnd, CableTest, Link, OtdrTrace
from inventory.selectors.testing.facts import (
    cable_component_budget,
    loss_increase_db,
    marginal_db,
    otdr_length_tolerance,
    sor_max_bytes,
)
from inventory.selectors.testing.otdr_history import (
    OtdrPrior,
    PriorBaseline,
    PriorTrace,
    bend_band,
    otdr_prior,
)
from inventory.services.retests.due import retest_due_refresh_many_on_commit
from inventory.services.testing.dates import test_date_problem
from inventory.services.testing.findings import path_segments, raise_loss_increase
from inventory.services.testing.latest_table import cable_test_latest_refresh


@dataclass
class SorUpload:
    name: str
    data: bytes
    fibre: int = 1
    parsed: SorFile | None = None  # already parsed (the tester import matches files by content)


@dataclass
class OtdrSession:
    """One cable's files of one upload (one test record)."""

    cable: Cable
    files: Sequence[SorUpload]
    link: Link | None = None
    notes: str = ""


@dataclass
class _Decided:
    """Everything about one session, decided before anything is written."""

    session: OtdrSession
    parsed: list[SorFile]
    verdicts: list[budgets.Verdict]
    warnings: list[str] = field(default_factory=list)
    details: dict = field(default_factory=dict)
    is_baseline: bool = False
    findings: list[dict] = field(default_factory=list)
    baseline: PriorBaseline | None = None
    tested_at: datetime | None = None
    verdict: str = budgets.UNKNOWN
    not_judged: list[dict] = field(default_factory=list)
    #: per file: does its trace end where this cable does not (another fibre's, or a break)?
    elsewhere: list[bool] = field(default_factory=list)


def not_judged_words(not_judged: Sequence[dict]) -> str:
    """The session's traces that were not judged, in words ('' when every trace was):
    "2 traces not judged: other.sor (the fibre ends at 180.0 m, the cable is 59.0 m), ..."."""
    if not not_judged:
        return ""
    n = len(not_judged)
    named = ", ".join(f"{x['file']} ({x['why']})" for x in not_judged)
    return f"{n} trace{'s' if n != 1 else ''} not judged: {named}."


def _session_verdict(d: _Decided) -> None:
    """The session is the worst of its judged traces (``budgets.judged``: none judged, unknown);
    the traces not judged are counted and named beside it, first among its warnings.

    Except a trace that ends where the cable does not: it may be a break as well as another
    cable's file, so the session stays not judged (the production gate then asks for the test
    again) rather than passing on the other traces. A trace at a wavelength with no published
    limit (1650 nm monitoring) beside judged ones says nothing against the cable."""
    judged = [v.verdict for v in d.verdicts if budgets.judged(v.verdict)]
    # worst() ranks unknown below fail only: a failing trace still fails the session
    d.verdict = budgets.worst(judged + [budgets.UNKNOWN] * any(d.elsewhere))
    d.not_judged = [
        {"file": one_line(f.name, limit=255), "fibre": f.fibre, "why": v.reason}
        for f, v in zip(d.session.files, d.verdicts, strict=True)
        if not budgets.judged(v.verdict)
    ]
    if d.not_judged:
        d.warnings.insert(0, not_judged_words(d.not_judged))
        d.details["not_judged"] = d.not_judged


def sor_parse_many(files: Sequence[SorUpload], *, prefix: str = "") -> list[SorFile]:
    """Parse every file first; any refusal names the file and writes nothing."""
    errors: dict[str, list[str]] = {}
    parsed = []
    cap = sor_max_bytes()
    for i, f in enumerate(files):
        if f.parsed is not None:
            parsed.append(f.parsed)
            continue
        try:
            parsed.append(parse_sor(f.data, max_bytes=cap))
        except SorError as exc:
            errors.setdefault(prefix + ("file" if len(files) == 1 else f"file[{i}]"), []).append(
                f"{f.name}: {exc.reason}"
            )
    if errors:
        raise ValidationError(errors)
    return parsed


def _otdr_verdict(cable: Cable, sor: SorFile, polish: str) -> tuple[budgets.Verdict, list[str], bool]:
    """Loss against the TIA component budget; connector reflectance against the polish; the
    fibre end against the cable's recorded length (a trace that ends elsewhere is not judged)."""
    tia = cable_component_budget(cable, int(sor.wavelength_nm or 0))
    if not sor.has_event_table:  # trace only: no events, no loss, nothing to judge (parse says so)
        return (
            budgets.Verdict(budgets.UNKNOWN, None, None, tia and tia.budget_db, "no event table"),
            [],
            False,
        )
    loss = sor.total_loss_db
    events = [budgets.TraceEvent.from_dict(e) for e in sor.events_as_dicts()]
    if loss is None:
        inside = budgets._within_fibre(events)
        loss = round(sum(e.loss_db or 0 for e in inside if e.kind != "end"), 3) if inside else None
    v = budgets.verdict_for(loss, tia.budget_db if tia else None, marginal_db=marginal_db())
    if not budgets.judged(v.verdict):  # the reason as the session's summary names it
        why = (
            "no loss in the file"
            if tia is not None
            else (
                f"no published limit at {sor.wavelength_nm:.0f} nm" if sor.wavelength_nm else "no wavelength"
            )
        )
        v = budgets.Verdict(v.verdict, v.margin_db, v.loss_db, v.budget_db, why)
    notes = []
    if tia is None and sor.wavelength_nm and cable.kind in CableKind.fibre():
        notes.append(
            f"No published attenuation limit for {budgets.FIBRE_OF_KIND.get(cable.kind, cable.kind)} at "
            f"{sor.wavelength_nm:.0f} nm: the loss is shown, not judged; connector reflectance is judged "
            "against the polish."
        )
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
    pct, leads = otdr_length_tolerance()
    check = trace_checks.fibre_end_check(
        fibre_end_m=sor.fibre_length_m,
        cable_length_m=float(cable.length_m) if cable.length_m is not None else None,
        sample_spacing_m=sor.sample_spacing_m,
        tolerance_pct=pct,
        leads_m=leads,
    )
    if check is not None and not check.ok:
        # a trace that ends elsewhere is another fibre's: its events say nothing of this cable
        notes = [f"Not judged: {check.message}."]
        why = f"the fibre ends at {check.fibre_end_m:.1f} m, the cable is {check.cable_length_m:.1f} m"
        v = budgets.Verdict(budgets.UNKNOWN, None, v.loss_db, v.budget_db, why)
        return v, notes, True
    return v, notes, False


def _check(sessions: Sequence[OtdrSession]) -> list[list[SorFile]]:
    """Parse and check every file of every session; refuse the lot, naming each bad file."""
    errors: dict[str, list[str]] = {}
    parsed_all: list[list[SorFile]] = []
    many = len(sessions) > 1
    for s in sessions:
        prefix = f"{s.cable.label} " if many else ""
        if s.cable.kind not in CableKind.fibre():
            errors.setdefault(prefix + "cable", []).append(
                f"{s.cable.label} is {s.cable.get_kind_display()}: OTDR is for fibre."
            )
        if not s.files:
            errors.setdefault(prefix + "file", []).append("Choose at least one .sor file.")
        try:
            parsed = sor_parse_many(s.files, prefix=prefix)
        except ValidationError as exc:
            for k, v in exc.message_dict.items():
                errors.setdefault(k, []).extend(v)
            parsed = []
        for i, (f, sor) in enumerate(zip(s.files, parsed, strict=False)):
            why = trace_checks.wavelength_misfit(s.cable.kind, sor.wavelength_nm)
            if why and s.cable.kind in CableKind.fibre():
                key = prefix + ("file" if len(s.files) == 1 else f"file[{i}]")
                errors.setdefault(key, []).append(
                    f"{f.name}: {why} ({s.cable.label} is {s.cable.get_kind_display()})."
                )
        parsed_all.append(parsed)
    if errors:
        raise ValidationError(errors)
    return parsed_all


def _events(raw: list[dict]) -> list[budgets.TraceEvent]:
    return [budgets.TraceEvent.from_dict(e) for e in raw]


def _bends(d: _Decided, latest: dict[tuple[int, int, int], PriorTrace], now: datetime) -> None:
    """Compare each fibre's latest 1310 and 1550 nm traces whenever this session brings either;
    the session's own traces become the latest. Single-mode only."""
    cable = d.session.cable
    touched: set[int] = set()
    when = d.tested_at or now
    for f, sor in zip(d.session.files, d.parsed, strict=True):
        band = bend_band(sor.wavelength_nm)
        if band is None:
            continue
        latest[(cable.pk, f.fibre, band)] = PriorTrace(
            0, when, f.fibre, sor.wavelength_nm, sor.total_loss_db, sor.events_as_dicts()
        )
        touched.add(f.fibre)
    if cable.kind != CableKind.SMF_OS2:
        return
    found = []
    for fibre in sorted(touched):
        short, long_ = latest.get((cable.pk, fibre, 1310)), latest.get((cable.pk, fibre, 1550))
        if short is None or long_ is None:
            continue
        earlier = next((t for t in (short, long_) if t.test_id), None)
        source = (
            f" (the {bend_band(earlier.wavelength_nm)} nm trace of {human_date(earlier.tested_at)})"
            if earlier
            else ""
        )
        for b in budgets.bends(_events(short.events), _events(long_.events)):
            d.warnings.append(f"fibre {fibre}: {b.message[:-1]}{source}.")
            found.append(
                {
                    "fibre": fibre,
                    "distance_m": round(b.distance_m or 0, 1),
                    "earlier_test": earlier and earlier.test_id,
                }
            )
    if found:
        d.details["bends"] = found


def _compare_with_baseline(d: _Decided) -> None:
    """Each trace against the baseline's trace of the same fibre and wavelength: the total loss,
    and every event matched by distance (new, or worsened past the thresholds)."""
    base = d.baseline
    if base is None:
        return
    base_traces = {(t.fibre, round(t.wavelength_nm or 0)): t for t in base.traces}
    threshold = loss_increase_db()
    segments = None
    for f, sor in zip(d.session.files, d.parsed, strict=True):
        wl = round(sor.wavelength_nm or 0)
        b = base_traces.get((f.fibre, wl))
        if b is None:
            continue
        if (
            sor.total_loss_db is not None
            and b.total_loss_db is not None
            and sor.total_loss_db - b.total_loss_db >= threshold - 1e-9
        ):
            d.findings.append(
                {
                    "fibre": f.fibre,
                    "distance_m": None,
                    "message": f"fibre {f.fibre}: total loss {b.total_loss_db:.2f} -> {sor.total_loss_db:.2f} dB",
                }
            )
        for change in trace_checks.event_changes(_events(b.events), _events(sor.events_as_dicts())):
            if segments is None:
                segments = path_segments(d.session.link, d.session.cable)
            where = budgets.locate(change.distance_m or 0.0, segments)
            d.findings.append(
                {
                    "fibre": f.fibre,
                    "wavelength_nm": wl,
                    "kind": change.kind,
                    "distance_m": round(change.distance_m or 0, 1),
                    "message": f"fibre {f.fibre} @{wl} nm: {change.message} Location: {where}.",
                }
            )
    if d.findings:
        d.warnings += [x["message"] for x in d.findings]
        d.details["loss_increase"] = {"baseline_test": base.test_id or None, "findings": d.findings}


def _decide(
    sessions: Sequence[OtdrSession], parsed_all: list[list[SorFile]], now: datetime
) -> list[_Decided]:
    cable_ids = sorted({s.cable.pk for s in sessions})
    polish: dict[int, str] = {}
    for cable_id, p in (
        CableEnd.objects.filter(cable_id__in=cable_ids).exclude(polish="").values_list("cable_id", "polish")
    ):
        polish.setdefault(cable_id, p)
    prior: OtdrPrior = otdr_prior(
        cable_ids=cable_ids,
        bend_cable_ids=sorted({s.cable.pk for s in sessions if s.cable.kind == CableKind.SMF_OS2}),
    )
    out = []
    for s, parsed in zip(sessions, parsed_all, strict=True):
        d = _Decided(s, parsed, [])
        d.tested_at = min((x.measured_at for x in parsed if x.measured_at), default=now)
        if problem := test_date_problem(install_date=s.cable.install_date, at=d.tested_at, now=now):
            # the instrument's clock (a reset OTDR says 1970 or 2000): dated at upload instead
            d.warnings.append(
                f"The trace's own date is not usable ({problem.rstrip('.')}); recorded at upload time."
            )
            d.tested_at = now
        p = polish.get(s.cable.pk, "")
        for f, sor in zip(s.files, parsed, strict=True):
            v, notes, elsewhere = _otdr_verdict(s.cable, sor, p)
            d.verdicts.append(v)
            d.elsewhere.append(elsewhere)
            d.warnings += [f"{f.name}: {w}" for w in sor.warnings + notes]
        d.details = {"polish": p, "files": len(s.files)}
        _session_verdict(d)
        _bends(d, prior.latest, now)
        d.baseline = prior.baselines.get(s.cable.pk)
        # A baseline is what retests are compared with trace by trace: every trace judged.
        if d.baseline is None and d.verdict in PASSING and not d.not_judged:
            d.is_baseline = True  # the next session of this cable in the batch compares with it
            when = d.tested_at
            prior.baselines[s.cable.pk] = PriorBaseline(
                0,
                when,
                [
                    PriorTrace(0, when, f.fibre, x.wavelength_nm, x.total_loss_db, x.events_as_dicts())
                    for f, x in zip(s.files, parsed, strict=True)
                ],
            )
        else:
            _compare_with_baseline(d)
        out.append(d)
    return out


def _test_row(d: _Decided, *, technician, source: str, now: datetime) -> CableTest:
    worst_i = min(  # the worst judged trace's figures (an unjudged one has no margin)
        range(len(d.verdicts)),
        key=lambda i: d.verdicts[i].margin_db if d.verdicts[i].margin_db is not None else 99,
    )
    first = d.parsed[0]
    return CableTest(
        cable=d.session.cable,
        link=d.session.link,
        kind=TestKind.OTDR,
        tested_at=d.tested_at or now,
        technician=technician,
        instrument=first.instrument[:100],
        instrument_serial=first.serial[:64],
        wavelength_nm=round(first.wavelength_nm) if first.wavelength_nm else None,
        loss_db=d.verdicts[worst_i].loss_db,
        budget_db=d.verdicts[worst_i].budget_db,
        margin_db=d.verdicts[worst_i].margin_db,
        verdict=d.verdict,
        is_baseline=d.is_baseline,
        warnings=d.warnings,
        details={"source": source, **d.details},
        notes=d.session.notes,
    )


TRACE_COLUMNS = [
    "test_id",
    "fibre",
    "file",
    "original_name",
    "sha256",
    "sor_version",
    "make",
    "model",
    "serial",
    "measured_at",
    "wavelength_nm",
    "pulse_width_ns",
    "index_of_refraction",
    "fibre_length_m",
    "fibre_length_source",
    "fibre_start_offset_m",
    "has_event_table",
    "total_loss_db",
    "orl_db",
    "checksum_ok",
    "checksum_convention",
    "events",
    "trace",
]


def _trace_row(test: CableTest, f: SorUpload, sor: SorFile, name: str) -> list:
    """One ``OtdrTrace`` row, in ``TRACE_COLUMNS`` order (written with COPY on PostgreSQL)."""
    return [
        test.pk,
        f.fibre,
        name,
        one_line(f.name, limit=255),  # the client's file name: shown on pages, logged, offered back
        hashlib.sha256(f.data).hexdigest(),
        sor.version,
        sor.make[:64],
        (sor.model or sor.module)[:64],
        sor.serial[:64],
        sor.measured_at,
        sor.wavelength_nm,
        sor.pulse_width_ns,
        sor.index_of_refraction,
        sor.fibre_length_m,
        sor.fibre_length_source,
        sor.fibre_start_offset_m,
        sor.has_event_table,
        sor.total_loss_db,
        sor.orl_db,
        sor.checksum.ok,
        sor.checksum.convention[:100],
        sor.events_as_dicts(),
        sor.trace,
    ]


@transaction.atomic
def otdr_sessions_upload(
    *,
    sessions: Sequence[OtdrSession],
    technician=None,
    now: datetime | None = None,
    source: str = "upload",
) -> list[CableTest]:
    """Store many OTDR sessions at once (a tester's project): all or nothing.

    Queries do not grow with the batch: the cables' ends, baselines and earlier 1310/1550 nm
    traces are read once; tests (with history) and traces are written in one statement each;
    the retest dates are recomputed once per batch after commit. A ``loss_increase`` alert is
    raised per cable whose retest lost ground (rare: one alert write each).
    """
    now = now or timezone.now()
    if not sessions:
        raise ValidationError({"file": "Choose at least one .sor file."})
    parsed_all = _check(sessions)
    decided = _decide(sessions, parsed_all, now)
    tests = [_test_row(d, technician=technician, source=source, now=now) for d in decided]
    written: list[str] = []
    try:
        bulk.bulk_insert(CableTest, tests, actor=technician, reason=f"OTDR {source}")
        cable_test_latest_refresh(cable_ids=[t.cable_id for t in tests])
        rows = []
        for d, test in zip(decided, tests, strict=True):
            for f, sor in zip(d.session.files, d.parsed, strict=True):
                name = default_storage.save(f"sor/{now:%Y/%m}/{uuid.uuid4().hex}.sor", ContentFile(f.data))
                written.append(name)
                rows.append(_trace_row(test, f, sor, name))
        # The sanctioned bulk writer (COPY on PostgreSQL): traces carry no history of their own.
        bulk.bulk_insert_rows(OtdrTrace, TRACE_COLUMNS, rows, history=False)
        for d, test in zip(decided, tests, strict=True):
            if d.findings:
                raise_loss_increase(
                    test=test,
                    findings=[x["message"] for x in d.findings],
                    evidence={"baseline_test": d.baseline.test_id or None, "findings": d.findings},
                    now=now,
                )
    except Exception:
        for name in written:
            default_storage.delete(name)
        raise
    by_verdict: dict[str, list[int]] = defaultdict(list)
    for test in tests:
        by_verdict[test.verdict].append(test.cable_id)
    for verdict, ids in by_verdict.items():
        retest_due_refresh_many_on_commit(cable_ids=ids, now=now, reason=f"otdr test recorded: {verdict}")
    return tests


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
    return otdr_sessions_upload(
        sessions=[OtdrSession(cable, files, link, notes)], technician=technician, now=now, source=source
    )[0]
