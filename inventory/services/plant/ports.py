"""Port identity: aliases, and resolving the names collectors use."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from inventory.models import Port, PortAlias


def port_alias_add(*, port: Port, name: str, source: str = "", now: datetime | None = None) -> PortAlias:
    """Give ``port`` another current name. A name another port holds now is refused."""
    now = now or timezone.now()
    name = name.strip()
    if not name:
        raise ValidationError({"name": "An alias needs a name."})
    existing = PortAlias.objects.filter(device_id=port.device_id, name=name, valid_to__isnull=True).first()
    if existing:
        if existing.port_id == port.pk:
            return existing
        raise ValidationError({"name": f"{name!r} already names port {existing.port_id} on this device."})
    try:
        with transaction.atomic():
            return PortAlias.objects.create(
                port=port, device_id=port.device_id, name=name, source=source, valid_from=now
            )
    except IntegrityError as exc:
        raise ValidationError({"name": f"{name!r} is already in use on this device."}) from exc


def port_alias_retire(*, alias: PortAlias, now: datetime | None = None) -> PortAlias:
    """End an alias (a rename, a breakout change); it stays resolvable for its past dates."""
    alias.valid_to = now or timezone.now()
    alias.save(update_fields=["valid_to"])
    return alias


def port_rename(*, port: Port, new_name: str, source: str = "", now: datetime | None = None) -> Port:
    """Rename a port: its old name becomes a dated alias, the new one current."""
    now = now or timezone.now()
    with transaction.atomic():
        current = PortAlias.objects.filter(port=port, name=port.name, valid_to__isnull=True).first()
        if current:
            port_alias_retire(alias=current, now=now)
        port.name = new_name
        port.save(update_fields=["name", "updated_at"])
        port_alias_add(port=port, name=new_name, source=source, now=now)
    return port


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


def port_resolve(device: str, name: str, *, at: datetime | None = None) -> Port | None:
    port_id = ports_resolve([(device, name)], at=at).get((device, name))
    return Port.objects.select_related("device__rack").get(pk=port_id) if port_id else None
