"""Reconciliation report: what telemetry sees in the plant against what the plant records.

Telemetry carries each port's module EEPROM identity (vendor/part/serial, the module's or a
DAC/ACC/AOC end's) and the neighbour it sees over LLDP or the InfiniBand fabric; the ingest
keeps the latest per port in ``PortTelemetryState``. This report compares them, per site and
rack, with the recorded plant:

* modules, one row per cage (a twin-port module reports the same serial on both its ports):
  ``missing_record`` (a module is seen, nothing is recorded in the cage), ``swap`` (the
  recorded module or sealed-cable end has another serial), ``not_seen`` (a module is recorded,
  telemetry reports none), ``ok``;
* neighbours, one row per port: ``miswire`` (the neighbour seen is not the recorded far end),
  ``unrecorded`` (a neighbour is seen, no cable is recorded), ``no_neighbour`` (a link is
  recorded, no neighbour is seen), ``ok``.

"Telemetry sees none" is only claimed for devices whose collectors report that kind of field
at all (at least one port of the device has reported a module, or a neighbour): a collector
that sends FEC counters only says nothing about modules, and is not read as "no module".

Every read is set-based: a fixed handful of queries whatever the number of ports.
"""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ValidationError
from django.db.models import Q

from inventory.core.choices import PortKind
from inventory.models import (
    Port,
    PortTelemetryState,
    Rack,
    Site,
)
from inventory.selectors.telemetry.reconciliation_modules import _module_rows
from inventory.selectors.telemetry.reconciliation_neighbours import _neighbour_rows
from inventory.selectors.telemetry.reconciliation_rows import Report


def resolve_scope(*, site: str | None, rack: str | None) -> tuple[int | None, int | None]:
    """Site (slug or name) and rack (name) to ids; an unknown one is refused by name."""
    site_id = rack_id = None
    errors = {}
    if site:
        site_id = (
            Site.objects.filter(Q(slug=site) | Q(name=site))
            .order_by("pk")
            .values_list("pk", flat=True)
            .first()
        )
        if site_id is None:
            errors["site"] = f"No site {site!r} (give its slug or name)."
    if rack:
        rack_id = Rack.objects.filter(name=rack).values_list("pk", flat=True).first()
        if rack_id is None:
            errors["rack"] = f"No rack {rack!r}."
    if errors:
        raise ValidationError(errors)
    return site_id, rack_id


def _port_scope(*, site_id: int | None, rack_id: int | None, cage_ids: list[int] | None):
    qs = Port.objects.filter(
        kind=PortKind.INTERFACE, retired_at__isnull=True, device__retired_at__isnull=True
    )
    if cage_ids is not None:
        qs = qs.filter(cage_id__in=cage_ids)
    if site_id is not None:
        qs = qs.filter(device__rack__row__room__site_id=site_id)
    if rack_id is not None:
        qs = qs.filter(device__rack_id=rack_id)
    return qs


def reconciliation_report(
    *,
    now: datetime,
    site: str | None = None,
    rack: str | None = None,
    cage_ids: list[int] | None = None,
    neighbours: bool = True,
    include_ok: bool = True,
) -> Report:
    """The report for a site and/or rack (or exactly ``cage_ids``), in a fixed number of queries.

    ``include_ok=False`` only counts the rows that agree (most of a healthy plant) instead of
    building them. Raises ``ValidationError`` for an unknown site or rack.
    """
    site_id, rack_id = resolve_scope(site=site, rack=rack)
    scope = _port_scope(site_id=site_id, rack_id=rack_id, cage_ids=cage_ids)
    ports = list(
        scope.values_list(
            "pk",
            "name",
            "cage_id",
            "cage__name",
            "cage__form_factor",
            "device_id",
            "device__name",
            "device__position_u",
            "device__rack__name",
            "device__rack__row__room__site__name",
        )
    )
    states = {
        s[0]: s
        for s in PortTelemetryState.objects.filter(port__in=scope.values("pk")).values_list(
            "port_id",
            "module_vendor",
            "module_part",
            "module_serial",
            "neighbor_device",
            "neighbor_port",
            "identity_seen_at",
        )
    }
    # Devices whose collectors report modules / neighbours at all.
    port_device = {p[0]: p[5] for p in ports}
    reports_modules = {port_device[pid] for pid, s in states.items() if s[3].strip()}
    reports_neighbours = {port_device[pid] for pid, s in states.items() if s[4].strip()}

    report = Report(modules=[], neighbours=[], generated_at=now)
    report.modules, report.ok_modules = _module_rows(ports, states, reports_modules, scope, include_ok)
    if neighbours:
        report.neighbours, report.ok_neighbours = _neighbour_rows(
            ports, states, reports_neighbours, scope, include_ok
        )
    return report
