"""Timestamps read from PostgreSQL by psycopg's C loader, not by Django's pure-Python one.

Django's psycopg 3 backend reads every ``timestamptz`` through ``BaseTzLoader``, a subclass of
psycopg's *Python* ``TimestamptzLoader`` (the C one cannot be subclassed), so with
``psycopg[binary]`` installed each timestamp is still parsed in Python and then given its time
zone with ``replace``: Django ticket #36960, psycopg issue #1273, open upstream. A desk list of
50 trunks at 131,072 GPUs reads about 1,500 timestamps (the latest tests of its links'
segments): some 6 ms of its ~100 ms of CPU.

When the connection's time zone is UTC (Django's with ``USE_TZ`` and no per-database
``TIME_ZONE``: it sets the session's ``TimeZone`` to UTC before ``connection_created``),
PostgreSQL sends every value as ``...+00`` and the C loader returns it with
``datetime.timezone.utc``: the value Django's loader would have made. The connection's adapters
then get a loader that hands each value straight to the C loader's ``load``. It keeps the
``timezone`` attribute Django compares with its own before each cursor, so no cursor re-registers
the Python loader. Any other time zone, or psycopg without its C extension, keeps Django's loader.
"""

from __future__ import annotations

import datetime

import psycopg
from psycopg.adapt import Loader

_OID = psycopg.postgres.types["timestamptz"].oid
_TEXT = psycopg.pq.Format.TEXT


def _c_loader() -> type | None:
    """The C ``timestamptz`` text loader psycopg registered globally, or None (pure Python)."""
    loader = psycopg.adapters.get_loader(_OID, _TEXT)
    if loader is None or loader.__module__.startswith("psycopg.types"):
        return None
    return loader


class UtcTimestamptzLoader(Loader):
    """A ``timestamptz`` text loader for a UTC session: the C loader's ``load``, per instance."""

    timezone = datetime.UTC  # what Django's ``create_cursor`` compares with ``connection.timezone``
    fast = _c_loader()

    def __init__(self, oid: int, context=None):
        super().__init__(oid, context)
        self.load = self.fast(oid, context).load  # psycopg's transformer calls the bound C method

    def load(self, data):  # replaced on every instance by __init__
        raise NotImplementedError


def c_timestamps(sender, connection, **kwargs) -> None:
    """``connection_created`` receiver: read the connection's ``timestamptz`` values in C."""
    if connection.vendor != "postgresql" or UtcTimestamptzLoader.fast is None:
        return
    raw = connection.connection
    utc_session = raw.info.parameter_status("TimeZone") in ("UTC", "Etc/UTC")
    if connection.timezone is not datetime.UTC or not utc_session:
        return
    raw.adapters.register_loader(_OID, UtcTimestamptzLoader)
