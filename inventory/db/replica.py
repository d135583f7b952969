"""Read-only web requests on a PostgreSQL streaming replica, with read-your-writes.

``DATABASE_REPLICA_URL`` adds the ``replica`` database. ``ReplicaReadsMiddleware`` decides, once
per request, where that request's reads go (``reads_from``); ``ReplicaRouter`` sends every read to
that choice and every write to the primary. Everything outside a web request (Celery tasks,
commands, the shell) and every request that may write (POST, PUT, PATCH, DELETE) reads the
primary.

Read-your-writes is exact, not a guess at the lag: after a write request the primary's WAL
position (``pg_current_wal_insert_lsn()``) goes back to the client in a cookie, and a later read request
from that client uses the replica only once the replica has replayed up to it
(``pg_last_wal_replay_lsn()``); until then it reads the primary. A replica that does not answer
sends the request to the primary too.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

from django.conf import settings
from django.db import DatabaseError, connections

REPLICA = "replica"
PRIMARY = "default"

_reads_from: ContextVar[str] = ContextVar("cabletrack_reads_from", default=PRIMARY)


def replica_configured() -> bool:
    return REPLICA in settings.DATABASES


@contextmanager
def reads_from(alias: str):
    """Send this block's reads to ``alias`` (the middleware's choice for one request)."""
    token = _reads_from.set(alias)
    try:
        yield
    finally:
        _reads_from.reset(token)


def primary_position() -> str | None:
    """The primary's WAL position past the client's writes, to hand the client that made them.

    The *insert* position: with ``synchronous_commit=off`` a commit returns before its record is
    written out, so the write position (``pg_current_wal_lsn``) can still lie before it, and a
    replica that replayed only that far would be taken for one that has the write."""
    with connections[PRIMARY].cursor() as cur:
        cur.execute("SELECT pg_current_wal_insert_lsn()::text")
        return cur.fetchone()[0]


def replica_has_replayed(position: str | None) -> bool:
    """Has the replica replayed the WAL up to ``position`` (None: no write to wait for)? False when
    it does not answer, or is no standby at all."""
    try:
        with connections[REPLICA].cursor() as cur:
            cur.execute(
                "SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn() >= %s::pg_lsn",
                [position or "0/0"],
            )
            in_recovery, caught_up = cur.fetchone()
    except DatabaseError:
        connections[REPLICA].close()
        return False
    return bool(in_recovery and caught_up)


def read_alias() -> str:
    """Where a read of this moment goes: the request's choice, the primary inside a transaction.
    Raw SQL reads take ``connections[read_alias()]`` so that they read where the ORM's do."""
    alias = _reads_from.get()
    if alias == REPLICA and not connections[PRIMARY].in_atomic_block:
        return REPLICA
    return PRIMARY


class ReplicaRouter:
    """Reads where the current request's choice says (the primary by default); writes, relations
    and migrations on the primary only."""

    def db_for_read(self, model, **hints):
        return read_alias()

    def db_for_write(self, model, **hints):
        return PRIMARY

    def allow_relation(self, obj1, obj2, **hints):
        return True

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        return db == PRIMARY
