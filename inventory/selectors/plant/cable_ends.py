"""The ports a cable's active ends sit on, by side, as people name them (``device port``)."""

from __future__ import annotations

from inventory.models import Cable, CableEnd, Port


def cable_end_names(cable: Cable) -> dict[str, list[str]]:
    """``{"A": ["gpu-0001 eth0"], "B": ["leaf-01 Ethernet1/1"]}``, legs in order.

    An end on a module's connector is named by the port that exits through that connector
    (the lowest lane), as the cable page shows it; two queries whatever the leg count.
    """
    ends = list(
        CableEnd.objects.filter(cable=cable, active=True)
        .select_related("port__device", "cage__device")
        .order_by("side", "leg")
    )
    cages = {e.cage_id for e in ends if e.cage_id}
    by_connector: dict[tuple[int, int], str] = {}
    for p in (
        Port.objects.filter(cage_id__in=cages, retired_at__isnull=True)
        .select_related("device")
        .order_by("-lane_start")
    ):
        by_connector[(p.cage_id, p.connector)] = f"{p.device.name} {p.name}"
    out: dict[str, list[str]] = {"A": [], "B": []}
    for e in ends:
        if e.port_id:
            out[e.side].append(f"{e.port.device.name} {e.port.name}")
        else:
            default = f"{e.cage.device.name} {e.cage.name}/{e.connector}" if e.cage_id else "(unplugged)"
            out[e.side].append(by_connector.get((e.cage_id, e.connector), default))
    return out
