"""Housekeeping that keeps retries safe: idempotency keys and the task outbox."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ..models import IdempotencyRecord, OutboxMessage


def idempotency_purge(*, now: datetime | None = None) -> int:
    """Forget idempotency keys older than ``CABLETRACK_IDEMPOTENCY_TTL_HOURS``; returns how many."""
    now = now or timezone.now()
    cutoff = now - timedelta(hours=settings.CABLETRACK_IDEMPOTENCY_TTL_HOURS)
    deleted, _ = IdempotencyRecord.objects.filter(created_at__lt=cutoff).delete()
    return deleted


def outbox_flush(*, now: datetime | None = None, limit: int = 500) -> int:
    """Publish the task messages the broker refused earlier; returns how many went out.

    Each row is claimed under a row lock (``skip_locked``) so two flushers never send one twice;
    a row whose publish fails again stays for the next run. The tasks themselves are idempotent,
    so the narrow window (published, then the mark fails) costs a harmless second run.
    """
    from celery import current_app

    now = now or timezone.now()
    sent = 0
    ids = list(OutboxMessage.objects.filter(sent_at__isnull=True).values_list("pk", flat=True)[:limit])
    for pk in ids:
        with transaction.atomic():
            qs = OutboxMessage.objects.filter(pk=pk, sent_at__isnull=True)
            msg = qs.select_for_update(skip_locked=True).first()
            if msg is None:
                continue
            task = current_app.tasks.get(msg.task_name)
            try:
                if task is None:
                    raise LookupError(f"unknown task {msg.task_name}")
                task.apply_async(args=msg.args, kwargs=msg.kwargs, _outbox=False, **msg.options)
            except Exception as exc:  # noqa: BLE001 - the broker may still be down: keep the row
                msg.attempts += 1
                msg.error = str(exc)[:2000]
                msg.save(update_fields=["attempts", "error"])
                continue
            msg.sent_at = now
            msg.attempts += 1
            msg.save(update_fields=["sent_at", "attempts"])
            sent += 1
    return sent
