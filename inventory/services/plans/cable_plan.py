"""Cable-plan import: many cables at once, validated as a set, applied all-or-nothing.

Used by ``POST /api/cables/import/``, the desk CSV import page and plan files. Every check is
set-based (one query per kind of check for the whole batch), and the write goes through the
sanctioned bulk writer, so history rows are kept and thousands of cables take about a second.

A row: ``label, kind, a_device, a_port, b_device, b_port`` and optionally ``role, polarity,
length_m, vendor, part_number, serial_a, serial_b, lot, install_date, status, notes`` and per
end ``a_connector, a_fibres, a_pinned, a_polish`` (same with ``b_``). A breakout lists its
legs in ``b_device``/``b_port`` separated by ``;`` (one device applies to all legs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from django.db import IntegrityError, transaction

from inventory.access import authz
from inventory.core.choices import CableKind, CableStatus
from inventory.core.perf import gc_paused
from inventory.core.validators import end_fibre_count_problem, same_port_problem
from inventory.models import Cable, CableEnd, Device, Port, Transceiver, Vendor
from inventory.selectors.plant.loops import PlannedCable, PlannedEnd, loops_closed
from inventory.selectors.plant.ports import cages_resolve, ports_resolve
from inventory.services.plans.cable_plan_rows import PlanResult, PlanRow, RowResult, plan_row_parse
from inventory.services.plans.cable_plan_write import cable_plan_write
from inventory.services.plant.cables import install_date_problem

MAX_ROWS = 20_000


class PlanPort(NamedTuple):
    """What the checks and the write read of a port the plan names."""

    pk: int
    name: str
    device_id: int
    kind: str
    cage_id: int | None
    connector: int | None
    retired_at: object
    connector_type: str
    speed_gbps: int | None
    lane_count: int | None
    polish: str


EDITABLE = (
    "length_m",
    "vendor_id",
    "part_number",
    "serial_a",
    "serial_b",
    "lot",
    "install_date",
    "notes",
    "polarity",
)


def cable_plan_import(*, rows: list[dict], dry_run: bool = True, actor=None) -> PlanResult:
    """Validate every row against the plant as a set; apply all-or-nothing unless ``dry_run``.

    Without the cyclic garbage collector (see ``gc_paused``): a 5,000-row batch keeps some
    hundred thousand small acyclic objects alive (rows, results, lookups), and with the
    collector on, their growing heap was walked again and again, a third of the batch's time.
    """
    with gc_paused():
        return _import(rows=rows, dry_run=dry_run, actor=actor)


def _import(*, rows: list[dict], dry_run: bool, actor) -> PlanResult:
    result = PlanResult(dry_run=dry_run)
    if len(rows) > MAX_ROWS:
        r = RowResult(
            row=0, label="", action="error", errors={"rows": f"At most {MAX_ROWS} rows per import."}
        )
        result.rows.append(r)
        return result
    parsed = [plan_row_parse(i + 1, raw if isinstance(raw, dict) else {}) for i, raw in enumerate(rows)]
    result.rows = [p.result for p in parsed]
    ok = [p for p in parsed if not p.result.errors]
    unreadable = [p for p in parsed if p.result.errors]

    # Labels: duplicates within the batch, and existing cables (unchanged / change / conflict).
    seen: dict[str, int] = {}
    for p in ok:
        if p.label in seen:
            p.result.errors["label"] = f"Label repeated (row {seen[p.label]})."
        seen.setdefault(p.label, p.result.row)
    existing = {
        c.label: c for c in Cable.objects.filter(label__any=[p.label for p in ok]).prefetch_related("ends")
    }
    # Every row's names are looked up, so a row with an unreadable length also says that its
    # device is unknown: the dry run lists every error of a row, not the first kind found.
    plant = _plant_for(parsed)
    _check_against_plant(ok, existing, plant)
    _check_loops(ok)
    for p in unreadable:
        _named_terms(p, plant)
    if actor is not None:
        _check_sites(ok, plant, actor)
    for p in ok:
        if p.result.errors:
            p.result.action = "error"
    if result.errors or dry_run:
        return result
    try:
        with transaction.atomic():
            cable_plan_write(rows=[p for p in ok if p.result.action in ("create", "change")], actor=actor)
    except IntegrityError as exc:  # someone cabled a port between the check and the write
        result.rows.append(
            RowResult(row=0, label="", action="error", errors={"rows": f"Conflict while writing: {exc}"})
        )
        return result
    result.applied = True
    return result


@dataclass
class _Plant:
    """What the batch's rows name, as recorded: one query per kind of lookup for the whole batch."""

    resolved: dict  # (device, port name) -> port id
    unresolved: dict  # (device, name) -> why it names no port (unknown device, no such port)
    ports: dict  # port id -> Port
    vendors: dict  # lower-case name -> Vendor
    modules: dict  # cage id -> Transceiver
    taken_ports: dict  # port id -> label of the active cable on it
    taken_cages: dict  # (cage id, connector) -> label of the active cable on it


