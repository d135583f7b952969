"""The sanctioned bulk writer: rows and their history rows together, fast.

simple-history cannot see ``bulk_create`` or ``COPY``, so this writes the history rows itself
(``history_type '+'``, the actor and a reason) in the same transaction as the rows (on
PostgreSQL copied server-side from the rows just written, see ``_copy_history``).
Primary keys are allocated up front (PostgreSQL: from the sequence; SQLite: after the current
maximum, safe because IMMEDIATE transactions hold the write lock), so callers can wire
foreign keys without reading anything back. PostgreSQL loads with COPY (the way past 5,000
cables/s); SQLite with ``executemany``. Django's per-value compiler work is skipped on both.
"""

from __future__ import annotations

import contextlib
import json
import operator
import threading
from collections.abc import Iterable, Sequence
from datetime import date, datetime
from itertools import islice, repeat
from operator import itemgetter

import orjson
from django.db import IntegrityError, connection, models, transaction
from django.utils import timezone

from inventory.db import pipeline
from inventory.db.audit import attributed
from inventory.db.copy import pg_array


def _history_model(model):
    manager = getattr(model, "history", None)
    return getattr(manager, "model", None) if manager is not None else None


def allocate_ids(model, n: int) -> list[int]:
    """Reserve ``n`` primary keys for ``model``. Call inside the writing transaction."""
    if n == 0:
        return []
    table = model._meta.db_table
    pk = model._meta.pk.column
    # PostgreSQL: inside ``pipeline.writes_in_background`` from its second connection, so the ids
    # come at once while the writer thread holds the first (sequences are not transactional).
    with pipeline.side_cursor() if connection.vendor == "postgresql" else connection.cursor() as cur:
        if connection.vendor == "postgresql":
            # The sequence is looked up once (an InitPlan), not per row: pg_get_serial_sequence
            # per row made this 8x slower (120 ms per 40,000 ids instead of 15 ms).
            cur.execute(
                "SELECT nextval((SELECT pg_get_serial_sequence(%s, %s)::regclass)) FROM generate_series(1, %s)",
                [table, pk, n],
            )
            return [r[0] for r in cur.fetchall()]
        qn = connection.ops.quote_name
        cur.execute(f"SELECT COALESCE(MAX({qn(pk)}), 0) FROM {qn(table)}")  # noqa: S608 - identifiers quoted
        start = cur.fetchone()[0] + 1
        return list(range(start, start + n))


def _json_dumps(value) -> bytes:
    """orjson for JSON columns: about ten times the standard library's speed on the large lists
    some rows carry (an OTDR trace's 600 points). Non-string keys become strings as with
    ``json.dumps``; NaN becomes null (PostgreSQL refuses a bare NaN)."""
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)


def _converter(field: models.Field):
    """A fast value converter for the database at hand (None passes through)."""
    pg = connection.vendor == "postgresql"
    if isinstance(field, models.JSONField):
        if pg:  # COPY text: the JSON text itself (PostgreSQL parses it), no adapter object per value
            return lambda v: None if v is None else _json_dumps(v).decode()
        return lambda v: None if v is None else json.dumps(v)
    if pg:
        return None
    if isinstance(field, models.DateTimeField):
        adapt = connection.ops.adapt_datetimefield_value
        return lambda v: None if v is None else adapt(v)
    if isinstance(field, models.DateField):
        return lambda v: v.isoformat() if isinstance(v, date) else v
    if isinstance(field, models.DecimalField):
        return lambda v: None if v is None else str(v)
    return None


