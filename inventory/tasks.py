"""Celery tasks: thin, idempotent wrappers (ids in, service call, nothing else)."""

from datetime import datetime, timedelta

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from inventory.conf import app_settings
from inventory.selectors.telemetry.alert_shards import alert_shards
from inventory.services import alerts as alert_services
from inventory.services import collectives as collective_services
from inventory.services.forecast import snapshot as forecast_services
from inventory.services.interop.netbox import netbox_sync
from inventory.services.labels import printing as label_services
from inventory.services.ops import reliability
from inventory.services.plant import fieldwork
from inventory.services.plant import links as link_services
from inventory.services.retests import reminders
from inventory.services.telemetry import partitions as telemetry_partitions
from inventory.services.telemetry import rollup_queue
from inventory.services.telemetry.ingest import ROLLUP_PENDING_KEY
from inventory.services.telemetry.prometheus_pull import telemetry_pull_prometheus
from inventory.services.telemetry.rollup import telemetry_retention_enforce, telemetry_rollup
from inventory.services.testing import import_uploads


@shared_task(name="inventory.links_refresh", acks_late=True)
def links_refresh_task(port_ids: list[int]) -> int:
    """Re-trace the channels through these ports (safe to run any number of times)."""
    return len(link_services.links_refresh_for_ports(port_ids=port_ids))


@shared_task(name="inventory.telemetry_rollup", acks_late=True)
def telemetry_rollup_task() -> int:
    """Start one rollup task per shard (the ingest's debounced kick, and beat every minute)."""
    cache.delete(ROLLUP_PENDING_KEY)
    shards = rollup_queue.shards()
    for shard in range(shards):
        telemetry_rollup_shard_task.delay(shard)
    return shards


@shared_task(name="inventory.telemetry_rollup_shard", acks_late=True)
def telemetry_rollup_shard_task(shard: int) -> int:
    """Roll up one shard's queued telemetry batches; re-enqueues itself until that queue is
    empty. A second task for a shard already being rolled up returns at once (the first one
    goes on until the queue is empty). A run stopped by its soft time limit (rolled back, the
    queue untouched) asks for the next one at once rather than waiting for the beat."""
    try:
        outcome = telemetry_rollup(now=timezone.now(), shard=shard)
    except SoftTimeLimitExceeded:
        telemetry_rollup_shard_task.delay(shard)
        raise
    if outcome.remaining:
        telemetry_rollup_shard_task.delay(shard)
    return outcome.buckets


@shared_task(name="inventory.telemetry_retention", acks_late=True)
def telemetry_retention_task() -> int:
    """Drop raw samples (whole days on PostgreSQL) and delete rollups past their retention."""
    return telemetry_retention_enforce(now=timezone.now()).samples


@shared_task(name="inventory.telemetry_partitions", acks_late=True)
def telemetry_partitions_task() -> int:
    """Create the raw telemetry's day partitions ahead of time (PostgreSQL; idempotent)."""
    if not telemetry_partitions.enabled():
        return 0
    with transaction.atomic():
        return len(telemetry_partitions.ensure_ahead(now=timezone.now()))


@shared_task(name="inventory.alerts_evaluate", acks_late=True)
def alerts_evaluate_task() -> dict:
    """Evaluate every alert rule over the telemetry window ending now (idempotent): in this task,
    or, with ``CABLETRACK_ALERT_SHARDS`` above 1, as one task per shard on any workers."""
    shards = alert_shards()
    if shards > 1:
        for shard in range(shards):
            alerts_evaluate_shard_task.delay(shard, shards)
        return {"shards": shards}
    report = alert_services.alerts_evaluate(now=timezone.now())
    return {"ports": report.ports, "findings": report.findings, "opened": len(report.opened)}


@shared_task(name="inventory.alerts_evaluate_shard", acks_late=True)
def alerts_evaluate_shard_task(shard: int, shards: int | None = None) -> dict:
    """Evaluate the alert rules over shard ``shard`` of ``shards`` (the count it was sent with,
    so one round's shards always partition the ports, even while workers are redeployed with
    another count), over the window ending when it runs. A task for a shard already being
    evaluated returns at once; a run stopped by its soft time limit asks for the next one at
    once rather than at the next beat (what it had not committed rolls back; a run over the same
    window again changes nothing)."""
    try:
        report = alert_services.alerts_evaluate_shard(now=timezone.now(), shard=shard, shards=shards)
    except SoftTimeLimitExceeded:
        alerts_evaluate_shard_task.delay(shard, shards)
        raise
    if report is None:
        return {"shard": shard, "busy": True}
    return {"shard": shard, "ports": report.ports, "findings": report.findings, "opened": len(report.opened)}


@shared_task(name="inventory.repairs_judge", acks_late=True)
def repairs_judge_task() -> dict:
    """Judge the pending repairs by the telemetry that followed them (idempotent)."""
    report = alert_services.repairs_judge(now=timezone.now())
    return {"pending": report.pending, "fixed": report.fixed, "came_back": report.came_back}


@shared_task(name="inventory.collectives_evaluate", acks_late=True)
def collectives_evaluate_task() -> dict:
    """Judge the communicators that reported lately for ``tail_latency_spike`` (idempotent)."""
    report = collective_services.collectives_evaluate(now=timezone.now())
    return {
        "communicators": report.communicators,
        "firing": len(report.firing),
        "opened": len(report.alerts.opened),
    }


