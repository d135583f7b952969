"""The rollup queue's poison handling: what is due, how a failing chunk is narrowed down to its
ports, and how those ports are set aside with their reason and retried with backoff.

A port is set aside as a queue row of its own (``TelemetryIngestBatch`` with ``attempts`` > 0,
``last_error`` and ``next_attempt_at``): the rollup skips it until its retry time, then tries
it again; each failure doubles the wait (``CABLETRACK_TELEMETRY_ROLLUP_RETRY_SECONDS``, at most
``CABLETRACK_TELEMETRY_ROLLUP_RETRY_MAX_SECONDS``). A row whose retry succeeds is deleted like
any other batch. Set-aside rows are listed by ``GET /api/telemetry/pipeline/``, the page
``/telemetry/pipeline/`` and counted in ``/metrics``.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta

import numpy as np
from celery.exceptions import SoftTimeLimitExceeded
from django.db import InterfaceError, OperationalError, connection, transaction
from django.db.models import Q, QuerySet

from inventory.conf import app_settings
from inventory.models import TelemetryIngestBatch

log = logging.getLogger(__name__)

# Ports tried one by one per run at most: when everything fails (a database rule, a bug), the
# search stops splitting and sets the rest aside in groups instead of retrying each port.
MAX_SINGLE_TRIES = 64
MAX_ERROR_CHARS = 500

# Failures of the run, not of a port: the task's soft time limit, the connection or the server
# gone, a lock or statement timeout, a deadlock. They end the run (its transaction rolls back,
# the queue keeps its rows for the next one) instead of setting ports aside as poison: a run
# blocked on a lock past its time limit once set its healthy ports aside, then failed on its
# broken transaction.
NOT_POISON = (SoftTimeLimitExceeded, OperationalError, InterfaceError)


# The advisory-lock namespace of the rollup shards (the second key is the shard): any constant
# no other lock of the application uses (``partitions._LOCK`` is another).
_SHARD_LOCK = 0x6374_726C  # "ctrl"


def shards() -> int:
    return app_settings.telemetry_rollup_shards


def split_by_shard(port_ids: Iterable[int]) -> dict[int, list[int]]:
    """The distinct port ids, sorted, by the shard each belongs to (port id modulo the count)."""
    ports = np.unique(np.fromiter(port_ids, dtype=np.int64))
    if not len(ports):
        return {}
    shard = ports % shards()
    return {int(k): ports[shard == k].tolist() for k in np.unique(shard)}


def lock_shards(which: int | None) -> bool:
    """Hold the lock of one shard (``which``) or of all of them (``None``) for the transaction.

    One shard is taken only if free (``False``: another run is rolling it up and will go on
    until its queue is empty, so this one has nothing to do); all shards are waited for, in
    order. On SQLite, which serialises writers itself, there is nothing to hold."""
    if connection.vendor != "postgresql":
        return True
    with connection.cursor() as cur:
        if which is not None:
            cur.execute("SELECT pg_try_advisory_xact_lock(%s, %s)", [_SHARD_LOCK, which])
            return bool(cur.fetchone()[0])
        for k in range(shards()):
            cur.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_SHARD_LOCK, k])
    return True


def requeue_foreign(dirty_from: dict[int, datetime], *, shard: int, now: datetime) -> int:
    """Ports of another shard in rows a shard's run took leave ``dirty_from`` and are queued
    again, fresh, in rows of their own shards. Such rows were queued before the queue had
    shards, or under another shard count: rolling their ports up here could run beside their
    own shard's run. (A set-aside port among them starts its tries afresh.) Returns how many
    ports moved."""
    n = shards()
    foreign = [p for p in dirty_from if p % n != shard]
    if not foreign:
        return 0
    groups: dict[int, list[int]] = defaultdict(list)
    for p in foreign:
        groups[p % n].append(p)
    _queue_again(groups, dirty_from=dirty_from, now=now, fields=lambda k: {"shard": k})
    for p in foreign:
        del dirty_from[p]
    return len(foreign)


def rollup_horizon(now: datetime) -> datetime:
    """No rollup is recomputed from before this: raw samples older than the raw retention are
    gone (or going), so the buckets built from them are the only record left."""
    return now - timedelta(days=app_settings.telemetry_raw_retention_days)


def due_batches(now: datetime, shard: int | None = None) -> QuerySet[TelemetryIngestBatch]:
    """Queue rows the rollup takes now: fresh ones, and set-aside ones whose retry time came;
    of one shard, or of all. Rows queued under a larger shard count than today's are taken by
    shard ``row.shard % count`` (``shard_filter``)."""
    qs = TelemetryIngestBatch.objects.filter(Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now))
    return qs if shard is None else qs.filter(shard_filter(shard))


def shard_filter(shard: int) -> Q:
    n = shards()
    return Q(shard__in=range(shard, 64, n))


def isolating(ports: list[int], run: Callable[[list[int]], int], failed: dict[int, str]) -> int:
    """``run(ports)`` in a savepoint; when it raises, the halves are tried apart, down to single
    ports, whose errors land in ``failed`` (port -> reason). Returns what the successful runs
    returned (buckets written)."""
    budget = [MAX_SINGLE_TRIES]

    def attempt(part: list[int]) -> int:
        if len(part) == 1:
            budget[0] -= 1
        try:
            with transaction.atomic():
                return run(part)
        except NOT_POISON:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure of one part must not stop the others
            reason = f"{type(exc).__name__}: {exc}"[:MAX_ERROR_CHARS]
            if len(part) == 1 or budget[0] <= 0:
                log.warning("telemetry rollup set aside %d port(s) %s: %s", len(part), part[:10], reason)
                failed.update(dict.fromkeys(part, reason))
                return 0
            mid = len(part) // 2
            return attempt(part[:mid]) + attempt(part[mid:])

    return attempt(ports)


def hold_back(dirty_from: dict[int, datetime], *, now: datetime, shard: int | None = None) -> int:
    """Ports set aside and not due again yet wait for their retry even when new batches name
    them (else a poisoned port that keeps reporting would be retried, and fail, every run):
    they leave ``dirty_from`` and their set-aside row is widened to the new data's start.
    Returns how many ports were held back."""
    held = 0
    rows = TelemetryIngestBatch.objects.filter(attempts__gt=0, next_attempt_at__gt=now)
    if shard is not None:
        rows = rows.filter(shard_filter(shard))
    rows = rows.values_list("id", "port_ids", "min_ts")
    for pk, port_ids, min_ts in rows:
        since = [dirty_from.pop(p) for p in port_ids if p in dirty_from]
        if not since:
            continue
        held += len(since)
        if min(since) < min_ts:
            TelemetryIngestBatch.objects.filter(pk=pk).update(min_ts=min(since))
    return held


def retry_delay(attempts: int) -> timedelta:
    """The wait before try ``attempts + 1``: the base, doubled per failure, capped."""
    base = app_settings.telemetry_rollup_retry_seconds
    cap = app_settings.telemetry_rollup_retry_max_seconds
    return timedelta(seconds=min(cap, base * 2 ** min(attempts - 1, 30)))


def set_aside(
    failed: dict[int, str], *, dirty_from: dict[int, datetime], attempts: dict[int, int], now: datetime
) -> None:
    """Queue the failed ports again, one row per reason and shard, with their try count and
    retry time."""
    n = shards()
    by_reason: dict[tuple[str, int, int], list[int]] = defaultdict(list)
    for pid, reason in failed.items():
        by_reason[(reason, attempts.get(pid, 0) + 1, pid % n)].append(pid)
    _queue_again(
        by_reason,
        dirty_from=dirty_from,
        now=now,
        fields=lambda key: {
            "last_error": key[0],
            "attempts": key[1],
            "shard": key[2],
            "next_attempt_at": now + retry_delay(key[1]),
        },
    )


def _queue_again(groups: dict, *, dirty_from: dict[int, datetime], now: datetime, fields: Callable) -> None:
    """One queue row per group of ports, from their earliest dirty time; ``fields(key)`` gives
    the rest of a group's row."""
    TelemetryIngestBatch.objects.bulk_create(
        [
            TelemetryIngestBatch(
                received_at=now,
                min_ts=min(dirty_from[p] for p in pids),
                max_ts=now,
                port_ids=sorted(pids),
                **fields(key),
            )
            for key, pids in groups.items()
        ]
    )
