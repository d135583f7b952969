"""Celery tasks: thin, idempotent wrappers (ids in, service call, nothing else)."""

from celery import shared_task

from .services import links as link_services


@shared_task(name="inventory.links_refresh", acks_late=True)
def links_refresh_task(port_ids: list[int]) -> int:
    """Re-trace the channels through these ports (safe to run any number of times)."""
    return len(link_services.links_refresh_for_ports(port_ids=port_ids))


@shared_task(name="inventory.outbox_flush", acks_late=True)
def outbox_flush_task() -> int:
    """Send the task messages the broker refused during an outage (idempotent, row-locked)."""
    from .services import reliability

    return reliability.outbox_flush()


@shared_task(name="inventory.idempotency_purge", acks_late=True)
def idempotency_purge_task() -> int:
    """Forget idempotency keys past their TTL."""
    from .services import reliability

    return reliability.idempotency_purge()


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
