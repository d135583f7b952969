"""The rollup queue in shards: the ingest queues each port under its shard (port id modulo
``CABLETRACK_TELEMETRY_ROLLUP_SHARDS``), a shard's run rolls up only its own ports, two shards
roll up side by side to the same buckets one run gives, a shard already being rolled up is not
taken twice, and rows from before the shards (or another shard count) are split, not lost.

    [leaf-sh Ethernet1/1 .. 3/2]  six 400G ports, ids of both parities; samples every 10 s
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from django.db import connection
from django.forms.models import model_to_dict

from inventory.core.telemetry.decode import decode_objects
from inventory.models import PortRollup, PortTelemetryState, TelemetryIngestBatch
from inventory.services.telemetry import rollup_queue
from inventory.services.telemetry.ingest import telemetry_ingest
from inventory.services.telemetry.rollup import telemetry_rollup
from tests import factories as f

T0 = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
NOW = T0 + timedelta(hours=1)


@pytest.fixture
def ports(settings):
    settings.CABLETRACK_TELEMETRY_ROLLUP_SHARDS = 2
    _, ps = f.twin_port_device("leaf-sh", cages=3, with_modules=False)
    assert {p.pk % 2 for p in ps} == {0, 1}
    return ps


def ingest(ports, *, minutes: int = 3) -> None:
    samples = [
        f.telemetry_sample(
            "leaf-sh",
            p.name,
            T0 + timedelta(seconds=10 * i),
            fec_corrected_bits=(k + 1) * i * 1000,
            fec_corrected_codewords=i * 7,
        )
        for k, p in enumerate(ports)
        for i in range(minutes * 6)
    ]
    r = telemetry_ingest(decoded=decode_objects(samples, now=NOW, max_future=timedelta(minutes=5)), now=NOW)
    assert not r.errors and r.stored == len(samples), r.errors


def rollups() -> dict[tuple[int, datetime], dict]:
    return {
        (r.port_id, r.bucket): model_to_dict(r, exclude=["id", "computed_at"])
        for r in PortRollup.objects.order_by("port_id", "bucket")
    }


def requeue_all(ports) -> None:
    """Forget every rollup and queue every port again, as the ingest would (one row a shard)."""
    PortRollup.objects.all().delete()
    PortTelemetryState.objects.all().delete()
    for k, ids in rollup_queue.split_by_shard(p.pk for p in ports).items():
        TelemetryIngestBatch.objects.create(received_at=NOW, min_ts=T0, max_ts=NOW, port_ids=ids, shard=k)


@pytest.mark.django_db
def test_ingest_queues_each_port_under_its_shard_and_a_shard_run_takes_only_its_own(ports):
    ingest(ports)
    queued = {row.shard: row.port_ids for row in TelemetryIngestBatch.objects.all()}
    assert queued == {
        0: sorted(p.pk for p in ports if p.pk % 2 == 0),
        1: sorted(p.pk for p in ports if p.pk % 2),
    }

    out = telemetry_rollup(now=NOW, shard=1)
    assert out.ports == 3 and not out.remaining
    assert set(PortRollup.objects.values_list("port_id", flat=True)) == set(queued[1])
    assert list(TelemetryIngestBatch.objects.values_list("shard", flat=True)) == [0]  # shard 0 still waits

    telemetry_rollup(now=NOW, shard=0)
    assert not TelemetryIngestBatch.objects.exists()
    assert set(PortRollup.objects.values_list("port_id", flat=True)) == {p.pk for p in ports}


@pytest.mark.django_db
def test_rows_queued_before_the_shards_are_split_and_every_port_is_rolled_up(ports):
    ingest(ports)
    telemetry_rollup(now=NOW)
    reference = rollups()
    requeue_all(ports)
    # a row from before the queue had shards: every port in one row, shard 0
    TelemetryIngestBatch.objects.all().delete()
    TelemetryIngestBatch.objects.create(
        received_at=NOW, min_ts=T0, max_ts=NOW, port_ids=sorted(p.pk for p in ports), shard=0
    )

    out = telemetry_rollup(now=NOW, shard=0)
    assert out.ports == 3  # only its own; the odd ones moved to a row of shard 1
    (moved,) = TelemetryIngestBatch.objects.all()
    assert moved.shard == 1 and moved.port_ids == sorted(p.pk for p in ports if p.pk % 2)
    assert moved.min_ts == T0 and moved.attempts == 0

    telemetry_rollup(now=NOW, shard=1)
    assert not TelemetryIngestBatch.objects.exists()
    assert rollups() == reference


@pytest.mark.postgres  # advisory locks and concurrent sessions are PostgreSQL's
@pytest.mark.django_db(transaction=True)
def test_two_shards_roll_up_side_by_side_to_the_buckets_of_one_run(ports):
    ingest(ports)
    telemetry_rollup(now=NOW)
    reference = rollups()
    assert len(reference) == 6 * 3
    requeue_all(ports)

    outcomes, errors = {}, []

    def run(shard: int) -> None:
        try:
            outcomes[shard] = telemetry_rollup(now=NOW, shard=shard)
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(k,)) for k in (0, 1)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    assert outcomes[0].ports == outcomes[1].ports == 3
    assert rollups() == reference
    assert not TelemetryIngestBatch.objects.exists()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_shard_being_rolled_up_is_not_taken_by_a_second_run(ports):
    ingest(ports)
    params = connection.get_connection_params()
    dsn = {k: v for k, v in params.items() if k in ("host", "port", "user", "password", "dbname")}
    with psycopg.connect(**dsn, autocommit=True) as other:  # another worker, mid-run on shard 0
        other.execute("SELECT pg_advisory_lock(%s, 0)", [rollup_queue._SHARD_LOCK])
        out = telemetry_rollup(now=NOW, shard=0)
        assert (out.batches, out.ports) == (0, 0)
        assert sorted(TelemetryIngestBatch.objects.values_list("shard", flat=True)) == [0, 1]
        assert telemetry_rollup(now=NOW, shard=1).ports == 3  # the other shard is free
        other.execute("SELECT pg_advisory_unlock(%s, 0)", [rollup_queue._SHARD_LOCK])
    assert telemetry_rollup(now=NOW, shard=0).ports == 3
    assert set(PortRollup.objects.values_list("port_id", flat=True)) == {p.pk for p in ports}


# --- a run behind its queue -------------------------------------------------------------------


def ingest_span(ports, first: int, last: int, *, extra: dict | None = None) -> None:
    """One batch: every port's samples at T0 + 10 s x i for i in [first, last]; counter values
    follow the time, so a late sample's value fits between its neighbours."""
    samples = [
        f.telemetry_sample(
            "leaf-sh", p.name, T0 + timedelta(seconds=10 * i), fec_corrected_bits=(k + 1) * i * 1000
        )
        for k, p in enumerate(ports)
        for i in range(first, last + 1)
    ]
    r = telemetry_ingest(decoded=decode_objects(samples, now=NOW, max_future=timedelta(minutes=5)), now=NOW)
    assert not r.errors and r.stored == len(samples), r.errors


