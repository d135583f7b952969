"""Gather a cable's evidence and decide (``core.decision``): for one cable or a page of them."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import NamedTuple

from django.db.models import BooleanField, Exists, ExpressionWrapper, Max, OuterRef, Q
from django.urls import reverse
from django.utils import timezone

from inventory.core.choices import AlertState, CableStatus, FieldNoteKind, TestKind, Verdict
from inventory.core.decision import (
    AlertFact,
    CableEvidence,
    Decision,
    FailFact,
    FaultFact,
    Hold,
    Step,
    alert_holds,
    cable_decide,
    production_hold,
)
from inventory.core.perf import gc_paused
from inventory.core.repairs import watching_words
from inventory.core.words import human_date, word
from inventory.db.compiled import CompiledRead
from inventory.models import (
    Alert,
    Cable,
    CableEnd,
    CableTest,
    CableTestLatest,
    FieldNote,
    Link,
    LinkDrain,
    LinkSegment,
)
from inventory.models.cables import cable_url
from inventory.selectors.collectives.drain import drain_overdue as overdue_of
from inventory.selectors.collectives.drain import drained_until
from inventory.selectors.testing.gate import FIBRE_KINDS, cable_gated, gate_missing
from inventory.selectors.testing.latest import LatestTest, latest_tests
from inventory.selectors.testing.results import (
    CableFacts,
    EndFacts,
    LinkVerdict,
    link_verdicts,
    links_as_facts,
)

_KIND_WORDS = {
    TestKind.OLTS: "power-meter test",
    TestKind.OTDR: "OTDR trace",
    TestKind.INSPECTION: "end-face inspection",
    TestKind.QUALIFICATION: "link qualification",
}


def alert_fact(a: Alert) -> AlertFact:
    return _fact(
        a.pk,
        a.severity,
        a.rule,
        a.summary,
        a.recommendation,
        a.silenced,
        a.watching_since,
        a.replacement,
        a.watch_action,
        a.watch_end,
        a.watch_cable,
        a.suspect_label,
    )


def _fact(
    pk,
    severity,
    rule,
    summary,
    recommendation,
    silenced,
    watching_since,
    replacement,
    action,
    end,
    cable,
    suspect,
) -> AlertFact:
    return AlertFact(
        id=pk,
        severity=severity,
        rule=rule,
        rule_words=word(rule, "rule"),
        summary=summary,
        recommendation=recommendation,
        url=reverse("alert-detail", args=[pk]),
        silenced=silenced,
        watching=watching_words(action, end, cable) if watching_since is not None else "",
        replacement=replacement,
        suspect=suspect or "",
    )


def _segment_what(label: str, role: str) -> str:
    return f"{word(role, 'role').lower() or 'cable'} {label} segment"


def _test_fail(label: str, role: str, t: LatestTest, *, own: bool, link_id: int | None = None) -> FailFact:
    """A failed test as a failure with its segment, figure and limit (``link_id``: the link it
    fails, for another segment of a link through the cable)."""
    url = f"{cable_url(label)}#tests"
    what = _segment_what(label, role)
    kind = _KIND_WORDS.get(t.kind, t.kind)
    if t.loss_db is not None and t.budget_db is not None:
        std = (
            "channel limit"
            if t.link_id
            else ("TIA-568.3 budget" if t.kind == TestKind.OLTS else "loss budget")
        )
        return FailFact(
            label,
            f"{what} ({kind})",
            f"{t.loss_db:.2f} dB",
            f"{t.budget_db:.2f} dB {std}",
            url,
            own,
            t.kind,
            link_id=link_id,
        )
    if t.loss_db is not None and t.margin_db is not None:
        limit = t.loss_db + t.margin_db
        return FailFact(
            label,
            f"{what} ({kind})",
            f"{t.loss_db:.2f} dB",
            f"{limit:.2f} dB limit",
            url,
            own,
            t.kind,
            link_id=link_id,
        )
    failed = f"failed on {human_date(t.tested_at)}"
    return FailFact(label, f"{what} ({kind})", failed, "", url, own, t.kind, link_id=link_id)


def fail_facts(
    *, cable_id: int, label: str, role: str, own: dict[str, LatestTest], links: list[LinkVerdict]
) -> list[FailFact]:
    """Every failure that concerns the cable: its own latest tests, every other segment of each
    link through it, and each link's channel over its PMD limit (named by its worst segment)."""
    out: list[FailFact] = []
    seen: set[tuple[str, str]] = set()

    def add(f: FailFact) -> None:
        if (f.segment, f.kind) not in seen:
            seen.add((f.segment, f.kind))
            out.append(f)

    for kind in (TestKind.OLTS, TestKind.OTDR, TestKind.INSPECTION, TestKind.QUALIFICATION):
        t = own.get(kind)
        if t is not None and t.verdict == Verdict.FAIL:
            add(_test_fail(label, role, t, own=True))
    for lv in links:
        for sv in lv.segments:
            if sv.cable_id == cable_id:
                continue
            for t in (sv.olts, sv.otdr, sv.qualification):
                if t is not None and t.verdict == Verdict.FAIL:
                    add(_test_fail(sv.label, sv.role, t, own=False, link_id=lv.link_id))
        if (
            lv.pmd_verdict == Verdict.FAIL
            and lv.channel_loss_db is not None
            and lv.channel_limit_db is not None
        ):
            measured = [s for s in lv.segments if s.olts is not None and s.olts.loss_db is not None]
            worst = max(measured, key=lambda s: s.olts.loss_db) if measured else None
            name = worst.label if worst else label
            by = f"worst segment {worst.label}, {worst.olts.loss_db:.2f} dB" if worst else ""
            add(
                FailFact(
                    name,
                    f"link {lv.a} \u2194 {lv.b} channel",
                    f"{lv.channel_loss_db:.2f} dB",
                    f"{lv.channel_limit_db:.2f} dB {lv.pmd or 'PMD'} channel limit",
                    f"{cable_url(name)}#tests",
                    (worst.cable_id if worst else cable_id) == cable_id,
                    "channel",
                    by,
                    lv.link_id,
                )
            )
    return out


