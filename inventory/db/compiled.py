"""Reads of a fixed shape, compiled to SQL once per process: ``CompiledRead``.

Django builds and compiles every queryset anew: the filter tree, the joins of ``select_related``,
the select list, ``ORDER BY``. For the small, fixed reads of a page that is most of their cost:
the cable page's ends read spent 1.6 ms compiling against 0.2 ms in PostgreSQL, and compiling
was about 40 % of the page's Python time. A ``CompiledRead`` builds and compiles its queryset
once per database alias and afterwards only puts the call's arguments into the kept statement;
Django still turns the rows into model instances (``select_related`` objects, deferred fields,
``prefetch_related`` included), through the compiler state the first compile left.

django-prepared-queries did this once but is unmaintained (Django < 3); this is the small part
of it the pages need. Use it only for reads whose SQL does not change with the arguments: scalar
arguments (ids, labels, an aware ``now``) in a fixed filter, or an id list bound as one array
(``field__any`` on PostgreSQL); no ``__in`` lists or conditional filters. The first
call compiles the queryset twice, with the real arguments and with probe values, and falls back
to a plain queryset, every call, for a shape that changes or whose arguments it cannot place.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import psycopg
from django.core.exceptions import EmptyResultSet
from django.db import connections
from django.db.models import QuerySet
from django.db.models.sql.constants import MULTI

from inventory.db.lookups import IdArray
from inventory.db.replica import read_alias


@dataclass(frozen=True, slots=True)
class _Shape:
    queryset: QuerySet  # the first build: model, iterable class, prefetches
    compiler: object  # its compiler after ``as_sql``: select list, klass_info, converters
    sql: str
    params: tuple
    slots: tuple[tuple[int, int], ...]  # (position in params, index of the argument)


def _prepared_execute(compiler, statement: tuple[str, tuple]):
    """``compiler.execute_sql`` that runs the statement prepared, bound server-side, on the
    request's own connection (its transaction, its query log): PostgreSQL plans it once per
    connection instead of once per call. Planning was the larger part of what the cable page
    still waited for in PostgreSQL (its ends read: 1 ms to plan, 0.2 ms to run). Prepared
    statements live in the database session, so a pooler must pool by session (README)."""
    plain = compiler.execute_sql

    def execute_sql(result_type=MULTI, *args, **kwargs):
        connection = compiler.connection
        raw = _preparing_cursor(connection) if result_type == MULTI else None
        if raw is None:
            return plain(result_type, *args, **kwargs)
        with connection._prepare_cursor(raw) as cursor:  # Django's wrapper: errors, query log
            cursor.execute(*statement)
            rows = cursor.fetchall()
        if connection.queries_logged and connection.queries_log and connection.queries_log[-1]["sql"] is None:
            # psycopg keeps no text for a prepared run: the log (DEBUG, tests) gets it composed.
            connection.queries_log[-1]["sql"] = connection.ops.compose_sql(*statement)
        if compiler.has_extra_select:
            rows = [row[: compiler.col_count] for row in rows]
        return [rows]

    return execute_sql


class _PreparingCursor(psycopg.Cursor):
    """Binds server-side and prepares every statement it runs."""

    def execute(self, query, params=None, *, prepare=None, binary=None):
        return super().execute(query, params, prepare=True, binary=binary)


_TIMESTAMPTZ = psycopg.postgres.types["timestamptz"].oid


def _preparing_cursor(connection) -> _PreparingCursor | None:
    """A preparing cursor on Django's connection; None where Django must make its own cursor
    (it registers a time zone per cursor when the connection's differs)."""
    connection.ensure_connection()
    raw = connection.connection
    if not isinstance(raw, psycopg.Connection):
        return None
    loader = raw.adapters.get_loader(_TIMESTAMPTZ, psycopg.pq.Format.TEXT)
    if getattr(loader, "timezone", connection.timezone) != connection.timezone:
        return None
    return _PreparingCursor(raw)


def _probe(i: int, value):
    """A stand-in for argument ``i`` that no constant of a query equals (None: not probeable)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return -1_000_000_000 - i  # inside every integer column's range
    if isinstance(value, str):
        return f"\x1fprobe-{i}\x1f"
    if isinstance(value, list) and all(type(v) is int for v in value):
        return [-1_000_000_000 - i]  # an id list bound as one array (``__any`` on PostgreSQL)
    if isinstance(value, datetime) and value.tzinfo is not None:
        return _PROBE_TIME + timedelta(microseconds=i)  # ``now``: compared with stored times
    return None


_PROBE_TIME = datetime(1901, 2, 3, 4, 5, 6, tzinfo=UTC)


class CompiledRead:
    """``CompiledRead(lambda cable_id: Model.objects.filter(...))``; ``read(cable_id)`` -> list."""

    def __init__(self, build: Callable[..., QuerySet]):
        self.build = build
        self._shapes: dict[str, _Shape | None] = {}

    def __call__(self, *args, using: str | None = None) -> list:
        using = using or read_alias()  # the replica for a read-only web request (inventory.db.replica)
        try:
            shape = self._shapes[using]
        except KeyError:
            shape = self._compile(args, using)
        if shape is None:
            return list(self.build(*args).using(using))
        params = list(shape.params)
        for pos, i in shape.slots:
            # an id list goes in as the lookup bound it (``IdArray``: one text literal)
            params[pos] = IdArray(args[i]) if type(params[pos]) is IdArray else args[i]
        compiler = copy.copy(shape.compiler)
        connection = compiler.connection = connections[using]  # this thread's connection
        statement = (shape.sql, tuple(params))
        compiler.as_sql = lambda *a, **k: statement
        if connection.vendor == "postgresql":
            compiler.execute_sql = _prepared_execute(compiler, statement)
        query = copy.copy(shape.queryset.query)
        query.get_compiler = lambda *a, **k: compiler
        tpl = shape.queryset
        qs = tpl.__class__(model=tpl.model, query=query, using=using, hints=tpl._hints)
        qs._prefetch_related_lookups = tpl._prefetch_related_lookups
        qs._iterable_class = tpl._iterable_class
        qs._fields = tpl._fields
        return list(qs)

    def _compile(self, args: tuple, using: str) -> _Shape | None:
        """The shape, kept for later calls; None (kept too) when the SQL changes with the
        arguments; None, not kept, when these arguments cannot be probed (a later call may)."""
        probes = [_probe(i, a) for i, a in enumerate(args)]
        if any(p is None for p in probes):
            return None
        shape = self._shapes[using] = self._shape(args, probes, using)
        return shape

    def _shape(self, args: tuple, probes: list, using: str) -> _Shape | None:
        try:
            qs = self.build(*args).using(using)
            compiler = qs.query.get_compiler(using=using)
            sql, params = compiler.as_sql()
            probe_sql, probe_params = (
                self.build(*probes).using(using).query.get_compiler(using=using).as_sql()
            )
        except EmptyResultSet:
            return None
        if sql != probe_sql or len(params) != len(probe_params):
            return None
        slots = []
        for pos, (real, probe) in enumerate(zip(params, probe_params, strict=True)):
            if real == probe:
                continue
            i = next((i for i, p in enumerate(probes) if p == probe and args[i] == real), None)
            if i is None:
                return None  # the argument reached the SQL converted: cannot be put in again
            slots.append((pos, i))
        return _Shape(qs, compiler, sql, tuple(params), tuple(slots))
