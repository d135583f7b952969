"""Reconciliation: one module row per cage, telemetry's module identity against the recorded module."""

from __future__ import annotations

from collections import defaultdict

from django.db.models.functions import Upper

from inventory.core.choices import CableKind
from inventory.models import (
    CableEnd,
    Transceiver,
    TransceiverModel,
)
from inventory.selectors.telemetry.reconciliation_rows import ModuleRow, norm


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
