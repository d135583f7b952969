"""Telemetry ingest: resolve ports, store a batch idempotently, queue its ports for rollup.

Policy (also in the API schema): a batch is decoded and validated item by item; items with an
unknown device or port, bad types, a timestamp far in the future or a malformed shape are
refused with their index and a reason, and the valid items are stored. A sample repeated with
the same (port, ts) and the same values is a duplicate (counted, stored once); the same
(port, ts) with different values is refused as a ``conflict``. The batch is written in one
transaction: either every valid item is stored or (on a server error) none is.

PostgreSQL: rows are COPYed straight into the tables (the fast path: COPY BINARY built
column-wise with numpy when the columns are dense, text COPY otherwise); when a key already
exists, or repeats within the batch, the transaction rolls back to a savepoint, repeats within
the batch are judged, and the batch goes through a temporary staging table and
``INSERT ... ON CONFLICT DO NOTHING RETURNING``; the rows that were not inserted are compared
with the stored ones. SQLite: repeats and existing keys are judged first, then
``executemany``, with the same outcome.

The hot path does no per-item Python work it can avoid: the batch is held as columns
(``_Rows``), port names resolve through a per-process cache validated by one query per batch
(``_max_ids``), and every step reads the columns with C-level builtins or numpy.
"""

from __future__ import annotations

import struct
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from operator import attrgetter

import numpy as np
import orjson
import psycopg
from django.core.cache import cache
from django.db import IntegrityError, connection, transaction
from django.db.models import Q

from inventory.conf import app_settings
from inventory.core.choices import FEC_LIMITS, FecType
from inventory.core.telemetry.decode import (
    COUNTER_FIELDS,
    GAUGE_FIELDS,
    IDENTITY_FIELDS,
    LANE_FIELDS,
    LINK_FIELDS,
    THRESHOLD_FIELDS,
    Decoded,
    ItemError,
    Sample,
)
from inventory.models import (
    Device,
    FecBinLayout,
    Link,
    PortAlias,
    TelemetryHistogram,
    TelemetryIngestBatch,
    TelemetryLaneSample,
    TelemetrySample,
)
from inventory.models.telemetry_fields import U64_OFFSET, array_to_text
from inventory.selectors.plant.ports import ports_resolve
from inventory.services.ops.enqueue import enqueue_now
from inventory.services.telemetry.identity import identities_record

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
_GAUGES = frozenset(GAUGE_FIELDS)
# A link whose FEC is unknown or corrects nothing: its histogram bins are read against KP4's limit.
DEFAULT_CORRECTION_LIMIT = FEC_LIMITS[FecType.KP4].correctable_symbols
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
class _Rows:
    """The batch's resolved items as parallel columns (no per-item objects on the hot path).

    ``columns``: field -> values (None: no row carries it), filled on first use; the
    decoder's columns are taken over when every decoded item is a row.
    """

    index: list[int]
    port_ids: list[int]
    samples: list[Sample]
    layout_ids: list[int | None] | None = None
    columns: dict[str, list | None] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.samples)

    def ts(self) -> list[datetime]:
        ts = self.columns.get("ts")
        if ts is None:
            ts = self.columns["ts"] = list(map(_TS, self.samples))
        return ts

    def keys(self) -> list[tuple[int, datetime]]:
        return list(zip(self.port_ids, self.ts(), strict=True))

    def col(self, name: str) -> list | None:
        """The field's values, or None when no row carries it."""
        try:
            return self.columns[name]
        except KeyError:
            values = list(map(attrgetter(name), self.samples))
            values = self.columns[name] = None if values.count(None) == len(values) else values
            return values

    def take(self, positions: Iterable[int]) -> _Rows:
        pos = list(positions)
        return _Rows(
            [self.index[p] for p in pos],
            [self.port_ids[p] for p in pos],
            [self.samples[p] for p in pos],
            None if self.layout_ids is None else [self.layout_ids[p] for p in pos],
        )


