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
from collections.abc import Callable
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q, QuerySet

from inventory.conf import app_settings
from inventory.models import TelemetryIngestBatch

log = logging.getLogger(__name__)

# Ports tried one by one per run at most: when everything fails (a database rule, a bug), the
# search stops splitting and sets the rest aside in groups instead of retrying each port.
MAX_SINGLE_TRIES = 64
MAX_ERROR_CHARS = 500


def rollup_horizon(now: datetime) -> datetime:
    """No rollup is recomputed from before this: raw samples older than the raw retention are
    gone (or going), so the buckets built from them are the only record left."""
    return now - timedelta(days=app_settings.telemetry_raw_retention_days)


def due_batches(now: datetime) -> QuerySet[TelemetryIngestBatch]:
    """Queue rows the rollup takes now: fresh ones, and set-aside ones whose retry time came."""
    return TelemetryIngestBatch.objects.filter(Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now))


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
        except Exception as exc:  # noqa: BLE001 - any failure of one part must not stop the others
            reason = f"{type(exc).__name__}: {exc}"[:MAX_ERROR_CHARS]
            if len(part) == 1 or budget[0] <= 0:
                log.warning("telemetry rollup set aside %d port(s) %s: %s", len(part), part[:10], reason)
                failed.update(dict.fromkeys(part, reason))
                return 0
            mid = len(part) // 2
            return attempt(part[:mid]) + attempt(part[mid:])

    return attempt(ports)


def hold_back(dirty_from: dict[int, datetime], *, now: datetime) -> int:
    """Ports set aside and not due again yet wait for their retry even when new batches name
    them (else a poisoned port that keeps reporting would be retried, and fail, every run):
    they leave ``dirty_from`` and their set-aside row is widened to the new data's start.
    Returns how many ports were held back."""
    held = 0
    rows = TelemetryIngestBatch.objects.filter(attempts__gt=0, next_attempt_at__gt=now).values_list(
        "id", "port_ids", "min_ts"
    )
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
    """Queue the failed ports again, one row per reason, with their try count and retry time."""
    by_reason: dict[tuple[str, int], list[int]] = defaultdict(list)
    for pid, reason in failed.items():
        by_reason[(reason, attempts.get(pid, 0) + 1)].append(pid)
    TelemetryIngestBatch.objects.bulk_create(
        [
            TelemetryIngestBatch(
                received_at=now,
                min_ts=min(dirty_from[p] for p in pids),
                max_ts=now,
                port_ids=sorted(pids),
                attempts=tries,
                last_error=reason,
                next_attempt_at=now + retry_delay(tries),
            )
            for (reason, tries), pids in by_reason.items()
        ]
    )
