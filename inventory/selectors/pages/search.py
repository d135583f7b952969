"""The search page: partial matches on labels, serials, devices and ports, and the one page a
single hit means."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.db.models import Q
from django.urls import reverse

from inventory.models import Cable, CableEnd, Cage, Device, Port, PortAlias, Rack, Transceiver


def _split_device_port(q: str) -> tuple[str, str] | None:
    for sep in (":", " "):
        if sep in q:
            dev, _, port = q.partition(sep)
            if dev.strip() and port.strip():
                return dev.strip(), port.strip()
    return None


# A cage as people read it off a faceplate, a page or a label: ``leaf-s01-r6:OSFP12``,
# ``gpu-0023 OSFP3``, ``LEAF-S01-R6 osfp 12``, ``gpu-0023 : OSFP3``, ``gpu-0023/OSFP3`` and the
# second connector of a twin-port module as the pages print it, ``OSFP1/2``; a label's line
# copied whole, the logical port after the cage (``gpu-0001 OSFP1 eth0``), finds the cage too.
_CAGE_QUERY = re.compile(
    r"^\s*(?P<device>[^\s:/]+)\s*[\s:/]\s*(?P<cage>[A-Za-z][A-Za-z_-]*[\s_-]*\d+)(?:\s*/\s*(?P<conn>\d))?(?:\s+(?P<port>\S+))?\s*$"
)


@dataclass
class CageHit:
    """A cage found by name, with the cable in each of its connectors (the page to open)."""

    cage: Cage
    cables: list  # (connector, Cable), in connector order

    @property
    def name(self) -> str:
        return f"{self.cage.device.name} {self.cage.name}"


def parse_cage_query(q: str) -> tuple[str, str, int | None] | None:
    """(device, cage name without spaces, connector or None) when ``q`` reads as a cage on a
    device; the cage name folds spaces, hyphens and underscores away (``OSFP 12`` -> ``OSFP12``)."""
    m = _CAGE_QUERY.match(q)
    if not m:
        return None
    cage = re.sub(r"[\s_-]+", "", m["cage"])
    return m["device"], cage, int(m["conn"]) if m["conn"] else None


def search_cages(q: str, limit: int = 20) -> list[CageHit]:
    """Cages named like ``q`` (device and cage, any case, see ``parse_cage_query``) with their
    cables: an exact device name first, else devices whose name contains it. Two queries."""
    parsed = parse_cage_query(q)
    if parsed is None:
        return []
    dev, cage_name, conn = parsed
    # The cage's own name may hold a hyphen or space ("OSFP-12"): compare both spellings.
    names = Q(name__iexact=cage_name) | Q(name__iexact=re.sub(r"(\D)(\d)", r"\1 \2", cage_name, count=1))
    names |= Q(name__iexact=re.sub(r"(\D)(\d)", r"\1-\2", cage_name, count=1))
    cages = list(Cage.objects.filter(names, device__name__iexact=dev).select_related("device")[:limit])
    if not cages:
        cages = list(
            Cage.objects.filter(names, device__name__icontains=dev)
            .select_related("device")
            .order_by("device__name")[:limit]
        )
    if not cages:
        return []
    ends = CableEnd.objects.filter(active=True, cage_id__in=[c.pk for c in cages]).select_related("cable")
    if conn is not None:
        ends = ends.filter(connector=conn)
    by_cage: dict[int, list] = {c.pk: [] for c in cages}
    for end in ends.order_by("connector", "cable__label"):
        by_cage[end.cage_id].append((end.connector, end.cable))
    return [CageHit(cage=c, cables=by_cage[c.pk]) for c in cages]


def _first_ids(querysets, *, order: tuple[str, ...], limit: int) -> set[int]:
    """The ids among which the first ``limit`` rows, in ``order``, of the querysets' union are:
    each queryset read on its own, so each test is served by its own trigram index (migrations
    0014, 0032). ORing them in one read, across a join or with an ``IN`` subquery, made
    PostgreSQL guess half the table matches and walk the sort order's index past every row: at
    131,072 GPUs a search for "leaf" spent 530 ms on cables and one for "C0001" 1.3 s on ports."""
    return {pk for qs in querysets for pk in qs.order_by(*order).values_list("pk", flat=True)[:limit]}


def search(q: str, limit: int = 20) -> dict:
    """Partial, case-insensitive matches on labels, serials, devices and port names/aliases.

    ``device:port`` (or ``device port``) narrows ports to a device.
    """
    q = q.strip()
    ends = CableEnd.objects.filter(label__icontains=q).exclude(label="").values("cable_id")
    cable_ids = _first_ids(
        [
            Cable.objects.filter(Q(label__icontains=q) | Q(serial_a__icontains=q) | Q(serial_b__icontains=q)),
            Cable.objects.filter(pk__in=ends),
        ],
        order=("label",),
        limit=limit,
    )
    cables = list(Cable.objects.filter(pk__in=cable_ids).order_by("label")[:limit])
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
    dev, name = split if split else ("", q)
    live = Port.objects.filter(retired_at__isnull=True)
    if dev:
        live = live.filter(device__name__icontains=dev)
    order = ("device__name", "name", "pk")
    by_alias = PortAlias.objects.filter(name__icontains=name).values("port_id")
    port_ids = _first_ids(
        [live.filter(name__icontains=name), live.filter(pk__in=by_alias)], order=order, limit=limit
    )
    ports = list(
        Port.objects.filter(pk__in=port_ids)
        .select_related("device__rack")
        .prefetch_related("aliases")
        .order_by(*order)[:limit]
    )
    _attach_cables(ports)
    return {
        "cages": search_cages(q, limit),
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
    """The one page a search means, when it found exactly one thing; a cage named on one device
    holding one cable means that cable (its logical ports, found too, are the same cable)."""
    cages = results.get("cages") or []
    if len(cages) == 1 and len(cages[0].cables) == 1:
        return cages[0].cables[0][1].get_absolute_url()
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