_TS = attrgetter("ts")
_DEVICE = attrgetter("device")
_PORT = attrgetter("port")


# ---------------------------------------------------------------------------------------------
# resolution


def _max_ids(*models) -> tuple:
    """The highest id and history id of each model, in one round trip (index-backed ``max()``).

    A change fingerprint for per-process caches: any insert raises a max id (PostgreSQL
    sequences never go back, even on rollback) and every update or delete through the ORM
    writes a history row (django-simple-history).
    """
    qn = connection.ops.quote_name
    parts = []
    for model in models:
        parts.append(f"(SELECT max(id) FROM {qn(model._meta.db_table)})")
        parts.append(f"(SELECT max(history_id) FROM {qn(model.history.model._meta.db_table)})")
    with connection.cursor() as cur:
        cur.execute("SELECT " + ", ".join(parts))
        return tuple(cur.fetchone())


class _PortNameCache:
    """(device name, port name or alias) -> port id, per process, PostgreSQL only.

    Checked against ``_max_ids(PortAlias, Device)`` on every batch, so a rename, a retired
    alias or a new port empties the cache before the next lookup. Only hits are cached; a miss
    always asks the database. SQLite reuses ids after a rollback, so it is not cached there
    (``make run`` volumes do not need it).
    """

    def __init__(self) -> None:
        self.fingerprint: tuple | None = None
        self.ids: dict[tuple[str, str], int] = {}

    def _current_fingerprint(self) -> tuple:
        return _max_ids(PortAlias, Device)

    def lookup(self, pairs: list[tuple[str, str]]) -> list[int | None]:
        fp = self._current_fingerprint()
        if fp != self.fingerprint:
            self.fingerprint, self.ids = fp, {}
        ids = self.ids
        found = list(map(ids.get, pairs))
        if None in found:
            devices = {p[0] for p, pid in zip(pairs, found, strict=True) if pid is None}
            fresh = self._device_names(devices)
            if len(ids) + len(fresh) > 1_000_000:  # bounded: a pathological client cannot grow it
                ids.clear()
            ids.update(fresh)
            found = list(map(ids.get, pairs))
        return found

    @staticmethod
    def _device_names(devices: set[str]) -> dict[tuple[str, str], int]:
        """Every current name of every port of ``devices``, in one query: a collector posts
        for all ports of a device, so one miss loads the device's whole map."""
        qn = connection.ops.quote_name
        with connection.cursor() as cur:
            cur.execute(
                f"SELECT d.name, a.name, a.port_id FROM {qn(PortAlias._meta.db_table)} a "
                f"JOIN {qn(Device._meta.db_table)} d ON d.id = a.device_id "
                "WHERE a.valid_to IS NULL AND d.name = ANY(%s)",
                [list(devices)],
            )
            return {(dev, name): pid for dev, name, pid in cur.fetchall()}


_port_names = _PortNameCache()


def _lookup_current(pairs: list[tuple[str, str]]) -> list[int | None]:
    if connection.vendor == "postgresql":
        return _port_names.lookup(pairs)
    found = ports_resolve(set(pairs))
    return list(map(found.get, pairs))


