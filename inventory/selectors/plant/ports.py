"""Port identity reads: the (device, port or alias) names collectors and plans use, and what a
port last reported itself to be (module serial, neighbour)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.db.models import Q

from inventory.core.natsort import natural_key
from inventory.models import Device, Port, PortAlias, PortTelemetryState


def ports_resolve(
    pairs: Iterable[tuple[str, str]], *, at: datetime | None = None
) -> dict[tuple[str, str], int]:
    """Resolve (device name, port name or alias) pairs to port ids in one query.

    ``at`` resolves names as they were at that moment (a backfill); by default, now.
    Unknown pairs are simply absent from the result.
    """
    wanted = set(pairs)
    if not wanted:
        return {}
    devices = {d for d, _ in wanted}
    names = {n for _, n in wanted}
    qs = PortAlias.objects.filter(device__name__any=list(devices), name__any=list(names))
    if at is None:
        qs = qs.filter(valid_to__isnull=True)
    else:
        qs = qs.filter(valid_from__lte=at).filter(Q(valid_to__isnull=True) | Q(valid_to__gt=at))
    out: dict[tuple[str, str], int] = {}
    for dev, name, port_id in qs.values_list("device__name", "name", "port_id"):
        if (dev, name) in wanted:
            out[(dev, name)] = port_id
    return out


def cages_resolve(
    pairs: Iterable[tuple[str, str]],
) -> tuple[dict[tuple[str, str], int], dict[tuple[str, str], str]]:
    """Resolve (device, cage) names, as the pages print them (``OSFP1``, ``OSFP1/2`` for one of a
    twin-port module's connectors), to the logical port that cage connector carries; two queries.

    A bare cage name means its first connector, as the lists print it (``OSFP1``, then
    ``OSFP1/2``). Returns ``(port ids, why not)``: a pair the cage reading cannot resolve gets
    the reason a person can act on: the device is unknown, or it has no such port or cage.
    """
    wanted = set(pairs)
    if not wanted:
        return {}, {}
    known = set(Device.objects.filter(name__in={d for d, _ in wanted}).values_list("name", flat=True))
    cage_names = {n.rpartition("/")[0] if "/" in n else n for _, n in wanted} | {n for _, n in wanted}
    by_cage: dict[tuple[str, str], dict[int, list[tuple[int, str, int]]]] = {}
    for dev, cage, conn, pk, name, lane in Port.objects.filter(
        device__name__in=known, cage__name__in=cage_names, retired_at__isnull=True
    ).values_list("device__name", "cage__name", "connector", "pk", "name", "lane_start"):
        by_cage.setdefault((dev, cage), {}).setdefault(conn or 1, []).append((lane, name, pk))
    found: dict[tuple[str, str], int] = {}
    why: dict[tuple[str, str], str] = {}
    for dev, name in wanted:
        if dev not in known:
            why[(dev, name)] = f"Unknown device {dev}."
            continue
        conns = by_cage.get((dev, name))
        wanted_conn = None
        if conns is None and "/" in name:
            cage, _, tail = name.rpartition("/")
            if tail.isdigit():
                conns, wanted_conn = by_cage.get((dev, cage)), int(tail)
        if conns is None:
            why[(dev, name)] = f"Unknown port {dev}:{name} ({dev} has no port or cage of that name)."
            continue
        if wanted_conn is None:
            # A bare cage name is its first connector, as the lists and the rack page print it
            # (OSFP1, then OSFP1/2); a cage without a first connector must say which.
            if 1 in conns or len(conns) == 1:
                wanted_conn = 1 if 1 in conns else next(iter(conns))
            else:
                logical = ", ".join(sorted((n for ps in conns.values() for _, n, _ in ps), key=natural_key))
                why[(dev, name)] = (
                    f"{dev} {name}: name the connector ({name}/2, ...) or the logical port ({logical})."
                )
                continue
        ports = conns.get(wanted_conn)
        if not ports:
            why[(dev, name)] = f"Unknown port {dev}:{name} ({dev} has no port or cage of that name)."
            continue
        found[(dev, name)] = min(ports)[2]  # the connector's first lane: the plug is the same
    return found, why


def latest_identity(*, port_ids: list[int]) -> dict[int, dict]:
    """Per port, the latest module identity and neighbour seen:
    ``{"module_serial", "neighbor_device", "neighbor_port", "ts"}``."""
    out = {}
    for pid, serial, ndev, nport, seen in PortTelemetryState.objects.filter(port_id__in=port_ids).values_list(
        "port_id", "module_serial", "neighbor_device", "neighbor_port", "identity_seen_at"
    ):
        out[pid] = {
            "module_serial": serial or None,
            "neighbor_device": ndev or None,
            "neighbor_port": nport or None,
            "ts": seen,
        }
    return out
