"""Celery tasks: thin, idempotent wrappers (ids in, service call, nothing else)."""

from celery import shared_task
from django.utils import timezone

from .services import forecast as forecast_services
from .services import links as link_services


@shared_task(name="inventory.links_refresh", acks_late=True)
def links_refresh_task(port_ids: list[int]) -> int:
    """Re-trace the channels through these ports (safe to run any number of times)."""
    return len(link_services.links_refresh_for_ports(port_ids=port_ids))


@shared_task(name="inventory.netbox_sync", acks_late=True)
def netbox_sync_task() -> int:
    """Keep devices, racks, ports and cables current from NetBox (idempotent; conflicts recorded)."""
    from django.conf import settings

    from .services.netbox_import import netbox_sync

    if not (
        settings.CABLETRACK_NETBOX_URL
        and settings.CABLETRACK_NETBOX_TOKEN
        and settings.CABLETRACK_NETBOX_SITES
    ):
        return 0
    runs = netbox_sync(
        url=settings.CABLETRACK_NETBOX_URL,
        token=settings.CABLETRACK_NETBOX_TOKEN,
        sites=settings.CABLETRACK_NETBOX_SITES,
    )
    return len(runs)


@shared_task(name="inventory.label_batch_render", acks_late=True)
def label_batch_render_task(batch_id: int) -> int:
    """Render a label batch to its file (a finished batch is left alone)."""
    from django.utils import timezone

    from .services import labels as label_services

    batch = label_services.label_batch_run(batch_id=batch_id, now=timezone.now())
    return batch.done if batch else 0


@shared_task(name="inventory.label_batches_requeue", acks_late=True)
def label_batches_requeue_task() -> int:
    """Periodic: re-enqueue label batches whose message or worker was lost."""
    from django.utils import timezone

    from .services import labels as label_services

    return len(label_services.label_batches_requeue(now=timezone.now()))


@shared_task(name="inventory.forecast_snapshot", acks_late=True)
def forecast_snapshot_task() -> str:
    """Store today's forecast snapshot (one per day; a rerun replaces it, never duplicates)."""
    return str(forecast_services.forecast_snapshot_store(now=timezone.now()).day)
