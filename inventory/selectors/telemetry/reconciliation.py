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

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db.models import Q
from django.db.models.functions import Upper

from inventory.core.choices import CableKind, PortKind
from inventory.models import (
    CableEnd,
    Link,
    LinkSegment,
    Port,
    PortTelemetryState,
    Rack,
    Site,
    Transceiver,
    TransceiverModel,
)
from inventory.selectors.plant.ports import ports_resolve

MODULE_STATUSES = ("missing_record", "swap", "not_seen", "ok")
NEIGHBOUR_STATUSES = ("miswire", "unrecorded", "no_neighbour", "ok")


def norm(s: str | None) -> str:
    """Identity strings compare trimmed and case-insensitively (EEPROMs pad with spaces)."""
    return (s or "").strip().upper()


@dataclass
class ModuleRow:
    key: str  # "cage:<id>": what the preview and apply steps name
    status: str
    site: str
    rack: str
    device: str
    position_u: int | None
    cage: str
    cage_id: int | None  # None: the port has no cage recorded
    form_factor: str
    ports: list[str]
    seen_vendor: str = ""
    seen_part: str = ""
    seen_serial: str = ""
    seen_at: datetime | None = None
    recorded_kind: str = "none"  # module | cable_end | none
    recorded_vendor: str = ""
    recorded_part: str = ""
    recorded_serial: str = ""
    transceiver_id: int | None = None
    cable_label: str = ""
    cable_side: str = ""
    # For missing records: the recorded module model that matches what is seen, or why not.
    model_id: int | None = None
    model_name: str = ""  # the model the record would use: "NVIDIA MMS4X00-NM (400GBASE-DR4)"
    problem: str = ""

    @property
    def creatable(self) -> bool:
        return self.status == "missing_record" and self.model_id is not None and not self.problem

    def as_dict(self) -> dict:
        return {
            "key": self.key,
            "status": self.status,
            "site": self.site,
            "rack": self.rack,
            "device": self.device,
            "cage": self.cage,
            "ports": self.ports,
            "seen": {
                "vendor": self.seen_vendor,
                "part": self.seen_part,
                "serial": self.seen_serial,
                "at": self.seen_at.isoformat() if self.seen_at else None,
            },
            "recorded": {
                "kind": self.recorded_kind,
                "vendor": self.recorded_vendor,
                "part": self.recorded_part,
                "serial": self.recorded_serial,
                "transceiver": self.transceiver_id,
                "cable": self.cable_label or None,
                "cable_side": self.cable_side or None,
            },
            "creatable": self.creatable,
            "model": self.model_id,
            "model_name": self.model_name,
            "problem": self.problem,
        }


@dataclass
class NeighbourRow:
    key: str  # "port:<id>"
    status: str
    site: str
    rack: str
    device: str
    position_u: int | None
    port: str
    expected: str | None
    seen: str | None
    seen_at: datetime | None = None
    cables: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "key": self.key,
            "status": self.status,
            "site": self.site,
            "rack": self.rack,
            "device": self.device,
            "port": self.port,
            "expected": self.expected,
            "seen": self.seen,
            "seen_at": self.seen_at.isoformat() if self.seen_at else None,
            "cables": self.cables,
        }


@dataclass
class Report:
    modules: list[ModuleRow]
    neighbours: list[NeighbourRow]
    generated_at: datetime
    # Rows that agree and were only counted (``include_ok=False``): status -> count.
    ok_modules: int = 0
    ok_neighbours: int = 0

    def counts(self) -> dict:
        out = {f"module_{s}": 0 for s in MODULE_STATUSES} | {f"neighbour_{s}": 0 for s in NEIGHBOUR_STATUSES}
        for r in self.modules:
            out[f"module_{r.status}"] += 1
        for r in self.neighbours:
            out[f"neighbour_{r.status}"] += 1
        out["module_ok"] += self.ok_modules
        out["neighbour_ok"] += self.ok_neighbours
        out["creatable"] = sum(1 for r in self.modules if r.creatable)
        return out

    def by_rack(self, *, include_ok: bool = False) -> list[dict]:
        """Rows grouped by (site, rack), racks in name order, devices top U down."""
        groups: dict[tuple[str, str], dict] = {}
        for r in self.modules:
            if include_ok or r.status != "ok":
                groups.setdefault(
                    (r.site, r.rack), {"site": r.site, "rack": r.rack, "modules": [], "neighbours": []}
                )["modules"].append(r)
        for r in self.neighbours:
            if include_ok or r.status != "ok":
                groups.setdefault(
                    (r.site, r.rack), {"site": r.site, "rack": r.rack, "modules": [], "neighbours": []}
                )["neighbours"].append(r)
        return [groups[k] for k in sorted(groups)]


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


