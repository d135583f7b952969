"""Links: the logical port pair at a channel's two ends, kept in step with the cabling."""

from __future__ import annotations

from django.db import transaction

from inventory.core.choices import FecType, PortKind
from inventory.models import CableEnd, Link, LinkSegment, Port, PortMapping
from inventory.selectors.plant.trace import port_trace

# PMD -> (FEC, lane signalling rate in GBd-equivalent Gb/s); the rate math uses line bits.
LANE_RATE_BY_SPEED = {25: 25.78125, 50: 53.125, 100: 106.25, 200: 212.5}


def _interfaces_behind(port: Port, seen: set[int] | None = None) -> list[int]:
    """Interface ports reached by walking from a panel port through its panel and cables."""
    seen = seen if seen is not None else set()
    if port.pk in seen:
        return []
    seen.add(port.pk)
    if port.kind == PortKind.INTERFACE:
        return [port.pk]
    partners: list[int] = []
    if port.kind == PortKind.FRONT:
        partners = list(
            PortMapping.objects.filter(front_port_id=port.pk).values_list("rear_port_id", flat=True)
        )
    else:
        partners = list(
            PortMapping.objects.filter(rear_port_id=port.pk).values_list("front_port_id", flat=True)
        )
    found: list[int] = []
    for pid in partners:
        seen.add(pid)
        end = CableEnd.objects.filter(active=True, port_id=pid).first()
        if end is None:
            continue
        for other in CableEnd.objects.filter(cable_id=end.cable_id, active=True).exclude(side=end.side):
            if other.cage_id:
                found.extend(
                    Port.objects.filter(cage_id=other.cage_id, connector=other.connector).values_list(
                        "pk", flat=True
                    )
                )
            elif other.port_id:
                found.extend(_interfaces_behind(Port.objects.get(pk=other.port_id), seen))
    return found


def link_attributes(a: Port, b: Port) -> dict:
    speed = a.speed_gbps or b.speed_gbps
    lanes = a.lane_count
    lane_speed = (speed // lanes) if speed and lanes else None
    pmd = ""
    cage = a.cage if a.cage_id else (b.cage if b.cage_id else None)
    xcvr = getattr(cage, "transceiver", None) if cage else None
    if xcvr is not None:
        pmd = xcvr.model.pmd
    fec = (
        FecType.KP4
        if lane_speed and lane_speed >= 50
        else (FecType.KR4 if lane_speed == 25 else FecType.NONE)
    )
    return {
        "speed_gbps": speed,
        "lanes": lanes,
        "lane_rate_gbaud": LANE_RATE_BY_SPEED.get(lane_speed) if lane_speed else None,
        "fec": fec,
        "pmd": pmd,
    }


@transaction.atomic
def link_sync(*, port: Port) -> Link | None:
    """Trace ``port`` and make its Link match what the cabling now says."""
    trace = port_trace(port)
    current = (
        Link.objects.filter(active=True).filter(a_port=port).first()
        or Link.objects.filter(active=True, b_port=port).first()
    )
    if not trace.complete or trace.far_port_id is None:
        if current:
            _deactivate(current)
        return None
    a_id, b_id = sorted((port.pk, trace.far_port_id))
    cable_ids = trace.cable_ids
    if current and (current.a_port_id, current.b_port_id) == (a_id, b_id):
        link = current
    else:
        if current:
            _deactivate(current)
        other = Link.objects.filter(active=True, a_port_id=a_id, b_port_id=b_id).first()
        if other:
            link = other
        else:
            a, b = Port.objects.select_related("cage__transceiver__model").in_bulk([a_id, b_id]).values()
            a, b = (a, b) if a.pk == a_id else (b, a)
            link = Link.objects.create(a_port_id=a_id, b_port_id=b_id, **link_attributes(a, b))
    problems = trace.verdict.problems
    if link.path_ok != (not problems) or link.path_problems != problems:
        link.path_ok = not problems
        link.path_problems = problems
        link.save(update_fields=["path_ok", "path_problems", "updated_at"])
    existing = list(link.segments.order_by("seq").values_list("cable_id", flat=True))
    if existing != cable_ids:
        link.segments.all().delete()
        LinkSegment.objects.bulk_create(
            [LinkSegment(link=link, seq=i, cable_id=c) for i, c in enumerate(cable_ids)]
        )
    return link


def _deactivate(link: Link) -> None:
    link.active = False
    link.save(update_fields=["active", "updated_at"])


def links_refresh_for_ports(*, port_ids: list[int]) -> list[Link]:
    """Re-trace every interface whose channel may run through these ports."""
    interfaces: set[int] = set()
    for port in Port.objects.filter(pk__in=port_ids):
        if port.kind == PortKind.INTERFACE:
            interfaces.add(port.pk)
        else:
            interfaces.update(_interfaces_behind(port))
    # Links that ran over these ports before the change (a retired trunk) must be re-traced too.
    interfaces.update(
        Link.objects.filter(active=True, segments__cable__ends__port_id__in=port_ids).values_list(
            "a_port_id", flat=True
        )
    )
    links = []
    done: set[int] = set()
    for port in Port.objects.filter(pk__in=interfaces).select_related("device__rack", "cage"):
        if port.pk in done:
            continue
        link = link_sync(port=port)
        done.add(port.pk)
        if link:
            done.update({link.a_port_id, link.b_port_id})
            links.append(link)
    return links
