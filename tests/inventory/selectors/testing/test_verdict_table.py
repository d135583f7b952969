"""The whole-cluster verdicts computed in SQL (``verdict_table``) are the verdicts the cable page
and the commissioning report show (``results.link_verdicts``, built in Python), link by link, on
a seeded cluster with every case the rules distinguish put into it."""

import random
from datetime import timedelta

import pytest
from django.db.models import Count
from django.utils import timezone

from inventory.core.choices import AlertState, CableKind, CableStatus, FieldNoteKind, Severity, Verdict
from inventory.core.choices import TestKind as Kind
from inventory.models import (
    Alert,
    Cable,
    CableEnd,
    CableTest,
    FieldNote,
    Link,
    LinkDrain,
    LinkSegment,
    MaintenanceWindow,
    sanctioned_bulk_write,
)
from inventory.selectors.pages.commissioning import commissioning_report, link_holds
from inventory.selectors.testing.facts import otdr_min_length_m
from inventory.selectors.testing.results import link_verdicts
from inventory.selectors.testing.verdict_table import link_verdict_counts, link_verdict_rows
from inventory.services import testing as svc
from inventory.services.demo.seed import demo_seed
from inventory.services.testing.latest_table import cable_test_latest_refresh

pytestmark = pytest.mark.django_db


def _python_rows(now):
    links = list(Link.objects.filter(active=True).order_by("pk"))
    verdicts = link_verdicts(links=links, now=now)
    link_holds(verdicts=verdicts, now=now)  # as the report does: what holds a cable beyond its tests
    return {
        pk: (
            v.tia_verdict,
            v.channel_loss_db,
            v.channel_limit_db,
            v.pmd_verdict,
            v.pmd_margin_db,
            v.verdict,
            v.ready,
        )
        for pk, v in verdicts.items()
    }


def _held_verdicts(now):
    verdicts = link_verdicts(links=list(Link.objects.filter(active=True)), now=now)
    link_holds(verdicts=verdicts, now=now)
    return [
        lv for lv in verdicts.values() if not lv.blockers and lv.verdict in (Verdict.PASS, Verdict.MARGINAL)
    ]


def _sql_rows(now):
    return {
        r.link_id: (
            r.tia_verdict,
            r.channel_loss_db,
            r.channel_limit_db,
            r.pmd_verdict,
            r.pmd_margin_db,
            r.verdict,
            r.ready,
        )
        for r in link_verdict_rows(link_qs=Link.objects.filter(active=True).values("pk"), now=now)
    }


def _python_counts(rows) -> dict[str, int]:
    ready = sum(r[6] for r in rows.values())
    return {
        "links": len(rows),
        "ready": ready,
        "blocked": len(rows) - ready,
        "fail": sum(r[5] == Verdict.FAIL for r in rows.values()),
        "pmd_fail_tia_pass": sum(
            r[0] in (Verdict.PASS, Verdict.MARGINAL) and r[3] == Verdict.FAIL for r in rows.values()
        ),
    }


def _close(a, b):
    return a == b or (isinstance(a, float) and isinstance(b, float) and abs(a - b) < 1e-9)