def _resolve(decoded: Decoded, errors: list[ItemError]) -> _Rows:
    """(device, port) -> port id: a cached map (one fingerprint query), misses in one query,
    and names that are no longer current resolved at the samples' own time."""
    samples, index = decoded.samples, decoded.index
    pairs = list(zip(map(_DEVICE, samples), map(_PORT, samples), strict=True))
    pids = _lookup_current(pairs)
    if None not in pids:
        return _Rows(list(index), pids, list(samples), columns=dict(decoded.columns))
    missing = {p for p, pid in zip(pairs, pids, strict=True) if pid is None}
    dated: dict[tuple[str, str, datetime], int] = {}
    # A name that is no longer current may have been the port's name when the sample was
    # taken (a backfill across a rename): resolve those at the samples' own time.
    by_ts: dict[datetime, set[tuple[str, str]]] = defaultdict(set)
    for p, pid, s in zip(pairs, pids, samples, strict=True):
        if pid is None:
            by_ts[s.ts].add(p)
    for ts, ts_pairs in list(by_ts.items())[:8]:
        for (dev, name), pid in ports_resolve(ts_pairs, at=ts).items():
            dated[(dev, name, ts)] = pid
    unresolved_devices = {d for d, _ in missing}
    known_devices = set(Device.objects.filter(name__in=unresolved_devices).values_list("name", flat=True))
    keep: list[int] = []
    for pos, (i, s) in enumerate(zip(index, samples, strict=True)):
        pid = pids[pos]
        if pid is None:
            pid = pids[pos] = dated.get((s.device, s.port, s.ts))
        if pid is not None:
            keep.append(pos)
        elif s.device in known_devices:
            errors.append(
                ItemError(i, "unknown_port", f"No port {s.port!r} on device {s.device!r}.", s.device, s.port)
            )
        else:
            errors.append(ItemError(i, "unknown_device", f"No device {s.device!r}.", s.device, s.port))
    return _Rows(index, pids, samples).take(keep)


def _f32(values):
    if values is None:
        return None
    return [None if x is None else struct.unpack("f", struct.pack("f", x))[0] for x in values]


def _same(a: Sample, b: Sample) -> bool:
    """Same values? Lanes compare at the stored precision (float32 on PostgreSQL)."""
    for name in (*COUNTER_FIELDS, *GAUGE_FIELDS, *LINK_FIELDS, "fec_hist", "fec_hist_bins"):
        if getattr(a, name) != getattr(b, name):
            return False
    return all(_f32(getattr(a, name)) == _f32(getattr(b, name)) for name in LANE_FIELDS)


def _dedupe(rows: _Rows, result: IngestResult) -> _Rows:
    """Within a batch: an identical repeat is a duplicate, a different one a conflict."""
    keys = rows.keys()
    if len(set(keys)) == len(keys):
        return rows
    seen: dict[tuple[int, datetime], int] = {}
    keep: list[int] = []
    for pos, key in enumerate(keys):
        first = seen.get(key)
        if first is None:
            seen[key] = pos
            keep.append(pos)
        elif _same(rows.samples[first], rows.samples[pos]):
            result.duplicates += 1
        else:
            result.errors.append(
                _conflict(
                    rows.index[pos], rows.samples[pos], f"differs from item {rows.index[first]} of this batch"
                )
            )
    return rows.take(keep)


def _conflict(index: int, s: Sample, why: str) -> ItemError:
    return ItemError(
        index,
        "conflict",
        f"A sample for this port at {s.ts.isoformat()} exists with different values ({why}).",
        s.device,
        s.port,
    )


# ---------------------------------------------------------------------------------------------
# histogram layouts


_link_limits: dict = {"fingerprint": None, "limits": {}}


def _correction_limits(port_ids: set[int]) -> dict[int, int]:
    """Port -> the FEC correction limit of its active link. PostgreSQL: the whole map is kept
    per process (one query per change of ``Link``, ~2 MB per 10,000 links) and checked with
    ``_max_ids`` on each batch; SQLite: one query."""
    if connection.vendor != "postgresql":
        links = Link.objects.filter(
            Q(a_port_id__in=port_ids) | Q(b_port_id__in=port_ids), active=True
        ).values_list("a_port_id", "b_port_id", "fec")
    else:
        fp = _max_ids(Link)
        if fp == _link_limits["fingerprint"]:
            return _link_limits["limits"]
        links = Link.objects.filter(active=True).values_list("a_port_id", "b_port_id", "fec").iterator()
    limits: dict[int, int] = {}
    for a, b, fec in links:
        fec_limit = FEC_LIMITS.get(fec)
        limits[a] = limits[b] = (fec_limit and fec_limit.correctable_symbols) or DEFAULT_CORRECTION_LIMIT
    if connection.vendor == "postgresql":
        _link_limits.update(fingerprint=fp, limits=limits)
    return limits


