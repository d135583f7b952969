"""Raw telemetry in day partitions on PostgreSQL: where samples land, what retention drops, and
an ingest for a day nobody made a partition for.

    [leaf-p Ethernet1/1]  400G; full samples (counters, lanes, a FEC histogram)
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test import override_settings

from inventory.core.telemetry.decode import decode_objects
from inventory.models import TelemetrySample
from inventory.services.telemetry import partitions
from inventory.services.telemetry.ingest import telemetry_ingest
from inventory.services.telemetry.rollup import telemetry_retention_enforce
from inventory.tasks import telemetry_partitions_task
from tests import factories as f

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.postgres,  # partitions are PostgreSQL's; SQLite deletes by age (deselected there)
]
NOW = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
TABLES = partitions.TABLES


@pytest.fixture
def port():
    return f.twin_port_device("leaf-p", cages=1)[1][0]


def ingest(port, start, n=3, now=NOW):
    samples = [
        f.telemetry_sample(
            "leaf-p",
            port.name,
            start + timedelta(seconds=10 * i),
            fec_corrected_codewords=i,
            rx_power_dbm=[-2.0, -2.5],
            fec_hist=[100 + i, i, 0, 0],
        )
        for i in range(n)
    ]
    r = telemetry_ingest(decoded=decode_objects(samples, now=now, max_future=timedelta(minutes=5)), now=now)
    assert r.stored == n and not r.errors
    return r


def holders(table: str) -> dict[str, int]:
    """Partition name -> rows it holds."""
    with connection.cursor() as cur:
        cur.execute(f"SELECT tableoid::regclass::text, count(*) FROM {table} GROUP BY 1")  # noqa: S608 - test table name
        return dict(cur.fetchall())


def test_samples_land_in_their_days_partition(port):
    ingest(port, datetime(2026, 11, 28, 23, 59, 50, tzinfo=UTC))  # across midnight: 1 + 2
    ingest(port, NOW)
    for t in TABLES:
        assert holders(t) == {f"{t}_p20261128": 1, f"{t}_p20261129": 5}
    assert partitions.existing_days() == {NOW.date() - timedelta(days=k) for k in (0, 1)}


@override_settings(CABLETRACK_TELEMETRY_RAW_RETENTION_DAYS=14)
def test_retention_drops_old_days_whole_and_keeps_the_rest(port):
    old = NOW - timedelta(days=20)
    ingest(port, old)
    ingest(port, NOW - timedelta(days=13))
    ingest(port, NOW)
    out = telemetry_retention_enforce(now=NOW)
    assert out.days_dropped == 1 and out.samples == 0
    for t in TABLES:
        assert f"{t}_p{old:%Y%m%d}" not in holders(t)
        assert connection.introspection.table_names().count(f"{t}_p{old:%Y%m%d}") == 0
        assert sum(holders(t).values()) == 6
    assert not TelemetrySample.objects.filter(ts__lt=NOW - timedelta(days=14)).exists()


def test_a_day_without_a_partition_is_made_at_ingest_and_keeps_rows_already_in_the_default(port):
    day = NOW + timedelta(days=30)
    # a row written around the ingest (by hand, a restore) lands in the default partition
    TelemetrySample.objects.create(port=port, ts=day - timedelta(hours=1), fec_corrected_cw=7)
    assert holders(TABLES[0]) == {f"{TABLES[0]}_pdefault": 1}
    ingest(port, day, now=day)
    assert holders(TABLES[0]) == {f"{TABLES[0]}_p{day:%Y%m%d}": 4}
    assert TelemetrySample.objects.filter(port=port).count() == 4


def test_the_beat_task_makes_today_and_the_days_ahead():
    made = telemetry_partitions_task()
    today = datetime.now(UTC).date()
    ahead = {today + timedelta(days=k) for k in range(partitions.AHEAD_DAYS + 1)}
    assert made == len(ahead) and ahead <= partitions.existing_days()
    for t in TABLES:
        assert ahead <= partitions.existing_days(t)
    assert telemetry_partitions_task() == 0  # idempotent