def _plant_for(ok: list[PlanRow]) -> _Plant:
    """The recorded ports, vendors, modules and taken termination points these rows name."""
    # Ports, one query for every (device, name) in the batch.
    pairs = {pair for p in ok for pair in (p.a, *p.b) if _named(pair)}
    resolved = ports_resolve(pairs)
    # The names people read on the pages: a cage (OSFP1, OSFP1/2) where the logical port is unknown.
    by_cage, unresolved = cages_resolve(pairs - set(resolved))
    resolved.update(by_cage)
    # Plain tuples, not model instances: building 10,000 ``Port`` objects was a sixth of an import.
    ports = {
        row[0]: PlanPort._make(row)
        for row in Port.objects.filter(pk__any=list(set(resolved.values()))).values_list(*PlanPort._fields)
    }
    vendors = {v.name.lower(): v for v in Vendor.objects.all().only("pk", "name")}
    cages = {p.cage_id for p in ports.values() if p.cage_id}
    modules = {
        x.cage_id: x
        for x in Transceiver.objects.filter(cage_id__any=list(cages))
        .select_related("model")
        .only(
            "cage_id",
            "serial",
            "model__connector_type",
            "model__fibre_count",
            "model__polish",
            "model__part_number",
            "model__pmd",
        )
    }
    # Termination points already taken by active cable ends (one query each kind).
    taken_ports = set(
        CableEnd.objects.filter(
            active=True, port_id__any=[p.pk for p in ports.values() if not p.cage_id]
        ).values_list("port_id", "cable__label")
    )
    taken_ports = {pid: lbl for pid, lbl in taken_ports}
    taken_cages = {
        (c, k): lbl
        for c, k, lbl in CableEnd.objects.filter(active=True, cage_id__any=list(cages)).values_list(
            "cage_id", "connector", "cable__label"
        )
    }
    return _Plant(resolved, unresolved, ports, vendors, modules, taken_ports, taken_cages)


def _check_against_plant(ok: list[PlanRow], existing: dict[str, Cable], plant: _Plant) -> None:
    """Vendors, ports and modules of each row, and the termination points the batch would take."""
    used: dict[tuple, int] = {}
    for p in ok:
        if p.result.errors:
            continue
        err = p.result.errors
        terms = _named_terms(p, plant)
        cable = existing.get(p.label)
        if cable is not None:
            _compare_existing(p, cable, terms)
            continue
        _check_fibre_counts(p)
        if problem := install_date_problem(
            p.attrs["install_date"], planned=p.attrs["status"] == CableStatus.PLANNED
        ):
            err["install_date"] = problem
        # A port at both ends is said once, where it repeats; nothing else is said of it.
        repeated = {t[3] for i, t in enumerate(terms) if any(t[3] == u[3] for u in terms[:i])}
        said: set[tuple] = set()
        for key, pair, port, term in terms:
            if term in said:
                err.setdefault(f"{key}_port", same_port_problem(f"{pair[0]}:{pair[1]}"))
                continue
            said.add(term)
            holder = None
            if term not in repeated:
                holder = (
                    plant.taken_cages.get(term[1:]) if term[0] == "cage" else plant.taken_ports.get(term[1])
                )
            if holder:
                err[f"{key}_port"] = f"{pair[0]}:{pair[1]} is already cabled ({holder})."
            elif term in used:
                err[f"{key}_port"] = f"{pair[0]}:{pair[1]} is used by row {used[term]} too."
            else:
                used[term] = p.result.row
            _check_module(p, key, port, plant.modules.get(port.cage_id) if port.cage_id else None)
        p.terms = terms


def _check_loops(ok: list[PlanRow]) -> None:
    """A new cable whose path through panels would come back into it (``loops_closed``, the
    check the single-cable install asks too) is an error of its row, naming the loop."""
    new = [p for p in ok if not p.result.errors and p.result.action == "create"]
    planned = []
    for p in new:
        b_terms = [t for t in p.terms if t[0] == "b"]
        ends = [PlannedEnd.at("A", 0, t[2]) for t in p.terms if t[0] == "a"]
        ends += [PlannedEnd.at("B", i + 1 if len(b_terms) > 1 else 0, t[2]) for i, t in enumerate(b_terms)]
        planned.append(PlannedCable(p.label, tuple(ends), row=p.result.row))
    for i, why in loops_closed(planned).items():
        new[i].result.errors["path"] = why


def _check_fibre_counts(p: PlanRow) -> None:
    """A new cable's MPO ends say their fibre count (``end_fibre_count_problem``; a breakout's
    legs excepted), in the column the plan writes it in. Rows of recorded cables are not asked:
    a plan changes no end, and one exported from an older record reads back unchanged."""
    for side, spec in p.ends.items():
        problem = end_fibre_count_problem(
            connector_type=spec["connector_type"],
            fibre_count=spec["fibre_count"],
            breakout_leg=side == "b" and len(p.b) > 1,
        )
        if problem:
            p.result.errors.setdefault(f"{side}_fibres", f"{problem} Write it in the {side}_fibres column.")


def _named(pair: tuple[str, str]) -> bool:
    """A (device, port) pair that names something to look up: neither left blank nor holding a
    NUL (``plan_row_parse`` made either an error of the row)."""
    return all(pair) and "\x00" not in pair[0] + pair[1]


