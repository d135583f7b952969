"""Telemetry ingest: resolve ports, store a batch idempotently, queue its ports for rollup.

Policy (also in the API schema): a batch is decoded and validated item by item; items with an
unknown device or port, bad types, a timestamp far in the future or a malformed shape are
refused with their index and a reason, and the valid items are stored. A sample repeated with
the same (port, ts) and the same values is a duplicate (counted, stored once); the same
(port, ts) with different values is refused as a ``conflict``. The batch is written in one
transaction: either every valid item is stored or (on a server error) none is.

PostgreSQL: rows are COPYed straight into the tables (the fast path); when a key already
exists the transaction rolls back to a savepoint and the batch goes through a temporary
staging table and ``INSERT ... ON CONFLICT DO NOTHING RETURNING``, and the rows that were not
inserted are compared with the stored ones. SQLite: existing keys are read first, then
``executemany``, with the same outcome.
"""

from __future__ import annotations

import io
import struct
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, connection, transaction
from django.db.models import Q

from ..choices import FecType
from ..models import (
    Device,
    FecBinLayout,
    Link,
    TelemetryHistogram,
    TelemetryIngestBatch,
    TelemetryLaneSample,
    TelemetrySample,
)
from ..models.telemetry_fields import U64_OFFSET
from ..telemetry.decode import COUNTER_FIELDS, GAUGE_FIELDS, LANE_FIELDS, Decoded, ItemError, Sample
from .ports import ports_resolve

# sample field -> TelemetrySample column, in table order
SAMPLE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("fec_corrected_codewords", "fec_corrected_cw"),
    ("fec_uncorrectable_codewords", "fec_uncorrectable_cw"),
    ("fec_corrected_bits", "fec_corrected_bits"),
    ("fec_symbol_errors", "fec_symbol_errors"),
    ("rx_bits", "rx_bits"),
    ("ib_symbol_errors", "ib_symbol_errors"),
    ("pfc_pause_rx", "pfc_pause_rx"),
    ("pfc_pause_tx", "pfc_pause_tx"),
    ("pfc_pause_duration_us", "pfc_pause_duration_us"),
    ("link_down_events", "link_down_events"),
    ("link_error_recovery", "link_error_recovery"),
    ("pre_fec_ber", "pre_fec_ber"),
    ("post_fec_ber", "post_fec_ber"),
    ("temperature_c", "temperature_c"),
    ("voltage_v", "voltage_v"),
)
_COUNTERS = frozenset(COUNTER_FIELDS)
_GAUGES = frozenset(GAUGE_FIELDS)
CORRECTION_LIMITS = {FecType.KP4: 15, FecType.KR4: 7}
DEFAULT_CORRECTION_LIMIT = 15
ROLLUP_PENDING_KEY = "telemetry:rollup-pending"


@dataclass
class IngestResult:
    received: int
    stored: int = 0
    duplicates: int = 0
    errors: list[ItemError] = field(default_factory=list)

    @property
    def rejected(self) -> int:
        return len(self.errors)

    def as_dict(self) -> dict:
        return {
            "received": self.received,
            "stored": self.stored,
            "duplicates": self.duplicates,
            "rejected": self.rejected,
            "errors": [e.as_dict() for e in sorted(self.errors, key=lambda e: e.index)],
        }


@dataclass(slots=True)
class _Row:
    index: int
    port_id: int
    sample: Sample
    layout_id: int | None = None


# ---------------------------------------------------------------------------------------------
# resolution


def _resolve(decoded: Decoded, errors: list[ItemError]) -> list[_Row]:
    """(device, port) -> port id in one query (plus one more for leftovers, by sample date)."""
    samples, index = decoded.samples, decoded.index
    pairs = {(s.device, s.port) for s in samples}
    found = ports_resolve(pairs)
    missing = pairs - found.keys()
    dated: dict[tuple[str, str, datetime], int] = {}
    if missing:
        # A name that is no longer current may have been the port's name when the sample was
        # taken (a backfill across a rename): resolve those at the samples' own time.
        by_ts: dict[datetime, set[tuple[str, str]]] = defaultdict(set)
        for s in samples:
            if (s.device, s.port) in missing:
                by_ts[s.ts].add((s.device, s.port))
        for ts, ts_pairs in list(by_ts.items())[:8]:
            for (dev, name), pid in ports_resolve(ts_pairs, at=ts).items():
                dated[(dev, name, ts)] = pid
        unresolved_devices = {d for d, _ in missing}
        known_devices = set(Device.objects.filter(name__in=unresolved_devices).values_list("name", flat=True))
    rows: list[_Row] = []
    for i, s in zip(index, samples, strict=True):
        pid = found.get((s.device, s.port))
        if pid is None:
            pid = dated.get((s.device, s.port, s.ts))
        if pid is None:
            if s.device in known_devices:
                errors.append(
                    ItemError(
                        i, "unknown_port", f"No port {s.port!r} on device {s.device!r}.", s.device, s.port
                    )
                )
            else:
                errors.append(ItemError(i, "unknown_device", f"No device {s.device!r}.", s.device, s.port))
            continue
        rows.append(_Row(i, pid, s))
    return rows


