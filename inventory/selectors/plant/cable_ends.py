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


def cables_in_rack(devices, *, active_only: bool = False) -> list[int]:
    """The ids of the cables with an end on the devices ``devices`` names (a ``values("pk")``
    queryset of a rack's devices), sorted: one query, each path on its own indexes (devices ->
    ports -> ends by port; -> cages -> ends by cage, a UNION). A rack holds at most a few thousand
    ends. One test through COALESCE(port's rack, cage's rack), or an OR across both joins, can use
    no index: it hashed every end and port of the plant (the desk's rack filter: 22 ms at 4,096
    GPUs), or judged every due cable of the plant first (a rack's retest worklist: 1.7 s at
    131,072 GPUs for its 29 cables)."""
    ends = CableEnd.objects.order_by()
    if active_only:
        ends = ends.filter(active=True)
    ids = ends.filter(port__device__in=devices).values_list("cable_id", flat=True)
    return sorted(ids.union(ends.filter(cage__device__in=devices).values_list("cable_id", flat=True)))