def _module_rows(ports, states, reports_modules, scope, include_ok) -> tuple[list[ModuleRow], int]:
    cages, cageless = _ports_by_cage(ports, states)
    if not cages:
        return cageless, 0
    recorded_modules, sealed = _recorded_in_cages(scope)
    rows: list[ModuleRow] = []
    ok = 0
    for cage_id, cports in cages.items():
        # The latest identity any of the cage's ports reported (a twin-port module: both).
        seen = [states[p[0]] for p in cports if p[0] in states and states[p[0]][3].strip()]
        s = max(seen, key=lambda s: s[6].timestamp() if s[6] else 0.0) if seen else None
        seen_serial = s[3].strip() if s else ""
        rec_kind, rec, rec_serial = _recorded_in(cage_id, recorded_modules, sealed)
        status, problem = _module_status(
            seen_serial, rec_kind, rec, rec_serial, collector_reports=cports[0][5] in reports_modules
        )
        if status is None:
            continue
        if status == "ok" and not include_ok:
            ok += 1
            continue
        rows.append(_cage_row(cage_id, cports, status, problem, s, seen_serial, rec_kind, rec, rec_serial))
    _match_models([r for r in rows if r.status == "missing_record" and not r.problem])
    rows.extend(cageless)
    rows.sort(key=lambda r: (r.site, r.rack, -(r.position_u or 0), r.device, r.cage))
    return rows, ok


def _ports_by_cage(ports, states) -> tuple[dict[int, list], list[ModuleRow]]:
    """The ports grouped by recorded cage, and a row for each cageless port a module is seen in."""
    cages: dict[int, list] = defaultdict(list)
    cageless: list[ModuleRow] = []
    for p in ports:
        if p[2] is not None:
            cages[p[2]].append(p)
            continue
        s = states.get(p[0])
        if s is not None and s[3].strip():
            # A module is seen in a port whose cage is not recorded (a plant imported without
            # its module bays): nothing to put a module record in yet.
            cageless.append(
                ModuleRow(
                    key=f"port:{p[0]}",
                    status="missing_record",
                    site=p[9] or "",
                    rack=p[8] or "",
                    device=p[6],
                    position_u=p[7],
                    cage="",
                    cage_id=None,
                    form_factor="",
                    ports=[p[1]],
                    seen_vendor=s[1].strip(),
                    seen_part=s[2].strip(),
                    seen_serial=s[3].strip(),
                    seen_at=s[6],
                    problem=f"No cage is recorded for port {p[1]}: record the device's cages first.",
                )
            )
    return cages, cageless


def _recorded_in_cages(scope) -> tuple[dict[int, tuple], dict[int, tuple]]:
    """What the plant records in the scope's cages: modules, and sealed cable ends, by cage id."""
    cage_scope = scope.filter(cage__isnull=False).values("cage_id")
    recorded_modules = {
        x[0]: x
        for x in Transceiver.objects.filter(cage_id__in=cage_scope).values_list(
            "cage_id", "pk", "model__vendor__name", "model__part_number", "serial"
        )
    }
    sealed = {
        e[0]: e
        for e in CableEnd.objects.filter(
            active=True, cage_id__in=cage_scope, cable__kind__in=CableKind.sealed()
        ).values_list(
            "cage_id",
            "side",
            "cable__label",
            "cable__vendor__name",
            "cable__part_number",
            "cable__serial_a",
            "cable__serial_b",
        )
    }
    return recorded_modules, sealed


def _recorded_in(cage_id: int, recorded_modules: dict, sealed: dict) -> tuple[str, tuple | None, str]:
    """What is recorded in a cage (``module``, ``cable_end`` or ``none``), its row and its serial."""
    rec_kind, rec = "none", None
    if cage_id in recorded_modules:
        rec_kind, rec = "module", recorded_modules[cage_id]
        rec_serial = rec[4]
    elif cage_id in sealed:
        rec_kind, rec = "cable_end", sealed[cage_id]
        rec_serial = rec[5] if rec[1] == "A" else rec[6]
    else:
        rec_serial = ""
    return rec_kind, rec, rec_serial


