"""Maintenance windows and silencing: what is silenced now, start or end a window, and the
acknowledge and silence actions on one alert."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from inventory.models import Alert, Device, Link, MaintenanceWindow, Rack

# --- maintenance ---------------------------------------------------------------------------------


@dataclass
class Silence:
    links: set[int]
    devices: set[int]
    racks: set[int]
    everything: bool = False

    def covers(self, *, link_id: int | None, devices: list[Device]) -> bool:
        if self.everything:
            return True
        if link_id is not None and link_id in self.links:
            return True
        return any(d.pk in self.devices or (d.rack_id and d.rack_id in self.racks) for d in devices)


def maintenance_active(*, now: datetime) -> Silence:
    active = MaintenanceWindow.objects.filter(starts_at__lte=now, ends_at__gt=now)
    through = MaintenanceWindow
    return Silence(
        links=set(
            through.links.through.objects.filter(maintenancewindow__in=active).values_list(
                "link_id", flat=True
            )
        ),
        devices=set(
            through.devices.through.objects.filter(maintenancewindow__in=active).values_list(
                "device_id", flat=True
            )
        ),
        racks=set(
            through.racks.through.objects.filter(maintenancewindow__in=active).values_list(
                "rack_id", flat=True
            )
        ),
    )


@transaction.atomic
def maintenance_start(
    *,
    starts_at: datetime,
    ends_at: datetime,
    reason: str,
    links: list[Link] = (),
    devices: list[Device] = (),
    racks: list[Rack] = (),
    actor=None,
    now: datetime | None = None,
) -> MaintenanceWindow:
    """Silence links, devices or racks for a window. Findings are still recorded, silenced."""
    errors = {}
    if not reason.strip():
        errors["reason"] = "Say why (a technician reading the alert list needs to know)."
    if ends_at <= starts_at:
        errors["ends_at"] = "The window must end after it starts."
    elif ends_at - starts_at > timedelta(days=14):
        errors["ends_at"] = "A maintenance window lasts at most 14 days."
    if not (links or devices or racks):
        errors["links"] = "Choose at least one link, device or rack to silence."
    if errors:
        raise ValidationError(errors)
    mw = MaintenanceWindow.objects.create(
        starts_at=starts_at,
        ends_at=ends_at,
        reason=reason.strip()[:200],
        created_by=actor if getattr(actor, "is_authenticated", False) else None,
        created_at=now or timezone.now(),
    )
    if links:
        mw.links.set(links)
    if devices:
        mw.devices.set(devices)
    if racks:
        mw.racks.set(racks)
    return mw


def maintenance_end(*, window: MaintenanceWindow, now: datetime) -> MaintenanceWindow:
    """End a window early (it is kept, with its real end, for the record)."""
    if window.ends_at > now:
        window.ends_at = now if now > window.starts_at else window.starts_at + timedelta(microseconds=1)
        window.save(update_fields=["ends_at"])
    return window


# --- acknowledge / silence from the list -----------------------------------------------------------


def alert_acknowledge(*, alert: Alert, actor, now: datetime) -> Alert:
    if alert.acknowledged_at is None:
        alert.acknowledged_at = now
        alert.acknowledged_by = actor if getattr(actor, "is_authenticated", False) else None
        alert.save(update_fields=["acknowledged_at", "acknowledged_by"])
    return alert


@transaction.atomic
def alert_silence(*, alert: Alert, hours: float, reason: str, actor, now: datetime) -> MaintenanceWindow:
    """Silence what the alert is about (its link, else its port's device) for ``hours``."""
    if not 0 < hours <= 14 * 24:
        raise ValidationError({"hours": "Silence for more than 0 and at most 336 hours."})
    links = [alert.link] if alert.link_id else []
    devices = [alert.port.device] if not links and alert.port_id else []
    mw = maintenance_start(
        starts_at=now,
        ends_at=now + timedelta(hours=hours),
        reason=reason or f"silenced from alert #{alert.pk}",
        links=links,
        devices=devices,
        actor=actor,
        now=now,
    )
    Alert.objects.filter(pk=alert.pk).update(silenced=True)
    alert_acknowledge(alert=alert, actor=actor, now=now)
    return mw