def _perturb(rng: random.Random, now):
    """Every case the rules tell apart, each on a few links of the seeded cluster."""
    links = list(Link.objects.filter(active=True).order_by("pk"))
    segs: dict[int, list[int]] = {}
    for link_id, cable_id in LinkSegment.objects.order_by("link_id", "seq").values_list(
        "link_id", "cable_id"
    ):
        segs.setdefault(link_id, []).append(cable_id)
    kinds = dict(Cable.objects.values_list("pk", "kind"))
    fibre_links = [lk for lk in links if any(kinds[c] in CableKind.fibre() for c in segs.get(lk.pk, []))]
    sealed_links = [lk for lk in links if all(kinds[c] in CableKind.sealed() for c in segs.get(lk.pk, []))]
    rng.shuffle(fibre_links)
    rng.shuffle(sealed_links)
    picks = iter(fibre_links)

    def cables_of(n):
        return [c for lk in (next(picks) for _ in range(n)) for c in segs[lk.pk]]

    def new_test(cable_id, kind=Kind.OLTS, **kw):  # as a service writes one, with the cable's latest
        kw.setdefault("tested_at", now - timedelta(days=1))
        test = CableTest.objects.create(cable_id=cable_id, kind=kind, **kw)
        cable_test_latest_refresh(cable_ids=[cable_id])
        return test

    def remove_tests(cable_ids, kind):  # no service deletes a test: the seed's never were
        CableTest.objects.filter(cable_id__in=cable_ids, kind=kind).delete()
        cable_test_latest_refresh(cable_ids=cable_ids)

    for c in cables_of(3):  # the latest power-meter test fails
        new_test(c, verdict=Verdict.FAIL, loss_db=4.2)
    for c in cables_of(3):  # marginal, and one with a loss of none recorded
        new_test(c, verdict=Verdict.MARGINAL, loss_db=1.41)
    for c in cables_of(2):
        new_test(c, verdict=Verdict.PASS, loss_db=None)
    for c in cables_of(2):  # a verdict nobody ranks: read as unknown
        new_test(c, verdict=Verdict.UNKNOWN, loss_db=0.4)
    remove_tests(cables_of(3), Kind.OLTS)  # never tested
    for c in cables_of(3):  # tested long ago: the gate holds, the verdict stands
        CableTest.objects.filter(cable_id=c).update(tested_at=now - timedelta(days=400))
        cable_test_latest_refresh(cable_ids=[c])
    for c in Cable.objects.filter(pk__in=cables_of(3), kind__in=CableKind.fibre()):  # one fibre tested
        wl = 1310 if c.kind == CableKind.SMF_OS2 else 850
        reading = svc.FibreReading(fibre=1, wavelength_nm=wl, loss_db=0.2)
        svc.cable_test_record_olts(cable=c, data=svc.OltsInput(readings=[reading], tested_at=now), now=now)
    remove_tests(cables_of(3), Kind.OTDR)  # no OTDR ...
    short = cables_of(3)
    remove_tests(short, Kind.OTDR)
    Cable.objects.filter(pk__in=short).update(length_m=1)  # ... but too short to need one
    edge_length = cables_of(3)  # ... and just at the limit: needs one
    remove_tests(edge_length, Kind.OTDR)
    Cable.objects.filter(pk__in=edge_length).update(length_m=otdr_min_length_m())
    Cable.objects.filter(pk__in=cables_of(2)).update(length_m=None)
    # ends corrected after the tests, as only the admin's cable form does (it refreshes the cable)
    mpo12, no_count, no_ends = cables_of(2), cables_of(2), cables_of(2)
    CableEnd.objects.filter(cable_id__in=mpo12).update(connector_type="MPO", fibre_count=12)
    CableEnd.objects.filter(cable_id__in=no_count).update(fibre_count=0)
    CableEnd.objects.filter(cable_id__in=no_ends).delete()
    cable_test_latest_refresh(cable_ids=mpo12 + no_count + no_ends)
    for lk in (next(picks) for _ in range(3)):  # a whole-link test overrides the segments' sum
        new_test(segs[lk.pk][0], link_id=lk.pk, verdict=Verdict.PASS, loss_db=2.9)
    budgets = [next(picks) for _ in range(6)]
    Link.objects.filter(pk__in=[lk.pk for lk in budgets[:2]]).update(loss_budget_db=0.5)  # fails its PMD
    Link.objects.filter(pk__in=[lk.pk for lk in budgets[2:4]]).update(loss_budget_db=9.0)
    Link.objects.filter(pk__in=[budgets[4].pk]).update(pmd="")  # no PMD: no limit
    Link.objects.filter(pk__in=[budgets[5].pk]).update(pmd="800G-UNHEARD-OF")
    # a channel just at the marginal threshold: the limit 0.3 dB over the segments' sum
    edge = next(picks)
    losses = list(
        CableTest.objects.filter(cable_id__in=segs[edge.pk], kind=Kind.OLTS)
        .order_by("cable_id", "-tested_at", "-pk")
        .distinct()
        .values_list("cable_id", "loss_db")
    )
    first = {}
    for c, x in losses:
        first.setdefault(c, x)
    if all(x is not None for x in first.values()):
        Link.objects.filter(pk=edge.pk).update(loss_budget_db=round(sum(first.values()) + 0.3, 3))
    quals = [c for lk in sealed_links[:6] for c in segs[lk.pk]]
    remove_tests(quals[:2], Kind.QUALIFICATION)
    for c in quals[2:4]:
        new_test(c, kind=Kind.QUALIFICATION, verdict=Verdict.FAIL)
    for c in quals[4:6]:
        new_test(c, kind=Kind.QUALIFICATION, verdict=Verdict.MARGINAL)
    _hold(picks, segs, now)