def _f32(values):
    if values is None:
        return None
    return [None if x is None else struct.unpack("f", struct.pack("f", x))[0] for x in values]


def _same(a: Sample, b: Sample) -> bool:
    """Same values? Lanes compare at the stored precision (float32 on PostgreSQL)."""
    for name in (*COUNTER_FIELDS, *GAUGE_FIELDS, "fec_hist", "fec_hist_bins"):
        if getattr(a, name) != getattr(b, name):
            return False
    return all(_f32(getattr(a, name)) == _f32(getattr(b, name)) for name in LANE_FIELDS)


def _dedupe(rows: list[_Row], result: IngestResult) -> list[_Row]:
    """Within a batch: an identical repeat is a duplicate, a different one a conflict."""
    seen: dict[tuple[int, datetime], _Row] = {}
    out: list[_Row] = []
    for r in rows:
        key = (r.port_id, r.sample.ts)
        first = seen.get(key)
        if first is None:
            seen[key] = r
            out.append(r)
        elif _same(first.sample, r.sample):
            result.duplicates += 1
        else:
            result.errors.append(_conflict(r, f"differs from item {first.index} of this batch"))
    return out


def _conflict(r: _Row, why: str) -> ItemError:
    return ItemError(
        r.index,
        "conflict",
        f"A sample for this port at {r.sample.ts.isoformat()} exists with different values ({why}).",
        r.sample.device,
        r.sample.port,
    )


# ---------------------------------------------------------------------------------------------
# histogram layouts


def _layouts(rows: list[_Row]) -> None:
    """Give each row with a histogram its ``FecBinLayout`` (bin ranges + correction limit)."""
    with_hist = [r for r in rows if r.sample.fec_hist is not None]
    if not with_hist:
        return
    need_limit = {r.port_id for r in with_hist if r.sample.fec_correction_limit is None}
    port_limit: dict[int, int] = {}
    if need_limit:
        links = Link.objects.filter(Q(a_port_id__in=need_limit) | Q(b_port_id__in=need_limit), active=True)
        for a, b, fec in links.values_list("a_port_id", "b_port_id", "fec"):
            limit = CORRECTION_LIMITS.get(fec, DEFAULT_CORRECTION_LIMIT)
            port_limit[a] = port_limit[b] = limit
    sig_of: dict[int, tuple[str, list[int], list[int], int]] = {}
    for r in with_hist:
        s = r.sample
        bins = s.fec_hist_bins or [(i, i) for i in range(len(s.fec_hist))]
        limit = s.fec_correction_limit or port_limit.get(r.port_id, DEFAULT_CORRECTION_LIMIT)
        sig = f"{limit}|" + ",".join(f"{lo}-{hi}" for lo, hi in bins)
        sig_of[id(r)] = (sig, [lo for lo, _ in bins], [hi for _, hi in bins], limit)
    wanted = {v[0]: v for v in sig_of.values()}
    known = dict(FecBinLayout.objects.filter(signature__in=list(wanted)).values_list("signature", "id"))
    for sig, (_, lows, highs, limit) in wanted.items():
        if sig not in known:
            obj, _ = FecBinLayout.objects.get_or_create(
                signature=sig, defaults={"bin_low": lows, "bin_high": highs, "correction_limit": limit}
            )
            known[sig] = obj.pk
    for r in with_hist:
        r.layout_id = known[sig_of[id(r)][0]]


# ---------------------------------------------------------------------------------------------
# writing


def _enc(v: int | None) -> int | None:
    return None if v is None else v - U64_OFFSET