def cable_evidence(
    cable: Cable,
    *,
    own: dict[str, LatestTest],
    links: list[LinkVerdict],
    missing: list[str],
    alerts: list[AlertFact],
    faults: list[FaultFact],
    today: date,
    replaced_by: str = "",
    drained_until: datetime | None = None,
    drained_links: list[str] | None = None,
    drain_overdue: tuple[datetime, datetime, int] | None = None,
) -> CableEvidence:
    """The evidence ``core.decision.cable_decide`` weighs, from what has been read
    (``replaced_by``: the replacement's label, for a retired cable; ``drained_until``: the end
    of the latest drain in force on a link through it, ``drained_links`` the names of those links
    (``link_words``);
    ``drain_overdue``: (drained at, window ended at, alert id) of a drain of a link through it
    that ran out without a restore)."""
    return CableEvidence(
        label=cable.label,
        status=cable.status,
        gated=cable_gated(cable),
        fibre=cable.kind in FIBRE_KINDS,
        alerts=sorted(alerts, key=lambda a: a.id),
        faults=sorted(faults, key=lambda f: (f.at, f.text)),
        fails=fail_facts(cable_id=cable.pk, label=cable.label, role=cable.role, own=own, links=links),
        links=len(links),
        missing=list(missing),
        retest_due=cable.retest_due,
        today=today,
        last_test_at=max((t.tested_at for t in own.values()), default=None),
        replaced_by=replaced_by,
        replaced_by_url=cable_url(replaced_by) if replaced_by else "",
        drained_until=drained_until,
        drained_links=sorted(drained_links or []),
        drain_overdue=drain_overdue[:2] if drain_overdue else None,
        drain_overdue_url=reverse("alert-detail", args=[drain_overdue[2]]) + "#drain"
        if drain_overdue
        else "",
    )


_STEP_ROUTES = {"olts": "cable-test-olts", "otdr": "cable-test-otdr", "replace": "cable-replace"}


def step_with_url(step: Step | None, label: str) -> Step | None:
    """The step with the URL of the form that takes it (alert and segment steps carry theirs)."""
    if step is None or step.url or step.key not in _STEP_ROUTES and step.key != "status":
        return step
    if step.key == "status":
        return replace(step, url=reverse("cable-set-status", args=[label]))
    return replace(step, url=reverse(_STEP_ROUTES[step.key], args=[label]))


