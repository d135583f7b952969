"""Rollups of raw samples into ``PortRollup`` and retention of both.

``telemetry_rollup`` takes queued ingest batches (``TelemetryIngestBatch``), recomputes the
touched ports' buckets from the earliest sample time those batches wrote, replaces those
buckets, and deletes the queue rows, all in one transaction per run: running it twice, or
after a crash, gives the same table. Set-based: a handful of queries per chunk of ports.

Poison cannot stop it (``rollup_queue``): no recompute reaches back past the raw retention
(older buckets have no raw data left to rebuild them from), each chunk of ports runs in its
own savepoint, and a chunk that fails is split until the failing ports are found; those are
set aside in the queue with the error and retried with backoff, the rest is written.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from operator import attrgetter

from django.db import connection, transaction
from django.db.models.expressions import RawSQL

from inventory.conf import app_settings
from inventory.core.telemetry.rates import MAX_INCREASE
from inventory.core.telemetry.rollup import (
    IDENTITY,
    ROLLUP_COUNTERS,
    Layout,
    PortLine,
    RawSample,
    rollup_port,
)
from inventory.models import (
    FecBinLayout,
    Port,
    PortObservation,
    PortRollup,
    PortTelemetryState,
    TelemetryHistogram,
    TelemetryIngestBatch,
    TelemetryLaneSample,
    TelemetrySample,
)
from inventory.selectors.telemetry.lines import port_lines
from inventory.services.telemetry import partitions, rollup_queue
from inventory.services.telemetry.rollup_sql import rollup_ports_sql


def _ids(ids) -> list[int] | RawSQL:
    """The right side of ``__in=``: on PostgreSQL one array literal, not thousands of
    parameters (psycopg's client-side conversion of a 20,000-parameter statement costs about a
    second); elsewhere the list."""
    if connection.vendor == "postgresql":
        return RawSQL("SELECT unnest(%s::bigint[])", ["{" + ",".join(map(str, ids)) + "}"])
    return list(ids)


def _write_rollups(rows: list[PortRollup]) -> None:
    """Insert rollup rows: COPY on PostgreSQL (``bulk_create`` of 38-column rows spent ~2 ms a
    row building and converting its statement), ``bulk_create`` elsewhere. Every concrete
    field of ``PortRollup`` holds a value psycopg adapts as is (no custom ``get_db_prep_value``
    beyond ``FloatArrayField``, whose PostgreSQL form is the list itself)."""
    if connection.vendor != "postgresql" or not rows:
        PortRollup.objects.bulk_create(rows, batch_size=2000)
        return
    fields = [f for f in PortRollup._meta.concrete_fields]
    qn = connection.ops.quote_name
    cols = ", ".join(qn(f.column) for f in fields)
    getter = attrgetter(*(f.attname for f in fields))
    sql = f"COPY {qn(PortRollup._meta.db_table)} ({cols}) FROM STDIN"
    # the values are plain numbers, strings, lists and aware datetimes already: psycopg adapts
    # them without Django's per-field preparation (most of the cost)
    with connection.connection.cursor() as cur, cur.copy(sql) as copy:
        for obj in rows:
            copy.write_row(getter(obj))


@dataclass
class RollupOutcome:
    batches: int
    ports: int
    buckets: int
    remaining: bool
    set_aside: int = 0  # ports whose recompute failed this run (queued again with backoff)


def _port_lines(port_ids: list[int]) -> dict[int, PortLine]:
    return port_lines(_ids(port_ids))


def _load(port_ids: list[int], since: datetime) -> dict[int, list[RawSample]]:
    cols = [
        "port_id",
        "ts",
        *ROLLUP_COUNTERS_DB,
        "pre_fec_ber",
        "post_fec_ber",
        "temperature_c",
        "speed_gbps",
        "link_width",
    ]
    by_key: dict[tuple[int, datetime], RawSample] = {}
    per_port: dict[int, list[RawSample]] = defaultdict(list)
    n = len(ROLLUP_COUNTERS_DB)
    for row in (
        TelemetrySample.objects.filter(port_id__in=_ids(port_ids), ts__gte=since)
        .values_list(*cols)
        .order_by()
    ):
        pid, ts = row[0], row[1]
        s = RawSample(
            t=ts.timestamp(),
            counters=dict(zip(ROLLUP_COUNTERS, row[2 : 2 + n], strict=True)),
            pre_fec_ber=row[2 + n],
            post_fec_ber=row[3 + n],
            temperature_c=row[4 + n],
            speed_gbps=row[5 + n],
            link_width=row[6 + n],
        )
        by_key[(pid, ts)] = s
        per_port[pid].append(s)
    for pid, ts, rx, tx in TelemetryLaneSample.objects.filter(
        port_id__in=_ids(port_ids), ts__gte=since
    ).values_list("port_id", "ts", "rx_power_dbm", "tx_power_dbm"):
        s = by_key.get((pid, ts))
        if s is not None:
            s.rx_power_dbm, s.tx_power_dbm = rx, tx
    for pid, ts, layout, counts in TelemetryHistogram.objects.filter(
        port_id__in=_ids(port_ids), ts__gte=since
    ).values_list("port_id", "ts", "layout_id", "counts"):
        s = by_key.get((pid, ts))
        if s is not None:
            s.hist_layout, s.hist = layout, counts
    return per_port


# TelemetrySample column names for ROLLUP_COUNTERS (same order)
ROLLUP_COUNTERS_DB = ROLLUP_COUNTERS


def _observations(port_ids: list[int]) -> dict[int, list[tuple[float, dict[str, str]]]]:
    out: dict[int, list[tuple[float, dict[str, str]]]] = defaultdict(list)
    for pid, ts, *vals in (
        PortObservation.objects.filter(port_id__in=_ids(port_ids))
        .order_by("port_id", "ts")
        .values_list("port_id", "ts", *IDENTITY)
    ):
        out[pid].append((ts.timestamp(), dict(zip(IDENTITY, vals, strict=True))))
    return out


def _int(total: float) -> int:
    """A bucket's summed increase as its bigint column holds it: several increases of one bucket
    can add up past 2**63-1 (and a float sum rounds up to 2**63), so the sum saturates."""
    return min(int(total), MAX_INCREASE)


def _rollup_ports(port_ids: list[int], since: datetime, *, now: datetime) -> int:
    width = app_settings.telemetry_rollup_seconds
    lookback = timedelta(seconds=app_settings.telemetry_rollup_lookback_seconds)
    since_aligned = datetime.fromtimestamp(since.timestamp() - since.timestamp() % width, since.tzinfo)
    samples = _load(port_ids, since_aligned - lookback)
    lines = _port_lines(port_ids)
    layout_ids = {s.hist_layout for ss in samples.values() for s in ss if s.hist_layout}
    layouts = {
        pk: Layout(lo, hi, limit)
        for pk, lo, hi, limit in FecBinLayout.objects.filter(pk__in=layout_ids).values_list(
            "pk", "bin_low", "bin_high", "correction_limit"
        )
    }
    observations = _observations(port_ids)
    rows: list[PortRollup] = []
    for pid in port_ids:
        for b in rollup_port(
            samples.get(pid, []),
            width=width,
            since=since_aligned.timestamp(),
            line=lines.get(pid),
            layouts=layouts,
            observations=observations.get(pid, []),
        ):
            c = b.counters
            ident = b.identity
            rows.append(
                PortRollup(
                    port_id=pid,
                    bucket=b.start_dt,
                    seconds=width,
                    samples=b.samples,
                    covered_s=b.covered_s,
                    resets=b.resets,
                    **{name: (_int(c[name]) if name in c else None) for name in ROLLUP_COUNTERS},
                    line_bits=b.line_bits,
                    pre_fec_ber=b.pre_fec_ber,
                    pre_fec_ber_max=b.pre_fec_ber_max,
                    post_fec_ber_max=b.post_fec_ber_max,
                    hist_layout_id=b.hist_layout,
                    fec_correction_limit=b.hist_limit,
                    hist_cw_warn=None if b.hist_warn is None else _int(b.hist_warn),
                    hist_cw_crit=None if b.hist_crit is None else _int(b.hist_crit),
                    hist_max_bin_high=b.hist_max_bin_high,
                    rx_power_min_dbm=b.rx_min,
                    tx_power_min_dbm=b.tx_min,
                    rx_power_min_any_dbm=min((x for x in b.rx_min or [] if x is not None), default=None),
                    temperature_max_c=b.temperature_max_c,
                    speed_gbps_min=b.speed_min,
                    link_width_min=b.width_min,
                    computed_at=now,
                    **{k: ident.get(k, "") for k in IDENTITY},
                )
            )
    PortRollup.objects.filter(port_id__in=_ids(port_ids), bucket__gte=since_aligned).delete()
    _write_rollups(rows)
    _last_seen(samples)
    return len(rows)


def _last_seen(samples: dict[int, list[RawSample]]) -> None:
    """Move each port's ``PortTelemetryState.last_ts`` forward to its newest sample."""
    newest = {pid: max(s.t for s in ss) for pid, ss in samples.items() if ss}
    if not newest:
        return
    known = dict(
        PortTelemetryState.objects.filter(port_id__in=_ids(newest)).values_list("port_id", "last_ts")
    )
    changed = []
    for pid, t in newest.items():
        ts = datetime.fromtimestamp(t, UTC)
        old = known.get(pid)
        if old is None or ts > old:
            changed.append(PortTelemetryState(port_id=pid, last_ts=ts))
    PortTelemetryState.objects.bulk_create(
        changed, update_conflicts=True, unique_fields=["port"], update_fields=["last_ts"], batch_size=2000
    )


