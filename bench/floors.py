# ruff: noqa: S608 - scratch tables and column names of this module, and integers; the values are parameters
"""What the rollup's alternatives would cost per sample on this machine, before anyone builds one.

Issue 33 asks for sustained telemetry at 0.35 of the raw COPY rate. The design the performance
history long called "the change that would pay" keeps each port's open bucket as running sums
in a per-port state row, locked and updated by the ingest for every batch that names the port.
This measures the parts such designs are made of, in PostgreSQL's own CPU time (the backend's
``/proc`` counters, so PostgreSQL must run on this machine), at the benchmark's shape: 18,432
ports, batches of 5,000 samples, one sample per port per batch as collectors send them:

* **raw COPY**: the samples COPYed (binary) into a table keyed like ``TelemetrySample``
  (port, ts): the reference the issue's ratio divides by;
* **state row per batch**: the batch's ports locked in port order (``FOR UPDATE``) and their
  rows (31 running sums and last counters, ``fillfactor`` 70 so the updates stay HOT) updated
  from the batch's arrays, as the running-sums design would do in every ingest transaction;
* **read back in arrival order**: the last 50 batches read by a batch number (a BRIN index)
  with ``COPY ... TO STDOUT (FORMAT binary)`` and parsed by numpy into columns, the read a
  rollup keeping its state in memory would need instead of today's per-port key reads.

Nothing here touches the application's tables; the scratch tables are dropped at the end.
"""

from __future__ import annotations

import os
import struct
from datetime import UTC, datetime

import numpy as np

NEEDS = ("postgresql",)

PORTS, BATCH, ROUNDS, READ_BATCHES = 18_432, 5_000, 20, 50
COUNTERS = [f"c{i}" for i in range(11)]
GAUGES = [f"g{i}" for i in range(4)]
SUMS = [f"s{i}" for i in range(20)]
STATE_T, RAW_T = "bench_floor_state", "bench_floor_raw"
PG_EPOCH_US = 946_684_800_000_000  # 2000-01-01 in Unix microseconds: binary COPY's timestamp origin


def record_dtype(columns: list[tuple[str, str]]) -> np.dtype:
    """One binary COPY tuple whose fields are all present and fixed-width: a 16-bit field count,
    then a 32-bit length and the big-endian value of each field (``>i8`` or ``>f8``)."""
    fields: list[tuple[str, str]] = [("count", ">i2")]
    for name, kind in columns:
        fields += [(f"{name}_len", ">i4"), (name, kind)]
    return np.dtype(fields)


def parse_binary_copy(body: bytes, columns: list[tuple[str, str]]) -> np.ndarray:
    """The tuples of a binary COPY stream (header and trailer stripped) as a numpy record array.

    Only for rows without nulls and with fixed-width fields: a stream of another shape is refused
    rather than misread (the field count and every length are checked). The stream carries no
    types, so ``columns`` must name the types the SELECT produces."""
    if body[:11] != b"PGCOPY\n\xff\r\n\x00":
        raise ValueError("not a binary COPY stream")
    (ext,) = struct.unpack(">i", body[15:19])
    start, end = 19 + ext, len(body) - 2
    if body[end:] != b"\xff\xff":
        raise ValueError("binary COPY stream without its trailer")
    dtype = record_dtype(columns)
    rows = np.frombuffer(body, dtype=dtype, offset=start, count=(end - start) // dtype.itemsize)
    if (end - start) % dtype.itemsize or (rows["count"] != len(columns)).any():
        raise ValueError("a tuple with another shape (a null or a variable-width field)")
    for name, _ in columns:
        if (rows[f"{name}_len"] != 8).any():
            raise ValueError(f"{name}: a null or a field of another width")
    return rows


def _binary_rows(ports: np.ndarray, ts_us: int, batch: int, r: int) -> bytes:
    """A batch as binary COPY data (batch, port_id, ts, counters, gauges), built by numpy."""
    cols = [("batch", ">i8"), ("port_id", ">i8"), ("ts", ">i8")]
    cols += [(c, ">i8") for c in COUNTERS] + [(g, ">f8") for g in GAUGES]
    out = np.zeros(len(ports), dtype=record_dtype(cols))
    out["count"] = len(cols)
    for name, _ in cols:
        out[f"{name}_len"] = 8
    out["batch"] = batch
    out["port_id"] = ports
    out["ts"] = ts_us - PG_EPOCH_US
    for i, c in enumerate(COUNTERS):
        out[c] = r * 1_000 + ports * (i + 1)
    for i, g in enumerate(GAUGES):
        out[g] = 1.5 + i
    return b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0) + out.tobytes() + b"\xff\xff"


