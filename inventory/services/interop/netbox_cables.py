"""The NetBox import's cable step: new cables installed, recorded ones compared (a moved end is a
conflict, reported and never guessed), links refreshed for the ports touched."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction

from inventory.core.choices import CableStatus
from inventory.core.interop.netbox import choice
from inventory.core.interop.netbox_vocab import CABLE_TYPE_FROM_NETBOX
from inventory.models import Cable, Port, Transceiver
from inventory.services.interop.netbox_map import (
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
            values = cable_values(c)
            pk = self.ref("cable", c["id"])
            cable = Cable.objects.filter(pk=pk).first() if pk else Cable.objects.filter(label=label).first()
            if cable is not None:
                self._cable_existing(c, cable, label, a, b, values)
                continue
            specs_a = [cable_services.EndSpec(port=p, connector_type=_plug(p)) for p in a]
            specs_b = [cable_services.EndSpec(port=p, connector_type=_plug(p)) for p in b]
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
            self.remember("cable", c["id"], cable)
            self.plan.changes.append(Change("cable", label, "create", "; ".join(warnings)))
            touched += [p.pk for p in a + b]
        if touched:
            link_services.links_refresh_for_ports(port_ids=touched)

    def _term(self, t: dict) -> Port:
        kind = t["object_type"].split(".")[-1]
        return self.ports[(kind, t["object_id"])]

    def _cable_existing(
        self, c: dict, cable: Cable, label: str, a: list[Port], b: list[Port], values: dict
    ) -> None:
        here = {(e.side, e.cage_id, e.connector, e.port_id) for e in cable.ends.filter(active=True)}
        there = {
            ("A", p.cage_id, p.connector if p.cage_id else None, None if p.cage_id else p.pk) for p in a
        } | {("B", p.cage_id, p.connector if p.cage_id else None, None if p.cage_id else p.pk) for p in b}
        if cable.status == CableStatus.RETIRED or here != there:
            self.plan.changes.append(
                Change(
                    "cable",
                    label,
                    "conflict",
                    f"retired here but present in {self.name}"
                    if cable.status == CableStatus.RETIRED
                    else f"its ends differ here and in {self.name} (moved?); not changed: "
                    f"retire or re-cable it here, or fix {self.name}",
                )
            )
            self.remember("cable", c["id"], cable)
            return
        editable = {
            k: v
            for k, v in values.items()
            if k in ("length_m", "color", "install_date") and v not in (None, "")
        }
        diff = {
            k: {"old": change_value(getattr(cable, k)), "new": change_value(v)}
            for k, v in editable.items()
            if getattr(cable, k) != v
        }
        if diff:
            for k in diff:
                setattr(cable, k, editable[k])
            cable._change_reason = f"synced from {self.snap.source}"
            cable.save()
        self.plan.changes.append(Change("cable", label, "change" if diff else "unchanged", diff or ""))
        self.remember("cable", c["id"], cable)


def _plug(port: Port) -> str:
    if port.cage_id:
        xcvr = Transceiver.objects.filter(cage_id=port.cage_id).select_related("model").first()
        return xcvr.model.connector_type if xcvr else ""
    return port.connector_type
