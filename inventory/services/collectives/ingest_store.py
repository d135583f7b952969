"""Collective records: writing a batch (COPY on PostgreSQL, ``bulk_create`` on SQLite) and judging
the records whose key (communicator, rank, seq, coll) repeats within the batch or was stored before.

As the telemetry ingest writes (``inventory.services.telemetry.ingest_store``): on PostgreSQL the
rows are COPYed straight into the table (text COPY, encoded by ``inventory.db.copy``); when a key
already exists the savepoint rolls back and the batch goes through a temporary staging table and
``INSERT ... ON CONFLICT DO NOTHING RETURNING``, and only the rows that were not inserted are
compared with the stored ones. So a batch of new records reads nothing back, whatever the
number of records already stored. SQLite reads the batch's stored keys first. Either way a
repeat with the same values (size, time to the nanosecond) is a duplicate, with other values a
conflict, and the first of the batch's repeats is the one stored.
"""

from __future__ import annotations

import psycopg
from django.db import IntegrityError, connection, transaction

from inventory.core.collectives.formats import Op
from inventory.core.telemetry.decode import ItemError
from inventory.db.copy import copy_text, copy_write, float_text, int_text, str_text, ts_text
from inventory.models import CollectiveRecord

Row = tuple[int, Op, int]  # (item index, operation, communicator id)
Key = tuple[int, int, int, str]  # (communicator id, rank, seq, coll)
Values = tuple[int, float]  # what a repeat must match: (msg_bytes, exec_us to 3 decimals)

TABLE = CollectiveRecord._meta.db_table
COLUMNS = [
    "communicator_id",
    "rank",
    "coll",
    "seq",
    "msg_bytes",
    "exec_us",
    "busbw_gbs",
    "algbw_gbs",
    "ts",
    "source",
]
KEY_COLUMNS = ["communicator_id", "rank", "seq", "coll"]


def _key(row: Row) -> Key:
    _i, op, comm = row
    return (comm, op.rank, op.seq, op.coll)


def _values(op: Op) -> Values:
    return (op.msg_bytes, round(op.exec_us, 3))


def records_store(rows: list[Row]) -> tuple[int, int, list[ItemError]]:
    """Store the rows of new keys: (records stored, duplicates, conflicts as item errors)."""
    first: dict[Key, Row] = {}
    repeats: list[tuple[Key, Row]] = []
    for row in rows:
        k = _key(row)
        if k in first:
            repeats.append((k, row))
        else:
            first[k] = row
    unique = list(first.values())
    if connection.vendor == "postgresql":
        stored, existing = _pg_write(unique)
    else:
        stored, existing = _sqlite_write(unique)
    duplicates, errors = 0, []
    before = {}
    for row, old in existing:
        before[_key(row)] = old
        duplicates += _judge(row, old, errors)
    for k, row in repeats:  # against what is stored now: the stored record, or the batch's first
        duplicates += _judge(row, before[k] if k in before else _values(first[k][1]), errors)
    return stored, duplicates, errors


def _judge(row: Row, old: Values | None, errors: list[ItemError]) -> int:
    """1 when the row repeats ``old`` (a duplicate); 0 and a ``conflict`` error otherwise."""
    i, op, _comm = row
    if old is not None and old == _values(op):
        return 1
    reason = "was stored with other values" if old is not None else "is being written by another request"
    errors.append(ItemError(i, "conflict", f"operation {op.seq} of rank {op.rank} {reason}"))
    return 0


# ---------------------------------------------------------------------------------------------
# PostgreSQL


def _copy_data(rows: list[Row]) -> bytes:
    ops = [op for _i, op, _c in rows]
    return copy_text(
        [
            int_text([c for _i, _op, c in rows]),
            int_text([op.rank for op in ops]),
            str_text([op.coll for op in ops]),
            int_text([op.seq for op in ops]),
            int_text([op.msg_bytes for op in ops]),
            float_text([op.exec_us for op in ops]),
            float_text([op.busbw_gbs for op in ops]),
            float_text([op.algbw_gbs for op in ops]),
            ts_text([op.ts for op in ops]),
            str_text([op.source for op in ops]),
        ]
    )


def _pg_write(rows: list[Row]) -> tuple[int, list[tuple[Row, Values | None]]]:
    """COPY the rows; when some key is stored already, insert the new ones through a staging
    table. (rows inserted, [(row not inserted, the stored values)])."""
    if not rows:
        return 0, []
    data = _copy_data(rows)
    raw = connection.connection
    try:
        with transaction.atomic(), raw.cursor() as cur:
            copy_write(cur, TABLE, COLUMNS, data)
        return len(rows), []
    except (IntegrityError, psycopg.IntegrityError):
        pass  # some keys are stored already (a batch posted again, or partly)
    qn = connection.ops.quote_name
    stage = f"{TABLE}_stage"
    cols = ", ".join(map(qn, COLUMNS))
    keys = ", ".join(map(qn, KEY_COLUMNS))
    with raw.cursor() as cur:
        cur.execute(
            f"CREATE TEMPORARY TABLE IF NOT EXISTS {qn(stage)} ON COMMIT DELETE ROWS "  # noqa: S608 - table and column names from model _meta, quoted
            f"AS SELECT {cols} FROM {qn(TABLE)} WITH NO DATA"
        )
        cur.execute(f"TRUNCATE {qn(stage)}")
        copy_write(cur, stage, COLUMNS, data)
        cur.execute(
            f"INSERT INTO {qn(TABLE)} ({cols}) SELECT {cols} FROM {qn(stage)} "  # noqa: S608 - as above
            f"ON CONFLICT DO NOTHING RETURNING {keys}"
        )
        inserted = set(cur.fetchall())
        rest = [row for row in rows if _key(row) not in inserted]
        cur.execute(
            f"SELECT {', '.join('r.' + qn(c) for c in KEY_COLUMNS)}, r.msg_bytes, r.exec_us "  # noqa: S608 - as above
            f"FROM {qn(TABLE)} r JOIN {qn(stage)} s USING ({keys})"
        )
        stored = {(c, r, s, k): (m, round(x, 3)) for c, r, s, k, m, x in cur.fetchall()}
    return len(inserted), [(row, stored.get(_key(row))) for row in rest]


# ---------------------------------------------------------------------------------------------
# SQLite (and any other database): the stored keys first, then the new rows


def _sqlite_write(rows: list[Row]) -> tuple[int, list[tuple[Row, Values | None]]]:
    if not rows:
        return 0, []
    stored = {
        (c, r, s, k): (m, round(x, 3))
        for c, r, s, k, m, x in CollectiveRecord.objects.filter(
            communicator_id__in={c for _i, _op, c in rows}, seq__in={op.seq for _i, op, _c in rows}
        ).values_list(*KEY_COLUMNS, "msg_bytes", "exec_us")
    }
    new = [row for row in rows if _key(row) not in stored]
    CollectiveRecord.objects.bulk_create(
        [
            CollectiveRecord(
                communicator_id=comm,
                rank=op.rank,
                coll=op.coll,
                seq=op.seq,
                msg_bytes=op.msg_bytes,
                exec_us=op.exec_us,
                busbw_gbs=op.busbw_gbs,
                algbw_gbs=op.algbw_gbs,
                ts=op.ts,
                source=op.source,
            )
            for _i, op, comm in new
        ],
        batch_size=5000,
        ignore_conflicts=True,
    )
    return len(new), [(row, stored[_key(row)]) for row in rows if _key(row) in stored]
