"""``bench floors`` reads PostgreSQL's binary COPY with numpy: the values it times must be the
values PostgreSQL sent, and a stream it cannot read (a null, a text field) is refused, not
misread into a figure (PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import connection

from bench.floors import PG_EPOCH_US, parse_binary_copy

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]
COLUMNS = [("port_id", ">i8"), ("ts", ">i8"), ("c0", ">i8"), ("g0", ">f8")]


def copy_out(select: str) -> bytes:
    with (
        connection.cursor() as cur,
        cur.connection.cursor().copy(f"COPY ({select}) TO STDOUT (FORMAT binary)") as cp,
    ):
        return b"".join(bytes(chunk) for chunk in cp)


def test_a_binary_copy_from_postgresql_reads_back_value_by_value():
    body = copy_out(
        "SELECT * FROM (VALUES (7::bigint, timestamptz '2026-12-06 00:00:01.5+00', (-9223372036854775807 - 1)::bigint, -1.25::float8),"
        " (18432, timestamptz '2000-01-01 00:00:00+00', 9223372036854775807, 2.5e-9)) v"
    )
    rows = parse_binary_copy(body, COLUMNS)
    assert rows["port_id"].tolist() == [7, 18432]
    micros = (rows["ts"] + PG_EPOCH_US).tolist()
    assert micros == [
        int(datetime(2026, 12, 6, 0, 0, 1, 500_000, tzinfo=UTC).timestamp() * 1_000_000),
        PG_EPOCH_US,
    ]
    assert rows["c0"].tolist() == [-(2**63), 2**63 - 1]
    assert rows["g0"].tolist() == [-1.25, 2.5e-9]


@pytest.mark.parametrize(
    ("select", "message"),
    [
        ("SELECT 1::bigint, now(), NULL::bigint, 1.0::float8", "another shape"),
        ("SELECT 1::bigint, now(), v, 1.0::float8 FROM (VALUES (1::bigint), (NULL)) t(v)", "another shape"),
        ("SELECT 1::bigint, now(), 'x'::text, 1.0::float8", "another shape"),
        ("SELECT 1::bigint, now(), 2::bigint", "another shape"),
    ],
)
def test_a_stream_with_a_null_or_another_field_is_refused(select, message):
    with pytest.raises(ValueError, match=message):
        parse_binary_copy(copy_out(select), COLUMNS)