class _Backend:
    """A psycopg connection to the bench database and its backend's CPU seconds from /proc."""

    def __init__(self):
        import psycopg
        from django.db import connection

        s = connection.settings_dict
        self.conn = psycopg.connect(
            psycopg.conninfo.make_conninfo(
                dbname=s["NAME"],
                user=s["USER"] or "",
                host=s["HOST"] or "127.0.0.1",
                port=str(s["PORT"] or 5432),
                **({"password": s["PASSWORD"]} if s.get("PASSWORD") else {}),
            ),
            autocommit=True,
        )
        self.pid = self.conn.execute("SELECT pg_backend_pid()").fetchone()[0]

    def cpu(self) -> float:
        with open(f"/proc/{self.pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _tables(cur) -> None:
    cur.execute(f"DROP TABLE IF EXISTS {STATE_T}, {RAW_T}")
    cur.execute(
        f"CREATE TABLE {STATE_T} (port_id bigint PRIMARY KEY, last_ts timestamptz, "
        + ", ".join(f"{s} float8 NOT NULL DEFAULT 0" for s in SUMS)
        + ", "
        + ", ".join(f"{c} bigint" for c in COUNTERS)
        + ") WITH (fillfactor = 70)"
    )
    cur.execute(f"INSERT INTO {STATE_T} (port_id) SELECT g FROM generate_series(1, {PORTS}) g")
    cur.execute(
        f"CREATE TABLE {RAW_T} (batch bigint NOT NULL, port_id bigint NOT NULL, ts timestamptz NOT NULL, "
        + ", ".join(f"{c} bigint" for c in COUNTERS)
        + ", "
        + ", ".join(f"{g} float8" for g in GAUGES)
        + ", PRIMARY KEY (port_id, ts))"
    )
    cur.execute(f"CREATE INDEX {RAW_T}_batch ON {RAW_T} USING brin (batch)")
    cur.execute(f"VACUUM ANALYZE {STATE_T}")


def run(report) -> None:
    try:
        pg = _Backend()
        pg.cpu()
    except OSError:
        print("  floors: skipped, PostgreSQL's backend is not a process of this machine (/proc)")
        return
    cur = pg.conn.cursor()
    _tables(cur)
    update = (
        f"UPDATE {STATE_T} st SET last_ts = u.ts, "
        + ", ".join(f"{s} = st.{s} + u.v" for s in SUMS)
        + ", "
        + ", ".join(f"{c} = u.k" for c in COUNTERS)
        + " FROM unnest(%s::bigint[], %s::timestamptz[], %s::float8[], %s::bigint[]) AS u(port_id, ts, v, k)"
        " WHERE st.port_id = u.port_id"
    )
    lock = f"SELECT port_id FROM {STATE_T} WHERE port_id = ANY(%s::bigint[]) ORDER BY port_id FOR UPDATE"
    copy_cols = ", ".join(["batch", "port_id", "ts", *COUNTERS, *GAUGES])
    t0 = int(datetime(2026, 12, 6, tzinfo=UTC).timestamp() * 1_000_000)
    copy_s = lock_s = state_s = 0.0
    n = batch = 0
    for r in range(ROUNDS):
        for start in range(0, PORTS, BATCH):
            ports = np.arange(start + 1, min(start + BATCH, PORTS) + 1, dtype=np.int64)
            batch += 1
            ts_us = t0 + r * 180_000  # the bench's pace: every port every 0.18 s
            data = _binary_rows(ports, ts_us, batch, r)
            a = pg.cpu()
            with cur.copy(f"COPY {RAW_T} ({copy_cols}) FROM STDIN (FORMAT binary)") as cp:
                cp.write(data)
            b = pg.cpu()
            ts = datetime.fromtimestamp(ts_us / 1e6, UTC)
            ids = ports.tolist()
            with pg.conn.transaction():
                cur.execute(lock, [ids], binary=True)
                b2 = pg.cpu()
                cur.execute(update, [ids, [ts] * len(ids), [1.0] * len(ids), [r] * len(ids)], binary=True)
            c = pg.cpu()
            copy_s, lock_s, state_s, n = copy_s + b - a, lock_s + b2 - b, state_s + c - b2, n + len(ids)
    report("raw COPY (binary), (port, ts) key, PostgreSQL", copy_s / n * 1e6, "us/sample")
    report("state row per batch: lock in port order, PostgreSQL", lock_s / n * 1e6, "us/sample")
    report("state row per batch: update, PostgreSQL", state_s / n * 1e6, "us/sample")

    columns = [
        ("port_id", ">i8"),
        ("ts", ">i8"),
        *((c, ">i8") for c in COUNTERS),
        *((g, ">f8") for g in GAUGES),
    ]
    select = ", ".join(name for name, _ in columns)
    a = pg.cpu()
    me = os.times()
    with cur.copy(
        f"COPY (SELECT {select} FROM {RAW_T} WHERE batch > {batch - READ_BATCHES}) TO STDOUT (FORMAT binary)"
    ) as cp:
        body = b"".join(bytes(chunk) for chunk in cp)
    rows = parse_binary_copy(body, columns)
    order = np.lexsort((rows["ts"], rows["port_id"]))
    np.diff(np.stack([rows[c][order] for c in COUNTERS], axis=1), axis=0)  # the counter steps
    pg_s = pg.cpu() - a
    client = os.times()
    client_s = (client.user - me.user) + (client.system - me.system)
    report("read back by arrival (BRIN, binary COPY), PostgreSQL", pg_s / len(rows) * 1e6, "us/sample")
    report("read back by arrival, numpy parse, client", client_s / len(rows) * 1e6, "us/sample")
    cur.execute(f"DROP TABLE {STATE_T}, {RAW_T}")
    pg.conn.close()