def _module_status(
    seen_serial: str, rec_kind: str, rec, rec_serial: str, *, collector_reports: bool
) -> tuple[str | None, str]:
    """``missing_record``, ``swap``, ``ok`` or ``not_seen`` for a cage, and the problem to show;
    ``None`` when there is nothing to compare (``collector_reports``: the device's collector
    reports modules)."""
    problem = ""
    if seen_serial:
        if rec_kind == "none":
            status = "missing_record"
        elif not rec_serial:
            # A sealed cable recorded without its end's serial: nothing to swap, a gap to fill.
            status = "missing_record"
            problem = f"Cable {rec[2]} is recorded here without the serial of its end {rec[1]}; record it on the cable."
        elif norm(rec_serial) != norm(seen_serial):
            status = "swap"
        else:
            status = "ok"
    elif rec_kind != "none" and rec_serial and collector_reports:
        status = "not_seen"
    else:
        # An empty cage nobody sees a module in, or a device whose collector says nothing
        # about modules: nothing to compare, so neither a difference nor an agreement.
        return None, ""
    return status, problem


def _cage_row(cage_id, cports, status, problem, s, seen_serial, rec_kind, rec, rec_serial) -> ModuleRow:
    """The report row of a cage: where it is, what is seen in it and what is recorded."""
    cports.sort(key=lambda p: p[1])
    first = cports[0]
    row = ModuleRow(
        key=f"cage:{cage_id}",
        status=status,
        site=first[9] or "",
        rack=first[8] or "",
        device=first[6],
        position_u=first[7],
        cage=first[3],
        cage_id=cage_id,
        form_factor=first[4],
        ports=[p[1] for p in cports],
        problem=problem,
    )
    if s is not None:
        row.seen_vendor, row.seen_part, row.seen_serial, row.seen_at = (
            s[1].strip(),
            s[2].strip(),
            seen_serial,
            s[6],
        )
    row.recorded_kind, row.recorded_serial = rec_kind, rec_serial
    if rec_kind == "module":
        row.transceiver_id, row.recorded_vendor, row.recorded_part = rec[1], rec[2], rec[3]
    elif rec_kind == "cable_end":
        row.cable_side, row.cable_label = rec[1], rec[2]
        row.recorded_vendor, row.recorded_part = rec[3] or "", rec[4]
    return row


def _match_models(rows: list[ModuleRow]) -> None:
    """For missing records: the recorded module model for what is seen, and whether a record
    could be made (model known, fits the cage, serial not already recorded elsewhere)."""
    if not rows:
        return
    wanted_parts = {norm(r.seen_part) for r in rows}
    models: dict[tuple[str, str], tuple[int, str, int, str, str]] = {}
    by_part: dict[str, list[tuple[int, str, int, str, str]]] = defaultdict(list)
    for pk, vendor_id, vendor, part, ff, pmd in (
        TransceiverModel.objects.annotate(up=Upper("part_number"))
        .filter(up__in=wanted_parts)
        .values_list("pk", "vendor_id", "vendor__name", "part_number", "form_factor", "pmd")
    ):
        m = (pk, ff, vendor_id, vendor, f"{vendor} {part} ({pmd})")
        models[(norm(vendor), norm(part))] = m
        by_part[norm(part)].append(m)
    dups: dict[tuple[int, str], tuple] = {}
    for vendor_id, serial, device, cage, status in (
        Transceiver.objects.annotate(up=Upper("serial"))
        .filter(up__in={norm(r.seen_serial) for r in rows})
        .values_list("model__vendor_id", "serial", "cage__device__name", "cage__name", "status")
    ):
        dups[(vendor_id, norm(serial))] = (device, cage, status)
    for r in rows:
        m = models.get((norm(r.seen_vendor), norm(r.seen_part)))
        if m is None and len(by_part.get(norm(r.seen_part), [])) == 1:
            m = by_part[norm(r.seen_part)][0]  # EEPROM vendor names vary ("Mellanox" vs "NVIDIA")
        if m is None:
            r.problem = (
                f"No module model {r.seen_vendor} {r.seen_part} is recorded: add the model first "
                "(a DAC/ACC/AOC end is recorded on its cable instead)."
            )
            continue
        pk, ff, vendor_id, vendor, name = m
        if ff != r.form_factor:
            r.problem = f"A {ff} module ({r.seen_part}) does not fit the recorded {r.form_factor} cage."
            continue
        dup = dups.get((vendor_id, norm(r.seen_serial)))
        if dup is not None:
            device, cage, status = dup
            where = f"in {device} {cage}" if cage else status
            r.problem = (
                f"Serial {r.seen_serial} is already recorded for {vendor} ({where}): "
                "it was moved without a record; record the move instead."
            )
            continue
        r.model_id, r.model_name = pk, name


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
