"""The alert rules in shards (``CABLETRACK_ALERT_SHARDS``): each shard's run judges its own part
of the reporting ports, a link's two ends always in one part, and the shards' runs together
open, word and resolve exactly the alerts one run over every port does.

Topology (``test_alerts``'s plant: two GPU NICs on one leaf, an uplink through a panel pair),
with four conditions at once::

    [gpu-a eth0]--J-0--[leaf-a Ethernet1/1]     gpu-a eth0 sees leaf-a Ethernet1/2: miswire;
                                                leaf-a Ethernet1/1 flaps
    [gpu-a eth1]--J-1--[leaf-a Ethernet1/2]     the leaf's module is not the one recorded
    [leaf-a Ethernet2/1]--J-U1--[pp-1]==T-1==[pp-2]--J-U2--[spine-a Ethernet1/1]
                                                the spine's receiver past 10 % of the FEC limit
"""

from __future__ import annotations

import re
from datetime import timedelta

import numpy as np
import psycopg
import pytest
from django.db import connection, transaction
from django.utils import timezone

from inventory.models import Alert, AlertNotification, Link, PortRollup
from inventory.selectors.telemetry.alert_shards import AlertShard
from inventory.services import alerts as svc
from tests import factories as f
from tests.inventory.services.alerts.test_alerts import T0, healthy, plant  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db


def conditions(plant, at=T0) -> None:  # noqa: F811 - the fixture's value
    """The four conditions of the module docstring, over the 12 minutes before ``at``."""
    gpu, leaf, spine = plant["gpu"], plant["leaf"], plant["spine"]
    healthy(plant, at - timedelta(minutes=12), 12, skip=[spine[0]])
    f.rollups(spine[0], at - timedelta(minutes=12), 12, ber=5e-5)
    PortRollup.objects.filter(port=leaf[0], bucket=at - timedelta(minutes=2)).update(link_down_events=2)
    f.seen(gpu[0], at - timedelta(minutes=1), neighbor=leaf[1])
    f.seen(leaf[0], at - timedelta(minutes=1), neighbor=gpu[0])
    f.seen(leaf[1], at - timedelta(minutes=1), serial="INNO-NEW-0001")


def _alerts() -> dict[str, tuple]:
    return {
        a.key: (a.rule, a.severity, a.link_id, a.port_id, a.cable_id, a.summary, a.recommendation, a.evidence)
        for a in Alert.objects.filter(state="open")
    }


def _split(n: int) -> bool:
    """Some link's ends fall in different port-id shards of ``n`` (else sharding is not tested)."""
    return any(
        a % n != b % n for a, b in Link.objects.filter(active=True).values_list("a_port_id", "b_port_id")
    )


def _shard_of(alert: Alert, shards: list[AlertShard]) -> int:
    port = alert.link.a_port_id if alert.link_id else alert.port_id
    return next(k for k, s in enumerate(shards) if s.mask([port])[0])


def test_the_shards_together_open_exactly_what_one_run_opens(plant, settings):  # noqa: F811
    conditions(plant)
    with transaction.atomic():
        one = svc.alerts_evaluate(now=T0)
        whole = _alerts()
        transaction.set_rollback(True)
    assert {k.split(":")[0] for k in whole} == {"fec_degradation", "link_flap", "miswire", "unrecorded_swap"}

    tested = 0
    for n in (2, 3, 5):
        if not _split(n):
            continue
        tested += 1
        settings.CABLETRACK_ALERT_SHARDS = n
        with transaction.atomic():
            reports = [svc.alerts_evaluate(now=T0, shard=k) for k in range(n)]
            assert sum(r.ports for r in reports) == one.ports  # every reporting port once
            assert sum(1 for r in reports if r.ports) >= 2
            assert _alerts() == whole, n
            assert AlertNotification.objects.count() == sum(len(r.opened) for r in reports) == len(whole)
            # the conditions gone: each shard resolves its own alerts and none of another's
            shards = [AlertShard.of(k, n) for k in range(n)]
            owner = {a.key: _shard_of(a, shards) for a in Alert.objects.select_related("link")}
            assert len(set(owner.values())) >= 2
            later = T0 + timedelta(minutes=16)
            healthy(plant, T0, 16)
            leaf1 = plant["leaf"][1]
            f.seen(plant["gpu"][0], later - timedelta(minutes=1), neighbor=plant["leaf"][0])
            f.seen(leaf1, later - timedelta(minutes=1), serial=leaf1.cage.transceiver.serial)
            for k in range(n):
                svc.alerts_evaluate(now=later, shard=k)
                still = {key for key, at in owner.items() if at > k}
                assert set(Alert.objects.filter(state="open").values_list("key", flat=True)) == still, (n, k)
            transaction.set_rollback(True)
    assert tested, "no shard count splits a link of this plant: the test would prove nothing"