@shared_task(name="inventory.alert_notifications_send", acks_late=True)
def alert_notifications_send_task() -> int:
    """Send claimed-once alert mails that are still unsent (also the periodic sweep), after
    adding the notices of drains whose window ended without a restore (once per window end)."""
    now = timezone.now()
    collective_services.drains_overdue_notify(now=now)
    return alert_services.alert_notifications_send(now=now)


@shared_task(name="inventory.fault_notices_send", acks_late=True)
def fault_notices_send_task() -> int:
    """Send the fault notices the mail server did not take when the fault was reported (the
    periodic sweep; each is claimed before it goes out)."""
    return fieldwork.fault_notices_send(now=timezone.now())


@shared_task(name="inventory.outbox_flush", acks_late=True)
def outbox_flush_task() -> int:
    """Send the task messages the broker refused during an outage (idempotent, row-locked)."""
    return reliability.outbox_flush()


@shared_task(name="inventory.idempotency_purge", acks_late=True)
def idempotency_purge_task() -> int:
    """Forget idempotency keys past their TTL."""
    return reliability.idempotency_purge()


@shared_task(name="inventory.import_uploads_purge", acks_late=True)
def import_uploads_purge_task() -> int:
    """Delete tester exports a test-import preview kept and nobody applied."""
    return import_uploads.import_uploads_purge()


@shared_task(name="inventory.netbox_sync", acks_late=True)
def netbox_sync_task() -> int:
    """Keep devices, racks, ports and cables current from NetBox or Nautobot (idempotent; conflicts recorded)."""
    if not (app_settings.netbox_url and app_settings.netbox_token and app_settings.netbox_sites):
        return 0
    runs = netbox_sync(
        url=app_settings.netbox_url,
        token=app_settings.netbox_token,
        sites=app_settings.netbox_sites,
        flavor=app_settings.netbox_flavor,
    )
    return len(runs)


@shared_task(name="inventory.prometheus_pull", acks_late=True)
def prometheus_pull_task() -> dict:
    """Ingest the last window of FEC/DOM/PFC series from Prometheus (idempotent).

    Prometheus being down or refusing the query is reported (the result, a ``SyncRun`` row,
    the log), not raised: the next run tries again.
    """
    if not app_settings.prometheus_url:
        return {"skipped": "CABLETRACK_PROMETHEUS_URL is not set"}
    return telemetry_pull_prometheus(now=timezone.now()).as_dict()


@shared_task(name="inventory.label_batch_render", acks_late=True)
def label_batch_render_task(batch_id: int) -> int:
    """Render a label batch to its file (a finished batch is left alone)."""
    batch = label_services.label_batch_run(batch_id=batch_id, now=timezone.now())
    return batch.done if batch else 0


@shared_task(name="inventory.label_batches_requeue", acks_late=True)
def label_batches_requeue_task() -> int:
    """Periodic: re-enqueue label batches whose message or worker was lost."""
    return len(label_services.label_batches_requeue(now=timezone.now()))


# --- Retests and reminders ------------------------------------------------------------------
# ``now`` travels as an ISO string so that tests can move time in a worker process too.


def _now(now: str | None):
    return datetime.fromisoformat(now) if now else timezone.now()


def _enqueue_sends(digest_ids: list[int], now: str | None) -> None:
    for pk in digest_ids:  # after commit (OutboxTask has no delay_on_commit)
        transaction.on_commit(lambda pk=pk: reminder_digest_send_task.delay(pk, now))


@shared_task(name="inventory.retests_sweep", acks_late=True)
def retests_sweep_task(now: str | None = None, full: bool = False) -> dict:
    """Daily (beat: incremental) and on demand (``full``): recompute due dates, claim reminders,
    enqueue the digests."""
    result = reminders.retests_sweep(now=_now(now), full=full)
    _enqueue_sends(result.digests_ready, now)
    return {"cables_changed": result.cables_changed, "reminders_claimed": result.reminders_claimed}


@shared_task(name="inventory.reminder_digest_send", bind=True, acks_late=True, max_retries=None)
def reminder_digest_send_task(self, digest_id: int, now: str | None = None) -> str:
    """Send one digest (the database lease makes a duplicate delivery of this task harmless)."""
    try:
        return reminders.reminder_digest_send(digest_id=digest_id, now=_now(now))
    except reminders.TransientSendError as exc:
        later = (_now(now) + timedelta(seconds=exc.retry_in)).isoformat() if now else None
        raise self.retry(args=[digest_id, later], countdown=exc.retry_in) from exc


@shared_task(name="inventory.reminders_dispatch", acks_late=True)
def reminders_dispatch_task(now: str | None = None) -> int:
    """Every few minutes (beat): re-enqueue unfinished work found in the database."""
    result = reminders.reminders_dispatch(now=_now(now))
    for pk in result.digests:
        reminder_digest_send_task.delay(pk, now)
    if result.resweep:
        retests_sweep_task.delay(now)
    return len(result.digests)


@shared_task(name="inventory.forecast_snapshot", acks_late=True)
def forecast_snapshot_task() -> str:
    """Store today's forecast snapshot (one per day; a rerun replaces it, never duplicates)."""
    return str(forecast_services.forecast_snapshot_store(now=timezone.now()).day)
