"""Import (and re-import, and sync) one NetBox site (or Nautobot location) into the plant.

Nautobot is read by ``inventory.core.interop.nautobot`` into NetBox's shapes, so the walk
below serves both; ``snapshot.flavor`` names the source in references and messages.

The importer runs the same code for a dry run and for real: a dry run executes inside a
transaction that is rolled back, so the report of what would be created, changed, left alone
(and why) is exactly what applying would do. Re-running is idempotent: every imported object
is remembered in ``ExternalRef`` by its NetBox id. A cable whose ends differ here and in
NetBox is a *conflict*: reported, never guessed. Test records and history are never touched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

import requests
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from inventory.core.choices import (
    CableKind,
    CableStatus,
    ConnectorType,
    DeviceRole,
    FormFactor,
    Polish,
    PortKind,
    TransceiverStatus,
)
from inventory.core.interop.netbox import choice, source_fetch
from inventory.core.interop.snapshot import NetboxError, NetboxSnapshot
from inventory.db import bulk
from inventory.models import (
    Cable,
    CableEnd,
    Cage,
    Device,
    ExternalRef,
    Link,
    LinkSegment,
    Port,
    PortAlias,
    PortMapping,
    Rack,
    Room,
    Row,
    Site,
    SyncRun,
    Transceiver,
    TransceiverModel,
    TransceiverPlacement,
    Vendor,
)
from inventory.services.plant import cables as cable_services
from inventory.services.plant import links as link_services

#: Tables a NetBox import fills; a large import refreshes their planner statistics.
_WRITTEN_MODELS = (
    Vendor,
    Site,
    Rack,
    Device,
    Cage,
    TransceiverModel,
    Transceiver,
    TransceiverPlacement,
    Port,
    PortAlias,
    PortMapping,
    Cable,
    CableEnd,
    Link,
    LinkSegment,
    ExternalRef,
)

ROLE_MAP = {
    "gpu-node": DeviceRole.GPU_NODE,
    "gpu-server": DeviceRole.GPU_NODE,
    "server": DeviceRole.GPU_NODE,
    "leaf-switch": DeviceRole.LEAF,
    "leaf": DeviceRole.LEAF,
    "spine-switch": DeviceRole.SPINE,
    "spine": DeviceRole.SPINE,
    "storage": DeviceRole.STORAGE,
    "patch-panel": DeviceRole.PATCH_PANEL,
    "cassette": DeviceRole.CASSETTE,
    "management-switch": DeviceRole.MGMT_SWITCH,
    "mgmt-switch": DeviceRole.MGMT_SWITCH,
}
CABLE_TYPE_MAP = {
    "smf": CableKind.SMF_OS2,
    "smf-os1": CableKind.SMF_OS2,
    "smf-os2": CableKind.SMF_OS2,
    "mmf-om3": CableKind.MMF_OM3,
    "mmf-om4": CableKind.MMF_OM4,
    "mmf-om5": CableKind.MMF_OM5,
    "mmf": CableKind.MMF_OM4,
    "dac-passive": CableKind.DAC,
    "dac-active": CableKind.ACC,
    "aoc": CableKind.AOC,
    "cat6a": CableKind.CAT6A,
    "cat6": CableKind.CAT6A,
    "cat5e": CableKind.CAT6A,
}
STATUS_MAP = {
    "connected": CableStatus.INSTALLED,
    "planned": CableStatus.PLANNED,
    "decommissioning": CableStatus.INSTALLED,
}
UNIT_M = {
    "m": Decimal(1),
    "cm": Decimal("0.01"),
    "km": Decimal(1000),
    "ft": Decimal("0.3048"),
    "in": Decimal("0.0254"),
    "mi": Decimal("1609.344"),
}
PORT_TYPE_CONNECTOR = {
    "mpo": ConnectorType.MPO,
    "lc": ConnectorType.LC,
    "lc-apc": ConnectorType.LC,
    "lc-upc": ConnectorType.LC,
    "8p8c": ConnectorType.RJ45,
}
LABEL_BAY = re.compile(r"^(?P<bay>\S+) port (?P<n>\d+)$", re.IGNORECASE)
CONNECTOR_ATTR = re.compile(
    r"^(?:(?P<count>\d+)x\s*)?(?P<type>MPO|LC)(?:-(?P<fibres>\d+))?(?:/(?P<polish>APC|UPC))?", re.I
)


@dataclass
class Change:
    kind: str
    key: str
    action: str  # create | change | unchanged | conflict | skip
    detail: str | dict = ""


@dataclass
class NetboxPlan:
    source: str
    site: str
    dry_run: bool
    changes: list[Change] = field(default_factory=list)

    @property
    def conflicts(self) -> list[Change]:
        return [c for c in self.changes if c.action == "conflict"]

    def summary(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for c in self.changes:
            out.setdefault(c.kind, {}).setdefault(c.action, 0)
            out[c.kind][c.action] += 1
        return out

    def as_dict(self) -> dict:
        return {
            "source": self.source,
            "site": self.site,
            "dry_run": self.dry_run,
            "summary": self.summary(),
            "changes": [c.__dict__ for c in self.changes if c.action != "unchanged"],
            "conflicts": [c.__dict__ for c in self.conflicts],
        }


class _Rollback(Exception):
    pass


def netbox_import(*, snapshot: NetboxSnapshot, dry_run: bool = True, actor=None) -> NetboxPlan:
    """Import one NetBox site: a dry run reports, an apply writes everything in one transaction."""
    plan = NetboxPlan(source=snapshot.source, site=snapshot.site, dry_run=dry_run)
    try:
        with transaction.atomic():
            _Importer(snapshot, plan, actor).run()
            written = sum(1 for c in plan.changes if c.action in ("create", "change"))
            bulk.analyze_on_commit(*_WRITTEN_MODELS, rows=written)  # dropped with a dry run
            if dry_run:
                raise _Rollback
    except _Rollback:
        pass
    return plan


class _Importer:
    def __init__(self, snap: NetboxSnapshot, plan: NetboxPlan, actor):
        self.snap = snap
        self.plan = plan
        self.actor = actor
        self.source = f"{snap.flavor}:{snap.source}"
        self.name = "Nautobot" if snap.flavor == "nautobot" else "NetBox"
        self.refs: dict[tuple[str, str], int] = {
            (r.kind, r.external_id): r.object_id for r in ExternalRef.objects.filter(source=self.source)
        }
        self.now = timezone.now()

    # --- bookkeeping -------------------------------------------------------------------
    # NetBox ids are integers, Nautobot's UUIDs: both are kept as text.
    def ref(self, kind: str, ext_id: int | str) -> int | None:
        return self.refs.get((kind, str(ext_id)))

    def remember(self, kind: str, ext_id: int | str, obj) -> None:
        if self.refs.get((kind, str(ext_id))) != obj.pk:
            ExternalRef.objects.update_or_create(
                source=self.source, kind=kind, external_id=str(ext_id), defaults={"object_id": obj.pk}
            )
            self.refs[(kind, str(ext_id))] = obj.pk

    def upsert(self, model, kind: str, ext_id: int | str, key: str, lookup: dict, values: dict):
        """Find by ExternalRef, else by natural key; create or update; record the change."""
        pk = self.ref(kind, ext_id)
        obj = model.objects.filter(pk=pk).first() if pk else model.objects.filter(**lookup).first()
        if obj is None:
            obj = model(**lookup, **values)
            obj._change_reason = f"imported from {self.snap.source}"
            obj.save()
            self.plan.changes.append(Change(kind, key, "create"))
        else:
            diff = {
                k: {"old": _s(getattr(obj, k)), "new": _s(v)}
                for k, v in values.items()
                if getattr(obj, k) != v
            }
            if diff:
                for k, v in values.items():
                    setattr(obj, k, v)
                obj._change_reason = f"synced from {self.snap.source}"
                obj.save()
                self.plan.changes.append(Change(kind, key, "change", diff))
            else:
                self.plan.changes.append(Change(kind, key, "unchanged"))
        self.remember(kind, ext_id, obj)
        return obj

    # --- the walk ------------------------------------------------------------------------
    def run(self) -> None:
        sites = [
            s
            for s in self.snap["sites"]
            if s.get("slug") == self.snap.site or s.get("name") == self.snap.site
        ]
        if not sites:
            raise ValidationError(f"{self.name} has no site {self.snap.site!r}.")
        nb_site = sites[0]
        self.vendors = {}
        for m in self.snap["manufacturers"]:
            self.vendors[m["id"]] = self.upsert(
                Vendor,
                "manufacturer",
                m["id"],
                m["name"],
                {"name": m["name"]},
                {"slug": m.get("slug") or slugify(m["name"])},
            )
        site = self.upsert(
            Site,
            "site",
            nb_site["id"],
            nb_site["name"],
            {"name": nb_site["name"]},
            {"slug": nb_site["slug"], "description": nb_site.get("facility") or ""},
        )
        room, _ = Room.objects.get_or_create(site=site, name=nb_site.get("facility") or "Default")
        row, _ = Row.objects.get_or_create(room=room, name=self.name)
        self.racks = {}
        for r in self.snap["racks"]:
            name = r["name"]
            clash = Rack.objects.filter(name=name).exclude(row__room__site=site).exists()
            if clash and not self.ref("rack", r["id"]):
                name = f"{site.slug}-{name}"
            self.racks[r["id"]] = self.upsert(
                Rack,
                "rack",
                r["id"],
                name,
                {"name": name},
                {"row": row, "u_height": int(r.get("u_height") or 48)},
            )
        self.devices = {}
        for d in self.snap["devices"]:
            dt = d.get("device_type") or {}
            mfr = (dt.get("manufacturer") or {}).get("id")
            role = ROLE_MAP.get((d.get("role") or {}).get("slug", ""), DeviceRole.OTHER)
            values = {
                "role": role,
                "rack": self.racks.get((d.get("rack") or {}).get("id")),
                "position_u": int(d["position"]) if d.get("position") is not None else None,
                "vendor": self.vendors.get(mfr),
                "model": dt.get("model", "")[:100],
                "serial": d.get("serial") or "",
                "asset_tag": d.get("asset_tag") or None,
            }
            self.devices[d["id"]] = self.upsert(
                Device, "device", d["id"], d["name"], {"name": d["name"]}, values
            )
        self._modules()
        self._ports()
        self._cables()

    def _modules(self) -> None:
        types = {t["id"]: t for t in self.snap["module_types"]}
        modules_by_bay = {(m.get("module_bay") or {}).get("id"): m for m in self.snap["modules"]}
        self.cages = {}
        self.bay_of_module = {}
        for i, bay in enumerate(
            sorted(self.snap["module_bays"], key=lambda b: (b["device"]["id"], b["name"]))
        ):
            dev = self.devices.get(bay["device"]["id"])
            if dev is None:
                continue
            mod = modules_by_bay.get(bay["id"])
            attrs = (types.get((mod or {}).get("module_type", {}).get("id")) or {}).get("attributes") or {}
            ff = (
                attrs.get("form_factor") if attrs.get("form_factor") in FormFactor.values else FormFactor.OSFP
            )
            pos = bay.get("position")
            index = int(pos) if pos and str(pos).isdigit() else i + 1
            self.cages[bay["id"]] = self.upsert(
                Cage,
                "cage",
                bay["id"],
                f"{dev.name} {bay['name']}",
                {"device": dev, "name": bay["name"]},
                {"index": index, "form_factor": ff},
            )
        self.models = {}
        for t in types.values():
            mfr = self.vendors.get((t.get("manufacturer") or {}).get("id"))
            if mfr is None:
                continue
            self.models[t["id"]] = self.upsert(
                TransceiverModel,
                "module_type",
                t["id"],
                t.get("part_number") or t["model"],
                {"vendor": mfr, "part_number": (t.get("part_number") or t["model"])[:100]},
                _model_values(t),
            )
        for m in self.snap["modules"]:
            cage = self.cages.get((m.get("module_bay") or {}).get("id"))
            model = self.models.get((m.get("module_type") or {}).get("id"))
            self.bay_of_module[m["id"]] = (m.get("module_bay") or {}).get("id")
            if cage is None or model is None or not m.get("serial"):
                self.plan.changes.append(
                    Change(
                        "module",
                        str(m.get("serial") or m["id"]),
                        "skip",
                        "no serial, bay or module type to match",
                    )
                )
                continue
            self._module(m, cage, model)

    def _module(self, m: dict, cage: Cage, model: TransceiverModel) -> None:
        key = m["serial"]
        pk = self.ref("module", m["id"])
        xcvr = (
            Transceiver.objects.filter(pk=pk).first()
            if pk
            else Transceiver.objects.filter(model=model, serial=key).first()
        )
        note = f" (failed in {self.name}: swap it)" if choice(m.get("status")) == "failed" else ""
        if xcvr is None:
            occupant = Transceiver.objects.filter(cage=cage).first()
            if occupant:
                self.plan.changes.append(
                    Change(
                        "module",
                        key,
                        "conflict",
                        f"{cage} holds {occupant.serial} here; {self.name} says {key}{note}",
                    )
                )
                return
            xcvr = Transceiver(model=model, serial=key, status=TransceiverStatus.INSTALLED, cage=cage)
            xcvr._change_reason = f"imported from {self.snap.source}{note}"
            xcvr.save()
            TransceiverPlacement.objects.create(
                transceiver=xcvr,
                cage=cage,
                installed_at=self.now,
                installed_by=self.actor,
                notes=f"imported from {self.name}{note}",
            )
            self.plan.changes.append(Change("module", key, "create", note.strip()))
        elif xcvr.cage_id != cage.pk:
            self.plan.changes.append(
                Change(
                    "module",
                    key,
                    "conflict",
                    f"here in {xcvr.cage or xcvr.get_status_display()}, in {self.name} in {cage}",
                )
            )
        else:
            self.plan.changes.append(Change("module", key, "unchanged", note.strip()))
        self.remember("module", m["id"], xcvr)

    def _ports(self) -> None:
        self.ports: dict[tuple[str, int], Port] = {}
        by_module: dict[int, list[dict]] = {}
        for it in self.snap["interfaces"]:
            if it.get("module"):
                by_module.setdefault(it["module"]["id"], []).append(it)
        for it in self.snap["interfaces"]:
            dev = self.devices.get(it["device"]["id"])
            if dev is None:
                continue
            cage, connector = None, None
            if it.get("module"):
                siblings = sorted(by_module[it["module"]["id"]], key=lambda x: x["name"])
                cage = self.cages.get(self.bay_of_module.get(it["module"]["id"]))
                connector = siblings.index(it) + 1
            else:
                m = LABEL_BAY.match(it.get("label") or "")
                if m:
                    cage = Cage.objects.filter(device=dev, name=m["bay"]).first()
                    connector = int(m["n"])
            speed = _speed(choice(it.get("type")))
            values = {
                "kind": PortKind.INTERFACE,
                "cage": cage,
                "connector": connector if cage else None,
                "lane_start": 4 * ((connector or 1) - 1) if cage else 0,
                "lane_count": 4 if cage else 1,
                "speed_gbps": speed,
            }
            self.ports[("interface", it["id"])] = self._port(it, dev, values)
        for rp in self.snap["rear_ports"]:
            dev = self.devices.get(rp["device"]["id"])
            if dev:
                values = {
                    "kind": PortKind.REAR,
                    "positions": int(rp.get("positions") or 1),
                    "connector_type": PORT_TYPE_CONNECTOR.get(choice(rp.get("type")), ""),
                }
                self.ports[("rearport", rp["id"])] = self._port(rp, dev, values, kind="rearport")
        for fp in self.snap["front_ports"]:
            dev = self.devices.get(fp["device"]["id"])
            if dev is None:
                continue
            values = {
                "kind": PortKind.FRONT,
                "connector_type": PORT_TYPE_CONNECTOR.get(choice(fp.get("type")), ""),
            }
            front = self._port(fp, dev, values, kind="frontport")
            self.ports[("frontport", fp["id"])] = front
            for mapping in fp.get("rear_ports") or []:
                rear = self.ports.get(("rearport", mapping.get("rear_port")))
                if rear is None:
                    continue
                PortMapping.objects.update_or_create(
                    front_port=front,
                    defaults={
                        "rear_port": rear,
                        "rear_position": int(mapping.get("rear_port_position") or 1),
                    },
                )

    def _port(self, nb: dict, dev: Device, values: dict, kind: str = "interface") -> Port:
        port = self.upsert(
            Port, kind, nb["id"], f"{dev.name}:{nb['name']}", {"device": dev, "name": nb["name"]}, values
        )
        if not PortAlias.objects.filter(port=port, name=port.name, valid_to__isnull=True).exists():
            PortAlias.objects.create(port=port, device=dev, name=port.name, source="netbox")
        return port

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
            kind = CABLE_TYPE_MAP.get(choice(c.get("type")))
            if kind is None or not a or not b:
                self.plan.changes.append(
                    Change("cable", label, "skip", f"type {choice(c.get('type'))!r} or ends not modelled")
                )
                continue
            values = _cable_values(c)
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
                self.plan.changes.append(Change("cable", label, "conflict", "; ".join(_messages(exc))))
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
            k: {"old": _s(getattr(cable, k)), "new": _s(v)}
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


def _model_values(t: dict) -> dict:
    a = t.get("attributes") or {}
    ports = int(a.get("ports") or 1)
    port_speed = int(a.get("port_speed_gbps") or 400)
    pmd = str(a.get("media") or "")
    lanes_per_port = 8 if "8" in pmd.split("-")[-1] else (4 if pmd.endswith(("4", "4.2")) else 1)
    conn = CONNECTOR_ATTR.match(str(a.get("connector") or "")) or None
    return {
        "form_factor": a.get("form_factor") if a.get("form_factor") in FormFactor.values else FormFactor.OSFP,
        "pmd": pmd,
        "speed_gbps": ports * port_speed,
        "lanes": ports * lanes_per_port,
        "lane_rate_gbps": max(1, port_speed // lanes_per_port),
        "logical_ports": ports,
        "connector_type": (conn["type"].upper() if conn else ConnectorType.MPO),
        "connector_count": int(conn["count"]) if conn and conn["count"] else ports,
        "fibre_count": int(conn["fibres"]) if conn and conn["fibres"] else None,
        "polish": (conn["polish"].upper() if conn and conn["polish"] else Polish.NONE),
        "wavelength_nm": a.get("wavelength_nm"),
        "reach_m": a.get("reach_m"),
        "single_mode": "SR" not in pmd.upper(),
    }


def _cable_values(c: dict) -> dict:
    length = c.get("length")
    unit = choice(c.get("length_unit")) or "m"
    length_m = (
        (Decimal(str(length)) * UNIT_M.get(unit, Decimal(1))).quantize(Decimal("0.01")) if length else None
    )
    install = (c.get("custom_fields") or {}).get("install_date")
    status = choice(c.get("status"))
    notes = c.get("description") or ""
    if status == "decommissioning":
        notes = (notes + "\n" if notes else "") + "NetBox status: decommissioning"
    return {
        "length_m": length_m,
        "color": (c.get("color") or "")[:6],
        "install_date": date.fromisoformat(install) if install else None,
        "status": STATUS_MAP.get(status, CableStatus.PLANNED),
        "notes": notes,
    }


def _plug(port: Port) -> str:
    if port.cage_id:
        xcvr = Transceiver.objects.filter(cage_id=port.cage_id).select_related("model").first()
        return xcvr.model.connector_type if xcvr else ""
    return port.connector_type


def _speed(iftype: str) -> int | None:
    m = re.match(r"^(\d+)g", iftype)
    return int(m.group(1)) if m else None


def _s(v):
    return None if v is None else str(getattr(v, "pk", v))


def _messages(exc: ValidationError) -> list[str]:
    if hasattr(exc, "message_dict"):
        return [f"{k}: {m}" for k, ms in exc.message_dict.items() for m in ms]
    return list(exc.messages)


def netbox_sync(*, url: str, token: str, sites: list[str], flavor: str = "netbox", now=None) -> list:
    """Fetch and apply each site; conflicts are recorded on the run, never resolved by guessing."""
    runs = []
    for site in sites:
        run = SyncRun.objects.create(
            source=f"{flavor}:{url.rstrip('/')}", site=site, started_at=now or timezone.now()
        )
        try:
            snapshot = source_fetch(url=url, token=token, site=site, flavor=flavor)
            plan = netbox_import(snapshot=snapshot, dry_run=False)
            report = plan.as_dict()
            run.summary, run.conflicts = report["summary"], report["conflicts"]
        except (NetboxError, ValidationError) as exc:
            run.error = str(exc)
        run.finished_at = timezone.now()
        run.save()
        runs.append(run)
    return runs


def netbox_export(*, url: str, token: str, site: str | None = None, flavor: str = "netbox") -> int:
    """Write labels, statuses and retest due dates into custom fields on the NetBox cables.

    Only cables that came from (or were matched to) that NetBox (or Nautobot, with
    ``flavor="nautobot"``) are written, in one bulk PATCH per 500 cables. The custom fields
    ``cabletrack_label``, ``cabletrack_status`` and ``cabletrack_retest_due`` must exist on
    ``dcim.cable`` there.
    """
    name = "Nautobot" if flavor == "nautobot" else "NetBox"
    source = f"{flavor}:{url.rstrip('/')}"
    refs = dict(
        ExternalRef.objects.filter(source=source, kind="cable").values_list("object_id", "external_id")
    )
    cables = Cable.objects.filter(pk__in=refs).values("pk", "label", "status", "retest_due")
    payload = [
        {
            "id": int(refs[c["pk"]]) if flavor == "netbox" else refs[c["pk"]],
            "custom_fields": {
                "cabletrack_label": c["label"],
                "cabletrack_status": c["status"],
                "cabletrack_retest_due": c["retest_due"].isoformat() if c["retest_due"] else None,
            },
        }
        for c in cables
    ]
    if flavor == "nautobot":
        import pynautobot as client  # heavy client, loaded only for an export

        api = client.api(url.rstrip("/"), token=token, api_version="2.3")
        update = api.dcim.cables.bulk_update
    else:
        import pynetbox as client  # heavy client, loaded only for an export

        api = client.api(url.rstrip("/"), token=token, threading=False)
        update = api.dcim.cables.update
    try:
        for i in range(0, len(payload), 500):
            update(payload[i : i + 500])
    except client.RequestError as exc:
        raise NetboxError(f"{name} refused the update: {exc.req.status_code} {exc.error}") from exc
    except requests.RequestException as exc:
        raise NetboxError(f"{name} at {url} is not reachable: {exc}") from exc
    return len(payload)