def _layouts(rows: _Rows) -> None:
    """Give each row with a histogram its ``FecBinLayout`` (bin ranges + correction limit)."""
    hists = rows.col("fec_hist")
    if hists is None:
        return
    with_hist = [p for p, h in enumerate(hists) if h is not None]
    need_limit = {rows.port_ids[p] for p in with_hist if rows.samples[p].fec_correction_limit is None}
    port_limit: dict[int, int] = {}
    if need_limit:
        port_limit = _correction_limits(need_limit)
    # rows share a handful of layouts: key them cheaply, build each signature once
    key_of: list[tuple] = []
    sig_of_key: dict[tuple, tuple[str, list[int], list[int], int]] = {}
    for p in with_hist:
        s = rows.samples[p]
        limit = s.fec_correction_limit or port_limit.get(rows.port_ids[p], DEFAULT_CORRECTION_LIMIT)
        key = (
            limit,
            len(s.fec_hist),
            None if s.fec_hist_bins is None else tuple(map(tuple, s.fec_hist_bins)),
        )
        key_of.append(key)
        if key not in sig_of_key:
            bins = s.fec_hist_bins or [(i, i) for i in range(len(s.fec_hist))]
            sig = f"{limit}|" + ",".join(f"{lo}-{hi}" for lo, hi in bins)
            sig_of_key[key] = (sig, [lo for lo, _ in bins], [hi for _, hi in bins], limit)
    wanted = {v[0]: v for v in sig_of_key.values()}
    known = dict(FecBinLayout.objects.filter(signature__in=list(wanted)).values_list("signature", "id"))
    for sig, (_, lows, highs, limit) in wanted.items():
        if sig not in known:
            obj, _ = FecBinLayout.objects.get_or_create(
                signature=sig, defaults={"bin_low": lows, "bin_high": highs, "correction_limit": limit}
            )
            known[sig] = obj.pk
    layout_ids: list[int | None] = [None] * len(rows)
    for p, key in zip(with_hist, key_of, strict=True):
        layout_ids[p] = known[sig_of_key[key][0]]
    rows.layout_ids = layout_ids


# ---------------------------------------------------------------------------------------------
# writing


def _enc(v: int | None) -> int | None:
    return None if v is None else v - U64_OFFSET


def _present(rows: _Rows) -> list[tuple[str, str]]:
    """The sample columns any row of the batch carries (a narrow COPY for narrow batches)."""
    return [(attr, col) for attr, col in SAMPLE_COLUMNS if rows.col(attr) is not None]


_NULL = b"\\N"
_BRACES = bytes.maketrans(b"[]", b"{}")


def _ts_column(rows: _Rows) -> list[bytes]:
    ts = rows.ts()
    text = {t: t.isoformat().encode() for t in set(ts)}
    return list(map(text.__getitem__, ts))


def _id_column(rows: _Rows) -> list[bytes]:
    return [b"%d" % p for p in rows.port_ids]


def _copy_text(columns: list[list[bytes]]) -> bytes:
    """COPY text from columns of already-formatted fields (numbers and arrays: no escaping)."""
    if not columns or not columns[0]:
        return b""
    return b"\n".join(map(b"\t".join, zip(*columns, strict=True))) + b"\n"


def _pg_sample_copy(rows: _Rows, cols: list[tuple[str, str]]) -> bytes:
    """COPY text for the sample table, built column by column."""
    off = U64_OFFSET
    columns = [_id_column(rows), _ts_column(rows)]
    for attr, _ in cols:
        col = rows.col(attr)
        if attr in _COUNTERS:
            if None in col:
                columns.append([_NULL if v is None else b"%d" % (v - off) for v in col])
            else:  # all C-level: the common dense counter column
                columns.append(list(map(b"%d".__mod__, map(off.__rsub__, col))))
        else:
            columns.append([_NULL if v is None else repr(v).encode() for v in col])
    return _copy_text(columns)


