"""Retest figures: the daily sweep over 100,000 cables (target under 2 s).

Adds 100,000 cables (A end on a port of a device in one of 100 bench racks, owned by 10 teams of
a mailbox and three people) with a passing test 0-100 days old, so about 10% are overdue and 7%
due within the reminder window. Then times, with no SMTP involved (sending is per digest, not
per cable):

* a full recompute (every due date changes: one UPDATE ... FROM + history per batch),
* the first sweep (full: recompute everything again, claim every due reminder),
* the daily sweep the next day (incremental recompute of what changed + claim the day's new
  reminders), the steady state that beat runs every morning: the figure with the 2 s target.
"""

from __future__ import annotations

import random
import time
from datetime import timedelta

N_CABLES = 100_000
RACKS, ROWS, DEVICES_PER_RACK = 100, 10, 40
PORTS_PER_DEVICE = N_CABLES // (RACKS * DEVICES_PER_RACK)


def _seed(now) -> None:
    from django.contrib.auth import get_user_model
    from django.db import transaction

    from inventory.core.choices import CableKind, DeviceRole
    from inventory.db import bulk
    from inventory.models import Cable, CableEnd, CableTest, Device, Port, Rack, Room, Row, Site, Team

    rng = random.Random(6)  # noqa: S311 - benchmark data
    User = get_user_model()
    with transaction.atomic():
        site = Site.objects.create(name="Bench retests", slug="bench-retests")
        room = Room.objects.create(site=site, name="Hall R")
        teams = []
        for r in range(ROWS):
            people = [
                User.objects.create(username=f"bench-rt-{r}-{i}", email=f"rt{r}.{i}@example.net")
                for i in range(4)
            ]
            team = Team.objects.create(name=f"Bench row {r}", email=f"row{r}@example.net", lead=people[0])
            team.members.set(people[1:])
            teams.append(team)
        rows = [Row.objects.create(room=room, name=f"R{r}", team=teams[r]) for r in range(ROWS)]
        racks = bulk.bulk_insert(
            Rack,
            [
                Rack(row=rows[i // (RACKS // ROWS)], name=f"BR{i:03d}", position=i % (RACKS // ROWS))
                for i in range(RACKS)
            ],
            history=False,
        )
        devices = bulk.bulk_insert(
            Device,
            [
                Device(name=f"bench-rt-{rk.name}-{u}", role=DeviceRole.GPU_NODE, rack=rk, position_u=u + 1)
                for rk in racks
                for u in range(DEVICES_PER_RACK)
            ],
            history=False,
        )
        port_ids = bulk.bulk_insert_rows(
            Port,
            ["device_id", "name", "kind"],
            [[d.pk, f"p{i}", "interface"] for d in devices for i in range(PORTS_PER_DEVICE)],
            history=False,
        )
        kinds = [CableKind.SMF_OS2, CableKind.MMF_OM4, CableKind.AOC, CableKind.DAC]
        cable_kinds = [kinds[i % 4] for i in range(N_CABLES)]
        cable_ids = bulk.bulk_insert_rows(
            Cable,
            # site_id: the site of the A end (every end is in this site), as cable_sites sets it.
            ["label", "kind", "status", "install_date", "site_id"],
            [
                [f"RT-{i:06d}", cable_kinds[i], "in_production", (now - timedelta(days=200)).date(), site.pk]
                for i in range(N_CABLES)
            ],
            history=False,
        )
        bulk.bulk_insert_rows(
            CableEnd,
            ["cable_id", "side", "leg", "connector_type", "port_id", "active"],
            [[c, "A", 0, "none", p, True] for c, p in zip(cable_ids, port_ids, strict=True)],
            history=False,
        )
        bulk.bulk_insert_rows(
            CableTest,
            ["cable_id", "kind", "tested_at", "verdict"],
            [
                [
                    c,
                    "qualification" if cable_kinds[i] in CableKind.sealed() else "olts",
                    now - timedelta(days=rng.uniform(0, 100)),
                    "pass",
                ]
                for i, c in enumerate(cable_ids)
            ],
            history=False,
        )
        # As the product's bulk writers (a plan import) do: fresh statistics and merged search
        # indexes once committed, so the page figures that follow see what a real import leaves.
        bulk.analyze_on_commit(Cable, CableEnd, CableTest, Port, Device, rows=N_CABLES)


def run(report) -> None:
    from django.utils import timezone

    from inventory.models import Cable, RetestReminder
    from inventory.services.retests import due as retests
    from inventory.services.retests import reminders

    now = timezone.now()
    _seed(now)
    total = Cable.objects.count()

    t = time.perf_counter()
    first = retests.retest_due_recompute(now=now)
    report(
        f"retest due recompute, full ({first.cables_changed:,} dates set)", time.perf_counter() - t, "s", ""
    )

    t = time.perf_counter()
    catch_up = reminders.retests_sweep(now=now)  # full (first run): recompute + catch-up claim
    report(
        f"first sweep: full recompute + catch-up claim ({RetestReminder.objects.count():,} reminders)",
        time.perf_counter() - t,
        "s",
        "",
    )

    tomorrow = now + timedelta(days=1)
    t = time.perf_counter()
    sweep = reminders.retests_sweep(now=tomorrow)  # the daily beat run: incremental
    took = time.perf_counter() - t
    report(
        f"daily retest sweep, {total:,} cables ({sweep.cables_changed} changed, {sweep.reminders_claimed:,} new reminders)",
        took,
        "s",
        "< 2 s",
    )
    del catch_up


if __name__ == "__main__":  # python -m bench.retests (the runner is python -m bench retests)
    import sys

    from bench.__main__ import main

    sys.exit(main(["retests"]))