def _named_terms(p: PlanRow, plant: _Plant) -> list[tuple]:
    """The row's vendor and ports looked up in the plant, each name it does not find an error of
    the row (a field that already has one keeps it); the termination points of the ports found."""
    err = p.result.errors
    vendor_name = p.attrs.pop("vendor_name", "")
    p.attrs["vendor_id"] = None
    if vendor_name:
        v = plant.vendors.get(vendor_name.lower())
        if v is None:
            err.setdefault("vendor", f"Unknown vendor {vendor_name!r}.")
        else:
            p.attrs["vendor_id"] = v.pk
    terms = []
    for key, pair in [("a", p.a)] + [("b", leg) for leg in p.b]:
        if not _named(pair):  # left blank or holding a NUL: an error of the row already
            continue
        pid = plant.resolved.get(pair)
        if pid is None:
            err.setdefault(f"{key}_port", plant.unresolved.get(pair) or f"Unknown port {pair[0]}:{pair[1]}.")
            continue
        port = plant.ports[pid]
        if port.retired_at:
            err.setdefault(f"{key}_port", f"{pair[0]}:{pair[1]} is retired.")
        term = ("cage", port.cage_id, port.connector) if port.cage_id else ("port", port.pk)
        terms.append((key, pair, port, term))
    return terms


def _check_sites(ok: list[PlanRow], plant: _Plant, actor) -> None:
    """The one policy (``authz``) with the sites each row's ports are in: a row that would
    create or change a cable in a site the importer may not write there is an error naming the
    site (``site``), so the import writes nothing. Rows that change nothing are not asked."""
    writes = [p for p in ok if not p.result.errors and p.result.action in ("create", "change")]
    ports = {
        p.n: [plant.ports[pid] for pair in (p.a, *p.b) if (pid := plant.resolved.get(pair))] for p in writes
    }
    devices = {port.device_id for row in ports.values() for port in row}
    site_of = dict(Device.objects.filter(pk__in=devices).values_list("pk", "rack__row__room__site_id"))
    refused = {
        action: authz.site_refusals(actor, action, site_of.values())
        for action in ("install_cable", "edit_cable")
    }
    for p in writes:
        refusals = refused["install_cable" if p.result.action == "create" else "edit_cable"]
        why = next((refusals[s] for port in ports[p.n] if (s := site_of[port.device_id]) in refusals), None)
        if why:
            p.result.errors["site"] = why


def _compare_existing(p: PlanRow, cable: Cable, terms) -> None:
    """Same label already recorded: unchanged, an attribute change, or a conflict."""
    ends = {(e.side, e.leg): e for e in cable.ends.all() if e.active}
    want = [(key, term) for key, _pair, _port, term in terms]
    have = sorted(
        (
            "a" if e.side == "A" else "b",
            ("cage", e.cage_id, e.connector) if e.cage_id else ("port", e.port_id),
        )
        for e in ends.values()
    )
    if cable.status == CableStatus.RETIRED:
        p.result.errors["label"] = f"{cable.label} is retired; a new cable needs a new label."
        return
    if sorted(want) != have:
        p.result.errors["label"] = f"{cable.label} exists with other ends; retire or replace it first."
        return
    changes = {}
    for f in EDITABLE:
        new = p.attrs.get(f)
        old = getattr(cable, f)
        if new in (None, "") and f not in ("polarity",):
            continue
        if new != old:
            changes[f] = {"old": str(old) if old is not None else None, "new": str(new)}
    if "install_date" in changes and (
        problem := install_date_problem(p.attrs["install_date"], planned=cable.status == CableStatus.PLANNED)
    ):
        p.result.errors["install_date"] = problem
    p.result.changes = changes
    p.result.action = "change" if changes else "unchanged"
    p.cable = cable


def _check_module(p: PlanRow, key: str, port: PlanPort, xcvr) -> None:
    spec = p.ends[key]
    if not port.cage_id:  # a panel port has its own polish, as a module has
        if spec["polish"] and port.polish and spec["polish"] != port.polish:
            p.result.errors[f"{key}_polish"] = f"Port {port.name} is {port.polish}."
        return
    if p.kind in CableKind.sealed():
        if xcvr is not None:
            p.result.errors[f"{key}_port"] = (
                f"Cage holds module {xcvr.serial}; a {p.kind} plugs into an empty cage."
            )
        return
    if xcvr is None:
        return
    m = xcvr.model
    if spec["connector_type"] and m.connector_type and spec["connector_type"] != m.connector_type:
        p.result.errors[f"{key}_connector"] = f"Module {m.part_number} ({m.pmd}) takes {m.connector_type}."
    elif spec["fibre_count"] and m.fibre_count and spec["fibre_count"] != m.fibre_count:
        p.result.errors[f"{key}_fibres"] = f"Module {m.part_number} takes MPO-{m.fibre_count}."
    elif spec["polish"] and m.polish and spec["polish"] != m.polish:
        p.result.errors[f"{key}_polish"] = f"Module {m.part_number} is {m.polish}."
