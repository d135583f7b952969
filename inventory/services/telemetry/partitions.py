"""Raw telemetry in daily partitions on PostgreSQL: created ahead, on demand, and dropped whole.

The three raw tables (``TelemetrySample``, ``TelemetryLaneSample``, ``TelemetryHistogram``)
are partitioned by range of ``ts``, one partition per UTC day named ``<table>_pYYYYMMDD``,
plus ``<table>_pdefault`` for rows no day partition holds (a time no collector sends, a row
written by hand or before its day existed). Migration ``0015_telemetry_partitions`` converts
the tables; SQLite keeps plain tables and the DELETE retention.

* Ahead: the beat task ``inventory.telemetry_partitions`` creates today's and the next
  ``AHEAD_DAYS`` days' partitions, so the ingest normally finds its day there.
* On demand: the ingest calls ``ensure_days`` with the batch's days; days this process has
  seen cost nothing, a new one is created under a transaction-scoped advisory lock (two workers
  never race on the DDL). A day's rows already in the default partition move into the new
  partition before it is attached, so nothing is lost and nothing is refused.
* Retention: ``drop_before`` drops every day partition whose whole day is older than the
  cutoff (a catalogue change, independent of the rows it held) and deletes the default
  partition's rows older than the cutoff. Retention is day-granular: a partition goes when its
  last second passes the cutoff.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

from django.db import connection, transaction

from inventory.models import TelemetryHistogram, TelemetryLaneSample, TelemetrySample

AHEAD_DAYS = 3
TABLES = tuple(m._meta.db_table for m in (TelemetrySample, TelemetryLaneSample, TelemetryHistogram))
# the advisory lock (any constant, namespaced by the first key) under which partitions change
_LOCK = (0x7E1E, 0x0D47)
_DAY = re.compile(r"_p(\d{8})$")

_known_days: set[date] = set()  # days whose partitions exist (per process; a cache of hits only)


_partitioned: dict[str, bool] = {}  # database alias -> partitioned? (asked once per process)


def enabled() -> bool:
    """Partitioned here? (PostgreSQL, after migration 0015.)"""
    if connection.vendor != "postgresql":
        return False
    known = _partitioned.get(connection.alias)
    if known is None:
        with connection.cursor() as cur:
            cur.execute("SELECT relkind = 'p' FROM pg_class WHERE oid = to_regclass(%s)", [TABLES[0]])
            row = cur.fetchone()
        known = bool(row and row[0])
        if known:  # a database not migrated yet may be soon: only the final answer is kept
            _partitioned[connection.alias] = known
    return known


FIRST_DAY, LAST_DAY = date(2000, 1, 1), date(2099, 12, 31)  # beyond: the default partition


def batch_days(ts: list[datetime]) -> set[date]:
    """The UTC days of a batch's sample times (most batches: one), within the partitioned range."""
    lo, hi = min(ts).astimezone(UTC).date(), max(ts).astimezone(UTC).date()
    days = {lo} if lo == hi else {t.astimezone(UTC).date() for t in ts}
    return {d for d in days if FIRST_DAY <= d <= LAST_DAY}


def _name(table: str, day: date) -> str:
    return f"{table}_p{day:%Y%m%d}"


def _bounds(day: date) -> tuple[datetime, datetime]:
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    return start, start + timedelta(days=1)


def existing_days(table: str = TABLES[0]) -> set[date]:
    """The days that have a partition of ``table``."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "WHERE i.inhparent = to_regclass(%s)",
            [table],
        )
        names = [r[0] for r in cur.fetchall()]
    return {datetime.strptime(m.group(1), "%Y%m%d").date() for n in names if (m := _DAY.search(n))}  # noqa: DTZ007 - a calendar day, no time


def _create(table: str, day: date) -> None:
    """One day's partition: created apart, the day's rows moved in from the default partition,
    then attached (``ATTACH`` locks the parent less than ``CREATE ... PARTITION OF``)."""
    qn = connection.ops.quote_name
    part, default = qn(_name(table, day)), qn(f"{table}_pdefault")
    start, end = _bounds(day)
    with connection.cursor() as cur:
        cur.execute(f"CREATE TABLE {part} (LIKE {qn(table)} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)")
        # the partition's own bound as a constraint: ATTACH then skips scanning it
        cur.execute(
            f"ALTER TABLE {part} ADD CONSTRAINT {qn(_name(table, day) + '_bound')} "
            "CHECK (ts IS NOT NULL AND ts >= %s AND ts < %s)",
            [start, end],
        )
        cur.execute(
            f"WITH moved AS (DELETE FROM {default} WHERE ts >= %s AND ts < %s RETURNING *) "  # noqa: S608 - partition names built from model _meta and a date, quoted; values are parameters
            f"INSERT INTO {part} SELECT * FROM moved",
            [start, end],
        )
        cur.execute(
            f"ALTER TABLE {qn(table)} ATTACH PARTITION {part} FOR VALUES FROM (%s) TO (%s)", [start, end]
        )
        cur.execute(f"ALTER TABLE {part} DROP CONSTRAINT {qn(_name(table, day) + '_bound')}")


def ensure_days(days: set[date]) -> list[date]:
    """Make sure every day in ``days`` has its partitions; returns the days created.

    Run inside the caller's transaction (the ingest's): the advisory lock is held until it
    ends, so a concurrent ingest of the same new day waits and then finds it made."""
    missing = days - _known_days
    if not missing:
        return []
    with connection.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(%s, %s)", list(_LOCK))
    made = []
    have = {t: existing_days(t) for t in TABLES}
    for day in sorted(missing):
        for table in TABLES:
            if day not in have[table]:
                _create(table, day)
                if table == TABLES[0]:
                    made.append(day)
    # remembered only once the caller commits: a rollback takes the partitions with it
    transaction.on_commit(lambda: _known_days.update(missing))
    return made


def ensure_ahead(*, now: datetime, ahead: int = AHEAD_DAYS) -> list[date]:
    """Today's partitions and the next ``ahead`` days' (the beat task)."""
    today = now.astimezone(UTC).date()
    return ensure_days({today + timedelta(days=k) for k in range(ahead + 1)})


def drop_before(cutoff: datetime) -> tuple[int, int]:
    """Drop the day partitions wholly older than ``cutoff``; delete older rows of the default
    partitions. Returns (days dropped, default-partition rows deleted)."""
    qn = connection.ops.quote_name
    dropped: set[date] = set()
    deleted = 0
    with connection.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(%s, %s)", list(_LOCK))
        for table in TABLES:
            for day in sorted(existing_days(table)):
                if _bounds(day)[1] <= cutoff:
                    cur.execute(f"DROP TABLE {qn(_name(table, day))}")
                    dropped.add(day)
            cur.execute(f"DELETE FROM {qn(table + '_pdefault')} WHERE ts < %s", [cutoff])  # noqa: S608 - partition name from model _meta, quoted; values are parameters
            if table == TABLES[0]:
                deleted = cur.rowcount
    _known_days.difference_update(dropped)
    return len(dropped), deleted