def _present(rows: list[_Row]) -> list[tuple[str, str]]:
    """The sample columns any row of the batch carries (a narrow COPY for narrow batches)."""
    cols = []
    for attr, col in SAMPLE_COLUMNS:
        for r in rows:
            if getattr(r.sample, attr) is not None:
                cols.append((attr, col))
                break
    return cols


def _pg_sample_copy(rows: list[_Row], cols: list[tuple[str, str]]) -> bytes:
    """COPY text for the sample table. Values are numbers only: no escaping needed."""
    ts_text: dict[datetime, str] = {}
    counters = [a for a, _ in cols if a in _COUNTERS]
    gauges = [a for a, _ in cols if a in _GAUGES]
    off = U64_OFFSET
    buf = io.StringIO()
    w = buf.write
    for r in rows:
        s = r.sample
        ts = ts_text.get(s.ts)
        if ts is None:
            ts = ts_text[s.ts] = s.ts.isoformat()
        parts = [str(r.port_id), ts]
        for a in counters:
            v = getattr(s, a)
            parts.append("\\N" if v is None else str(v - off))
        for a in gauges:
            v = getattr(s, a)
            parts.append("\\N" if v is None else repr(v))
        w("\t".join(parts))
        w("\n")
    return buf.getvalue().encode()


def _pg_array(values: Sequence | None) -> str:
    if values is None:
        return "\\N"
    return "{" + ",".join("NULL" if v is None else repr(v) for v in values) + "}"


def _side_rows(rows: list[_Row]) -> tuple[list[_Row], list[_Row]]:
    lanes = [r for r in rows if any(getattr(r.sample, f) is not None for f in LANE_FIELDS)]
    hist = [r for r in rows if r.layout_id is not None]
    return lanes, hist


def _pg_copy(cur, table: str, columns: list[str], data: bytes | str) -> None:
    qn = connection.ops.quote_name
    with cur.copy(f"COPY {qn(table)} ({', '.join(qn(c) for c in columns)}) FROM STDIN") as copy:
        copy.write(data)


def _lane_text(rows: list[_Row]) -> str:
    out = []
    for r in rows:
        s = r.sample
        out.append(
            f"{r.port_id}\t{s.ts.isoformat()}\t{_pg_array(s.rx_power_dbm)}\t"
            f"{_pg_array(s.tx_power_dbm)}\t{_pg_array(s.bias_ma)}\n"
        )
    return "".join(out)


def _hist_text(rows: list[_Row]) -> str:
    return "".join(
        f"{r.port_id}\t{r.sample.ts.isoformat()}\t{r.layout_id}\t{_pg_array(r.sample.fec_hist)}\n"
        for r in rows
    )


SAMPLE_T = TelemetrySample._meta.db_table
LANE_T = TelemetryLaneSample._meta.db_table
HIST_T = TelemetryHistogram._meta.db_table
LANE_COLS = ["port_id", "ts", "rx_power_dbm", "tx_power_dbm", "bias_ma"]
HIST_COLS = ["port_id", "ts", "layout_id", "counts"]


def _pg_write_fast(rows: list[_Row], cols: list[tuple[str, str]]) -> None:
    lanes, hist = _side_rows(rows)
    raw = connection.connection
    with raw.cursor() as cur:
        _pg_copy(cur, SAMPLE_T, ["port_id", "ts", *(c for _, c in cols)], _pg_sample_copy(rows, cols))
        if lanes:
            _pg_copy(cur, LANE_T, LANE_COLS, _lane_text(lanes))
        if hist:
            _pg_copy(cur, HIST_T, HIST_COLS, _hist_text(hist))


def _pg_write_staged(rows: list[_Row], cols: list[tuple[str, str]]) -> list[_Row]:
    """COPY into a temporary staging table, insert what is new; returns the rows inserted.

    Side-table rows are written only for the samples inserted here, so a refused sample
    leaves nothing behind.
    """
    qn = connection.ops.quote_name
    colnames = ["port_id", "ts", *(c for _, c in cols)]
    collist = ", ".join(qn(c) for c in colnames)
    stage = qn(f"{SAMPLE_T}_stage")
    raw = connection.connection
    with raw.cursor() as cur:
        cur.execute(
            f"CREATE TEMPORARY TABLE IF NOT EXISTS {stage} "
            f"(LIKE {qn(SAMPLE_T)} INCLUDING DEFAULTS) ON COMMIT DELETE ROWS"
        )
        cur.execute(f"TRUNCATE {stage}")
        _pg_copy(cur, f"{SAMPLE_T}_stage", colnames, _pg_sample_copy(rows, cols))
        cur.execute(
            f"INSERT INTO {qn(SAMPLE_T)} ({collist}) SELECT {collist} FROM {stage} "
            "ON CONFLICT DO NOTHING RETURNING port_id, ts"
        )
        inserted = set(cur.fetchall())
        new = [r for r in rows if (r.port_id, r.sample.ts) in inserted]
        lanes, hist = _side_rows(new)
        if lanes:
            _pg_copy(cur, LANE_T, LANE_COLS, _lane_text(lanes))
        if hist:
            _pg_copy(cur, HIST_T, HIST_COLS, _hist_text(hist))
    return new