def _rollup_chunk(
    ports: list[int], dirty_from: dict[int, datetime], dirty_until: dict[int, datetime], *, now: datetime
) -> int:
    """One chunk of ports: on PostgreSQL set-based (``rollup_sql``), each port from its own dirty
    bucket, with the pure core for the odd ports it hands back; elsewhere the pure core."""
    if connection.vendor != "postgresql":
        return _rollup_ports(ports, min(dirty_from[p] for p in ports), now=now)
    done = rollup_ports_sql({p: dirty_from[p] for p in ports}, until=dirty_until or None, now=now)
    if done.odd:
        return done.buckets + _rollup_ports(done.odd, min(dirty_from[p] for p in done.odd), now=now)
    return done.buckets


def telemetry_rollup(
    *, now: datetime, max_batches: int | None = None, shard: int | None = None
) -> RollupOutcome:
    """Roll up the ports of up to ``max_batches`` queued ingest batches of one shard (or of
    every shard, ``None``). Idempotent.

    A run holds its shard's lock (``rollup_queue.lock_shards``) for its transaction, so the
    shards run side by side on separate workers and no two runs ever recompute one port at
    once (two would each write the bucket from their own snapshot, the older one last). A run
    for a shard already being rolled up does nothing.

    Batches set aside earlier are taken again once their retry time has come (new data for a
    set-aside port waits with it, so a poisoned port is not retried every run). Dirty times are
    clamped to the raw retention horizon; ports whose recompute fails are set aside (see the
    module docstring), so one poison row never holds back the ports behind it."""
    max_batches = max_batches or app_settings.telemetry_rollup_max_batches
    chunk = app_settings.telemetry_rollup_batch_ports
    horizon = rollup_queue.rollup_horizon(now)
    with transaction.atomic():
        if not rollup_queue.lock_shards(shard):
            return RollupOutcome(0, 0, 0, False)
        qs = rollup_queue.due_batches(now, shard).order_by("id")
        if connection.features.has_select_for_update_skip_locked:
            qs = qs.select_for_update(skip_locked=True)
        batches = list(qs.values_list("id", "min_ts", "port_ids", "attempts", "max_ts")[: max_batches + 1])
        behind = len(batches) > max_batches  # more is queued than this run takes
        batches = batches[:max_batches]
        if not batches:
            return RollupOutcome(0, 0, 0, False)
        # each port's earliest dirty time and most tries, built with dict.update (C speed: a run
        # names each of tens of thousands of ports in several batches): the latest update wins,
        # so batches go from the latest time to the earliest, and from the fewest tries up
        dirty_from: dict[int, datetime] = {}
        attempts: dict[int, int] = {}
        # and newest announced time (the latest update wins: from the earliest time up)
        dirty_until: dict[int, datetime] = {}
        for _, min_ts, port_ids, _tried, _max_ts in sorted(batches, key=lambda b: b[1], reverse=True):
            dirty_from.update(dict.fromkeys(port_ids, max(min_ts, horizon)))
        for _, _min_ts, port_ids, tried, _max_ts in sorted(batches, key=lambda b: b[3]):
            attempts.update(dict.fromkeys(port_ids, tried))
        # Behind its queue, a run reads only up to what its own rows announced
        # (``rollup_ports_sql``): the rows after them bring their own. A run that takes the
        # whole queue reads on to the newest sample stored.
        if behind:
            for _, _min_ts, port_ids, _tried, max_ts in sorted(batches, key=lambda b: b[4]):
                dirty_until.update(dict.fromkeys(port_ids, max_ts))
        if shard is not None:
            rollup_queue.requeue_foreign(dirty_from, shard=shard, now=now)
        rollup_queue.hold_back(dirty_from, now=now, shard=shard)
        # ports dirtied from about the same time roll up together (one load per chunk)
        ordered = sorted(dirty_from, key=lambda p: (dirty_from[p], p))
        buckets = 0
        failed: dict[int, str] = {}
        for i in range(0, len(ordered), chunk):
            ports = ordered[i : i + chunk]
            buckets += rollup_queue.isolating(
                ports, lambda ps: _rollup_chunk(ps, dirty_from, dirty_until, now=now), failed
            )
        TelemetryIngestBatch.objects.filter(pk__in=[b[0] for b in batches]).delete()
        rollup_queue.set_aside(failed, dirty_from=dirty_from, attempts=attempts, now=now)
    remaining = rollup_queue.due_batches(now, shard).exists()
    return RollupOutcome(len(batches), len(dirty_from), buckets, remaining, set_aside=len(failed))


