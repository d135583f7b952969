"""Two Celery worker processes on one queue share the telemetry rollup by shard, and one of them
SIGKILLed in the middle of a rollup loses no bucket and doubles none: the broker redelivers its
unacked shard task after the visibility timeout, the other worker runs it, and the rollup table
is exactly what one full recompute of everything stored gives.

Private Redis (broker and cache, 10 s visibility timeout), the test database (PostgreSQL: the
shard locks are advisory locks), two shards (the default). The test holds the row of one port of
shard 0 in ``PortTelemetryState`` in an open transaction on a connection of its own, so the
worker that takes shard 0 blocks inside its rollup statement with its buckets half written;
meanwhile the other worker must roll up shard 1 on its own, and a second batch arrives whose kick
for shard 0 finds the shard locked (its run returns at once). Then the blocked worker is killed
and the row released.

    [leaf-rk Ethernet1/1 .. 3/2]  six 400G ports, ids of both parities; samples every 10 s
      minutes 0-2 rolled up before the workers start; minutes 3-5 and a late sample in
      minute 1 while the workers run; minutes 6-7 while shard 0's worker is stuck
"""

from __future__ import annotations

from datetime import datetime, timedelta

import psycopg
import pytest
from django.db import connection
from django.forms.models import model_to_dict
from django.utils import timezone

from inventory.core.telemetry.decode import decode_objects
from inventory.models import PortRollup, PortTelemetryState, TelemetryIngestBatch
from inventory.services.telemetry import rollup_queue
from inventory.services.telemetry.ingest import telemetry_ingest
from inventory.services.telemetry.rollup import telemetry_rollup
from inventory.tasks import telemetry_rollup_task
from tests import factories as f
from tests.faults.conftest import kill_tree, stuck_worker, waiting_backend_port
from tests.workers import wait_for

pytestmark = [pytest.mark.fault, pytest.mark.worker, pytest.mark.postgres]

NOW = timezone.now().replace(second=0, microsecond=0)
T0 = NOW - timedelta(hours=1)
MINUTES = 8


def ingest(ports, steps) -> None:
    """Every port's sample at T0 + 10 s x i for each i in ``steps`` (i may be fractional: a
    late sample between two others); counters follow the time, so every value fits."""
    samples = [
        f.telemetry_sample(
            "leaf-rk",
            p.name,
            T0 + timedelta(seconds=10 * i),
            fec_corrected_bits=int((k + 1) * i * 1000),
            fec_corrected_codewords=int(i * 7),
        )
        for k, p in enumerate(ports)
        for i in steps
    ]
    now = timezone.now()
    r = telemetry_ingest(decoded=decode_objects(samples, now=now, max_future=timedelta(minutes=5)), now=now)
    assert not r.errors and r.stored == len(samples), r.errors


def rollups() -> dict[tuple[int, datetime], dict]:
    return {
        (r.port_id, r.bucket): model_to_dict(r, exclude=["id", "computed_at"])
        for r in PortRollup.objects.order_by("port_id", "bucket")
    }


def full_recompute(ports) -> dict:
    """The table one run over everything stored gives, from nothing, in this process."""
    PortRollup.objects.all().delete()
    PortTelemetryState.objects.all().delete()
    TelemetryIngestBatch.objects.create(
        received_at=NOW, min_ts=T0, max_ts=NOW, port_ids=sorted(p.pk for p in ports), shard=0
    )
    while telemetry_rollup(now=timezone.now()).batches:
        pass
    return rollups()


def _queued(shard: int) -> int:
    return TelemetryIngestBatch.objects.filter(rollup_queue.shard_filter(shard)).count()


@pytest.fixture
def ports(transactional_db, settings):
    settings.CABLETRACK_TELEMETRY_ROLLUP_SHARDS = 2  # the workers' default too
    _, ps = f.twin_port_device("leaf-rk", cages=3, with_modules=False)
    assert {p.pk % 2 for p in ps} == {0, 1}
    return ps


def test_two_workers_share_the_rollup_and_a_sigkilled_one_loses_and_doubles_no_bucket(ports, fault_workers):
    ingest(ports, range(0, 18))  # minutes 0-2
    telemetry_rollup(now=timezone.now())
    assert not TelemetryIngestBatch.objects.exists()
    workers = [fault_workers(), fault_workers()]
    held = next(p for p in ports if p.pk % 2 == 0)  # a port of shard 0

    params = connection.get_connection_params()
    dsn = {k: v for k, v in params.items() if k in ("host", "port", "user", "password", "dbname")}
    with psycopg.connect(**dsn) as other:  # a transaction of its own, open until released below
        other.execute("SELECT 1 FROM inventory_porttelemetrystate WHERE port_id = %s FOR UPDATE", [held.pk])
        ingest(ports, [*range(18, 36), 6.5])  # minutes 3-5, and a late sample in minute 1
        telemetry_rollup_task.delay()
        wait_for(waiting_backend_port, timeout=45)  # a worker took shard 0 and is stuck
        # shard 1 does not wait for shard 0: the other worker rolls it up alone
        wait_for(lambda: _queued(1) == 0, timeout=20)
        assert _queued(0) > 0
        # more samples while shard 0 is stuck; their kick for shard 0 finds the shard locked
        ingest(ports, range(36, 48))  # minutes 6-7
        telemetry_rollup_task.delay()
        wait_for(lambda: _queued(1) == 0, timeout=20)

        # (past its soft time limit a stuck run rolls back and asks again: find who is stuck now)
        stuck = stuck_worker(workers)
        survivor = next(w for w in workers if w is not stuck)
        kill_tree(stuck)  # mid-rollup: its statement waits on the held row, nothing committed
        other.rollback()

    # Only the broker's redelivery of the killed worker's shard task brings shard 0 back.
    wait_for(lambda: not TelemetryIngestBatch.objects.exists(), timeout=60)
    assert survivor.proc.poll() is None
    assert "inventory.telemetry_rollup_shard[" in survivor.log.read_text()

    done = rollups()
    assert len(done) == len(ports) * MINUTES  # every bucket once
    assert {b for _, b in done} == {T0 + timedelta(minutes=m) for m in range(MINUTES)}
    newest = T0 + timedelta(seconds=10 * 47)
    assert set(PortTelemetryState.objects.values_list("last_ts", flat=True)) == {newest}
    # each bucket's counters hold its samples once: the late sample's minute included
    minute1 = done[(held.pk, T0 + timedelta(minutes=1))]
    assert minute1["samples"] == 7
    assert done == full_recompute(ports)
