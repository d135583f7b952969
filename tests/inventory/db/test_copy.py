"""PostgreSQL COPY encoding: text fields and BINARY records, checked byte for byte (no database)."""

import struct
from datetime import UTC, datetime, timedelta

import numpy as np

from inventory.db import copy


def test_copy_text_joins_formatted_fields_and_arrays_become_literals():
    ts = [datetime(2026, 11, 1, tzinfo=UTC)] * 2
    data = copy.copy_text(
        [copy.int_text([7, 8]), copy.ts_text(ts), [copy.pg_array([1.5, None]), copy.pg_array(None)]]
    )
    assert data == (b"7\t2026-11-01T00:00:00+00:00\t{1.5,null}\n8\t2026-11-01T00:00:00+00:00\t\\N\n")
    assert copy.copy_text([]) == b""


def test_binary_scalars_is_a_pgcopy_file_of_fixed_records():
    when = copy.PG_EPOCH + timedelta(seconds=1)
    data = copy.binary_scalars(1, [(">i8", 8, [42]), (">i8", 8, copy.ts_micros([when])), (">i2", 2, [4])])
    header, body, trailer = data[:19], data[19:-2], data[-2:]
    assert header == b"PGCOPY\n\xff\r\n\x00" + b"\x00" * 8 and trailer == b"\xff\xff"
    assert struct.unpack(">h iq iq ih", body) == (3, 8, 42, 8, 1_000_000, 2, 4)


def test_binary_records_writes_arrays_with_their_header_and_nulls_as_minus_one():
    values = np.array([[1.0, 2.0]], dtype=np.float32)
    data = copy.binary_records(1, [("i8", [5]), ("null",), ("array", values, ">f4", 4, copy.OID_FLOAT4)])
    body = data[19:-2]
    n, l0, v0, l1, l2 = struct.unpack(">h iq i i", body[:22])
    assert (n, l0, v0, l1) == (3, 8, 5, -1)
    assert l2 == 20 + 2 * (4 + 4)
    assert struct.unpack(">5i", body[22:42]) == (1, 0, copy.OID_FLOAT4, 2, 1)
    assert struct.unpack(">if if", body[42:]) == (4, 1.0, 4, 2.0)


def test_dense_refuses_ragged_rows_and_null_lanes():
    assert copy.dense([[1.0, 2.0], [3.0, 4.0]], np.float32).shape == (2, 2)
    assert copy.dense([[1.0], [3.0, 4.0]], np.float32) is None
    assert copy.dense([[1.0, None]], np.float32) is None
