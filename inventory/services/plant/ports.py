"""Port identity writes: aliases and renames (resolving names is a read: ``selectors.plant.ports``)."""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
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
