"""Celery tasks: thin, idempotent wrappers (ids in, service call, nothing else)."""

from celery import shared_task

from .services import links as link_services


@shared_task(name="inventory.links_refresh", acks_late=True)
def links_refresh_task(port_ids: list[int]) -> int:
    """Re-trace the channels through these ports (safe to run any number of times)."""
    return len(link_services.links_refresh_for_ports(port_ids=port_ids))


# --- Retests and reminders ------------------------------------------------------------------
# ``now`` travels as an ISO string so that tests can move time in a worker process too.


def _now(now: str | None):
    from datetime import datetime

    from django.utils import timezone

    return datetime.fromisoformat(now) if now else timezone.now()


def _enqueue_sends(digest_ids: list[int], now: str | None) -> None:
    for pk in digest_ids:
        reminder_digest_send_task.delay_on_commit(pk, now)


@shared_task(name="inventory.retests_sweep", acks_late=True)
def retests_sweep_task(now: str | None = None, full: bool = False) -> dict:
    """Daily (beat: incremental) and on demand (``full``): recompute due dates, claim reminders,
    enqueue the digests."""
    from .services import reminders

    result = reminders.retests_sweep(now=_now(now), full=full)
    _enqueue_sends(result.digests_ready, now)
    return {"cables_changed": result.cables_changed, "reminders_claimed": result.reminders_claimed}


@shared_task(name="inventory.reminder_digest_send", bind=True, acks_late=True, max_retries=None)
def reminder_digest_send_task(self, digest_id: int, now: str | None = None) -> str:
    """Send one digest (the database lease makes a duplicate delivery of this task harmless)."""
    from datetime import timedelta

    from .services import reminders

    try:
        return reminders.reminder_digest_send(digest_id=digest_id, now=_now(now))
    except reminders.TransientSendError as exc:
        later = (_now(now) + timedelta(seconds=exc.retry_in)).isoformat() if now else None
        raise self.retry(args=[digest_id, later], countdown=exc.retry_in) from exc


@shared_task(name="inventory.reminders_dispatch", acks_late=True)
def reminders_dispatch_task(now: str | None = None) -> int:
    """Every few minutes (beat): re-enqueue unfinished work found in the database."""
    from .services import reminders

    result = reminders.reminders_dispatch(now=_now(now))
    for pk in result.digests:
        reminder_digest_send_task.delay(pk, now)
    if result.resweep:
        retests_sweep_task.delay(now)
    return len(result.digests)