def test_a_links_ends_and_a_broken_out_port_keep_to_one_shard(plant):  # noqa: F811
    ports = np.array(sorted({p for lk in Link.objects.values_list("a_port_id", "b_port_id") for p in lk}))
    free = ports.max() + np.arange(1, 40)  # ports on no link: their own id decides
    everything = np.r_[ports, free]
    for n in (2, 3, 7):
        shards = [AlertShard.of(k, n) for k in range(n)]
        masks = np.array([s.mask(everything) for s in shards])
        assert (masks.sum(axis=0) == 1).all()  # each port in exactly one shard
        for a, b in Link.objects.filter(active=True).values_list("a_port_id", "b_port_id"):
            ia, ib = np.searchsorted(everything, [a, b])
            assert (masks[:, ia] == masks[:, ib]).all()
        assert (masks[:, len(ports) :].argmax(axis=0) == free % n).all()
        if connection.vendor == "postgresql":
            for s, m in zip(shards, masks, strict=True):
                cond, params = s.sql("p")
                with connection.cursor() as cur:
                    cur.execute(
                        f"SELECT p FROM unnest(%s::bigint[]) AS t(p) WHERE {cond} ORDER BY p",  # noqa: S608 - the shard condition
                        [
                            "{" + ",".join(map(str, everything.tolist())) + "}",
                            *params,
                        ],
                    )
                    assert [r[0] for r in cur.fetchall()] == everything[m].tolist()


def test_ports_joined_through_several_links_share_their_lowest_ports_shard():
    from inventory.selectors.telemetry.alert_shards import _anchors

    # 10 broken out to 13 and 21; 21 also ends a link from 6; 8-9 alone
    ports, anchor = _anchors(np.array([[10, 13], [10, 21], [6, 21], [8, 9]]))
    assert dict(zip(ports.tolist(), anchor.tolist(), strict=True)) == {6: 6, 8: 8, 9: 8, 10: 6, 13: 6, 21: 6}


@pytest.mark.postgres  # the shard lock is an advisory lock (SQLite has one writer at a time)
def test_a_shard_being_evaluated_is_not_taken_twice(plant, settings):  # noqa: F811
    from inventory.services.alerts.evaluate import _SHARD_LOCK

    conditions(plant)
    settings.CABLETRACK_ALERT_SHARDS = 2
    params = connection.get_connection_params()
    dsn = {k: v for k, v in params.items() if k in ("host", "port", "user", "password", "dbname")}
    with psycopg.connect(**dsn, autocommit=True) as other:  # another worker's run of shard 0
        other.execute("SELECT pg_advisory_lock(%s, 0)", [_SHARD_LOCK])
        assert svc.alerts_evaluate_shard(now=T0, shard=0) is None
        assert svc.alerts_evaluate_shard(now=T0, shard=1) is not None  # shard 1 is free
        other.execute("SELECT pg_advisory_unlock(%s, 0)", [_SHARD_LOCK])
    assert svc.alerts_evaluate_shard(now=T0, shard=0) is not None
    assert svc.alerts_evaluate_shard(now=T0, shard=0) is not None  # its lock was given back
    assert {k.split(":")[0] for k in _alerts()} == {
        "fec_degradation",
        "link_flap",
        "miswire",
        "unrecorded_swap",
    }


@pytest.mark.worker
def test_the_rule_task_fans_out_one_task_per_shard_on_a_real_worker(transactional_db, plant):  # noqa: F811
    from inventory.tasks import alerts_evaluate_task
    from tests.workers import Worker, wait_for

    now = timezone.now().replace(second=0, microsecond=0)
    conditions(plant, now)
    worker = Worker(env={"CABLETRACK_ALERT_SHARDS": "3"}).start()
    try:
        alerts_evaluate_task.delay()
        wait_for(lambda: Alert.objects.count() == 4, timeout=60)
        wait_for(lambda: len(re.findall(r"alerts_evaluate_shard\[.*succeeded", worker.log.read_text())) == 3)
    finally:
        worker.stop()
    log = worker.log.read_text()
    assert sorted(int(k) for k in re.findall(r"succeeded in .*'shard': (\d)", log)) == [0, 1, 2]
    assert {a.rule for a in Alert.objects.all()} == {
        "fec_degradation",
        "link_flap",
        "miswire",
        "unrecorded_swap",
    }


def test_a_shard_task_keeps_the_count_it_was_sent_with(plant, settings):  # noqa: F811
    """A worker redeployed with another count still runs the round it was sent: the three tasks
    of a round of three partition the ports, whatever this worker's own setting says."""
    from inventory.tasks import alerts_evaluate_shard_task

    now = timezone.now().replace(second=0, microsecond=0)
    conditions(plant, now)
    settings.CABLETRACK_ALERT_SHARDS = 2
    with transaction.atomic():
        whole = svc.alerts_evaluate(now=timezone.now()).ports
        transaction.set_rollback(True)
    results = [alerts_evaluate_shard_task.apply(args=(k, 3)).get() for k in range(3)]
    assert [r["shard"] for r in results] == [0, 1, 2]
    assert sum(r["ports"] for r in results) == whole
    assert {k.split(":")[0] for k in _alerts()} == {
        "fec_degradation",
        "link_flap",
        "miswire",
        "unrecorded_swap",
    }