_FACT_COLUMNS = (
    "pk",
    "severity",
    "rule",
    "summary",
    "recommendation",
    "silenced",
    "watching_since",
    "replacement",
    "watch_action",
    "watch_end",
    "watch_cable",
    "cable__label",
)


def _open_alerts_query(cable_ids: list[int]):
    open_ = Alert.objects.filter(state=AlertState.OPEN).order_by()
    suspect = open_.filter(cable_id__any=cable_ids).values_list(*_FACT_COLUMNS, "cable_id")
    on_path = (
        Alert.cables.through.objects.filter(alert__state=AlertState.OPEN, cable_id__any=cable_ids)
        .order_by()
        .values_list(*(f"alert__{c}" for c in _FACT_COLUMNS), "cable_id")
    )
    on_link = (
        LinkSegment.objects.filter(
            cable_id__any=cable_ids, link__active=True, link__alerts__state=AlertState.OPEN
        )
        .order_by()
        .values_list(*(f"link__alerts__{c}" for c in _FACT_COLUMNS), "cable_id")
    )
    return suspect.union(on_path, on_link, all=True)


_OPEN_ALERTS = CompiledRead(_open_alerts_query)


def _open_alerts_of(cable_ids: list[int]) -> dict[int, list[AlertFact]]:
    """Open alerts per cable: as the suspect, as a segment of the path, or on an active link
    through it. One query (a union of the three), whatever the number of cables or alerts."""
    out: dict[int, list[AlertFact]] = {}
    seen: set[tuple[int, int]] = set()
    for row in sorted(_OPEN_ALERTS(list(cable_ids)), key=lambda r: r[0]):
        if (row[0], row[-1]) in seen:
            continue
        seen.add((row[0], row[-1]))
        out.setdefault(row[-1], []).append(_fact(*row[:-1]))
    return out


def has_open_alert():
    """The SQL twin of ``_open_alerts_of`` for filtering a cable queryset (``?has_open_alert=``):
    a live cable with an open alert as the suspect, as a segment of its path, or on an active
    link through it. ``tests/inventory/views/test_cable_decision_properties.py`` holds the two to
    the same cables."""
    suspect = Alert.objects.filter(state=AlertState.OPEN, cable_id=OuterRef("pk"))
    on_path = Alert.cables.through.objects.filter(alert__state=AlertState.OPEN, cable_id=OuterRef("pk"))
    on_link = LinkSegment.objects.filter(
        cable_id=OuterRef("pk"), link__active=True, link__alerts__state=AlertState.OPEN
    )
    return (Exists(suspect) | Exists(on_path) | Exists(on_link)) & ~Q(status=CableStatus.RETIRED)


def alerted_cable_ids(cables: list[Cable]) -> set[int]:
    """The cables whose decision carries an open alert (``Decision.alerts``): for lists that show
    only that flag (the CSV export), one query for a chunk of cables instead of the decision."""
    live = [c.pk for c in cables if c.status != CableStatus.RETIRED]
    return set(_open_alerts_of(live)) if live else set()


_OPEN_FAULTS = CompiledRead(
    lambda cable_ids: (
        FieldNote.objects.filter(cable_id__any=cable_ids, kind=FieldNoteKind.FAULT, closed_at__isnull=True)
        .order_by("at", "pk")
        .values_list("cable_id", "at", "text", "actor__username")
    )
)


def open_faults(cable_ids: list[int]) -> dict[int, list[FaultFact]]:
    out: dict[int, list[FaultFact]] = {}
    for cable_id, at, text, who in _OPEN_FAULTS(list(cable_ids)):
        out.setdefault(cable_id, []).append(FaultFact(text, at, who or ""))
    return out


def blocking_alerts(*, cable: Cable) -> list[AlertFact]:
    """The open alerts that hold this cable out of production (warning level and above;
    ``core.decision.alert_holds``: not one on a link a trunk carries that names another cable)."""
    links = LinkSegment.objects.filter(cable_id=cable.pk, link__active=True).values("link_id").distinct()
    n = links.count()
    return [
        a for a in _open_alerts_of([cable.pk]).get(cable.pk, []) if alert_holds(a, label=cable.label, links=n)
    ]


