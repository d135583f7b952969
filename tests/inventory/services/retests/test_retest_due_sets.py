"""The set-based recompute (SQL) gives every cable the date the per-cable rules give it.

A varied plant (seeded random, so it is the same on every run and both databases): every
medium and status, cables with and without an install date or an A end, passes, marginals,
fails and tests that do not count for the medium, tests dated at the end of the calendar,
triggers of every source before and after the last pass, link classes and alerts on links,
site, medium, class and site+medium policies, and a site that accepts telemetry with clean,
alerted and open-alert live cables. ``retest_due_by_rules`` (the Python rules, written nowhere)
is the reference.
"""

import random
from datetime import UTC, date, datetime, timedelta

import pytest

from inventory.core.choices import CableKind, CableStatus
from inventory.db import bulk
from inventory.models import (
    Alert,
    Cable,
    CableEnd,
    CableTest,
    Device,
    FieldNote,
    Link,
    LinkSegment,
    Port,
    Rack,
    RetestPolicy,
    RetestTrigger,
    Room,
    Row,
    Site,
)
from inventory.services.retests import due as retests

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)
N = 240
INSTALLED = (T0 - timedelta(days=300)).date()
STATUSES = [s.value for s in CableStatus]
KINDS = [k.value for k in CableKind]


def _plant(rng: random.Random) -> dict:
    sites = []
    racks = []
    for s in range(2):
        site = Site.objects.create(name=f"Hall {s}", slug=f"hall-{s}")
        room = Room.objects.create(site=site, name=f"Room {s}")
        row = Row.objects.create(room=room, name=f"Row {s}")
        racks.append(Rack.objects.create(row=row, name=f"R{s}", position=1))
        sites.append(site)
    devices = [
        Device.objects.create(name=f"dev-{i}", role="leaf", rack=racks[i % 2], position_u=i + 1)
        for i in range(4)
    ]
    ports = bulk.bulk_insert_rows(
        Port,
        ["device_id", "name", "kind"],
        [[devices[d].pk, f"p{i}", "interface"] for d in range(4) for i in range(N)],
        history=False,
    )
    cables = []
    rows = []
    for i in range(N):
        kind = KINDS[i % len(KINDS)]
        status = STATUSES[(i // len(KINDS)) % len(STATUSES)]
        install = (T0 - timedelta(days=rng.randint(0, 400))).date() if rng.random() < 0.8 else None
        old = (T0 + timedelta(days=rng.randint(-50, 50))).date() if rng.random() < 0.5 else None
        rows.append([f"V-{i:04d}", kind, status, install, old])
    cables = bulk.bulk_insert_rows(
        Cable, ["label", "kind", "status", "install_date", "retest_due"], rows, history=False
    )
    # A ends on site 0 or site 1 devices; every 17th cable has none (no site).
    ends = []
    for i, c in enumerate(cables):
        if i % 17 == 5:
            continue
        d = i % 2 + (2 if i % 3 == 0 else 0)
        ends.append([c, "A", 0, "none", ports[d * N + i], True])
        ends.append([c, "B", 0, "none", ports[((d + 1) % 4) * N + i], True])
    bulk.bulk_insert_rows(
        CableEnd, ["cable_id", "side", "leg", "connector_type", "port_id", "active"], ends, history=False
    )
    tests = []
    for i, c in enumerate(cables):
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            at = T0 - timedelta(days=rng.randint(0, 200), minutes=rng.randint(0, 1440))
            tests.append(
                [
                    c,
                    rng.choice(["olts", "otdr", "qualification", "inspection"]),
                    at,
                    rng.choice(["pass", "pass", "marginal", "fail", "unknown"]),
                ]
            )
        if i % 41 == 7:  # a pass at the end of the calendar: held at 9999-12-31
            tests.append(
                [
                    c,
                    "olts" if KINDS[i % len(KINDS)] in CableKind.fibre() else "qualification",
                    datetime(9999, 12, 31, 12, 0, tzinfo=UTC),
                    "pass",
                ]
            )
    bulk.bulk_insert_rows(CableTest, ["cable_id", "kind", "tested_at", "verdict"], tests, history=False)
    for i, c in enumerate(cables):
        at = T0 - timedelta(days=rng.randint(0, 150), minutes=rng.randint(0, 1440))
        pick = i % 9
        if pick == 1:
            RetestTrigger.objects.create(cable_id=c, reason="reseat", occurred_at=at)
        elif pick == 2:
            FieldNote.objects.create(cable_id=c, kind=rng.choice(["fault", "cleaned", "note"]), at=at)
        elif pick in (3, 4):
            state = rng.choice(["open", "resolved"])
            Alert.objects.create(
                key=f"k:{i}",
                rule=rng.choice(["loss_increase", "fec_degradation"]),
                severity="notify",
                cable_id=c,
                opened_at=at,
                updated_at=at,
                state=state,
                resolved_at=at + timedelta(hours=3) if state == "resolved" else None,
                summary="x",
            )
    # Links over the cables (its own A/B ports), some classed, a few alerted.
    for i, c in enumerate(cables):
        if i % 4 == 0 or i % 17 == 5:
            continue
        a, b = CableEnd.objects.filter(cable_id=c).order_by("side").values_list("port_id", flat=True)
        link = Link.objects.create(
            a_port_id=min(a, b),
            b_port_id=max(a, b),
            link_class=rng.choice(["", "spine", "storage"]),
            active=i % 11 != 0,
        )
        LinkSegment.objects.create(link=link, seq=1, cable_id=c)
        if i % 13 == 0:
            at = T0 - timedelta(days=rng.randint(0, 120))
            Alert.objects.create(
                key=f"l:{i}",
                rule=rng.choice(["loss_increase", "link_flap"]),
                severity="notify",
                link=link,
                opened_at=at,
                updated_at=at,
                state="resolved",
                resolved_at=at + timedelta(hours=1),
                summary="x",
            )
    sites[0].retest_interval_days = 60
    sites[0].save()
    RetestPolicy.objects.create(site=sites[0], kind=CableKind.DAC, interval_days=120)
    RetestPolicy.objects.create(kind=CableKind.AOC, interval_days=180, shorten_days=3)
    RetestPolicy.objects.create(link_class="spine", interval_days=30)
    RetestPolicy.objects.create(site=sites[1], accept_telemetry=True, shorten_days=10)
    return {"cables": cables, "sites": sites}


def _dates() -> dict[int, date | None]:
    return dict(Cable.objects.values_list("pk", "retest_due"))


@pytest.mark.parametrize("seed", [1, 2])
def test_the_statement_gives_every_cable_the_date_the_rules_give_it(seed):
    _plant(random.Random(seed))
    values: set[date | None] = set()
    for now in (T0, T0 + timedelta(days=75)):
        before = _dates()
        expected = retests.retest_due_by_rules(now=now)
        assert retests.retest_due_by_rules(now=now) == expected  # the reference writes nothing
        assert _dates() == before
        result = retests.retest_due_recompute(now=now)
        after = _dates()
        mismatched = {pk: (after[pk], want) for pk, want in expected.items() if after[pk] != want}
        assert mismatched == {}
        # Cables outside the recompute (planned with no date) kept theirs; a second run moves nothing.
        assert {pk: d for pk, d in after.items() if pk not in expected} == {
            pk: d for pk, d in before.items() if pk not in expected
        }
        assert result.cables_changed == sum(1 for pk, d in expected.items() if before[pk] != d)
        assert retests.retest_due_recompute(now=now).cables_changed == 0
        values.update(expected.values())
    # The plant reaches every branch: no date, install-based, held at the calendar's end,
    # rolled forward by telemetry, brought forward by a trigger, and left to the Python rules.
    assert None in values
    assert date.max in values
    horizon = (T0 + timedelta(days=75 + 7)).date()
    assert any(d is not None and d > horizon + timedelta(days=60) for d in values)


def test_the_given_cables_are_decided_alike_and_the_rest_left_alone():
    made = _plant(random.Random(3))
    some = made["cables"][::7]
    expected = retests.retest_due_by_rules(now=T0, cable_ids=some)
    before = _dates()
    retests.retest_due_recompute(now=T0, cable_ids=some)
    after = _dates()
    assert {pk: after[pk] for pk in expected} == expected
    assert {pk: d for pk, d in after.items() if pk not in expected} == {
        pk: d for pk, d in before.items() if pk not in expected
    }


def test_each_branch_is_decided_as_the_rules_say():
    """Named cables, one per branch, with the date a person would work out by hand."""
    made = _plant(random.Random(4))
    site0, site1 = made["sites"]
    rack0 = Rack.objects.get(row__room__site=site0)
    rack1 = Rack.objects.get(row__room__site=site1)
    dev0 = Device.objects.create(name="hand-0", role="leaf", rack=rack0, position_u=30)
    dev1 = Device.objects.create(name="hand-1", role="leaf", rack=rack1, position_u=30)

    def cable(label, kind, status, site_dev, install=INSTALLED):
        c = Cable.objects.create(label=label, kind=kind, status=status, install_date=install)
        p = Port.objects.create(device=site_dev, name=label, kind="interface")
        CableEnd.objects.create(cable=c, side="A", leg=0, connector_type="none", port=p)
        return c

    pass_at = T0 - timedelta(days=50)
    # site 0: site interval 60; a fibre passed 50 days ago: due in 10 days
    fibre = cable("H-FIBRE", CableKind.SMF_OS2, CableStatus.IN_PRODUCTION, dev0)
    CableTest.objects.create(cable=fibre, kind="olts", verdict="pass", tested_at=pass_at)
    # a fail after the pass brings it forward to the fail + 7 days
    failed = cable("H-FAIL", CableKind.SMF_OS2, CableStatus.DEGRADED, dev0)
    CableTest.objects.create(cable=failed, kind="otdr", verdict="marginal", tested_at=pass_at)
    CableTest.objects.create(cable=failed, kind="olts", verdict="fail", tested_at=pass_at + timedelta(days=5))
    # site 1 accepts telemetry: clean live fibre rolls past the horizon (90-day intervals)
    clean = cable("H-CLEAN", CableKind.MMF_OM4, CableStatus.IN_PRODUCTION, dev1)
    CableTest.objects.create(cable=clean, kind="olts", verdict="pass", tested_at=T0 - timedelta(days=200))
    # the same with an alert resolved inside its second interval: due at that interval's end
    alerted = cable("H-ALERTED", CableKind.MMF_OM4, CableStatus.IN_PRODUCTION, dev1)
    CableTest.objects.create(cable=alerted, kind="olts", verdict="pass", tested_at=T0 - timedelta(days=200))
    Alert.objects.create(
        key="hand",
        rule="fec_degradation",
        severity="notify",
        cable=alerted,
        opened_at=T0 - timedelta(days=100),
        updated_at=T0 - timedelta(days=100),
        state="resolved",
        resolved_at=T0 - timedelta(days=99),
        summary="x",
    )
    # never tested, no install date recorded: due the day the record was made
    untested = Cable.objects.create(label="H-NEW", kind=CableKind.AOC, status=CableStatus.INSTALLED)
    # out-of-band copper has no retest (no test gate), even with a date left from before and a test
    copper = cable("H-COPPER", CableKind.CAT6A, CableStatus.IN_PRODUCTION, dev0)
    copper.retest_due = T0.date()
    copper.save()
    CableTest.objects.create(cable=copper, kind="inspection", verdict="pass", tested_at=pass_at)
    retests.retest_due_recompute(now=T0)
    due = dict(Cable.objects.filter(label__startswith="H-").values_list("label", "retest_due"))
    base = (T0 - timedelta(days=200)).date()
    assert due == {
        "H-FIBRE": (pass_at + timedelta(days=60)).date(),
        "H-FAIL": (pass_at + timedelta(days=5 + 7)).date(),
        "H-CLEAN": base + timedelta(days=270),
        "H-ALERTED": base + timedelta(days=180),
        "H-NEW": untested.created_at.date(),
        "H-COPPER": None,
    }
    assert retests.retest_due_by_rules(now=T0, cable_ids=[copper.pk]) == {copper.pk: None}


def _link_dates() -> dict[int, date | None]:
    return dict(Link.objects.values_list("pk", "retest_due"))


@pytest.mark.parametrize("seed", [1, 2])
def test_one_or_a_few_given_cables_get_the_date_a_whole_sweep_gives_them_and_so_do_their_links(seed):
    """The recompute after an upload or a fault report (one cable, or a handful: one statement on
    PostgreSQL) sets the cable and link dates the whole-plant sweep sets."""
    made = _plant(random.Random(seed))
    ids = [getattr(c, "pk", c) for c in made["cables"]]
    singles, pairs, group = ids[::6], ids[1::6], ids[2::6]
    touched = set(singles) | set(pairs) | set(group)
    over = dict(LinkSegment.objects.filter(cable_id__in=touched).values_list("link_id", "cable_id"))
    for now in (T0, T0 + timedelta(days=75)):  # the later day reaches the rules' telemetry branch
        before, links_before = _dates(), _link_dates()
        results = [retests.retest_due_recompute(now=now, cable_ids=[pk]) for pk in singles]
        results += [
            retests.retest_due_recompute(now=now, cable_ids=pairs[i : i + 2]) for i in range(0, len(pairs), 2)
        ]
        results.append(retests.retest_due_recompute(now=now, cable_ids=group))
        few, few_links = _dates(), _link_dates()
        assert {pk: d for pk, d in few.items() if pk not in touched} == {
            pk: d for pk, d in before.items() if pk not in touched
        }
        assert sum(r.cables_changed for r in results) == sum(1 for pk in touched if few[pk] != before[pk])
        assert sum(r.links_changed for r in results) == sum(
            1 for pk in over if few_links[pk] != links_before[pk]
        )
        retests.retest_due_recompute(now=now)  # the whole plant, in batches
        swept, swept_links = _dates(), _link_dates()
        assert {pk: few[pk] for pk in touched} == {pk: swept[pk] for pk in touched}
        assert {pk: few_links[pk] for pk in over} == {pk: swept_links[pk] for pk in over}


def test_a_few_cables_whose_statement_fails_are_decided_by_the_rules(monkeypatch):
    """The one-statement path for a few cables (PostgreSQL) falls back as the batch path does: a
    statement that fails writes nothing, and the rules decide the cables."""
    from django.db import DataError

    from inventory.services.retests import due_sets

    made = _plant(random.Random(5))
    some = [getattr(c, "pk", c) for c in made["cables"][3::40]]
    expected = retests.retest_due_by_rules(now=T0, cable_ids=some)

    def out_of_range(**kw):
        raise DataError("date out of range")

    monkeypatch.setattr(due_sets, "decide_and_write_few", out_of_range)
    result = retests.retest_due_recompute(now=T0, cable_ids=some)
    after = _dates()
    assert {pk: after[pk] for pk in expected} == expected
    assert result.cables_seen == len(expected) and result.set_aside == ()
