"""The NetBox import's cable step: new cables installed, recorded ones compared (a moved end is a
conflict, reported and never guessed), links refreshed for the ports touched."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction

from inventory.conf import app_settings
from inventory.core.choices import CableStatus, ConnectorType, PortKind
from inventory.core.interop.netbox import choice
from inventory.core.interop.netbox_vocab import CABLE_TYPE_FROM_NETBOX, cable_kept
from inventory.core.interop.ownership import (
    CABLE_FIELDS,
    CONFLICT,
    NETBOX,
    SAME,
    TAKE,
    cable_field_owners,
    field_decision,
)
from inventory.core.validators import MPO_COUNTS, MPO_FIBRE_COUNTS, end_fibre_count_problem
from inventory.models import Cable, Port, Transceiver
from inventory.selectors.plant.cable_ends import cable_end_names
from inventory.services.interop.netbox_map import (
    cable_netbox_values,
    cable_values,
    change_value,
    validation_messages,
)
from inventory.services.interop.netbox_report import Change
from inventory.services.plant import cables as cable_services
from inventory.services.plant import links as link_services


class NetboxCableStep:
    """Cables, mixed into ``NetboxImporter``: uses its ``ports``, ``ref``/``remember`` and ``plan``."""

    def _cables(self) -> None:
        touched: list[int] = []
        for c in self.snap["cables"]:
            label = c.get("label") or f"NB-{c['id']}"
            try:
                a = [self._term(t) for t in c.get("a_terminations") or []]
                b = [self._term(t) for t in c.get("b_terminations") or []]
            except KeyError as exc:
                self.plan.changes.append(Change("cable", label, "skip", f"termination not imported: {exc}"))
                continue
            kind = CABLE_TYPE_FROM_NETBOX.get(choice(c.get("type")))
            if kind is None or not a or not b:
                self.plan.changes.append(
                    Change("cable", label, "skip", f"type {choice(c.get('type'))!r} or ends not modelled")
                )
                continue
            values, problems = cable_values(c)
            kept = cable_kept(
                cable_netbox_values(c),
                {"kind": kind, "status": values["status"], "length_m": values["length_m"]},
            )
            pk = self.ref("cable", c["id"])
            cable = Cable.objects.filter(pk=pk).first() if pk else Cable.objects.filter(label=label).first()
            if cable is not None:
                self._cable_existing(c, cable, label, a, b, values, kept, problems)
                continue
            if problems:  # as a value cable_install refuses: a conflict naming the field, not imported
                self.plan.changes.append(
                    Change("cable", label, "conflict", "; ".join(f"{k}: {m}" for k, m in problems.items()))
                )
                continue
            specs_a, specs_b, counted, refused = _end_specs(a, b)
            if refused:
                self.plan.changes.append(Change("cable", label, "skip", refused))
                continue
            try:
                with transaction.atomic():
                    cable, warnings = cable_services.cable_install(
                        label=label,
                        kind=kind,
                        a=specs_a if len(specs_a) > 1 else specs_a[0],
                        b=specs_b,
                        **values,
                    )
            except ValidationError as exc:
                self.plan.changes.append(
                    Change("cable", label, "conflict", "; ".join(validation_messages(exc)))
                )
                continue
            kept["synced"] = {k: change_value(getattr(cable, k)) for k in CABLE_FIELDS}
            self.remember("cable", c["id"], cable, kept)
            self.plan.changes.append(
                Change("cable", label, "create", "; ".join(warnings + counted + _kept_note(kept)))
            )
            touched += [p.pk for p in a + b]
        if touched:
            link_services.links_refresh_for_ports(port_ids=touched)

    def _term(self, t: dict) -> Port:
        kind = t["object_type"].split(".")[-1]
        return self.ports[(kind, t["object_id"])]

    def _cable_existing(
        self,
        c: dict,
        cable: Cable,
        label: str,
        a: list[Port],
        b: list[Port],
        values: dict,
        kept: dict,
        problems: dict[str, str],
    ) -> None:
        here = {(e.side, e.cage_id, e.connector, e.port_id) for e in cable.ends.filter(active=True)}
        there = {("A", *_point(p)) for p in a} | {("B", *_point(p)) for p in b}
        netbox_ports = {"A": [p.pk for p in a], "B": [p.pk for p in b]}
        resolved = (self.kept.get(("cable", str(c["id"]))) or {}).get("kept_ours")
        if cable.status != CableStatus.RETIRED and here != there and resolved == netbox_ports:
            kept["kept_ours"] = resolved  # a person chose ours for exactly these NetBox ends
            self.plan.changes.append(
                Change("cable", label, "unchanged", f"ends differ from {self.name}; ours kept by choice")
            )
            self.remember("cable", c["id"], cable, kept)
            return
        if cable.status == CableStatus.RETIRED or here != there:
            self.plan.changes.append(
                Change("cable", label, "conflict", self._conflict(c, cable, a, b, netbox_ports))
            )
            self.remember("cable", c["id"], cable)
            return
        owners = cable_field_owners(app_settings.netbox_field_owners)
        synced = (self.kept.get(("cable", str(c["id"]))) or {}).get("synced") or {}
        diff: dict = {}
        conflicts: list[dict] = []
        # The value each field had when both sides last agreed: moved on only where they agree
        # now (same, or NetBox's taken); a kept or conflicting local edit stays an edit.
        agreed = {k: synced.get(k, change_value(getattr(cable, k))) for k in CABLE_FIELDS}
        for k in CABLE_FIELDS:
            source = values.get(k)
            if source in (None, "") and k not in problems:
                continue
            problem = problems.get(k) or (
                cable_services.length_problem(source)
                if k == "length_m"
                else cable_services.install_date_problem(source, planned=cable.status == CableStatus.PLANNED)
                if k == "install_date" and source != cable.install_date
                else None
            )
            if problem:
                # A value no cable may hold (stored, a length broke every read of the cable; a
                # year-1 install date the forecast) or none NetBox gives (a length in a unit it
                # does not have): named, and the field left as it is.
                conflicts.append(
                    f"{k}: {problem.rstrip('.')} ({self.name} cable #{c['id']}); the sync left it as it is."
                )
                continue
            here_v, source_v = change_value(getattr(cable, k)), change_value(source)
            decision = field_decision(owners[k], here=here_v, synced=synced.get(k), source=source_v)
            if decision in (TAKE, SAME):
                agreed[k] = source_v
            if decision == TAKE:
                diff[k] = {"old": here_v, "new": source_v}
                setattr(cable, k, source)
            elif decision == CONFLICT:
                conflicts.append(self._field_conflict(c, cable, k, owners[k], here_v, source_v))
        if diff:
            cable._change_reason = f"synced from {self.snap.source}"
            cable.save()
        kept["synced"] = agreed
        for conflict in conflicts:
            self.plan.changes.append(Change("cable", label, "conflict", conflict))
        before = (self.kept.get(("cable", str(c["id"]))) or {}).get("netbox") or {}
        diff |= {
            f"{self.name} {k}": {"old": before.get(k), "new": v}
            for k, v in kept["netbox"].items()
            if before and before.get(k) != v
        }
        self.plan.changes.append(Change("cable", label, "change" if diff else "unchanged", diff or ""))
        self.remember("cable", c["id"], cable, kept)

    def _field_conflict(self, c: dict, cable: Cable, field: str, owner: str, here, source) -> dict:
        """A field edited here that the sync may not overwrite: both values named, nothing changed."""
        whose = f"{self.name} owns it" if owner == NETBOX else "it was changed on both sides"
        return {
            "message": (
                f"{field} is {here} here and {source} in {self.name}; {whose}, so the sync changed "
                f"nothing: set it in {self.name} to {here}, or set it back here to {source}"
            ),
            "cable": cable.label,
            "external_id": str(c["id"]),
            "field": field,
            "owner": owner,
            "here": {field: [str(here)]},
            "source": {field: [str(source)]},
            "resolutions": [],
        }

    def _conflict(self, c: dict, cable: Cable, a: list[Port], b: list[Port], netbox_ports: dict) -> dict:
        """A conflict that names the ports on both sides and the two ways out of it."""
        ours = cable_end_names(cable)
        theirs = {"A": [_name(p) for p in a], "B": [_name(p) for p in b]}
        if cable.status == CableStatus.RETIRED:
            message = f"retired here but present in {self.name}"
        else:
            message = (
                f"its ends differ here ({_ends_text(ours)}) and in {self.name} ({_ends_text(theirs)}); "
                f"not changed: take {self.name}'s ends, or keep ours"
            )
        return {
            "message": message,
            "cable": cable.label,
            "external_id": str(c["id"]),
            "here": ours,
            "source": theirs,
            "source_ports": netbox_ports,
            "resolutions": ["take_source", "keep_ours"] if cable.status != CableStatus.RETIRED else [],
        }


def _point(port: Port) -> tuple:
    """Where a cable end on ``port`` terminates: a cage connector, or the port itself."""
    return (port.cage_id, port.connector if port.cage_id else None, None if port.cage_id else port.pk)


def _name(port: Port) -> str:
    return f"{port.device.name} {port.name}"


def _ends_text(ends: dict[str, list[str]]) -> str:
    return "; ".join(f"{side} {', '.join(names) or '-'}" for side, names in ends.items())


def _kept_note(kept: dict) -> list[str]:
    """Which NetBox values have no equal here and are kept verbatim (for the report)."""
    nb = kept["netbox"]
    notes = []
    if nb.get("status") not in (None, "connected", "planned"):
        notes.append(f"status {nb['status']} kept")
    if nb.get("profile"):
        notes.append(f"profile {nb['profile']} kept")
    return notes


@dataclass(frozen=True)
class _Plug:
    """What NetBox says of the plug a cable end needs on a port: its connector, its fibre count
    (None: NetBox does not say), where the count comes from (for the report) or why there is none."""

    connector: str
    fibres: int | None = None
    source: str = ""
    unknown: str = ""


def _plug(port: Port) -> _Plug:
    """A module's connector and count ("2x MPO-12/APC" on its module type); a panel port's count
    recorded here, or a rear port's positions when they are a count MPO is made in (NetBox counts
    a rear port's strands in its positions). Nothing else is read as a count: a cable profile's
    positions (1C12P) and a duplex front's pairs count connections, not fibres."""
    if port.cage_id:
        xcvr = Transceiver.objects.filter(cage_id=port.cage_id).select_related("model").first()
        if xcvr is None:
            return _Plug(port.connector_type, port.fibre_count, unknown="no module")
        return _Plug(
            xcvr.model.connector_type,
            xcvr.model.fibre_count,
            unknown=f"module {xcvr.model.part_number} gives none",
        )
    if port.fibre_count:
        return _Plug(port.connector_type, port.fibre_count, f"{_name(port)}'s recorded count")
    if (
        port.kind == PortKind.REAR
        and port.connector_type == ConnectorType.MPO
        and port.positions in MPO_COUNTS
    ):
        return _Plug(port.connector_type, port.positions, f"{_name(port)}'s {port.positions} positions")
    if port.kind == PortKind.REAR:
        return _Plug(port.connector_type, unknown=f"no module, {port.positions} positions")
    return _Plug(port.connector_type, unknown="no module, no count recorded on the port")