# The active links through a page of cables, each flagged when a drain on it is not restored:
# one hashed look-up of the few unrestored drains, not four subqueries a row (584 rows for a page
# of 50 trunks: 2.7 against 1.0 ms). The flagged links' drains are then read by ``_LINK_DRAINS``.
_SEGMENTS = CompiledRead(
    lambda cable_ids: (
        LinkSegment.objects.filter(cable_id__any=cable_ids, link__active=True)
        .annotate(
            drain_open=ExpressionWrapper(
                Q(link_id__in=LinkDrain.objects.filter(restored_at__isnull=True).values("link_id")),
                output_field=BooleanField(),
            )
        )
        .order_by("cable_id", "link_id")
        .values_list("cable_id", "link_id", "drain_open")
    )
)
# The drain in force on each of these links, or the one that ran out without a restore.
_LINK_DRAINS = CompiledRead(
    lambda link_ids, now: (
        Link.objects.filter(pk__any=link_ids)
        .annotate(
            drained_until=drained_until(now=now),
            overdue_since=overdue_of(now=now, field="drained_at"),
            overdue_ended=overdue_of(now=now, field="window__ends_at"),
            overdue_alert=overdue_of(now=now, field="alert_id"),
        )
        .order_by()
        .values_list(
            "pk",
            "drained_until",
            "overdue_since",
            "overdue_ended",
            "overdue_alert",
            "a_port__device__name",
            "a_port__name",
            "b_port__device__name",
            "b_port__name",
        )
    )
)
# Every cable of those links, in order, then the cables, ends and latest tests of them all.
_LINK_SEGMENTS = CompiledRead(
    lambda link_ids: (
        LinkSegment.objects.filter(link_id__any=link_ids)
        .order_by("link_id", "seq")
        .values_list("link_id", "cable_id")
    )
)
_CABLE_FACTS = CompiledRead(
    lambda cable_ids: (
        Cable.objects.filter(pk__any=cable_ids)
        .order_by()
        .values_list("pk", "label", "kind", "role", "length_m")
    )
)
# Plain rows, as ``link_verdicts`` reads them: the gate reads three columns of an end.
_END_FACTS = CompiledRead(
    lambda cable_ids: (
        CableEnd.objects.filter(cable_id__any=cable_ids)
        .order_by()
        .values_list("cable_id", "connector_type", "fibre_count", "polish")
    )
)


class _LinksAndDrains(NamedTuple):
    links_of: dict[int, list[int]]  # the active links through each cable
    drained: dict[int, datetime]  # the end of the latest drain in force on one of them
    overdue: dict[int, tuple[datetime, datetime, int]]  # (drained at, window ended, alert id)
    drained_links: dict[int, list[str]]  # the links through it with a drain in force, named


def link_words(a: str, b: str) -> str:
    """A link as a trunk's drain names it: ``gpu-0001:eth1 \u2194 leaf-01:Ethernet2/1``."""
    return f"{a} \u2194 {b}"


def _links_and_drains(cable_ids: list[int], now: datetime) -> _LinksAndDrains:
    """The active links through each cable, the end of the latest drain in force on one of them
    (and which of them are drained), and the latest drain of one of them that ran out without a
    restore (drained at, window ended at, alert id): two compiled reads, the second only when a
    drain is not restored."""
    links_of: dict[int, list[int]] = {}
    drained: dict[int, datetime] = {}
    drained_links: dict[int, list[str]] = {}
    overdue: dict[int, tuple[datetime, datetime, int]] = {}
    segments = _SEGMENTS(cable_ids)
    held = sorted({link_id for _, link_id, drain_open in segments if drain_open})
    drains = {row[0]: row[1:] for row in _LINK_DRAINS(held, now)} if held else {}
    for cable_id, link_id, _ in segments:
        links_of.setdefault(cable_id, []).append(link_id)
        if link_id not in drains:
            continue
        until, *late, a_dev, a_port, b_dev, b_port = drains[link_id]
        if until is not None:
            drained_links.setdefault(cable_id, []).append(
                link_words(f"{a_dev}:{a_port}", f"{b_dev}:{b_port}")
            )
        if until is not None and (cable_id not in drained or until > drained[cable_id]):
            drained[cable_id] = until
        if late[0] is not None and (cable_id not in overdue or late[0] > overdue[cable_id][0]):
            overdue[cable_id] = tuple(late)
    return _LinksAndDrains(links_of, drained, overdue, drained_links)


