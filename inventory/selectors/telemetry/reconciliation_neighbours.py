"""Reconciliation: one neighbour row per port, the neighbour telemetry sees against the recorded far end."""

from __future__ import annotations

from collections import defaultdict

from django.db.models import Q

from inventory.models import (
    Link,
    LinkSegment,
)
from inventory.selectors.plant.ports import ports_resolve
from inventory.selectors.telemetry.reconciliation_rows import NeighbourRow


def _neighbour_rows(ports, states, reports_neighbours, scope, include_ok) -> tuple[list[NeighbourRow], int]:
    ids = scope.values("pk")
    link_qs = Link.objects.filter(active=True).filter(Q(a_port_id__in=ids) | Q(b_port_id__in=ids))
    links = list(
        link_qs.values_list(
            "pk",
            "a_port_id",
            "a_port__device__name",
            "a_port__name",
            "b_port_id",
            "b_port__device__name",
            "b_port__name",
        )
    )
    far: dict[int, tuple[int, str, int]] = {}
    for lid, a, adev, aname, b, bdev, bname in links:
        far[a] = (b, f"{bdev}:{bname}", lid)
        far[b] = (a, f"{adev}:{aname}", lid)
    pairs = {(s[4].strip(), s[5].strip()) for s in states.values() if s[4].strip()}
    resolved = ports_resolve(pairs)
    found = []
    ok = 0
    for p in ports:
        pid = p[0]
        s = states.get(pid)
        seen = f"{s[4].strip()}:{s[5].strip() or '?'}" if s and s[4].strip() else None
        expected = far.get(pid)
        if seen is None and expected is None:
            continue
        if expected is None:
            status = "unrecorded"
        elif seen is None:
            if p[5] not in reports_neighbours:
                continue  # the device's collector reports no neighbours at all
            status = "no_neighbour"
        elif resolved.get((s[4].strip(), s[5].strip())) == expected[0]:
            status = "ok"
        else:
            status = "miswire"
        if status == "ok" and not include_ok:
            ok += 1
            continue
        found.append((p, s, seen, expected, status))
    # The cables of the recorded paths of the rows shown (one query).
    cables: dict[int, list[str]] = defaultdict(list)
    link_ids = sorted({e[2] for *_, e, _st in found if e is not None})
    if link_ids:
        for lid, label in (
            LinkSegment.objects.filter(
                link_id__in=link_ids if len(link_ids) <= 5000 else link_qs.values("pk")
            )
            .order_by("link_id", "seq")
            .values_list("link_id", "cable__label")
        ):
            cables[lid].append(label)
    rows = [
        NeighbourRow(
            key=f"port:{p[0]}",
            status=status,
            site=p[9] or "",
            rack=p[8] or "",
            device=p[6],
            position_u=p[7],
            port=p[1],
            expected=expected[1] if expected else None,
            seen=seen,
            seen_at=s[6] if s else None,
            cables=cables.get(expected[2], []) if expected else [],
        )
        for p, s, seen, expected, status in found
    ]
    rows.sort(key=lambda r: (r.site, r.rack, -(r.position_u or 0), r.device, r.port))
    return rows, ok