def _end_specs(a: list[Port], b: list[Port]) -> tuple[list, list, list[str], str]:
    """The ends of a NetBox cable as ours: each MPO end with its fibre count (``_plug``; a
    one-to-one cable's end NetBox says nothing of takes its other end's: the same fibres run end
    to end), the report's notes of counts read from positions or the other end, and why the cable
    is not imported ("" when it is): an MPO end that still has no count (``end_fibre_count_problem``,
    the rule of every way a cable is recorded; a breakout's legs excepted), never stored blank."""
    plugs = {"A": [_plug(p) for p in a], "B": [_plug(p) for p in b]}
    ports = {"A": a, "B": b}
    notes = [f"fibre count {x.fibres} from {x.source}" for side in "AB" for x in plugs[side] if x.source]
    if len(a) == len(b) == 1:
        (pa,), (pb,) = plugs["A"], plugs["B"]
        for side, mine, other, far in (("A", pa, pb, "B"), ("B", pb, pa, "A")):
            if mine.connector == ConnectorType.MPO and not mine.fibres and other.fibres:
                plugs[side] = [_Plug(mine.connector, other.fibres, unknown=mine.unknown)]
                notes.append(f"fibre count {other.fibres} at End {side} as at End {far}")
    problems = []
    for side, far in (("A", "B"), ("B", "A")):
        for port, x in zip(ports[side], plugs[side], strict=True):
            problem = end_fibre_count_problem(
                connector_type=x.connector,
                fibre_count=x.fibres,
                breakout_leg=len(ports[side]) > 1 and len(ports[far]) == 1,
            )
            if problem and not x.fibres:
                problems.append(
                    f"End {side} {_name(port)} is MPO and NetBox gives no fibre count for it ({x.unknown})"
                )
            elif problem:
                problems.append(f"End {side} {_name(port)}: {problem.rstrip('.')}")
    specs = {
        side: [
            cable_services.EndSpec(port=p, connector_type=x.connector, fibre_count=x.fibres)
            for p, x in zip(ports[side], plugs[side], strict=True)
        ]
        for side in "AB"
    }
    refused = ""
    if problems:
        refused = (
            f"not imported: {'; '.join(problems)}. MPO needs a fibre count: {MPO_FIBRE_COUNTS}: "
            "record it on the port here, or add the cable by hand with it."
        )
    return specs["A"], specs["B"], notes, refused
