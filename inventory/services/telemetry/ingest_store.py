"""Telemetry ingest: writing a batch (COPY on PostgreSQL, ``executemany`` on SQLite) and judging
the rows whose key was already stored.

PostgreSQL: rows are COPYed straight into the tables (COPY BINARY when the columns are dense,
text COPY otherwise: the encoding is ``inventory.db.copy``); when a key already exists, or
repeats within the batch, the transaction rolls back to a savepoint, repeats within the batch
are judged, and the batch goes through a temporary staging table and ``INSERT ... ON CONFLICT
DO NOTHING RETURNING``; the rows that were not inserted are compared with the stored ones.
SQLite: repeats and existing keys are judged first, then ``executemany``, with the same outcome.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np
import psycopg
from django.db import IntegrityError, connection, transaction

from inventory.core.telemetry.decode import COUNTER_FIELDS, GAUGE_FIELDS, LANE_FIELDS, LINK_FIELDS, Sample
from inventory.db.copy import (
    NULL,
    OID_FLOAT4,
    OID_INT8,
    binary_records,
    binary_scalars,
    copy_text,
    copy_write,
    dense,
    int_text,
    pg_array,
    ts_micros,
    ts_text,
)
from inventory.models import TelemetryHistogram, TelemetryLaneSample, TelemetrySample
from inventory.models.telemetry_fields import U64_OFFSET, array_to_text
from inventory.services.telemetry.ingest_rows import IngestResult, IngestRows, conflict, dedupe, same

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
    ("speed_gbps", "speed_gbps"),
    ("link_width", "link_width"),
)
# COPY BINARY field types other than bigint (counters, port, ts) and double (gauges)
_BINARY_TYPES = {"link_width": (">i2", 2)}
_COUNTERS = frozenset(COUNTER_FIELDS)
SAMPLE_T = TelemetrySample._meta.db_table
LANE_T = TelemetryLaneSample._meta.db_table
HIST_T = TelemetryHistogram._meta.db_table
LANE_COLS = ["port_id", "ts", "rx_power_dbm", "tx_power_dbm", "bias_ma"]
HIST_COLS = ["port_id", "ts", "layout_id", "counts"]


# ---------------------------------------------------------------------------------------------
# encoding the batch's columns for COPY


def _enc(v: int | None) -> int | None:
    return None if v is None else v - U64_OFFSET


def _present(rows: IngestRows) -> list[tuple[str, str]]:
    """The sample columns any row of the batch carries (a narrow COPY for narrow batches)."""
    return [(attr, col) for attr, col in SAMPLE_COLUMNS if rows.col(attr) is not None]


def _pg_sample_copy(rows: IngestRows, cols: list[tuple[str, str]]) -> bytes:
    """COPY text for the sample table, built column by column."""
    off = U64_OFFSET
    columns = [int_text(rows.port_ids), ts_text(rows.ts())]
    for attr, _ in cols:
        col = rows.col(attr)
        if attr in _COUNTERS:
            if None in col:
                columns.append([NULL if v is None else b"%d" % (v - off) for v in col])
            else:  # all C-level: the common dense counter column
                columns.append(list(map(b"%d".__mod__, map(off.__rsub__, col))))
        else:
            columns.append([NULL if v is None else repr(v).encode() for v in col])
    return copy_text(columns)


def _pg_sample_binary(rows: IngestRows, cols: list[tuple[str, str]]) -> bytes | None:
    """COPY BINARY for the sample table when every present column is dense (no nulls).

    Every field has a fixed size (bigint, timestamptz, double; smallint for the link width),
    so a row is a fixed-layout record and numpy fills the whole batch column by column in C;
    PostgreSQL then parses no text (integers and timestamps are its main COPY cost). Counters are flipped to their stored
    form (v - 2**63) by xor-ing the sign bit. None when a column has a null (text COPY then).
    """
    values: list[tuple[str, int, np.ndarray | list]] = [
        (">i8", 8, rows.port_ids),
        (">i8", 8, ts_micros(rows.ts())),
    ]
    for attr, _ in cols:
        col = rows.col(attr)
        if None in col:
            return None
        if attr in _COUNTERS:
            values.append((">i8", 8, (np.array(col, dtype=np.uint64) ^ np.uint64(U64_OFFSET)).view(np.int64)))
        else:
            kind, size = _BINARY_TYPES.get(attr, (">f8", 8))
            values.append((kind, size, col))
    return binary_scalars(len(rows), values)


def _side_rows(rows: IngestRows) -> tuple[IngestRows | None, IngestRows | None]:
    """The rows that carry per-lane gauges, and those with a histogram (None: no such row)."""
    n = len(rows)
    lane_cols = [c for c in map(rows.col, LANE_FIELDS) if c is not None]
    if not lane_cols:
        lanes = None
    else:
        has = [v is not None for v in lane_cols[0]]
        for c in lane_cols[1:]:
            has = [h or v is not None for h, v in zip(has, c, strict=True)]
        lanes = rows if all(has) else rows.take(p for p, h in enumerate(has) if h)
    if rows.layout_ids is None or rows.layout_ids.count(None) == n:
        hist = None
    elif None not in rows.layout_ids:
        hist = rows
    else:
        hist = rows.take(p for p, lid in enumerate(rows.layout_ids) if lid is not None)
    return lanes, hist


def _key_fields(rows: IngestRows) -> list[tuple]:
    return [("i8", rows.port_ids), ("i8", ts_micros(rows.ts()))]


def _lane_binary(rows: IngestRows) -> bytes | None:
    """COPY BINARY for the lane table when every lane column is uniform (else None: text).

    Values go to float32 here as ``real`` stores them (``same`` compares at that precision).
    """
    fields = _key_fields(rows)
    for f in LANE_FIELDS:
        col = rows.col(f)
        if col is None:
            fields.append(("null",))
            continue
        values = dense(col, np.float32)
        if values is None:
            return None
        fields.append(("array", values, ">f4", 4, OID_FLOAT4))
    return binary_records(len(rows), fields)


def _hist_binary(rows: IngestRows) -> bytes | None:
    counts = dense(rows.col("fec_hist"), np.int64)
    if counts is None:
        return None
    fields = [*_key_fields(rows), ("i8", rows.layout_ids), ("array", counts, ">i8", 8, OID_INT8)]
    return binary_records(len(rows), fields)


def _lane_text(rows: IngestRows) -> bytes:
    columns = [int_text(rows.port_ids), ts_text(rows.ts())]
    for f in LANE_FIELDS:
        col = rows.col(f)
        columns.append([NULL] * len(rows) if col is None else list(map(pg_array, col)))
    return copy_text(columns)


def _hist_text(rows: IngestRows) -> bytes:
    return copy_text(
        [
            int_text(rows.port_ids),
            ts_text(rows.ts()),
            [b"%d" % lid for lid in rows.layout_ids],
            list(map(pg_array, rows.col("fec_hist"))),
        ]
    )


# ---------------------------------------------------------------------------------------------
# writing


def _copy_side_tables(cur, lanes: IngestRows | None, hist: IngestRows | None) -> None:
    if lanes:
        data = _lane_binary(lanes)
        if data is not None:
            copy_write(cur, LANE_T, LANE_COLS, data, binary=True)
        else:
            copy_write(cur, LANE_T, LANE_COLS, _lane_text(lanes))
    if hist:
        data = _hist_binary(hist)
        if data is not None:
            copy_write(cur, HIST_T, HIST_COLS, data, binary=True)
        else:
            copy_write(cur, HIST_T, HIST_COLS, _hist_text(hist))


def _pg_write_fast(rows: IngestRows, cols: list[tuple[str, str]]) -> None:
    lanes, hist = _side_rows(rows)
    raw = connection.connection
    with raw.cursor() as cur:
        names = ["port_id", "ts", *(c for _, c in cols)]
        binary = _pg_sample_binary(rows, cols)
        if binary is not None:
            copy_write(cur, SAMPLE_T, names, binary, binary=True)
        else:
            copy_write(cur, SAMPLE_T, names, _pg_sample_copy(rows, cols))
        _copy_side_tables(cur, lanes, hist)


def _pg_write_staged(rows: IngestRows, cols: list[tuple[str, str]]) -> IngestRows:
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
        copy_write(cur, f"{SAMPLE_T}_stage", colnames, _pg_sample_copy(rows, cols))
        cur.execute(
            f"INSERT INTO {qn(SAMPLE_T)} ({collist}) SELECT {collist} FROM {stage} "  # noqa: S608 - table and column names from model _meta and its own staging table, quoted; values are parameters
            "ON CONFLICT DO NOTHING RETURNING port_id, ts"
        )
        inserted = set(cur.fetchall())
        new = rows.take(p for p, k in enumerate(rows.keys()) if k in inserted)
        lanes, hist = _side_rows(new)
        _copy_side_tables(cur, lanes, hist)
    return new


def _existing(rows: IngestRows) -> dict[tuple[int, datetime], Sample]:
    """Stored samples for the rows' keys, as ``Sample``s for comparison (side tables included)."""
    if not rows:
        return {}
    ts = rows.ts()
    lo, hi = min(ts), max(ts)
    keys = set(rows.keys())
    found: dict[tuple[int, datetime], Sample] = {}
    attrs = [a for a, _ in SAMPLE_COLUMNS]
    cols = [c for _, c in SAMPLE_COLUMNS]
    port_list = sorted(set(rows.port_ids))
    for chunk_start in range(0, len(port_list), 900):
        chunk = port_list[chunk_start : chunk_start + 900]
        qs = TelemetrySample.objects.filter(port_id__in=chunk, ts__gte=lo, ts__lte=hi).values_list(
            "port_id", "ts", *cols
        )
        for pid, t, *vals in qs:
            if (pid, t) in keys:
                found[(pid, t)] = Sample(device="", port="", ts=t, **dict(zip(attrs, vals, strict=True)))
        if not found:
            continue
        for pid, t, rx, tx, bias in TelemetryLaneSample.objects.filter(
            port_id__in=chunk, ts__gte=lo, ts__lte=hi
        ).values_list("port_id", "ts", "rx_power_dbm", "tx_power_dbm", "bias_ma"):
            s = found.get((pid, t))
            if s is not None:
                s.rx_power_dbm, s.tx_power_dbm, s.bias_ma = rx, tx, bias
        for pid, t, counts, lows, highs in TelemetryHistogram.objects.filter(
            port_id__in=chunk, ts__gte=lo, ts__lte=hi
        ).values_list("port_id", "ts", "counts", "layout__bin_low", "layout__bin_high"):
            s = found.get((pid, t))
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
        **{a: getattr(s, a) for a in (*COUNTER_FIELDS, *GAUGE_FIELDS, *LINK_FIELDS, *LANE_FIELDS)},
        fec_hist=s.fec_hist,
        fec_hist_bins=[tuple(b) for b in bins] if bins is not None else None,
    )