def _write(model, fields: list[models.Field], rows: Iterable[Sequence]) -> None:
    convs = [(i, c) for i, c in enumerate(_converter(f) for f in fields) if c is not None]
    if convs:

        def fix(row):
            row = list(row)
            for i, c in convs:
                row[i] = c(row[i])
            return row

        rows = (fix(r) for r in rows)
    qn = connection.ops.quote_name
    cols = ", ".join(qn(f.column) for f in fields)
    table = qn(model._meta.db_table)
    if connection.vendor == "postgresql":

        def copy_rows(cur) -> None:
            with cur.copy(f"COPY {table} ({cols}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)

        pipeline.submit(copy_rows)  # now, or on the writer thread inside its block
        return
    marks = ", ".join(["%s"] * len(fields))
    with connection.cursor() as cur:
        cur.executemany(f"INSERT INTO {table} ({cols}) VALUES ({marks})", list(rows))  # noqa: S608 - table and column names from model _meta, quoted; values are parameters


def bulk_insert_rows(
    model,
    attnames: list[str],
    rows: list[list],
    *,
    actor=None,
    reason: str = "bulk import",
    now: datetime | None = None,
    history: bool = True,
) -> list[int]:
    """Insert plain rows (values in ``attnames`` order, no primary key) and their history.

    Returns the new primary keys in row order. Fields not named take their model default.
    """
    if not rows:
        return []
    now = now or timezone.now()
    actor, reason = attributed(actor, reason)
    meta = model._meta
    pk_name = meta.pk.attname
    named = set(attnames)
    fill: list[tuple[models.Field, object]] = []
    for f in meta.concrete_fields:
        if f.attname in named or f.attname == pk_name:
            continue
        if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False):
            fill.append((f, now))
        else:
            fill.append((f, f.get_default()))  # the default, "" for text, None for nullable
    fields = [meta.pk] + [_by_attname(model, a) for a in attnames] + [f for f, _ in fill]
    extra = [v for _, v in fill]
    ids = allocate_ids(model, len(rows))
    # Whole rows built by C-level tuple concatenation (a Python loop here cost ~1.5 us a row).
    if len(ids) != len(rows):
        raise ValueError("one id per row")
    full = list(map(operator.add, zip(ids), map(tuple, rows)))
    if extra:
        full = list(map(operator.add, full, repeat(tuple(extra))))
    _write(model, fields, full)
    hist = _history_model(model) if history else None
    keys = getattr(_local, "keys", None)
    if keys is not None:
        keys.record(model, fields, full, ids, hist, actor)
    if hist is not None and connection.vendor == "postgresql":
        _copy_history(model, hist, fields, ids, now=now, reason=reason, actor_id=getattr(actor, "pk", None))
    elif hist is not None:
        hist_fields = {f.attname: f for f in hist._meta.concrete_fields}
        keep = [i for i, f in enumerate(fields) if f.attname in hist_fields]
        h_fields = [hist_fields[fields[i].attname] for i in keep] + [
            hist_fields[n]
            for n in ("history_date", "history_change_reason", "history_type", "history_user_id")
        ]
        actor_id = getattr(actor, "pk", None)
        h_ids = allocate_ids(hist, len(full))
        h_fields = [hist._meta.pk, *h_fields]
        _write(
            hist,
            h_fields,
            (
                [hid, *(r[i] for i in keep), now, reason, "+", actor_id]
                for hid, r in zip(h_ids, full, strict=True)
            ),
        )
    return ids


def _copy_history(model, hist, fields, ids: list[int], *, now, reason: str, actor_id) -> None:
    """PostgreSQL: the history rows as one ``INSERT ... SELECT`` of the rows just written.

    The database already holds every value, so nothing is formatted in Python or sent twice:
    the history half of a bulk write (half its rows) costs the server a read of pages it has
    just written instead of a second COPY from Python (a third of the 131,072-GPU seed). The ids
    go as their range when they run unbroken, else as one array literal: psycopg adapts a list
    element by element (12 ms per 10,000 ids).
    """
    qn = connection.ops.quote_name
    hist_fields = {f.attname: f for f in hist._meta.concrete_fields}
    kept = [f for f in fields if f.attname in hist_fields]
    h_cols = [qn(hist_fields[f.attname].column) for f in kept] + [
        qn(hist_fields[n].column)
        for n in ("history_date", "history_change_reason", "history_type", "history_user_id")
    ]
    pk = qn(model._meta.pk.column)
    # Ids drawn in one go are usually one unbroken run: then the rows are that range of the key,
    # not a list of a million ids sent in the statement and hashed by the server.
    if ids[-1] - ids[0] == len(ids) - 1 and all(map(operator.lt, ids, islice(ids, 1, None))):
        which, params = f"{pk} BETWEEN %s AND %s", [ids[0], ids[-1]]
    else:
        which = f"{pk} = ANY(%s::{model._meta.pk.db_type(connection)}[])"
        params = [pg_array(ids).decode()]
    sql = (
        f"INSERT INTO {qn(hist._meta.db_table)} ({', '.join(h_cols)}) "  # noqa: S608 - table and column names from model _meta, quoted; values are parameters
        f"SELECT {', '.join(qn(f.column) for f in kept)}, %s, %s, '+', %s "
        f"FROM {qn(model._meta.db_table)} WHERE {which} ORDER BY {pk}"
    )
    params = [now, reason, actor_id, *params]
    pipeline.submit(lambda cur: cur.execute(sql, params))  # after the rows' COPY, in order