@dataclass
class _Rows:
    """The links' segments, cables and ends for ``link_verdicts`` (as ``pages.LinkRows``)."""

    segs: dict[int, list[int]]
    cables: dict[int, CableFacts]
    ends: dict[int, list[EndFacts]]


def cable_decisions(*, cables: list[Cable], now: datetime | None = None) -> dict[int, Decision]:
    """The decision for each cable (a page of a list, the API), in a fixed number of queries,
    each compiled once per process (``CompiledRead``): the links through them, those links'
    segments, the facts, ends and latest tests of every cable on them (the page's own cables
    included: one read of each for the gate and the verdicts), whole-link tests, open alerts
    and open faults. The collector is paused meanwhile (``gc_paused``): a page of 50 trunks
    builds some 100,000 small acyclic objects."""
    if not cables:
        return {}
    with gc_paused():
        return _cable_decisions(cables, now or timezone.now())


def _cable_decisions(cables: list[Cable], now: datetime) -> dict[int, Decision]:
    today = timezone.localdate(now)
    live = [c for c in cables if c.status != CableStatus.RETIRED]
    live_ids = [c.pk for c in live]
    links_of: dict[int, list[int]] = {}
    verdicts: dict[int, LinkVerdict] = {}
    latest: dict[int, dict[str, LatestTest]] = {}
    gate: dict[int, list[str]] = {}
    alerts: dict[int, list[AlertFact]] = {}
    faults: dict[int, list[FaultFact]] = {}
    drained: dict[int, datetime] = {}
    overdue: dict[int, tuple[datetime, datetime, int]] = {}
    drained_links: dict[int, set[int]] = {}
    mine = set(live_ids)
    if live_ids:
        links_of, drained, overdue, drained_links = _links_and_drains(live_ids, now)
        link_ids = sorted({lid for lids in links_of.values() for lid in lids})
        segs: dict[int, list[int]] = {}
        if link_ids:
            for link_id, cable_id in _LINK_SEGMENTS(link_ids):
                segs.setdefault(link_id, []).append(cable_id)
        others = sorted({cid for ids in segs.values() for cid in ids} - mine)
        every = sorted(mine.union(others))
        latest = latest_tests(cable_ids=every)
        ends: dict[int, list[EndFacts]] = {}
        for cable_id, ctype, fcount, polish in _END_FACTS(every):
            ends.setdefault(cable_id, []).append(EndFacts(ctype, fcount, polish))
        if link_ids:
            # Every cable of the links, the page's own too: the same query whatever the page holds.
            facts = {row[0]: CableFacts(*row) for row in _CABLE_FACTS(every)}
            verdicts = link_verdicts(
                links=links_as_facts(link_ids),
                now=now,
                rows=_Rows(segs, facts, ends),
                known_latest={cid: latest.get(cid, {}) for cid in every},
            )
        gate = gate_missing(cables=live, latest=latest, ends=ends, now=now)
        alerts = _open_alerts_of(live_ids)
        faults = open_faults(live_ids)
    replaced_ids = [c.replaced_by_id for c in cables if c.replaced_by_id]
    replaced = (
        dict(Cable.objects.filter(pk__in=replaced_ids).values_list("pk", "label")) if replaced_ids else {}
    )
    out: dict[int, Decision] = {}
    for c in cables:
        ev = cable_evidence(
            c,
            own=latest.get(c.pk, {}) if c.pk in mine else {},
            links=[verdicts[lid] for lid in links_of.get(c.pk, []) if lid in verdicts],
            missing=gate.get(c.pk, []),
            alerts=alerts.get(c.pk, []),
            faults=faults.get(c.pk, []),
            today=today,
            replaced_by=replaced.get(c.replaced_by_id, ""),
            drained_until=drained.get(c.pk),
            drained_links=drained_links.get(c.pk),
            drain_overdue=overdue.get(c.pk),
        )
        d = cable_decide(ev)
        d.step = step_with_url(d.step, c.label)
        out[c.pk] = d
    return out


