"""Housekeeping that keeps retries safe: idempotency keys and the task outbox."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from celery import current_app
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from inventory.conf import app_settings
from inventory.models import IdempotencyRecord, OutboxMessage


def idempotency_purge(*, now: datetime | None = None) -> int:
    """Forget idempotency keys older than ``CABLETRACK_IDEMPOTENCY_TTL_HOURS``; returns how many."""
    now = now or timezone.now()
    cutoff = now - timedelta(hours=app_settings.idempotency_ttl_hours)
    deleted, _ = IdempotencyRecord.objects.filter(created_at__lt=cutoff).delete()
    return deleted


def outbox_flush(*, now: datetime | None = None, limit: int = 500) -> int:
    """Publish the task messages the broker refused earlier; returns how many went out.

    Identical messages (same task, arguments and options: a rollup asked for by every ingest
    during an outage) are sent once, and every row of them is marked sent: the tasks are
    idempotent, so one run does what the many would. Rows are claimed under a row lock
    (``skip_locked``) so two flushers never send one twice; rows whose publish fails again stay
    for the next run. The narrow window (published, then the mark fails) costs a harmless
    second run.
    """
    now = now or timezone.now()
    pending = OutboxMessage.objects.filter(sent_at__isnull=True).order_by("created_at", "pk")
    groups: dict[str, list[int]] = {}
    for pk, name, args, kwargs, options in pending.values_list(
        "pk", "task_name", "args", "kwargs", "options"
    )[:limit]:
        groups.setdefault(json.dumps([name, args, kwargs, options], sort_keys=True), []).append(pk)
    sent = 0
    for ids in groups.values():
        with transaction.atomic():
            rows = list(
                OutboxMessage.objects.filter(pk__in=ids, sent_at__isnull=True)
                .select_for_update(skip_locked=True)
                .order_by("pk")
            )
            if not rows:
                continue
            msg = rows[0]
            task = current_app.tasks.get(msg.task_name)
            try:
                if task is None:
                    raise LookupError(f"unknown task {msg.task_name}")
                task.apply_async(args=msg.args, kwargs=msg.kwargs, _outbox=False, **msg.options)
            except Exception as exc:  # noqa: BLE001 - the broker may still be down: keep the rows
                OutboxMessage.objects.filter(pk__in=[r.pk for r in rows]).update(
                    attempts=F("attempts") + 1, error=str(exc)[:2000]
                )
                continue
            OutboxMessage.objects.filter(pk__in=[r.pk for r in rows]).update(
                sent_at=now, attempts=F("attempts") + 1
            )
            sent += 1
    return sent