#: Writes at least this large refresh the planner's statistics of the tables they touched...
ANALYZE_AFTER_ROWS = 1000
#: ...when a table grew by this share of what the planner counted: this write alone, or the
#: table's pages since they were counted (this write included). 1.0: the table at least doubled.
ANALYZE_SHARE = 1.0


def _planner_rows(cur, table: str) -> tuple[int | None, float]:
    """The row count the planner believes ``table`` has (None when it has never been counted),
    and how much the table has grown since: its pages now over the pages counted (PostgreSQL;
    1.0 on SQLite, which keeps no such count)."""
    if connection.vendor == "postgresql":
        cur.execute(
            "SELECT reltuples, relpages, pg_relation_size(oid) / current_setting('block_size')::int "
            "FROM pg_class WHERE oid = %s::regclass",
            [table],
        )
        row = cur.fetchone()
        if not row or row[0] < 0:
            return None, 1.0
        return int(row[0]), row[2] / row[1] if row[1] else 1.0
    cur.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'")
    if cur.fetchone() is None:
        return None, 1.0
    cur.execute("SELECT stat FROM sqlite_stat1 WHERE tbl = %s LIMIT 1", [table])  # "rows [per-key...]"
    row = cur.fetchone()
    return (int(row[0].split()[0]) if row else None), 1.0


def analyze_on_commit(*models_, rows: int | None = None) -> None:
    """ANALYZE the tables of ``models_`` once the current transaction commits.

    PostgreSQL plans queries from table statistics; after a large first import they still
    describe the nearly empty tables until autovacuum's analyze gets round to them (and never,
    where autovacuum is off), so lists and traces get hash joins over whole tables instead of
    index lookups. Run after commit, it is outside the writer's transaction and sees the
    committed rows. Pass ``rows`` (the size of the write) to refresh only where the statistics
    are off by a lot: below ``ANALYZE_AFTER_ROWS``, or while neither this write nor the table's
    growth since it was counted reach ``ANALYZE_SHARE`` of the rows counted (the table has not
    doubled), the plans do not change: PostgreSQL scales the rows it counted by the table's
    current size, and the distributions of a plant's columns move little as it grows by a
    fraction. ANALYZE is not free: it sorts a 30,000-row sample of every column (0.2-0.5 s for
    the four plan tables of the 4,096-GPU demo, a third of a 5,000-cable import, each of which
    grows them by a fifth to a third). Such tables are left to autovacuum, which analyzes a
    table once a tenth of it changed (by default); where autovacuum is off, writes still
    re-count each table as it doubles. SQLite keeps the same statistics in ``sqlite_stat1``
    (and no page count: the write alone is weighed).
    """
    if rows is not None and rows < ANALYZE_AFTER_ROWS:
        return
    tables = sorted({m._meta.db_table for m in models_})
    if not tables:
        return

    def stale(cur, table: str) -> bool:
        if rows is None:
            return True
        counted, grown = _planner_rows(cur, table)
        return counted is None or rows >= ANALYZE_SHARE * counted or grown >= 1 + ANALYZE_SHARE

    def run() -> None:
        with connection.cursor() as cur:
            todo = [t for t in tables if stale(cur, t)]
            if not todo:
                return
            quoted = [connection.ops.quote_name(t) for t in todo]
            if connection.vendor == "postgresql":
                cur.execute("ANALYZE " + ", ".join(quoted))
            else:  # SQLite analyzes one table (or everything) per statement
                for q in quoted:
                    cur.execute("ANALYZE " + q)

    transaction.on_commit(run)


@contextlib.contextmanager
def foreign_keys_checked_at_end(models_):
    """Inside: PostgreSQL skips its per-row foreign-key triggers; on leaving, every foreign key of
    ``models_`` is checked set-based (one anti-join each), raising ``IntegrityError`` on an orphan.

    Django's foreign keys are ``DEFERRABLE INITIALLY DEFERRED``: every inserted row queues a
    trigger event that runs one lookup at COMMIT. For the 131,072-GPU seed that is some 16 million
    lookups (about a minute); one anti-join per key checks the same in seconds. Needs the right to
    set ``session_replication_role`` (a superuser, or ``GRANT SET ON PARAMETER``); without it, or
    on SQLite, the block runs with the ordinary per-row checks. Use only around writes that wire
    their own keys (the demo seed), never around user input.
    """
    if connection.vendor != "postgresql" or not _may_skip_triggers():
        yield
        return
    with connection.cursor() as cur:
        cur.execute("SET LOCAL session_replication_role = replica")
    yield  # on an error the transaction is rolled back, and the setting with it
    with connection.cursor() as cur:
        cur.execute("SET LOCAL session_replication_role = origin")
    _check_foreign_keys(models_)