def _existing(rows: list[_Row]) -> dict[tuple[int, datetime], Sample]:
    """Stored samples for the rows' keys, as ``Sample``s for comparison (side tables included)."""
    if not rows:
        return {}
    ports = {r.port_id for r in rows}
    lo = min(r.sample.ts for r in rows)
    hi = max(r.sample.ts for r in rows)
    keys = {(r.port_id, r.sample.ts) for r in rows}
    found: dict[tuple[int, datetime], Sample] = {}
    attrs = [a for a, _ in SAMPLE_COLUMNS]
    cols = [c for _, c in SAMPLE_COLUMNS]
    port_list = list(ports)
    for chunk_start in range(0, len(port_list), 900):
        chunk = port_list[chunk_start : chunk_start + 900]
        qs = TelemetrySample.objects.filter(port_id__in=chunk, ts__gte=lo, ts__lte=hi).values_list(
            "port_id", "ts", *cols
        )
        for pid, ts, *vals in qs:
            if (pid, ts) in keys:
                s = Sample(device="", port="", ts=ts, **dict(zip(attrs, vals, strict=True)))
                found[(pid, ts)] = s
        if not found:
            continue
        for pid, ts, rx, tx, bias in TelemetryLaneSample.objects.filter(
            port_id__in=chunk, ts__gte=lo, ts__lte=hi
        ).values_list("port_id", "ts", "rx_power_dbm", "tx_power_dbm", "bias_ma"):
            s = found.get((pid, ts))
            if s is not None:
                s.rx_power_dbm, s.tx_power_dbm, s.bias_ma = rx, tx, bias
        for pid, ts, counts, lows, highs in TelemetryHistogram.objects.filter(
            port_id__in=chunk, ts__gte=lo, ts__lte=hi
        ).values_list("port_id", "ts", "counts", "layout__bin_low", "layout__bin_high"):
            s = found.get((pid, ts))
            if s is not None:
                s.fec_hist = counts
                s.fec_hist_bins = list(zip(lows, highs, strict=True))
    return found


def _comparable(s: Sample) -> Sample:
    """A posted sample in the form it is stored (default bin ranges filled in)."""
    bins = s.fec_hist_bins
    if s.fec_hist is not None and bins is None:
        bins = [(i, i) for i in range(len(s.fec_hist))]
    return Sample(
        device="",
        port="",
        ts=s.ts,
        **{a: getattr(s, a) for a in (*COUNTER_FIELDS, *GAUGE_FIELDS, *LANE_FIELDS)},
        fec_hist=s.fec_hist,
        fec_hist_bins=[tuple(b) for b in bins] if bins is not None else None,
    )


def _judge_existing(rows: list[_Row], result: IngestResult) -> None:
    """Rows whose key is already stored: identical = duplicate, different = conflict."""
    stored = _existing(rows)
    for r in rows:
        old = stored.get((r.port_id, r.sample.ts))
        if old is None:
            # lost a race with a concurrent writer that then rolled back: rare; refuse safely
            result.errors.append(_conflict(r, "concurrent write; retry"))
        elif _same(_comparable(r.sample), old):
            result.duplicates += 1
        else:
            result.errors.append(_conflict(r, "already stored"))