def _judge_existing(rows: IngestRows, result: IngestResult) -> None:
    """Rows whose key is already stored: identical = duplicate, different = conflict."""
    stored = _existing(rows)
    for i, key, s in zip(rows.index, rows.keys(), rows.samples, strict=True):
        old = stored.get(key)
        if old is None:
            # lost a race with a concurrent writer that then rolled back: rare; refuse safely
            result.errors.append(conflict(i, s, "concurrent write; retry"))
        elif same(_comparable(s), old):
            result.duplicates += 1
        else:
            result.errors.append(conflict(i, s, "already stored"))


def _sqlite_write(rows: IngestRows, cols: list[tuple[str, str]]) -> None:
    adapt = connection.ops.adapt_datetimefield_value
    qn = connection.ops.quote_name

    def arr(v):
        return None if v is None else array_to_text(v)

    names = ["port_id", "ts", *(c for _, c in cols)]
    data = []
    for pid, s in zip(rows.port_ids, rows.samples, strict=True):
        vals = [pid, adapt(s.ts)]
        for a, _ in cols:
            v = getattr(s, a)
            vals.append(_enc(v) if a in _COUNTERS else v)
        data.append(vals)
    lanes, hist = _side_rows(rows)
    with connection.cursor() as cur:
        cur.executemany(
            f"INSERT INTO {qn(SAMPLE_T)} ({', '.join(qn(n) for n in names)}) "  # noqa: S608 - table and column names from model _meta and its own staging table, quoted; values are parameters
            f"VALUES ({', '.join(['%s'] * len(names))})",
            data,
        )
        if lanes:
            cur.executemany(
                f"INSERT INTO {qn(LANE_T)} (port_id, ts, rx_power_dbm, tx_power_dbm, bias_ma) VALUES (%s, %s, %s, %s, %s)",  # noqa: S608 - table and column names from model _meta and its own staging table, quoted; values are parameters
                [
                    [pid, adapt(s.ts), arr(s.rx_power_dbm), arr(s.tx_power_dbm), arr(s.bias_ma)]
                    for pid, s in zip(lanes.port_ids, lanes.samples, strict=True)
                ],
            )
        if hist:
            cur.executemany(
                f"INSERT INTO {qn(HIST_T)} (port_id, ts, layout_id, counts) VALUES (%s, %s, %s, %s)",  # noqa: S608 - table and column names from model _meta and its own staging table, quoted; values are parameters
                [
                    [pid, adapt(s.ts), lid, ",".join(str(int(x)) for x in s.fec_hist)]
                    for pid, s, lid in zip(hist.port_ids, hist.samples, hist.layout_ids, strict=True)
                ],
            )


def store(rows: IngestRows, result: IngestResult) -> IngestRows:
    """Write the rows; returns the rows actually stored (new keys)."""
    if not rows:
        return rows
    cols = _present(rows)
    if connection.vendor == "postgresql":
        try:
            with transaction.atomic():
                _pg_write_fast(rows, cols)
            return rows
        except (IntegrityError, psycopg.IntegrityError):
            pass  # some keys exist already (a retry) or repeat within the batch
        rows = dedupe(rows, result)
        new = _pg_write_staged(rows, cols)
        inserted = set(new.keys())
        _judge_existing(rows.take(p for p, k in enumerate(rows.keys()) if k not in inserted), result)
        return new
    stored = _existing(rows)
    keys = rows.keys()
    new = rows.take(p for p, k in enumerate(keys) if k not in stored)
    if len(new) != len(rows):
        _judge_existing(rows.take(p for p, k in enumerate(keys) if k in stored), result)
    _sqlite_write(new, cols)
    return new
