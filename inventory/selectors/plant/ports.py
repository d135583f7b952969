"""Port identity reads: the (device, port or alias) names collectors and plans use, and what a
port last reported itself to be (module serial, neighbour)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.db.models import Q

from inventory.models import PortAlias, PortTelemetryState


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