def _hold(picks, segs, now):
    """What holds a cable beyond its tests (``core.decision.production_hold``), and what does
    not, each on a link whose tests pass (the first cable of the link named)."""
    passing = {pk for pk, row in _python_rows(now).items() if row[6]}
    ready = (lk for lk in picks if lk.pk in passing)

    def first_cable(lk):
        return segs[lk.pk][0]

    def alert(lk, severity, *, state=AlertState.OPEN, on="link", suspect=None):
        a = Alert.objects.create(
            key=f"link_flap:link:{lk.pk}:{severity}:{on}:{suspect}",
            rule="link_flap",
            severity=severity,
            state=state,
            resolved_at=now if state == AlertState.RESOLVED else None,
            link=lk if on == "link" else None,
            cable_id=suspect or (first_cable(lk) if on == "suspect" else None),
            opened_at=now,
            updated_at=now,
            summary=f"{severity} on the {on}",
        )
        if on == "path" or suspect:
            a.cables.set(segs[lk.pk])
        return a

    # A trunk carrying several links is not held by an alert on one of them (on its link and
    # path) naming another cable; it is when the alert names the trunk (``alert_holds``).
    several = set(
        LinkSegment.objects.filter(link__active=True)
        .values("cable_id")
        .annotate(n=Count("link_id", distinct=True))
        .filter(n__gte=2)
        .values_list("cable_id", flat=True)
    )
    for named_trunk in (False, True):
        lk = next(lk for lk in ready if {*segs[lk.pk]} & several and {*segs[lk.pk]} - several)
        trunk = next(c for c in segs[lk.pk] if c in several)
        cord = next(c for c in segs[lk.pk] if c not in several)
        alert(lk, Severity.PAGE, suspect=trunk if named_trunk else cord)

    def fault(lk, *, closed=False, at=now):
        FieldNote.objects.create(
            cable_id=first_cable(lk),
            kind=FieldNoteKind.FAULT,
            text="jacket crushed",
            at=at,
            closed_at=now if closed else None,
        )

    fault(next(ready))  # an open fault, no test since: held
    fault(next(ready), closed=True)  # settled by hand: not held
    fault(next(ready), at=now - timedelta(days=30))  # tested since: settled, not held
    alert(next(ready), Severity.PAGE)  # on the link: every cable of it held
    alert(next(ready), Severity.WARNING, on="suspect")
    alert(next(ready), Severity.NOTIFY, on="path")
    alert(next(ready), Severity.INFO)  # info: not held
    alert(next(ready), Severity.CRITICAL, state=AlertState.RESOLVED)  # resolved: not held
    Cable.objects.filter(pk=first_cable(next(ready))).update(status=CableStatus.RETIRED)
    for ends in (now - timedelta(hours=1), now + timedelta(hours=2)):  # overdue now; 120 days on
        lk = next(ready)
        window = MaintenanceWindow.objects.create(
            starts_at=now - timedelta(hours=3), ends_at=ends, reason="x"
        )
        LinkDrain.objects.create(
            alert=alert(lk, Severity.INFO),
            link=lk,
            window=window,
            drained_at=now - timedelta(hours=3),
            safe=True,
        )


@pytest.mark.parametrize("seed", [3, 11])
def test_sql_verdicts_are_the_python_verdicts_for_every_link(seed):
    demo_seed(gpus=64, seed=seed)
    now = timezone.now()
    with sanctioned_bulk_write():  # edits a service would refuse or spread over many calls
        _perturb(random.Random(seed), now)
    for at in (now, now + timedelta(days=120)):  # then every test is past its retest interval
        python, sql = _python_rows(at), _sql_rows(at)
        assert set(python) == set(sql)
        wrong = {
            pk: (python[pk], sql[pk])
            for pk in python
            if not all(_close(a, b) for a, b in zip(python[pk], sql[pk], strict=True))
        }
        assert not wrong, list(wrong.items())[:5]
        verdicts = {v[5] for v in python.values()}
        assert {Verdict.PASS, Verdict.FAIL, Verdict.UNKNOWN} <= verdicts or at != now
        counts = link_verdict_counts(link_qs=Link.objects.filter(active=True).values("pk"), now=at)
        assert counts.as_dict() == _python_counts(python)
    assert any(r[3] == Verdict.FAIL and r[0] == Verdict.PASS for r in _python_rows(now).values())
    # the tests pass but a cable is held: a fault, a blocking alert, a retirement, an overdue drain
    held = [lv for lv in _held_verdicts(now) if lv.holds]
    assert {h.split(": ", 1)[1].split(" ")[0] for lv in held for h in lv.holds} >= {
        "Fault",
        "Page",
        "Warning",
        "Notify",
        "Retired.",
        "Drained",
    }
    # some links are ready; 120 days on, only those of sealed cables (a qualification does not age)
    assert sum(r[6] for r in _python_rows(now).values()) > sum(
        r[6] for r in _python_rows(now + timedelta(days=120)).values()
    )


def test_a_scope_of_one_rack_counts_its_links_only():
    demo_seed(gpus=64, seed=3)
    link = Link.objects.filter(active=True).order_by("pk").first()
    rack = link.a_port.device.rack
    report = commissioning_report(rack=rack)
    assert 0 < report.counts["links"] < Link.objects.filter(active=True).count()
    counts = link_verdict_counts(
        link_qs=Link.objects.filter(pk__in=[lv.link_id for lv in report.links]).values("pk")
    )
    assert counts.as_dict() == report.counts