@dataclass
class RetentionOutcome:
    samples: int  # raw sample rows deleted (SQLite; the default partition on PostgreSQL)
    rollups: int
    days_dropped: int = 0  # whole days of raw samples dropped (PostgreSQL's day partitions)


def telemetry_retention_enforce(*, now: datetime) -> RetentionOutcome:
    """Remove raw samples (and their lane/histogram rows) older than the raw retention and
    rollups older than the rollup retention (identity observations are kept: one row per change).

    Raw samples on PostgreSQL: whole day partitions are dropped (``partitions.drop_before``),
    whatever their size. Elsewhere, and for rollups, deletes go port by port range through
    the (port, ts) keys, in chunks, each its own transaction."""
    raw_cutoff = now - timedelta(days=app_settings.telemetry_raw_retention_days)
    rollup_cutoff = now - timedelta(days=app_settings.telemetry_rollup_retention_days)
    samples = rollups = days = 0
    partitioned = partitions.enabled()
    if partitioned:
        with transaction.atomic():
            days, samples = partitions.drop_before(raw_cutoff)
    port_ids = list(Port.objects.order_by("pk").values_list("pk", flat=True))
    step_ = 1000
    for i in range(0, max(len(port_ids), 1), step_):
        chunk = port_ids[i : i + step_]
        if not chunk:
            break
        with transaction.atomic():
            if not partitioned:
                samples += TelemetrySample.objects.filter(port_id__in=chunk, ts__lt=raw_cutoff).delete()[0]
                TelemetryLaneSample.objects.filter(port_id__in=chunk, ts__lt=raw_cutoff).delete()
                TelemetryHistogram.objects.filter(port_id__in=chunk, ts__lt=raw_cutoff).delete()
            rollups += PortRollup.objects.filter(port_id__in=chunk, bucket__lt=rollup_cutoff).delete()[0]
    return RetentionOutcome(samples, rollups, days)