def cable_decisions_by_id(*, cable_ids: list[int], now: datetime | None = None) -> dict[int, Decision]:
    """The decision for each of these cables, for pages whose rows are plain values (the rack and
    device pages, the retest worklist): the cables in one query, then ``cable_decisions``."""
    if not cable_ids:
        return {}
    return cable_decisions(cables=_CABLES_BY_ID(sorted(set(cable_ids))), now=now)


_CABLES_BY_ID = CompiledRead(lambda cable_ids: Cable.objects.filter(pk__any=cable_ids))


def cables_under_watch(cable_ids: list[int]) -> set[int]:
    """Which of these cables have an open alert on an active link through them, an open fault
    report, or a latest test of their own that fails (power meter, OTDR or qualification): what,
    besides the alerts naming a cable, makes a rack page list it (its row then says the cable's
    decision, which names the failing segment). One query, a union of the three."""
    if not cable_ids:
        return set()
    return {pk for (pk,) in _UNDER_WATCH(list(cable_ids))}


def _under_watch_query(cable_ids: list[int]):
    on_link = (
        LinkSegment.objects.filter(
            cable_id__any=cable_ids, link__active=True, link__alerts__state=AlertState.OPEN
        )
        .order_by()
        .values_list("cable_id")
    )
    faulted = (
        FieldNote.objects.filter(cable_id__any=cable_ids, kind=FieldNoteKind.FAULT, closed_at__isnull=True)
        .order_by()
        .values_list("cable_id")
    )
    failing = (
        CableTestLatest.objects.filter(cable_id__any=cable_ids)
        .filter(
            Q(olts_verdict=Verdict.FAIL)
            | Q(otdr_verdict=Verdict.FAIL)
            | Q(qualification_verdict=Verdict.FAIL)
        )
        .order_by()
        .values_list("cable_id")
    )
    return on_link.union(faulted, failing)


_UNDER_WATCH = CompiledRead(_under_watch_query)


# What ``cable_holds`` reads of a cable: its label, its status and its replacement's label.
_HOLD_CABLES = CompiledRead(
    lambda cable_ids: (
        Cable.objects.filter(pk__any=cable_ids)
        .order_by()
        .values_list("pk", "label", "status", "replaced_by__label")
    )
)
# When each cable was last tested (any kind): a test after a fault report settles it.
_LAST_TESTED = CompiledRead(
    lambda cable_ids: (
        CableTest.objects.filter(cable_id__any=cable_ids)
        .order_by()
        .values("cable_id")
        .annotate(last=Max("tested_at"))
        .values_list("cable_id", "last")
    )
)


def cable_holds(*, cable_ids: list[int], now: datetime | None = None) -> dict[int, Hold]:
    """What holds each of these cables out of production beyond its tests
    (``core.decision.production_hold``: retired, a drain overdue, a blocking alert, an open
    fault), for the cables that are held: the evidence the cable page and ``cable_decisions``
    gather for those rules, without the tests. For the commissioning report's page of links, in
    a fixed number of queries whatever the number of cables."""
    if not cable_ids:
        return {}
    now = now or timezone.now()
    today = timezone.localdate(now)
    ids = sorted(set(cable_ids))
    cables = _HOLD_CABLES(ids)
    live = [pk for pk, _, status, _ in cables if status != CableStatus.RETIRED]
    alerts = _open_alerts_of(live) if live else {}
    faults = open_faults(live) if live else {}
    links_of, _, overdue, _ = _links_and_drains(live, now) if live else ({}, {}, {}, {})
    tested = dict(_LAST_TESTED(sorted(faults))) if faults else {}
    out: dict[int, Hold] = {}
    for pk, label, status, replaced_by in cables:
        late = overdue.get(pk)
        ev = CableEvidence(
            label=label,
            status=status,
            gated=False,  # the tests are judged apart (``link_verdicts``)
            fibre=False,
            alerts=sorted(alerts.get(pk, []), key=lambda a: a.id),
            faults=sorted(faults.get(pk, []), key=lambda f: (f.at, f.text)),
            today=today,
            last_test_at=tested.get(pk),
            replaced_by=replaced_by or "",
            drain_overdue=late[:2] if late else None,
            links=len(set(links_of.get(pk, []))),
        )
        if (hold := production_hold(ev)) is not None:
            out[pk] = hold
    return out