def reference_after_all(ports) -> dict:
    """The table one run over everything stored gives, from nothing."""
    requeue_all(ports)
    while telemetry_rollup(now=NOW).batches:
        pass
    return rollups()


@pytest.mark.postgres  # the bound is the set-based path's (SQLite and odd ports recompute all)
@pytest.mark.django_db
def test_a_run_behind_its_queue_reads_only_what_its_rows_announced_and_the_next_ones_finish(ports, settings):
    settings.CABLETRACK_TELEMETRY_ROLLUP_MAX_BATCHES = 1
    ingest_span(ports[:2], 0, 17)  # minutes 0-2
    ingest_span(ports[:2], 18, 35)  # minutes 3-5, queued behind
    telemetry_rollup(now=NOW)  # behind: the first row of a shard only
    telemetry_rollup(now=NOW)
    minutes = {(b - T0).total_seconds() // 60 for b in PortRollup.objects.values_list("bucket", flat=True)}
    assert minutes == {0, 1, 2}  # the samples queued after them wait for their own rows
    while telemetry_rollup(now=NOW).batches:
        pass
    done = rollups()
    assert len(done) == 2 * 6
    assert done == reference_after_all(ports[:2])


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_late_sample_rolled_up_while_behind_rejudges_the_buckets_after_it(ports, settings):
    ingest_span(ports[:2], 0, 35)
    telemetry_rollup(now=NOW)
    settings.CABLETRACK_TELEMETRY_ROLLUP_MAX_BATCHES = 1
    # late: 1:55, between 1:50 and 2:00, so minute 2's first interval now starts at 1:55
    late = [
        f.telemetry_sample(
            "leaf-sh", p.name, T0 + timedelta(seconds=115), fec_corrected_bits=(k + 1) * 11_500
        )
        for k, p in enumerate(ports[:2])
    ]
    r = telemetry_ingest(decoded=decode_objects(late, now=NOW, max_future=timedelta(minutes=5)), now=NOW)
    assert r.stored == 2
    ingest_span(ports[:2], 36, 41)  # minute 6, queued behind the late row
    while telemetry_rollup(now=NOW).batches:
        pass
    after = rollups()
    minute2 = after[(ports[0].pk, T0 + timedelta(minutes=2))]
    assert minute2["covered_s"] == 55  # 1:55 -> 2:00 -> ... -> 2:50
    assert after == reference_after_all(ports[:2])


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_backlog_replayed_after_newer_samples_is_drained_row_by_row_and_matches_a_full_recompute(
    ports, settings
):
    """A collector that was cut off sends its buffered minutes after the newer ones were rolled
    up. Each run reads what its rows announced (and the bucket after, if rolled up already), not
    everything up to the port's newest sample: that made every run re-read the rest of the
    backlog (26 s a run of 50 batches at 4,096 GPUs, a quadratic drain)."""
    ingest_span(ports[:2], 60, 77)  # minutes 10-12 arrive first and are rolled up
    telemetry_rollup(now=NOW)
    settings.CABLETRACK_TELEMETRY_ROLLUP_MAX_BATCHES = 1
    ingest_span(ports[:2], 0, 17)  # the backlog: minutes 0-2...
    ingest_span(ports[:2], 18, 35)  # ...and 3-5, queued behind them
    telemetry_rollup(now=NOW)
    telemetry_rollup(now=NOW)
    minutes = {(b - T0).total_seconds() // 60 for b in PortRollup.objects.values_list("bucket", flat=True)}
    assert minutes == {0, 1, 2, 10, 11, 12}  # minutes 3-5 wait for their own rows
    while telemetry_rollup(now=NOW).batches:
        pass
    assert rollups() == reference_after_all(ports[:2])
