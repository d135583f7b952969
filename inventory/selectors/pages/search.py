"""The search page: partial matches on labels, serials, devices and ports, and the one page a
single hit means."""

from __future__ import annotations

from django.db.models import Q
from django.urls import reverse

from inventory.models import Cable, CableEnd, Device, Port, Rack, Transceiver


def _split_device_port(q: str) -> tuple[str, str] | None:
    for sep in (":", " "):
        if sep in q:
            dev, _, port = q.partition(sep)
            if dev.strip() and port.strip():
                return dev.strip(), port.strip()
    return None


def search(q: str, limit: int = 20) -> dict:
    """Partial, case-insensitive matches on labels, serials, devices and port names/aliases.

    ``device:port`` (or ``device port``) narrows ports to a device.
    """
    q = q.strip()
    cables = list(
        Cable.objects.filter(
            Q(label__icontains=q)
            | Q(serial_a__icontains=q)
            | Q(serial_b__icontains=q)
            | Q(pk__in=CableEnd.objects.filter(label__icontains=q).exclude(label="").values("cable_id"))
        ).order_by("label")[:limit]
    )
    racks = list(Rack.objects.filter(name__icontains=q).order_by("name")[:limit])
    devices = list(
        Device.objects.filter(Q(name__icontains=q) | Q(serial__icontains=q) | Q(asset_tag__icontains=q))
        .select_related("rack")
        .order_by("name")[:limit]
    )
    transceivers = list(
        Transceiver.objects.filter(serial__icontains=q)
        .select_related("model__vendor", "cage__device")
        .order_by("serial")[:limit]
    )
    split = _split_device_port(q)
    if split:
        dev, name = split
        port_q = Q(device__name__icontains=dev) & (Q(name__icontains=name) | Q(aliases__name__icontains=name))
    else:
        port_q = Q(name__icontains=q) | Q(aliases__name__icontains=q)
    port_ids = list(
        Port.objects.filter(port_q, retired_at__isnull=True)
        .order_by("device__name", "name")
        .values_list("pk", flat=True)
        .distinct()[: limit * 3]
    )[:limit]
    ports = list(
        Port.objects.filter(pk__in=port_ids)
        .select_related("device__rack")
        .prefetch_related("aliases")
        .order_by("device__name", "name")
    )
    _attach_cables(ports)
    return {
        "cables": cables,
        "racks": racks,
        "devices": devices,
        "transceivers": transceivers,
        "ports": ports,
    }


def _attach_cables(ports: list[Port]) -> None:
    """Set ``port.cable`` to the active cable plugged into each port (one query)."""
    for p in ports:
        p.cable = None
    if not ports:
        return
    by_port = {p.pk: p for p in ports}
    by_cage = {(p.cage_id, p.connector): p for p in ports if p.cage_id}
    ends = CableEnd.objects.filter(active=True).filter(
        Q(port_id__in=list(by_port)) | Q(cage_id__in=[c for c, _ in by_cage])
    )
    for end in ends.select_related("cable"):
        if end.port_id in by_port:
            by_port[end.port_id].cable = end.cable
        # several logical ports can share one cage connector
        for p in ports:
            if end.cage_id and p.cage_id == end.cage_id and p.connector == end.connector:
                p.cable = end.cable


def search_single_target(results: dict) -> str | None:
    """The one page a search means, when it found exactly one thing."""
    hits = [(k, o) for k, objs in results.items() for o in objs]
    if len(hits) != 1:
        return None
    kind, obj = hits[0]
    if kind == "cables" or kind == "racks":
        return obj.get_absolute_url()
    if kind == "transceivers":
        return reverse("transceiver-detail", args=[obj.pk])
    if kind == "devices":
        return obj.get_absolute_url()
    if kind == "ports" and obj.cable is not None:
        return obj.cable.get_absolute_url()
    return None
