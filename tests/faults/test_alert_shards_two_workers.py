"""Two Celery worker processes on one queue share the alert rules by shard
(``CABLETRACK_ALERT_SHARDS``), and one of them SIGKILLed in the middle of its shard's run loses
nothing and doubles nothing: each condition has one alert, mailed once, its cable degraded once,
and the killed shard's work (here its baselines) is done by the other worker.

Private Redis (broker and cache, 10 s visibility timeout), the test database (PostgreSQL: the
shard locks are advisory locks). The plant and its four conditions are ``test_alert_shards``'s.
Two shards. The test holds the baseline row of a healthy port on no link (due for its hourly
refresh) in an open transaction of its own, so the worker that runs that port's shard blocks
after applying its alerts, while learning the baselines; the other shard, with a healthy port
of its own, must finish without it. Then the blocked worker is killed and the row released: the survivor evaluates the
shard again, which updates its alerts and opens, mails and degrades nothing a second time.
"""

from __future__ import annotations

import re
from datetime import timedelta

import psycopg
import pytest
from django.db import connection
from django.utils import timezone

from inventory.core.telemetry.rules import PHYSICAL_RULES
from inventory.models import Alert, AlertNotification, Cable, PortBaseline
from inventory.tasks import alerts_evaluate_task
from tests import factories as f
from tests.faults.conftest import kill_tree, stuck_worker, waiting_backend_port
from tests.inventory.services.alerts.test_alert_shards import conditions
from tests.inventory.services.alerts.test_alerts import plant  # noqa: F401 - the fixture
from tests.workers import wait_for

pytestmark = [pytest.mark.fault, pytest.mark.worker, pytest.mark.postgres]

EXPECTED = {"fec_degradation", "link_flap", "miswire", "unrecorded_swap"}


def test_two_workers_share_the_alert_shards_and_a_sigkilled_one_loses_and_doubles_nothing(
    transactional_db,
    plant,  # noqa: F811
    fault_workers,
):
    now = timezone.now().replace(second=0, microsecond=0)
    conditions(plant, now)
    # two healthy ports on no link, one in each shard (their own ids decide): the held one's
    # baseline is due for its hourly refresh, the lone one's is learnt for the first time
    unlinked = [*plant["gpu"][2:], *plant["leaf"][3:], *plant["spine"][1:]]
    held = next(p for p in unlinked if p.pk % 2 == 0)
    lone = next(p for p in unlinked if p.pk % 2 == 1)
    for p in (held, lone):
        f.rollups(p, now - timedelta(minutes=12), 12)
    PortBaseline.objects.create(
        port=held, pre_fec_ber=5e-9, first_at=now - timedelta(days=1), updated_at=now - timedelta(hours=2)
    )
    workers = [fault_workers({"CABLETRACK_ALERT_SHARDS": "2"}) for _ in range(2)]

    params = connection.get_connection_params()
    dsn = {k: v for k, v in params.items() if k in ("host", "port", "user", "password", "dbname")}
    with psycopg.connect(**dsn) as other:  # a transaction of its own, open until released below
        other.execute("SELECT 1 FROM inventory_portbaseline WHERE port_id = %s FOR UPDATE", [held.pk])
        alerts_evaluate_task.delay()
        wait_for(waiting_backend_port, timeout=60)  # a worker runs the held port's shard, stuck
        # the other shards do not wait for it: the lone port's baseline is learnt, and every
        # shard's alerts are open (the stuck one applied its alerts before its baselines)
        wait_for(lambda: PortBaseline.objects.filter(port=lone).exists(), timeout=60)
        wait_for(lambda: Alert.objects.count() == 4, timeout=30)
        assert PortBaseline.objects.get(port=held).updated_at == now - timedelta(hours=2)

        # (past its soft time limit a stuck run rolls back and asks again: find who is stuck now)
        stuck = stuck_worker(workers)
        survivor = next(w for w in workers if w is not stuck)
        kill_tree(stuck)  # mid-run: its baselines wait on the held row
        other.rollback()

    # the held port's shard is evaluated to its end by the survivor
    wait_for(lambda: PortBaseline.objects.get(port=held).updated_at > now - timedelta(hours=2), timeout=60)
    assert survivor.proc.poll() is None
    # by the broker's redelivery of the killed worker's own task (the same task id)
    taken = set(re.findall(r"alerts_evaluate_shard\[([0-9a-f-]+)\] received", stuck.log.read_text()))
    done = set(re.findall(r"alerts_evaluate_shard\[([0-9a-f-]+)\] succeeded", survivor.log.read_text()))
    assert taken & done

    alerts = list(Alert.objects.all())
    assert {a.rule for a in alerts} == EXPECTED
    assert len(alerts) == len({a.key for a in alerts}) == 4  # each condition once
    assert all(a.state == "open" for a in alerts)
    assert AlertNotification.objects.filter(kind="opened").count() == 4  # each mailed once
    degraded = {a.cable_id for a in alerts if a.rule in PHYSICAL_RULES and a.cable_id}
    assert degraded  # a link alert moved its cable to "degraded": once, not once per run
    for cable in Cable.objects.all():
        times = cable.history.filter(status="degraded").count()
        assert (cable.status == "degraded", times) == ((True, 1) if cable.pk in degraded else (False, 0)), (
            cable
        )
