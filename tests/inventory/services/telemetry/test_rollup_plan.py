"""The rollup's chunk statement keeps reading each port through its key after its plan was made
on a nearly empty day (PostgreSQL).

A worker prepares the statement once per database session and PostgreSQL keeps one generic
plan for it, costed at the table sizes of the moment: at the start of a UTC day, a partition
holding a batch or two. Planned that way, the statement once read the whole day's partition
for every chunk of ports (a hash join over a sequential scan) and the rollup fell behind by more
the longer the day ran. Here one port is rolled up after 20,000 more samples arrived under the
same plan: the pages it reads are those of its own samples, not the table's.

    [leaf-p Ethernet1/1 .. 1/4]  counters only, one sample a second
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection, transaction

from inventory.core.telemetry.decode import decode_objects
from inventory.models import PortRollup, TelemetryIngestBatch
from inventory.services.telemetry import rollup_sql
from inventory.services.telemetry.ingest import telemetry_ingest
from inventory.services.telemetry.rollup import telemetry_rollup
from tests import factories as f

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]
T0 = datetime(2026, 11, 30, 0, 0, 5, tzinfo=UTC)  # just after midnight: a fresh day partition
NOW = T0 + timedelta(hours=8)


def ingest(ports, seconds: range) -> None:
    samples = [
        f.telemetry_sample(
            "leaf-p",
            p.name,
            T0 + timedelta(seconds=s),
            fec_corrected_codewords=1_000 + s * 7,
            fec_corrected_bits=5_000 + s * 11,
        )
        for s in seconds
        for p in ports
    ]
    out = telemetry_ingest(decoded=decode_objects(samples, now=NOW, max_future=timedelta(minutes=5)), now=NOW)
    assert not out.errors and out.stored == len(samples)


def pages_read(plan: dict) -> int:
    return plan["Shared Hit Blocks"] + plan["Shared Read Blocks"]


def test_a_plan_made_on_a_nearly_empty_day_still_reads_one_port_through_its_key():
    ports = f.twin_port_device("leaf-p", cages=4)[1][:4]
    with connection.cursor() as cur:  # this session's plan is made in this test, not an earlier one
        cur.execute("SELECT 1 FROM pg_prepared_statements WHERE name = %s", [rollup_sql._PREPARED])
        if cur.fetchone():
            cur.execute(f"DEALLOCATE {rollup_sql._PREPARED}")
    ingest(ports, range(2))
    telemetry_rollup(now=NOW)  # plans the statement: the day holds 8 samples
    ingest(ports, range(2, 5_002))  # 20,000 more, the plan kept
    TelemetryIngestBatch.objects.all().delete()

    port = ports[0]
    newest = T0 + timedelta(seconds=5_001)  # 01:23:26
    bucket = newest.replace(second=0)  # 01:23:00, which holds the samples from 01:23:00 on
    with transaction.atomic(), connection.cursor() as cur:
        rollup_sql._execute(cur)
        cur.execute(
            f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {rollup_sql.EXECUTE}",
            rollup_sql.execute_arguments({port.pk: bucket}, now=NOW),
        )
        (raw,) = cur.fetchone()
        cur.execute("SELECT pg_relation_size(%s) / 8192", [f"inventory_telemetrysample_p{T0:%Y%m%d}"])
        (day_pages,) = cur.fetchone()
    plan = (raw if isinstance(raw, list) else json.loads(raw))[0]["Plan"]

    # the port's last bucket was rolled up from its own 27 samples (each 7 codewords on) ...
    row = PortRollup.objects.get(port=port, bucket=bucket)
    assert (row.samples, row.fec_corrected_cw) == (27, 27 * 7)
    # ... through its key: a few dozen pages, where the day's heap alone holds some 170 (a
    # whole-table read of them, made once per chunk, was the fault)
    assert pages_read(plan) < day_pages / 4, f"read {pages_read(plan)} pages of a {day_pages}-page day"
