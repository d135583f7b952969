"""PostgreSQL ``COPY`` encoding (text and BINARY) from columns of values, and the cursor write;
and the reverse for large reads, ``read_columns``: rows of fixed-size binary fields into numpy.

Pure encoding: callers hand over columns already in the form to store (numbers, timestamps,
equal-length arrays); nothing here knows a table's meaning. Text COPY takes fields already
formatted as bytes (numbers and arrays need no escaping; ``str_text`` escapes strings). COPY BINARY builds fixed-layout
records with numpy, column by column in C, so PostgreSQL parses no text (integers and
timestamps are its main COPY cost).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import numpy as np
import orjson

NULL = b"\\N"
_BRACES = bytes.maketrans(b"[]", b"{}")
PG_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_BINARY_HEADER = b"PGCOPY\n\xff\r\n\x00" + b"\x00" * 8  # signature, flags, no extension
_BINARY_TRAILER = b"\xff\xff"
OID_FLOAT4, OID_INT8 = 700, 20


# ---------------------------------------------------------------------------------------------
# text


def ts_text(ts: list[datetime]) -> list[bytes]:
    """Timestamps as COPY text fields (each distinct instant formatted once)."""
    text = {t: t.isoformat().encode() for t in set(ts)}
    return list(map(text.__getitem__, ts))


def int_text(values: list[int]) -> list[bytes]:
    """Integers without nulls as COPY text fields."""
    return [b"%d" % v for v in values]


def float_text(values: list[float | None]) -> list[bytes]:
    """Finite floats (``repr``: the shortest text that reads back the same double) or nulls."""
    return [NULL if v is None else repr(v).encode() for v in values]


_TEXT_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def str_text(values: list[str]) -> list[bytes]:
    """Strings (without NUL, which PostgreSQL text cannot hold) as COPY text fields: backslash,
    tab, newline and carriage return escaped; each distinct value encoded once."""
    text = {v: v.translate(_TEXT_ESCAPES).encode() for v in set(values)}
    return list(map(text.__getitem__, values))


def pg_array(values: Sequence | None) -> bytes:
    """A PostgreSQL array literal (numbers and nulls: orjson's text with braces)."""
    if values is None:
        return NULL
    return orjson.dumps(values).translate(_BRACES)


def copy_text(columns: list[list[bytes]]) -> bytes:
    """COPY text from columns of already-formatted fields (numbers and arrays: no escaping)."""
    if not columns or not columns[0]:
        return b""
    return b"\n".join(map(b"\t".join, zip(*columns, strict=True))) + b"\n"


# ---------------------------------------------------------------------------------------------
# binary


def ts_micros(ts: list[datetime]) -> list[int]:
    """Timestamps as PostgreSQL's binary ``timestamptz``: microseconds since 2000-01-01 UTC."""
    micros = {t: (t - PG_EPOCH) // _MICROSECOND for t in set(ts)}
    return list(map(micros.__getitem__, ts))


def binary_scalars(n: int, values: list[tuple[str, int, np.ndarray | list]]) -> bytes:
    """COPY BINARY for ``n`` rows of fixed-size scalar fields without nulls.

    ``values``: per column ``(numpy big-endian type, byte size, values)``, e.g. ``(">i8", 8,
    ids)`` for a bigint, ``(">f8", 8, gauges)`` for a double, ``(">i2", 2, widths)`` for a
    smallint. Every row is then one fixed-layout record that numpy fills column by column.
    """
    fields = [("n", ">i2")]
    for k, (kind, _, _) in enumerate(values):
        fields += [(f"l{k}", ">i4"), (f"v{k}", kind)]
    rec = np.empty(n, dtype=np.dtype(fields))
    rec["n"] = len(values)
    for k, (_, size, v) in enumerate(values):
        rec[f"l{k}"] = size
        rec[f"v{k}"] = v
    return _BINARY_HEADER + rec.tobytes() + _BINARY_TRAILER


def binary_records(n: int, fields: list[tuple]) -> bytes:
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


def dense(col: list, dtype) -> np.ndarray | None:
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


# ---------------------------------------------------------------------------------------------
# writing


def copy_write(cur, table: str, columns: list[str], data: bytes | str, *, binary: bool = False) -> None:
    """``COPY table (columns) FROM STDIN`` on a raw psycopg cursor, text or BINARY.

    Names are quoted here, not through Django's connection, so the bulk writer's thread
    (``pipeline``) can call it: that thread has no Django connection of its own.
    """

    def qn(name: str) -> str:
        return '"' + name.replace('"', '""') + '"'

    fmt = " (FORMAT BINARY)" if binary else ""
    with cur.copy(f"COPY {qn(table)} ({', '.join(qn(c) for c in columns)}) FROM STDIN{fmt}") as copy:
        copy.write(data)


# ---------------------------------------------------------------------------------------------
# reading

_SEND = {  # a non-null fixed-size field's binary form, a null float as NaN
    "i8": ("int8send(({})::int8)", ">i8", np.int64),
    "f8": ("float8send(coalesce(({})::float8, 'NaN'::float8))", ">f8", np.float64),
    "f4": ("float4send(coalesce(({})::float4, 'NaN'::float4))", ">f4", np.float32),
}
_FETCH = 100_000  # rows a round trip: about 12 MB of records for the rule window's


def read_columns(columns: Sequence[tuple[str, str]], rest: str, params: Sequence) -> list[np.ndarray]:
    """``SELECT <columns> <rest>`` on PostgreSQL as numpy arrays, without a Python object per
    value: each row travels as one fixed-layout binary record (``int8send(a) || float8send(b)
    || ...``), fetched through a server-side cursor in batches and read by ``np.frombuffer``.

    ``columns``: ``(SQL expression, kind)``, kind ``i8`` (bigint, never null), ``f8`` (double)
    or ``f4`` (real); a null float comes back as NaN. ``rest``: the ``FROM ... WHERE ...`` part,
    with ``%s`` placeholders for ``params``. Why not ``COPY ... TO STDOUT (FORMAT BINARY)``:
    psycopg hands a COPY over one row at a time through Python (about 1.7 us a row: 14 s for the
    8.4 million rows of a 131,072-GPU site's 15-minute window); a fetch is one call a batch."""
    from django.db import connection, transaction

    record = " || ".join(_SEND[kind][0].format(expr) for expr, kind in columns)
    dtype = np.dtype([(f"v{k}", _SEND[kind][1]) for k, (_, kind) in enumerate(columns)])
    # each batch goes to native columns at once: the wire records are never held whole
    parts: list[list[np.ndarray]] = [[] for _ in columns]
    with transaction.atomic(using=connection.alias):  # a server-side cursor lives in a transaction
        connection.ensure_connection()
        with connection.connection.cursor(name="cabletrack_read_columns", binary=True) as cur:
            cur.execute(f"SELECT {record} {rest}", params)
            while batch := cur.fetchmany(_FETCH):
                records = np.frombuffer(b"".join([r[0] for r in batch]), dtype=dtype)
                for k, (_, kind) in enumerate(columns):
                    parts[k].append(records[f"v{k}"].astype(_SEND[kind][2]))
    out = []
    for k, (_, kind) in enumerate(columns):
        out.append(np.concatenate(parts[k]) if parts[k] else np.zeros(0, _SEND[kind][2]))
        parts[k] = []
    return out