_local = threading.local()


class _KeyChecks:
    """The keys the bulk writes inside ``keys_checked_at_end`` wrote: per referenced table, the
    ids named, and the ids the block itself inserted (rows no other session can see or delete)."""

    def __init__(self) -> None:
        self.named: dict[tuple[str, str, str], set] = {}  # (table, column, db type) -> ids named
        self.inserted: dict[str, set] = {}  # table -> ids written in the block

    def record(self, model, fields, rows, ids, hist, actor) -> None:
        self.inserted.setdefault(model._meta.db_table, set()).update(ids)
        for i, f in enumerate(fields):
            if f.is_relation and f.db_constraint:
                self._name(f, set(map(itemgetter(i), rows)))
        if hist is not None and getattr(actor, "pk", None) is not None:
            user = hist._meta.get_field("history_user")
            if user.db_constraint:
                self._name(user, {actor.pk})

    def _name(self, field, values: set) -> None:
        target = field.target_field
        values.discard(None)
        if values:
            key = (target.model._meta.db_table, target.column, target.db_type(connection))
            self.named.setdefault(key, set()).update(values)

    def check(self) -> None:
        """Every row named that the block did not write itself is locked ``FOR KEY SHARE`` (as
        PostgreSQL's own check locks it), one statement per referenced table; a missing one is an
        ``IntegrityError``."""
        qn = connection.ops.quote_name
        with connection.cursor() as cur:
            for (table, column, db_type), values in sorted(self.named.items()):
                want = values - self.inserted.get(table, set())
                if not want:
                    continue
                ids = pg_array(sorted(want)).decode()
                cur.execute(
                    f"SELECT count(*) FROM (SELECT 1 FROM {qn(table)} p WHERE p.{qn(column)} = "  # noqa: S608 - identifiers from model _meta, quoted
                    f"ANY(%s::{db_type}[]) FOR KEY SHARE) AS locked",
                    [ids],
                )
                if cur.fetchone()[0] == len(want):
                    continue
                cur.execute(
                    f"SELECT w.id FROM unnest(%s::{db_type}[]) AS w(id) WHERE NOT EXISTS "  # noqa: S608 - identifiers from model _meta, quoted
                    f"(SELECT 1 FROM {qn(table)} p WHERE p.{qn(column)} = w.id) LIMIT 1",
                    [ids],
                )
                missing = cur.fetchone()
                raise IntegrityError(f"{table}.{column} = {missing[0] if missing else '?'} does not exist")


def _refuse_other_writes(execute, sql, params, many, context):
    if str(sql).lstrip()[:6].upper() in ("INSERT", "UPDATE", "DELETE"):
        raise RuntimeError("inside keys_checked_at_end only bulk_insert_rows writes (its keys are checked)")
    return execute(sql, params, many, context)


@contextlib.contextmanager
def keys_checked_at_end(*models_):
    """Inside, the bulk writes of ``models_`` (``bulk_insert_rows`` only) are not checked row by
    row by PostgreSQL's foreign-key triggers; on leaving, each table their keys name is read once,
    and every row named is locked ``FOR KEY SHARE``: the same guarantee, set-based. For writes of
    user input (the cable-plan import), where ``foreign_keys_checked_at_end`` is not enough.

    Django's foreign keys are ``DEFERRABLE INITIALLY DEFERRED``: every inserted row queues one
    trigger event per key, each a lookup and a row lock at ``COMMIT``; a 5,000-cable import (with
    its ends, links, segments and history rows) queued some 85,000 for about 10,000 distinct
    ports. What the triggers guarantee, this keeps: each named row exists when the block ends,
    and stays until the transaction does (a concurrent ``DELETE`` of a named port waits for the
    lock, then fails its own check against the committed rows, as it would against the
    trigger's lock). Rows the block inserted itself are only counted, not read: no other
    session can see them. A named row that does not exist is an ``IntegrityError``, and the
    block's writes are rolled back (it runs in its own savepoint).

    Skipping the triggers needs the right to set ``session_replication_role`` (a superuser, or
    ``GRANT SET ON PARAMETER session_replication_role``, PostgreSQL 15+), and skips every
    trigger, so the block runs as is (the ordinary per-row checks) where the role lacks the
    right, on SQLite, or if any table of ``models_`` or of their history has a trigger of its own.
    Any other INSERT, UPDATE or DELETE sent inside (the ORM's) is refused: its keys would go
    unchecked.
    """
    if (
        connection.vendor != "postgresql"
        or not connection.in_atomic_block
        or getattr(_local, "keys", None) is not None
        or _triggers_skipped()
        or not _may_skip_triggers()
        or _own_triggers(_tables_of(models_))
    ):
        yield
        return
    keys = _KeyChecks()
    with transaction.atomic(), connection.execute_wrapper(_refuse_other_writes):
        with connection.cursor() as cur:
            cur.execute("SET LOCAL session_replication_role = replica")
        _local.keys = keys
        try:
            yield
        finally:
            _local.keys = None
        with connection.cursor() as cur:
            cur.execute("SET LOCAL session_replication_role = origin")
        keys.check()


