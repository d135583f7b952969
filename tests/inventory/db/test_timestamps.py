"""Timestamps are read by psycopg's C loader on a UTC session (``inventory.db.timestamps``), with
the values Django's own loader gives."""

import datetime

import psycopg
import pytest
from django.db import connection, connections
from django.db.backends.postgresql.psycopg_any import register_tzloader

from inventory.db.timestamps import UtcTimestamptzLoader, c_timestamps

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

OID = psycopg.postgres.types["timestamptz"].oid
TEXTS = [
    "2026-12-05 10:15:30.123456+00",
    "1969-07-20 20:17:40+00",  # before the epoch
    "2000-02-29 23:59:59.999999+00",
    "9999-12-31 23:59:59+00",
    "0001-01-01 00:00:00+00",
    "2026-03-29 01:30:00+02",  # an offset: PostgreSQL sends it in the session's time zone
]
SQL = "SELECT v::timestamptz FROM unnest(%s::text[]) AS v"


def _read(cur) -> list:
    cur.execute(SQL, [TEXTS])
    return [r[0] for r in cur.fetchall()]


def test_a_session_reads_every_timestamp_in_c_as_django_would():
    connection.ensure_connection()
    raw = connection.connection
    assert raw.adapters.get_loader(OID, psycopg.pq.Format.TEXT) is UtcTimestamptzLoader
    with raw.cursor() as cur:
        fast = _read(cur)
    with raw.cursor() as cur:
        register_tzloader(connection.timezone, cur)  # Django's pure-Python loader, this cursor only
        django_way = _read(cur)
    assert fast == django_way
    assert [v.tzinfo for v in fast] == [datetime.UTC] * len(TEXTS)
    assert fast[0] == datetime.datetime(2026, 12, 5, 10, 15, 30, 123456, tzinfo=datetime.UTC)
    assert fast[-1] == datetime.datetime(2026, 3, 28, 23, 30, tzinfo=datetime.UTC)


def test_djangos_own_cursors_read_through_it():
    with connection.cursor() as cur:  # Django's wrapper: create_cursor keeps the connection's loader
        cur.execute(SQL, [TEXTS[:1]])
        (value,) = cur.fetchone()
        assert cur.cursor.adapters.get_loader(OID, psycopg.pq.Format.TEXT) is UtcTimestamptzLoader
    assert value == datetime.datetime(2026, 12, 5, 10, 15, 30, 123456, tzinfo=datetime.UTC)


def test_a_session_in_another_time_zone_keeps_djangos_loader():
    wrapper = connections["default"]
    settings = dict(wrapper.settings_dict, TIME_ZONE="Europe/Paris")
    other = type(wrapper)(settings, wrapper.alias)
    try:
        other.ensure_connection()
        loader = other.connection.adapters.get_loader(OID, psycopg.pq.Format.TEXT)
        assert loader is not UtcTimestamptzLoader
        with other.cursor() as cur:
            cur.execute(SQL, [TEXTS[:1]])
            (value,) = cur.fetchone()
        assert value.utcoffset() == datetime.timedelta(hours=1)  # Paris in December, as Django reads it
        c_timestamps(sender=None, connection=other)  # called again: still refuses
        assert other.connection.adapters.get_loader(OID, psycopg.pq.Format.TEXT) is loader
    finally:
        other.close()
