"""Telemetry ingest: resolve ports, store a batch idempotently, queue its ports for rollup.

Policy (also in the API schema): a batch is decoded and validated item by item; items with an
unknown device or port, bad types, a timestamp far in the future or a malformed shape are
refused with their index and a reason, and the valid items are stored. A sample repeated with
the same (port, ts) and the same values is a duplicate (counted, stored once); the same
(port, ts) with different values is refused as a ``conflict``. The batch is written in one
transaction: either every valid item is stored or (on a server error) none is.

The steps live beside this module: ``ingest_rows`` (the batch as columns, port resolution,
repeats), ``ingest_layouts`` (FEC histogram layouts), ``ingest_store`` (COPY on PostgreSQL,
``executemany`` on SQLite; the COPY encoding itself is ``inventory.db.copy``).

The hot path does no per-item Python work it can avoid: the batch is held as columns
(``IngestRows``), port names resolve through a per-process cache validated by one query per
batch (``max_ids``), and every step reads the columns with C-level builtins or numpy.
"""

from __future__ import annotations

from datetime import datetime

from django.core.cache import cache
from django.db import connection, transaction

from inventory.conf import app_settings
from inventory.core.telemetry.decode import (
    IDENTITY_FIELDS,
    JUDGEMENT_FIELDS,
    THRESHOLD_FIELDS,
    Decoded,
    Sample,
)
from inventory.models import TelemetryIngestBatch
from inventory.services.ops.enqueue import enqueue_now
from inventory.services.telemetry import partitions, rollup_queue
from inventory.services.telemetry.identity import identities_record
from inventory.services.telemetry.ingest_layouts import layouts
from inventory.services.telemetry.ingest_rows import IngestResult, IngestRows, dedupe, resolve
from inventory.services.telemetry.ingest_store import store

ROLLUP_PENDING_KEY = "telemetry:rollup-pending"


def _queue_rollup(rows: IngestRows, *, now: datetime) -> None:
    """One queue row per rollup shard the batch's ports fall in, each with the batch's time span
    (a collector's batch is one scrape: its samples share a time or nearly)."""
    ts = rows.ts()
    lo, hi = min(ts), max(ts)
    by_shard = rollup_queue.split_by_shard(rows.port_ids)
    if connection.vendor == "postgresql":
        # each port list as one array literal: psycopg's per-element list adaptation costs
        # more than the rest of this row
        qn = connection.ops.quote_name
        values = []
        for k, ports in by_shard.items():
            values += [now, lo, hi, "{" + ",".join(map(str, ports)) + "}", k]
        with connection.cursor() as cur:
            cur.execute(
                f"INSERT INTO {qn(TelemetryIngestBatch._meta.db_table)} (received_at, min_ts, max_ts, port_ids, shard) "  # noqa: S608 - table name from model _meta, quoted; values are parameters
                "VALUES " + ", ".join(["(%s, %s, %s, %s::bigint[], %s)"] * len(by_shard)),
                values,
            )
        return
    TelemetryIngestBatch.objects.bulk_create(
        TelemetryIngestBatch(received_at=now, min_ts=lo, max_ts=hi, port_ids=ports, shard=k)
        for k, ports in by_shard.items()
    )


_IDENTITY_ATTRS = (*IDENTITY_FIELDS, *THRESHOLD_FIELDS, *JUDGEMENT_FIELDS)


def _with_identity(rows: IngestRows) -> list[tuple[int, Sample]]:
    """The rows whose samples carry an EEPROM identity, a neighbour or DOM thresholds."""
    positions: set[int] = set()
    for f in _IDENTITY_ATTRS:
        col = rows.col(f)
        if col is not None:
            positions.update(p for p, v in enumerate(col) if v is not None)
    return [(rows.port_ids[p], rows.samples[p]) for p in sorted(positions)]


def _enqueue_rollup() -> None:
    """Ask a worker to roll up soon; debounced (the periodic sweep is the real guarantee)."""
    try:
        # add() is True (first in the window), False (already asked) or None: the cache is down
        # and its error ignored. Then ask anyway: with the broker down too (one Redis), the
        # message goes to the outbox, and the outbox flush sends identical messages once.
        first = cache.add(ROLLUP_PENDING_KEY, 1, timeout=app_settings.telemetry_rollup_debounce_seconds)
        if first is not False:
            enqueue_now("inventory.telemetry_rollup")
    except Exception:  # noqa: BLE001 - a broker outage must not fail an ingest that committed
        cache.delete(ROLLUP_PENDING_KEY)


def telemetry_ingest(*, decoded: Decoded, now: datetime) -> IngestResult:
    """Store a decoded batch: resolve ports, refuse per item, write idempotently, queue rollups."""
    result = IngestResult(received=decoded.received, errors=list(decoded.errors))
    if not decoded.samples:
        return result
    rows = resolve(decoded, result.errors)
    if connection.vendor != "postgresql":
        rows = dedupe(rows, result)  # on PostgreSQL the key refuses a repeat: see ingest_store.store
    if not rows:
        return result
    with transaction.atomic():
        if partitions.enabled():
            partitions.ensure_days(partitions.batch_days(rows.ts()))
        layouts(rows)
        stored = store(rows, result)
        result.stored = len(stored)
        if stored:
            _queue_rollup(stored, now=now)
            identified = _with_identity(stored)
            if identified:
                identities_record(rows=identified, now=now)
            transaction.on_commit(_enqueue_rollup)
    return result