def _own_triggers(tables) -> bool:
    """Whether any of ``tables`` has a trigger other than PostgreSQL's own (foreign keys)."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = ANY(%s::text[]::regclass[]) "
            "AND NOT tgisinternal)",
            [sorted(tables)],
        )
        return bool(cur.fetchone()[0])


@contextlib.contextmanager
def indexes_built_at_end(models_, *, maintenance_work_mem: str = "1GB"):
    """PostgreSQL: the secondary indexes of the tables of ``models_`` (and of their history
    tables) that are empty on entry are dropped inside, and built again on leaving, in the
    same transaction.

    A bulk load into indexed tables updates every index row by row (random b-tree inserts, and
    GIN trigram entries through a small pending list); building an index once over the loaded
    rows sorts them instead. Dropped: every index, and the primary keys and unique constraints
    that no foreign key refers to (added back with ``ALTER TABLE ... ADD CONSTRAINT``, so they
    are checked then: a duplicate raises ``IntegrityError`` and the transaction rolls back).
    The block is given ``built_now(*models)``, to build the indexes of tables it has finished
    writing before it leaves (beside its next work, inside ``pipeline.writes_in_background``).
    Primary keys that foreign keys name stay, so rows are still found by id inside.
    They come back with the same names and definitions (``pg_get_indexdef``,
    ``pg_get_constraintdef``). Tables that already hold rows keep theirs (rebuilding would cost
    more than it saves). The tables stay locked (ACCESS EXCLUSIVE) until the transaction ends.
    Use only inside a transaction, around a load into a fresh database (the demo seed), within
    ``foreign_keys_checked_at_end``: PostgreSQL refuses to build an index on a table with
    foreign-key checks still queued, so where the per-row checks run (a role without the right
    to skip them), and on SQLite, the block runs as is, with its indexes.
    """
    if connection.vendor != "postgresql" or not connection.in_atomic_block or not _triggers_skipped():
        yield lambda *models_: None
        return
    tables = sorted(_tables_of(models_))
    qn = connection.ops.quote_name
    with connection.cursor() as cur:
        empty = []
        for t in tables:  # ordinary tables only: partitioned ones (telemetry) are not the seed's
            cur.execute(
                f"SELECT NOT EXISTS (SELECT 1 FROM {qn(t)}) AND "  # noqa: S608 - identifier from model _meta, quoted
                "(SELECT relkind = 'r' FROM pg_class WHERE oid = %s::regclass)",
                [t],
            )
            if cur.fetchone()[0]:
                empty.append(t)
        cur.execute(
            "SELECT i.indrelid::regclass::text, 'DROP INDEX ' || i.indexrelid::regclass::text, "
            "pg_get_indexdef(i.indexrelid) "
            "FROM pg_index i WHERE i.indrelid = ANY(%s::text[]::regclass[]) "
            "AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid) "
            "UNION ALL "
            "SELECT c.conrelid::regclass::text, "
            "format('ALTER TABLE %%s DROP CONSTRAINT %%I', c.conrelid::regclass, c.conname), "
            "format('ALTER TABLE %%s ADD CONSTRAINT %%I %%s', c.conrelid::regclass, c.conname, "
            "pg_get_constraintdef(c.oid)) "
            "FROM pg_constraint c WHERE c.conrelid = ANY(%s::text[]::regclass[]) AND c.contype IN ('p', 'u') "
            "AND NOT EXISTS (SELECT 1 FROM pg_constraint f WHERE f.contype = 'f' AND f.conindid = c.conindid)",
            [empty, empty],
        )
        dropped = cur.fetchall()
        for _, drop, _ in dropped:
            cur.execute(drop)
    to_build = {create: table for table, _, create in dropped}

    def built_now(*done) -> None:
        """Build now the indexes of the tables of ``done`` (and their history tables), which the
        block writes no more: inside ``pipeline.writes_in_background`` on its writer thread,
        after the writes handed to it, while this thread builds the next rows."""
        names = _tables_of(done)
        creates = [c for c, t in to_build.items() if t in names]
        for c in creates:
            del to_build[c]
        if creates:
            pipeline.submit(lambda cur: [cur.execute(c) for c in creates])

    with _local_setting("maintenance_work_mem", maintenance_work_mem):
        yield built_now  # on an error the transaction is rolled back, and the indexes with it
        with connection.cursor() as cur:
            for create in list(to_build):
                cur.execute(create)


def _tables_of(models_) -> set[str]:
    """The tables of ``models_`` and of their history models."""
    return {m._meta.db_table for m in models_} | {
        h._meta.db_table for h in map(_history_model, models_) if h is not None
    }


def _triggers_skipped() -> bool:
    with connection.cursor() as cur:
        cur.execute("SELECT current_setting('session_replication_role') = 'replica'")
        return bool(cur.fetchone()[0])


def _may_skip_triggers() -> bool:
    granted = "has_parameter_privilege('session_replication_role', 'SET')"  # PostgreSQL 15+
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT rolsuper OR {granted if connection.pg_version >= 150000 else 'false'} "  # noqa: S608 - constant text
            "FROM pg_roles WHERE rolname = current_user"
        )
        row = cur.fetchone()
    return bool(row and row[0])


@contextlib.contextmanager
def _local_setting(name: str, value: str):
    """PostgreSQL: ``name`` set to ``value`` inside, for this transaction only; restored on leaving."""
    with connection.cursor() as cur:
        cur.execute("SELECT current_setting(%s), set_config(%s, %s, true)", [name, name, value])
        before = cur.fetchone()[0]
    yield
    with connection.cursor() as cur:
        cur.execute("SELECT set_config(%s, %s, true)", [name, before])


def _check_foreign_keys(models_) -> None:
    """One anti-join per foreign key; with room to hash the parent's keys in memory (at the
    default 4 MB the larger ones spill to disk in batches)."""
    qn = connection.ops.quote_name
    with _local_setting("work_mem", "64MB"), connection.cursor() as cur:
        for model in models_:
            table = qn(model._meta.db_table)
            for f in model._meta.concrete_fields:
                if not f.is_relation or not f.db_constraint:
                    continue
                target = f.target_field
                parent = qn(target.model._meta.db_table)
                col, ref = qn(f.column), qn(target.column)
                cur.execute(
                    f"SELECT c.{col} FROM {table} c WHERE c.{col} IS NOT NULL "  # noqa: S608 - identifiers from model _meta, quoted
                    f"AND NOT EXISTS (SELECT 1 FROM {parent} p WHERE p.{ref} = c.{col}) LIMIT 1"
                )
                orphan = cur.fetchone()
                if orphan is not None:
                    raise IntegrityError(
                        f"{model._meta.db_table}.{f.column} = {orphan[0]} names no {target.model.__name__}"
                    )


def _by_attname(model, attname: str) -> models.Field:
    for f in model._meta.concrete_fields:
        if f.attname == attname:
            return f
    raise ValueError(f"{model.__name__} has no column {attname!r}")


def bulk_insert(
    model,
    objs: list[models.Model],
    *,
    actor=None,
    reason: str = "bulk import",
    now: datetime | None = None,
    history: bool = True,
) -> list[models.Model]:
    """Insert unsaved instances (and their history rows); sets their primary keys."""
    if not objs:
        return objs
    now = now or timezone.now()
    pk_name = model._meta.pk.attname
    attnames = [
        f.attname
        for f in model._meta.concrete_fields
        if f.attname != pk_name and not (getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False))
    ]
    rows = [[getattr(o, a) for a in attnames] for o in objs]
    ids = bulk_insert_rows(model, attnames, rows, actor=actor, reason=reason, now=now, history=history)
    for o, pk in zip(objs, ids, strict=True):
        o.pk = pk
        o._state.adding = False
        o._state.db = "default"
    return objs
