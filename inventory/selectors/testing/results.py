"""Reads about test results: the cable page's test panel and link verdicts (TIA per segment, PMD
for the channel), which the commissioning report (``selectors.pages.commissioning``) pages
through. Set-based: the number of queries does not grow with the number of cables or links. The latest and last passing
tests are in ``latest``, the production gate in ``gate``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

from django.urls import reverse
from django.utils import timezone

from inventory.core.choices import PASSING, CableKind, TestKind, Verdict
from inventory.core.optics import budgets
from inventory.core.perf import gc_paused
from inventory.core.words import word
from inventory.db.compiled import CompiledRead
from inventory.models import Cable, CableEnd, CableTest, Link, LinkSegment, Port
from inventory.selectors.testing.facts import link_channel_limit
from inventory.selectors.testing.gate import FIBRE_KINDS, SEALED_KINDS, cable_gate_check, gate_missing
from inventory.selectors.testing.latest import LatestTest, chunk_size, id_chunks, latest_tests


# Named tuples, not frozen dataclasses: a desk-list page of 50 trunks builds some 2,500 of each,
# and a frozen dataclass sets each field through object.__setattr__ (measured at 131,072 GPUs:
# 1.5-2 ms of such a page's 30-35 ms of Python time).
class CableFacts(NamedTuple):
    """What the verdicts need of a cable, without a model instance per row."""

    pk: int
    label: str
    kind: str
    role: str
    length_m: object


class EndFacts(NamedTuple):
    connector_type: str
    fibre_count: int | None
    polish: str


class LinkFacts(NamedTuple):
    """What a link's verdict reads of the link (``link_verdicts`` takes these as well as model
    instances): its id, ports, PMD and recorded budget. Not its ends' names: only the words of a
    channel over its PMD limit name them, so ``link_verdicts`` reads them for those links only."""

    pk: int
    a_port_id: int
    b_port_id: int
    pmd: str
    loss_budget_db: float | None


# The links of a page of cables, as plain rows (``LinkFacts``), compiled once per process.
_LINK_FACTS = CompiledRead(
    lambda link_ids: (
        Link.objects.filter(pk__any=link_ids)
        .order_by("pk")
        .values_list("pk", "a_port_id", "b_port_id", "pmd", "loss_budget_db")
    )
)


def links_as_facts(link_ids: list[int]) -> list[LinkFacts]:
    """The links as ``LinkFacts``, by id, in one compiled read."""
    return [LinkFacts(*row) for row in _LINK_FACTS(link_ids)]


# --- the cable page's test panel -------------------------------------------------------------


def _test_row(t: CableTest) -> dict:
    return {
        "test": t,
        "kind": t.kind,
        "kind_label": t.get_kind_display(),
        "verdict": t.verdict,
        "verdict_label": t.get_verdict_display(),
        "margin_db": t.margin_db,
        "loss_db": t.loss_db,
        "budget_db": t.budget_db,
        "tested_at": t.tested_at,
        "technician": t.technician.get_username() if t.technician_id else "",
        "instrument": t.instrument,
        "warnings": t.warnings,
        "is_baseline": t.is_baseline,
        "budget_source": (t.details or {}).get("budget_source", ""),
        # an inspection of both ends: which end failed ("End A fail · End B pass"), so the
        # technician knows which one to clean
        "ends": " · ".join(
            f"End {side} {word(v, 'verdict').lower()}"
            for side, v in sorted(((t.details or {}).get("ends") or {}).items())
        )
        if t.kind == TestKind.INSPECTION
        else "",
        "fibres": [
            {
                "fibre": r.fibre,
                "wavelength_nm": r.wavelength_nm,
                "direction": r.direction,
                "loss_db": r.loss_db,
                "verdict": r.verdict,
            }
            for r in t.fibres.all()
        ]
        if t.kind == TestKind.OLTS
        else [],
    }


TESTS_SHOWN = 50  # the cable page reads the latest 50 tests of the cable
_CABLE_TESTS = CompiledRead(
    lambda cable_id: (
        CableTest.objects.filter(cable_id=cable_id)
        .select_related("technician")
        .prefetch_related("fibres")
        .order_by("-tested_at", "-pk")[:TESTS_SHOWN]
    )
)


def _latest_of(tests: list[CableTest]) -> dict[str, LatestTest]:
    """The latest test of each kind among ``tests`` (newest first, fibres prefetched), as
    ``latest_tests`` gives them: the cable page has read every test of the cable already."""
    out: dict[str, LatestTest] = {}
    for t in tests:
        if t.kind in out:
            continue
        out[t.kind] = LatestTest(
            t.pk,
            t.cable_id,
            t.kind,
            t.tested_at,
            t.verdict,
            t.loss_db,
            t.margin_db,
            t.budget_db,
            t.link_id,
            t.fibres_passed or 0,
        )
    return out


def cable_tests_context(cable: Cable, *, links: list[Link] | None = None, link_rows=None) -> dict:
    """Context for ``inventory/_cable_tests.html``: everything under one key, ``cable_tests``.

    Latest test per kind (verdict, margin, budget), the channel verdict of every link the
    cable carries (TIA per segment against the PMD's channel limit), what still blocks
    production, and the URLs of the test forms (the OTDR traces over time, with the baseline
    overlaid: ``selectors.testing.traces.cable_traces_context``). ``link_rows``
    (``selectors.pages.LinkRows``): the segments, cables and ends the page's trace has read already.
    """
    tests = _CABLE_TESTS(cable.pk)
    latest: dict[str, CableTest] = {}
    for t in tests:
        latest.setdefault(t.kind, t)
    order = [TestKind.OLTS, TestKind.OTDR, TestKind.INSPECTION, TestKind.QUALIFICATION]
    rows = [_test_row(latest[k]) for k in order if k in latest]
    otdr = latest.get(TestKind.OTDR)
    if links is None:
        links = list(Link.objects.filter(active=True, segments__cable=cable).distinct())
    known = {cable.pk: _latest_of(tests)} if len(tests) < TESTS_SHOWN else None
    channel = link_verdicts(links=links, rows=link_rows, known_latest=known) if links else {}
    # link_verdicts ran the gate over every segment, this cable's included: reuse it.
    mine = next((sv for lv in channel.values() for sv in lv.segments if sv.cable_id == cable.pk), None)
    missing = mine.missing if mine is not None else cable_gate_check(cable=cable)
    return {
        "cable_tests": {
            "latest": rows,
            "history": tests[:20],
            "otdr": otdr,
            "links": [channel[link.pk] for link in links if link.pk in channel],
            "gate_missing": missing,
            # The latest test of each kind (``LatestTest``): the cable's own evidence for the decision.
            "own_latest": known[cable.pk] if known else latest_tests(cable_ids=[cable.pk]).get(cable.pk, {}),
            "gate_applies": cable.kind in CableKind.fibre() | CableKind.sealed(),
            "urls": {
                "olts": reverse("cable-test-olts", kwargs={"label": cable.label}),
                "otdr": reverse("cable-test-otdr", kwargs={"label": cable.label}),
                "inspect": reverse("cable-inspect", kwargs={"label": cable.label}),
            },
        }
    }


# --- link verdicts and the commissioning report ----------------------------------------------


@dataclass(slots=True)
class SegmentVerdict:
    cable_id: int
    label: str
    kind: str
    role: str
    length_m: float | None
    olts: LatestTest | None
    otdr: LatestTest | None
    qualification: LatestTest | None
    missing: list[str] = field(default_factory=list)


@dataclass(slots=True)
class LinkVerdict:
    link_id: int
    a: str
    b: str
    pmd: str
    segments: list[SegmentVerdict]
    tia_verdict: str
    channel_loss_db: float | None
    channel_limit_db: float | None
    channel_source: str
    pmd_verdict: str
    pmd_margin_db: float | None
    verdict: str
    blockers: list[str]
    note: str = ""
    #: What holds a cable of the link out of production beyond the tests, in the cable page's
    #: words (``C000114: Fault reported: ...``): filled by the commissioning report
    #: (``pages.commissioning.link_holds``, from ``core.decision.production_hold``); ``link_verdicts``
    #: judges the tests only and leaves it empty.
    holds: list[str] = field(default_factory=list)

    @property
    def qualified(self) -> bool:
        """Judged by its link qualification, not by TIA and PMD: a DAC, ACC or AOC link has no
        fibre segment, so no component budget and no channel to judge ("unknown" there means
        "does not apply", and the pages say so instead of showing it)."""
        kinds = {s.kind for s in self.segments}
        return bool(kinds & SEALED_KINDS) and not kinds & FIBRE_KINDS

    @property
    def ready(self) -> bool:
        """Ready for production: every test the link needs passes, and (once the report has
        filled ``holds``) nothing holds one of its cables out of production."""
        return not self.blockers and not self.holds and self.verdict in PASSING

    def as_dict(self) -> dict:
        def t(x: LatestTest | None):
            return (
                None
                if x is None
                else {
                    "id": x.id,
                    "verdict": x.verdict,
                    "loss_db": x.loss_db,
                    "margin_db": x.margin_db,
                    "tested_at": x.tested_at,
                }
            )

        return {
            "link_id": self.link_id,
            "a": self.a,
            "b": self.b,
            "pmd": self.pmd,
            "verdict": self.verdict,
            "tia_verdict": self.tia_verdict,
            "pmd_verdict": self.pmd_verdict,
            "channel_loss_db": self.channel_loss_db,
            "channel_limit_db": self.channel_limit_db,
            "channel_source": self.channel_source,
            "pmd_margin_db": self.pmd_margin_db,
            "ready": self.ready,
            "qualified": self.qualified,
            "blockers": self.blockers,
            "holds": self.holds,
            "note": self.note,
            "segments": [
                {
                    "cable": s.label,
                    "kind": s.kind,
                    "role": s.role,
                    "length_m": s.length_m,
                    "olts": t(s.olts),
                    "otdr": t(s.otdr),
                    "qualification": t(s.qualification),
                    "missing": s.missing,
                }
                for s in self.segments
            ],
        }


def link_verdicts(
    *,
    links: list[Link] | list[LinkFacts],
    now: datetime | None = None,
    rows=None,
    known_latest: dict[int, dict[str, LatestTest]] | None = None,
) -> dict[int, LinkVerdict]:
    """The links' verdicts in a fixed number of queries, with their segments and the sentences a
    technician reads: for a page of links. The verdicts alone of a whole site come from
    ``verdict_table`` in one SQL statement.

    * TIA: each fibre segment's latest power-meter verdict (against its component budget).
    * PMD: the channel loss (a whole-link test when there is one, else the sum of the segments'
      worst fibres, conservative: a mated pair between two segments is in both tests) against the
      PMD's channel limit. A link can pass TIA and fail its PMD; ``note`` says so.
    * Blockers: what each segment still needs for production (the gate).

    ``rows`` (``selectors.pages.LinkRows``, covering every link): the segments, cables and ends
    already read, so only the tests are read here. ``known_latest``: the latest tests of some
    cables, already read (the cable page's own cable): not read again. Links given as
    ``LinkFacts`` (the decisions of a desk list's page) have their ends named (``a``, ``b``) only
    where the channel fails its PMD, the one verdict whose words name them; elsewhere they are "".
    """
    with gc_paused():  # a few hundred thousand acyclic objects: see gc_paused
        return _link_verdicts(links=links, now=now or timezone.now(), rows=rows, known=known_latest or {})


def _link_verdicts(
    *, links: list[Link] | list[LinkFacts], now: datetime, rows, known: dict
) -> dict[int, LinkVerdict]:
    link_ids = [link.pk for link in links]
    facts = _link_facts(link_ids, rows=rows)
    others = [c for c in facts.cable_ids if c not in known]
    latest = latest_tests(cable_ids=others) if others else {}
    latest.update({c: known[c] for c in facts.cable_ids if c in known})
    gate = _gate_from(facts.cables, latest, facts.ends, now=now)
    bare = bool(links) and all(isinstance(x, LinkFacts) for x in links)
    port_names = None if bare else _port_names(links)
    whole_link = _whole_link_tests(link_ids)
    out: dict[int, LinkVerdict] = {}
    per_cable: dict[int, SegmentVerdict] = {}  # a cable on several links is judged once
    for link in links:
        seg_v = []
        for cid in facts.segs.get(link.pk, []):
            sv = per_cable.get(cid)
            if sv is None:
                sv = per_cable[cid] = _segment_verdict(
                    facts.cables[cid], latest.get(cid, {}), gate.get(cid, [])
                )
            seg_v.append(sv)
        out[link.pk] = _link_verdict(link, seg_v, whole_link.get(link.pk), port_names)
    if bare:
        named = [x for x in links if out[x.pk].pmd_verdict == Verdict.FAIL]
        port_names = _port_names(named)  # no query when none fails
        for x in named:
            out[x.pk].a, out[x.pk].b = port_names.get(x.a_port_id, "?"), port_names.get(x.b_port_id, "?")
    return out


@dataclass
class _LinkFacts:
    """What ``link_verdicts`` reads besides the tests: each link's cables in order, the cables'
    facts and ends."""

    segs: dict[int, list[int]]
    cables: dict[int, CableFacts]
    ends: dict[int, list[EndFacts]]
    cable_ids: list[int]


def _link_facts(link_ids: list[int], *, rows) -> _LinkFacts:
    """The links' segments, cables and ends: from ``rows`` when they cover every link, else read
    in chunks of ids."""
    size = chunk_size()
    segs: dict[int, list[int]] = {}
    preloaded = rows is not None and all(pk in rows.segs for pk in link_ids)
    scopes = [link_ids[i : i + size] for i in range(0, len(link_ids), size)]
    if preloaded:
        scopes = []
        segs = {pk: rows.segs[pk] for pk in link_ids}
    for scope in scopes:
        for link_id, cable_id in (
            LinkSegment.objects.filter(link_id__any=scope)
            .order_by("link_id", "seq")
            .values_list("link_id", "cable_id")
        ):
            segs.setdefault(link_id, []).append(cable_id)
    cable_ids = sorted({c for ids in segs.values() for c in ids})
    cscopes = [cable_ids[i : i + size] for i in range(0, len(cable_ids), size)]
    cables: dict[int, CableFacts] = {}
    ends: dict[int, list[EndFacts]] = {}
    if preloaded:  # facts already (the desk lists): shared, not copied; model rows (the cable page): copied
        cscopes = []
        for cid in cable_ids:
            c = rows.cables[cid]
            cables[cid] = (
                c if isinstance(c, CableFacts) else CableFacts(c.pk, c.label, c.kind, c.role, c.length_m)
            )
            if its := rows.ends.get(cid):
                ends[cid] = (
                    its
                    if isinstance(its[0], EndFacts)
                    else [EndFacts(e.connector_type, e.fibre_count, e.polish) for e in its]
                )
    for scope in cscopes:
        for row in (
            Cable.objects.filter(pk__any=scope)
            .order_by()
            .values_list("pk", "label", "kind", "role", "length_m")
        ):
            cables[row[0]] = CableFacts(*row)
        for cable_id, ctype, fcount, polish in CableEnd.objects.filter(cable_id__any=scope).values_list(
            "cable_id", "connector_type", "fibre_count", "polish"
        ):
            ends.setdefault(cable_id, []).append(EndFacts(ctype, fcount, polish))
    return _LinkFacts(segs, cables, ends, cable_ids)


def _segment_verdict(c: CableFacts, mine: dict[str, LatestTest], missing: list[str]) -> SegmentVerdict:
    """One cable of a link with its latest OLTS, OTDR and qualification, and what it still needs."""
    return SegmentVerdict(
        c.pk,
        c.label,
        c.kind,
        c.role,
        float(c.length_m) if c.length_m is not None else None,
        mine.get(TestKind.OLTS),
        mine.get(TestKind.OTDR),
        mine.get(TestKind.QUALIFICATION),
        missing,
    )


def _segment_failure(s: SegmentVerdict) -> str:
    """A failing segment in words, named with its figure and limit (never "a segment fails")."""
    t = s.olts
    if t is not None and t.loss_db is not None and t.budget_db is not None:
        return (
            f"segment {s.label} loses {t.loss_db:.2f} dB, over its {t.budget_db:.2f} dB "
            "TIA-568.3 component budget"
        )
    return f"segment {s.label} failed its power-meter test"


def _link_verdict(
    link: Link | LinkFacts,
    seg_v: list[SegmentVerdict],
    channel: float | None,
    port_names: dict[int, str] | None,
) -> LinkVerdict:
    """One link's TIA, PMD and overall verdicts, note and blockers from its segments' verdicts
    (``channel``: the loss of a whole-link test, when there is one; ``port_names`` None: the
    ends are named later, if at all)."""
    fibre_segs = [s for s in seg_v if s.kind in FIBRE_KINDS]
    tia = (
        budgets.worst(s.olts.verdict if s.olts else Verdict.UNKNOWN for s in fibre_segs)
        if fibre_segs
        else Verdict.UNKNOWN
    )
    if any(s.olts is None for s in fibre_segs):
        tia = Verdict.UNKNOWN if tia != Verdict.FAIL else tia
    fibre_kind = fibre_segs[0].kind if fibre_segs else ""
    limit, source = link_channel_limit(link, fibre_kind) if fibre_segs else (None, "")
    if channel is None and fibre_segs and all(s.olts and s.olts.loss_db is not None for s in fibre_segs):
        channel = round(sum(s.olts.loss_db for s in fibre_segs), 3)
    pv = (
        budgets.verdict_for(channel, limit)
        if fibre_segs
        else budgets.Verdict(Verdict.UNKNOWN, None, None, None)
    )
    sealed = [s for s in seg_v if s.kind in SEALED_KINDS]
    qual = budgets.worst(s.qualification.verdict if s.qualification else Verdict.UNKNOWN for s in sealed)
    if fibre_segs:
        overall = (
            budgets.worst([tia, pv.verdict])
            if Verdict.UNKNOWN not in (tia, pv.verdict)
            else (Verdict.FAIL if Verdict.FAIL in (tia, pv.verdict) else Verdict.UNKNOWN)
        )
    elif sealed:
        overall = qual if all(s.qualification for s in sealed) else Verdict.UNKNOWN
    else:
        overall = Verdict.UNKNOWN
    note = ""
    if tia in PASSING and pv.verdict == Verdict.FAIL:
        note = (
            f"Every segment passes TIA-568.3, but the channel loses {channel:.2f} dB, over the "
            f"{link.pmd or 'PMD'} limit of {limit:.2f} dB: the link fails its PMD."
        )
    elif tia == Verdict.FAIL and pv.verdict in PASSING:
        failing = "; ".join(
            _segment_failure(s) for s in fibre_segs if s.olts and s.olts.verdict == Verdict.FAIL
        )
        note = f"The channel is within its PMD limit, but {failing}."
    blockers = [f"{s.label}: needs {'; '.join(s.missing)}" for s in seg_v if s.missing]
    if pv.verdict == Verdict.FAIL:
        blockers.append(f"channel loss {channel:.2f} dB is over the {limit:.2f} dB PMD limit")
    a, b = (
        ("", "")
        if port_names is None
        else (port_names.get(link.a_port_id, "?"), port_names.get(link.b_port_id, "?"))
    )
    return LinkVerdict(
        link.pk,
        a,
        b,
        link.pmd,
        seg_v,
        tia,
        channel,
        limit,
        source,
        pv.verdict,
        pv.margin_db,
        overall,
        blockers,
        note,
    )


def _gate_from(cables, latest, ends, *, now) -> dict[int, list[str]]:
    """The gate (``selectors.testing.gate.cables_gate``) over data already loaded."""
    return gate_missing(cables=list(cables.values()), latest=latest, ends=ends, now=now)


def _port_names(links: list[Link] | list[LinkFacts]) -> dict[int, str]:
    if links and all(
        isinstance(x, Link) and Link.a_port.is_cached(x) and Link.b_port.is_cached(x) for x in links
    ):
        # The cable page loads its links with their ports and devices: no query needed.
        loaded = [port for link in links for port in (link.a_port, link.b_port)]
        if all(Port.device.is_cached(port) for port in loaded):
            return {port.pk: f"{port.device.name}:{port.name}" for port in loaded}
    ids = {p for link in links for p in (link.a_port_id, link.b_port_id)}
    out = {}
    ids = sorted(ids)
    for i in range(0, len(ids), chunk_size()):
        # A dict: the ports' default order (by device name) would sort for nothing.
        rows = Port.objects.filter(pk__any=ids[i : i + chunk_size()]).order_by()
        for pk, dev, name in rows.values_list("pk", "device__name", "name"):
            out[pk] = f"{dev}:{name}"
    return out


_WHOLE_LINK_TESTS = CompiledRead(
    lambda link_ids: (
        CableTest.objects.filter(link_id__any=link_ids, kind=TestKind.OLTS, loss_db__isnull=False)
        .order_by("link_id", "-tested_at", "-pk")
        .values_list("link_id", "loss_db")
    )
)


def _whole_link_tests(link_ids) -> dict[int, float]:
    """Latest OLTS measured over a whole link (test.link set): its worst-fibre loss."""
    out: dict[int, float] = {}
    for chunk in id_chunks(link_ids):
        for link_id, loss in _WHOLE_LINK_TESTS(chunk):
            out.setdefault(link_id, loss)
    return out