def _sqlite_write(rows: list[_Row], cols: list[tuple[str, str]]) -> None:
    adapt = connection.ops.adapt_datetimefield_value
    qn = connection.ops.quote_name

    def arr(v):
        return None if v is None else ",".join("" if x is None else repr(float(x)) for x in v)

    names = ["port_id", "ts", *(c for _, c in cols)]
    data = []
    for r in rows:
        s = r.sample
        vals = [r.port_id, adapt(s.ts)]
        for a, _ in cols:
            v = getattr(s, a)
            vals.append(_enc(v) if a in _COUNTERS else v)
        data.append(vals)
    lanes, hist = _side_rows(rows)
    with connection.cursor() as cur:
        cur.executemany(
            f"INSERT INTO {qn(SAMPLE_T)} ({', '.join(qn(n) for n in names)}) "
            f"VALUES ({', '.join(['%s'] * len(names))})",
            data,
        )
        if lanes:
            cur.executemany(
                f"INSERT INTO {qn(LANE_T)} (port_id, ts, rx_power_dbm, tx_power_dbm, bias_ma) VALUES (%s, %s, %s, %s, %s)",
                [
                    [
                        r.port_id,
                        adapt(r.sample.ts),
                        arr(r.sample.rx_power_dbm),
                        arr(r.sample.tx_power_dbm),
                        arr(r.sample.bias_ma),
                    ]
                    for r in lanes
                ],
            )
        if hist:
            cur.executemany(
                f"INSERT INTO {qn(HIST_T)} (port_id, ts, layout_id, counts) VALUES (%s, %s, %s, %s)",
                [
                    [
                        r.port_id,
                        adapt(r.sample.ts),
                        r.layout_id,
                        ",".join(str(int(x)) for x in r.sample.fec_hist),
                    ]
                    for r in hist
                ],
            )


def _store(rows: list[_Row], result: IngestResult) -> list[_Row]:
    """Write the rows; returns the rows actually stored (new keys)."""
    if not rows:
        return []
    cols = _present(rows)
    if connection.vendor == "postgresql":
        import psycopg

        try:
            with transaction.atomic():
                _pg_write_fast(rows, cols)
            return rows
        except (IntegrityError, psycopg.IntegrityError):
            pass  # some keys exist already (a retry): the staged path sorts them out
        new = _pg_write_staged(rows, cols)
        inserted = {(r.port_id, r.sample.ts) for r in new}
        _judge_existing([r for r in rows if (r.port_id, r.sample.ts) not in inserted], result)
        return new
    stored = _existing(rows)
    new = [r for r in rows if (r.port_id, r.sample.ts) not in stored]
    if len(new) != len(rows):
        _judge_existing([r for r in rows if (r.port_id, r.sample.ts) in stored], result)
    _sqlite_write(new, cols)
    return new


def _queue_rollup(rows: list[_Row], *, now: datetime) -> None:
    ports = sorted({r.port_id for r in rows})
    TelemetryIngestBatch.objects.create(
        received_at=now,
        min_ts=min(r.sample.ts for r in rows),
        max_ts=max(r.sample.ts for r in rows),
        port_ids=ports,
    )


def _enqueue_rollup() -> None:
    """Ask a worker to roll up soon; debounced (the periodic sweep is the real guarantee)."""
    from ..tasks import telemetry_rollup_task

    try:
        # add() is True (first in the window), False (already asked) or None: the cache is down
        # and its error ignored. Then ask anyway: with the broker down too (one Redis), the
        # message goes to the outbox, and the outbox flush sends identical messages once.
        first = cache.add(
            ROLLUP_PENDING_KEY, 1, timeout=settings.CABLETRACK_TELEMETRY_ROLLUP_DEBOUNCE_SECONDS
        )
        if first is not False:
            telemetry_rollup_task.delay()
    except Exception:  # noqa: BLE001 - a broker outage must not fail an ingest that committed
        cache.delete(ROLLUP_PENDING_KEY)


def telemetry_ingest(*, decoded: Decoded, now: datetime) -> IngestResult:
    """Store a decoded batch: resolve ports, refuse per item, write idempotently, queue rollups."""
    from .telemetry_identity import identities_record

    result = IngestResult(received=decoded.received, errors=list(decoded.errors))
    if not decoded.samples:
        return result
    rows = _resolve(decoded, result.errors)
    rows = _dedupe(rows, result)
    with transaction.atomic():
        _layouts(rows)
        stored = _store(rows, result)
        result.stored = len(stored)
        if stored:
            _queue_rollup(stored, now=now)
            identities_record(rows=[(r.port_id, r.sample) for r in stored], now=now)
            transaction.on_commit(_enqueue_rollup)
    return result


def ports_ids(rows: Iterable[_Row]) -> list[int]:
    return sorted({r.port_id for r in rows})