_PG_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_BINARY_HEADER = b"PGCOPY\n\xff\r\n\x00" + b"\x00" * 8  # signature, flags, no extension
_BINARY_TRAILER = b"\xff\xff"


def _pg_sample_binary(rows: _Rows, cols: list[tuple[str, str]]) -> bytes | None:
    """COPY BINARY for the sample table when every present column is dense (no nulls).

    Every field has a fixed size (bigint, timestamptz, double; smallint for the link width),
    so a row is a fixed-layout record and numpy fills the whole batch column by column in C;
    PostgreSQL then parses no text (integers and timestamps are its main COPY cost). Counters are flipped to their stored
    form (v - 2**63) by xor-ing the sign bit. None when a column has a null (text COPY then).
    """
    ts = rows.ts()
    micros = {t: (t - _PG_EPOCH) // _MICROSECOND for t in set(ts)}
    values: list[tuple[str, int, np.ndarray | list]] = [
        (">i8", 8, rows.port_ids),
        (">i8", 8, list(map(micros.__getitem__, ts))),
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
    fields = [("n", ">i2")]
    for k, (kind, _, _) in enumerate(values):
        fields += [(f"l{k}", ">i4"), (f"v{k}", kind)]
    rec = np.empty(len(rows), dtype=np.dtype(fields))
    rec["n"] = len(values)
    for k, (_, size, v) in enumerate(values):
        rec[f"l{k}"] = size
        rec[f"v{k}"] = v
    return _BINARY_HEADER + rec.tobytes() + _BINARY_TRAILER


def _pg_array(values: Sequence | None) -> bytes:
    """A PostgreSQL array literal (numbers and nulls: orjson's text with braces)."""
    if values is None:
        return _NULL
    return orjson.dumps(values).translate(_BRACES)


def _side_rows(rows: _Rows) -> tuple[_Rows | None, _Rows | None]:
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


def _pg_copy(cur, table: str, columns: list[str], data: bytes | str, *, binary: bool = False) -> None:
    qn = connection.ops.quote_name
    fmt = " (FORMAT BINARY)" if binary else ""
    with cur.copy(f"COPY {qn(table)} ({', '.join(qn(c) for c in columns)}) FROM STDIN{fmt}") as copy:
        copy.write(data)


_OID_FLOAT4, _OID_INT8 = 700, 20


def _binary_records(n: int, fields: list[tuple]) -> bytes:
    """COPY BINARY for ``n`` rows whose fields all have one fixed layout.

    ``fields``: ``("i8", values)`` a bigint column; ``("null",)`` a column that is null in
    every row; ``("array", values2d, kind, size, oid)`` a one-dimensional array column, every
    row the same length and without nulls (``kind``/``size``: the element's numpy type and
    byte size, ``oid``: its PostgreSQL type).
    """
    dtype: list = [("n", ">i2")]
    for k, spec in enumerate(fields):
        dtype.append((f"l{k}", ">i4"))
        if spec[0] == "i8":
            dtype.append((f"v{k}", ">i8"))
        elif spec[0] == "array":
            _, values, kind, size, _ = spec
            dtype.append((f"h{k}", ">i4", (5,)))  # ndim, has-nulls, element oid, length, lower bound
            dtype.append((f"e{k}", [("len", ">i4"), ("val", kind)], (values.shape[1],)))
    rec = np.empty(n, dtype=np.dtype(dtype))
    rec["n"] = len(fields)
    for k, spec in enumerate(fields):
        if spec[0] == "i8":
            rec[f"l{k}"] = 8
            rec[f"v{k}"] = spec[1]
        elif spec[0] == "null":
            rec[f"l{k}"] = -1
        else:
            _, values, kind, size, oid = spec
            width = values.shape[1]
            rec[f"l{k}"] = 20 + width * (4 + size)
            rec[f"h{k}"] = (1, 0, oid, width, 1)
            rec[f"e{k}"]["len"] = size
            rec[f"e{k}"]["val"] = values
    return _BINARY_HEADER + rec.tobytes() + _BINARY_TRAILER


def _key_fields(rows: _Rows) -> list[tuple]:
    ts = rows.ts()
    micros = {t: (t - _PG_EPOCH) // _MICROSECOND for t in set(ts)}
    return [("i8", rows.port_ids), ("i8", list(map(micros.__getitem__, ts)))]


def _dense(col: list, dtype) -> np.ndarray | None:
    """Rows of equal-length lists without nulls as a 2-D array; None otherwise.

    numpy turns a None element into NaN for a float dtype (it raises for an integer one), so
    a float array with a NaN had a null lane: that batch goes by text COPY, which stores the
    lane as NULL (JSON has no NaN, so a NaN here is always a null)."""
    try:
        values = np.array(col, dtype=dtype)
    except (TypeError, ValueError):
        return None
    if values.ndim != 2 or values.shape[1] == 0:
        return None
    if values.dtype.kind == "f" and np.isnan(values).any():
        return None
    return values


def _lane_binary(rows: _Rows) -> bytes | None:
    """COPY BINARY for the lane table when every lane column is uniform (else None: text).

    Values go to float32 here as ``real`` stores them (``_same`` compares at that precision).
    """
    fields = _key_fields(rows)
    for f in LANE_FIELDS:
        col = rows.col(f)
        if col is None:
            fields.append(("null",))
            continue
        values = _dense(col, np.float32)
        if values is None:
            return None
        fields.append(("array", values, ">f4", 4, _OID_FLOAT4))
    return _binary_records(len(rows), fields)


def _hist_binary(rows: _Rows) -> bytes | None:
    counts = _dense(rows.col("fec_hist"), np.int64)
    if counts is None:
        return None
    fields = [*_key_fields(rows), ("i8", rows.layout_ids), ("array", counts, ">i8", 8, _OID_INT8)]
    return _binary_records(len(rows), fields)


def _copy_side_tables(cur, lanes: _Rows | None, hist: _Rows | None) -> None:
    if lanes:
        data = _lane_binary(lanes)
        if data is not None:
            _pg_copy(cur, LANE_T, LANE_COLS, data, binary=True)
        else:
            _pg_copy(cur, LANE_T, LANE_COLS, _lane_text(lanes))
    if hist:
        data = _hist_binary(hist)
        if data is not None:
            _pg_copy(cur, HIST_T, HIST_COLS, data, binary=True)
        else:
            _pg_copy(cur, HIST_T, HIST_COLS, _hist_text(hist))


def _lane_text(rows: _Rows) -> bytes:
    columns = [_id_column(rows), _ts_column(rows)]
    for f in LANE_FIELDS:
        col = rows.col(f)
        columns.append([_NULL] * len(rows) if col is None else list(map(_pg_array, col)))
    return _copy_text(columns)


def _hist_text(rows: _Rows) -> bytes:
    return _copy_text(
        [
            _id_column(rows),
            _ts_column(rows),
            [b"%d" % lid for lid in rows.layout_ids],
            list(map(_pg_array, rows.col("fec_hist"))),
        ]
    )


SAMPLE_T = TelemetrySample._meta.db_table
LANE_T = TelemetryLaneSample._meta.db_table
HIST_T = TelemetryHistogram._meta.db_table
LANE_COLS = ["port_id", "ts", "rx_power_dbm", "tx_power_dbm", "bias_ma"]
HIST_COLS = ["port_id", "ts", "layout_id", "counts"]


def _pg_write_fast(rows: _Rows, cols: list[tuple[str, str]]) -> None:
    lanes, hist = _side_rows(rows)
    raw = connection.connection
    with raw.cursor() as cur:
        names = ["port_id", "ts", *(c for _, c in cols)]
        binary = _pg_sample_binary(rows, cols)
        if binary is not None:
            _pg_copy(cur, SAMPLE_T, names, binary, binary=True)
        else:
            _pg_copy(cur, SAMPLE_T, names, _pg_sample_copy(rows, cols))
        _copy_side_tables(cur, lanes, hist)


def _pg_write_staged(rows: _Rows, cols: list[tuple[str, str]]) -> _Rows:
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
        new = rows.take(p for p, k in enumerate(rows.keys()) if k in inserted)
        lanes, hist = _side_rows(new)
        _copy_side_tables(cur, lanes, hist)
    return new


def _existing(rows: _Rows) -> dict[tuple[int, datetime], Sample]:
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


def _judge_existing(rows: _Rows, result: IngestResult) -> None:
    """Rows whose key is already stored: identical = duplicate, different = conflict."""
    stored = _existing(rows)
    for i, key, s in zip(rows.index, rows.keys(), rows.samples, strict=True):
        old = stored.get(key)
        if old is None:
            # lost a race with a concurrent writer that then rolled back: rare; refuse safely
            result.errors.append(_conflict(i, s, "concurrent write; retry"))
        elif _same(_comparable(s), old):
            result.duplicates += 1
        else:
            result.errors.append(_conflict(i, s, "already stored"))


def _sqlite_write(rows: _Rows, cols: list[tuple[str, str]]) -> None:
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
            f"INSERT INTO {qn(SAMPLE_T)} ({', '.join(qn(n) for n in names)}) "
            f"VALUES ({', '.join(['%s'] * len(names))})",
            data,
        )
        if lanes:
            cur.executemany(
                f"INSERT INTO {qn(LANE_T)} (port_id, ts, rx_power_dbm, tx_power_dbm, bias_ma) VALUES (%s, %s, %s, %s, %s)",
                [
                    [pid, adapt(s.ts), arr(s.rx_power_dbm), arr(s.tx_power_dbm), arr(s.bias_ma)]
                    for pid, s in zip(lanes.port_ids, lanes.samples, strict=True)
                ],
            )
        if hist:
            cur.executemany(
                f"INSERT INTO {qn(HIST_T)} (port_id, ts, layout_id, counts) VALUES (%s, %s, %s, %s)",
                [
                    [pid, adapt(s.ts), lid, ",".join(str(int(x)) for x in s.fec_hist)]
                    for pid, s, lid in zip(hist.port_ids, hist.samples, hist.layout_ids, strict=True)
                ],
            )


def _store(rows: _Rows, result: IngestResult) -> _Rows:
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
        rows = _dedupe(rows, result)
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


def _queue_rollup(rows: _Rows, *, now: datetime) -> None:
    ports = sorted(set(rows.port_ids))
    ts = rows.ts()
    if connection.vendor == "postgresql":
        # the port list as one array literal: psycopg's per-element list adaptation costs
        # more than the rest of this row
        qn = connection.ops.quote_name
        with connection.cursor() as cur:
            cur.execute(
                f"INSERT INTO {qn(TelemetryIngestBatch._meta.db_table)} (received_at, min_ts, max_ts, port_ids) "
                "VALUES (%s, %s, %s, %s::bigint[])",
                [now, min(ts), max(ts), "{" + ",".join(map(str, ports)) + "}"],
            )
        return
    TelemetryIngestBatch.objects.create(received_at=now, min_ts=min(ts), max_ts=max(ts), port_ids=ports)


_IDENTITY_ATTRS = (*IDENTITY_FIELDS, *THRESHOLD_FIELDS)


def _with_identity(rows: _Rows) -> list[tuple[int, Sample]]:
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
    rows = _resolve(decoded, result.errors)
    if connection.vendor != "postgresql":
        rows = _dedupe(rows, result)  # on PostgreSQL the key refuses a repeat: see _store
    if not rows:
        return result
    with transaction.atomic():
        _layouts(rows)
        stored = _store(rows, result)
        result.stored = len(stored)
        if stored:
            _queue_rollup(stored, now=now)
            identified = _with_identity(stored)
            if identified:
                identities_record(rows=identified, now=now)
            transaction.on_commit(_enqueue_rollup)
    return result


def ports_ids(rows: _Rows) -> list[int]:
    return sorted(set(rows.port_ids))
