"""The path diagram: a traced channel as the boxes and lines a technician follows.

Both ends, every panel on the way with the port the path enters by and the one it leaves by
(front and rear), the trunk fibre position the channel rides in, breakout legs, each cable
coloured by its status. One query on top of the trace: the panel mappings of its front ports.
"""

from __future__ import annotations

from django.db.models import Q

from inventory.core.choices import CableRole, CableStatus, PortKind
from inventory.models import CableEnd, Link, Port, PortMapping
from inventory.models.cables import cable_url
from inventory.models.devices import device_url, port_url
from inventory.selectors.plant.trace import Point, Trace

_STATUS = dict(CableStatus.choices)
_ROLE = dict(CableRole.choices)


def _place(p: Point, mapping: dict[int, tuple[int, int]]) -> dict:
    pos = mapping.get(p.port_id) if p.port_id else None
    return {
        "device": p.device,
        "device_url": device_url(p.device),
        "rack": p.rack or "",
        "u": p.u,
        "port": p.name,
        "port_url": port_url(p.device, p.name) if p.port_id else None,
        "position": pos,
    }


def path_diagram(trace: Trace | None) -> dict | None:
    """Nodes (end, panel, ..., end) and the cables between them, for ``_path_diagram.html``."""
    if trace is None or not trace.segments:
        return None
    port_ids = {s.near.port_id for s in trace.segments} | {s.far.port_id for s in trace.segments}
    port_ids.discard(None)
    # front port -> (rear position, positions of the rear port): the fibre group it rides in.
    mapping = {
        f: (pos, n)
        for f, pos, n in PortMapping.objects.filter(front_port_id__in=port_ids).values_list(
            "front_port_id", "rear_position", "rear_port__positions"
        )
    }
    first = trace.segments[0]
    nodes = [{"kind": "end", "out": _place(first.near, mapping), "in": None}]
    cables = []
    for i, s in enumerate(trace.segments):
        cables.append(
            {
                "kind": "cable",
                "label": s.label,
                "url": cable_url(s.label),
                "status": s.status,
                "status_text": _STATUS.get(s.status, s.status),
                "role": _ROLE.get(s.role, s.role),
                "trunk": s.role == CableRole.TRUNK,
                "near_leg": s.near_leg,
                "far_leg": s.far_leg,
            }
        )
        far = _place(s.far, mapping)
        if i + 1 < len(trace.segments):
            nxt = _place(trace.segments[i + 1].near, mapping)
            # The fibre position on the trunk side: the front port's mapping, on either side.
            position = far["position"] or nxt["position"]
            nodes.append({"kind": "panel", "in": far, "out": nxt, "position": position})
        else:
            nodes.append({"kind": "end", "in": far, "out": None})
    # The ends as the technician reads them: the cage on the faceplate, then the logical port.
    for node, logical in ((nodes[0], trace.start), (nodes[-1], trace.far)):
        place = node["out"] or node["in"]
        if (
            logical is not None
            and logical.port_id
            and logical.name != place["port"]
            and logical.device == place["device"]
        ):
            place["logical"] = logical.name
            place["logical_url"] = port_url(logical.device, logical.name)
    for n, c in enumerate(cables):
        c["position"] = None
        if c["trunk"]:
            c["position"] = nodes[n].get("position") or nodes[n + 1].get("position")
    return {
        "steps": [x for pair in zip(nodes, [*cables, None], strict=True) for x in pair if x is not None],
        "complete": trace.complete,
        "problems": trace.verdict.problems,
    }


def trunk_links(cable, links: list[Link]) -> list[dict]:
    """Every link a trunk carries: both ends and the fibre position it rides in (one query).

    The position is the rear-port position of the panel front port next to the trunk, read
    from the cable ends on the links' other cables that sit on the trunk's panels.
    """
    if not links:
        return []
    trunk_ports = list(
        CableEnd.objects.filter(cable=cable, port__isnull=False).values_list("port_id", flat=True)
    )
    positions = dict(
        CableEnd.objects.filter(
            active=True,
            cable__link_segments__link_id__in=[lk.pk for lk in links],
            port__kind=PortKind.FRONT,
            port__rear_mapping__rear_port_id__in=trunk_ports,
        ).values_list("cable__link_segments__link_id", "port__rear_mapping__rear_position")
    )
    out = []
    for lk in links:
        a, b = lk.a_port, lk.b_port
        out.append(
            {
                "position": positions.get(lk.pk),
                "a": {
                    "device": a.device.name,
                    "device_url": device_url(a.device.name),
                    "port": a.name,
                    "port_url": port_url(a.device.name, a.name),
                },
                "b": {
                    "device": b.device.name,
                    "device_url": device_url(b.device.name),
                    "port": b.name,
                    "port_url": port_url(b.device.name, b.name),
                },
            }
        )
    out.sort(key=lambda r: (r["position"] is None, r["position"] or 0, r["a"]["device"]))
    return out


def port_cable_ends(port: Port) -> list[CableEnd]:
    """The active cable ends in a port: on it directly, or on its cage connector."""
    q = Q(port=port)
    if port.cage_id:
        q |= Q(cage_id=port.cage_id, connector=port.connector)
    return list(CableEnd.objects.filter(q, active=True).select_related("cable").order_by("cable__label"))
