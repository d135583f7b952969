"""Celery tasks: thin, idempotent wrappers (ids in, service call, nothing else)."""

from celery import shared_task

from .services import links as link_services


@shared_task(name="inventory.links_refresh", acks_late=True)
def links_refresh_task(port_ids: list[int]) -> int:
    """Re-trace the channels through these ports (safe to run any number of times)."""
    return len(link_services.links_refresh_for_ports(port_ids=port_ids))
