"""Celery tasks: thin, idempotent wrappers (ids in, service call, nothing else)."""

from celery import shared_task

from .services import links as link_services


@shared_task(name="inventory.links_refresh", acks_late=True)
def links_refresh_task(port_ids: list[int]) -> int:
    """Re-trace the channels through these ports (safe to run any number of times)."""
    return len(link_services.links_refresh_for_ports(port_ids=port_ids))


@shared_task(name="inventory.alerts_evaluate", acks_late=True)
def alerts_evaluate_task() -> dict:
    """Evaluate every alert rule over the telemetry window ending now (idempotent)."""
    from django.utils import timezone

    from .services import alerts as alert_services

    report = alert_services.alerts_evaluate(now=timezone.now())
    return {"ports": report.ports, "findings": report.findings, "opened": len(report.opened)}


@shared_task(name="inventory.alert_notifications_send", acks_late=True)
def alert_notifications_send_task() -> int:
    """Send claimed-once alert mails that are still unsent (also the periodic sweep)."""
    from django.utils import timezone

    from .services import alerts as alert_services

    return alert_services.alert_notifications_send(now=timezone.now())


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
