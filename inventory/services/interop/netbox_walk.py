"""The NetBox import's walk: sites, racks and devices, modules, ports (cables in ``netbox_cables``).

Every object is found by its ``ExternalRef`` (else its natural key), created or updated, and
recorded in the plan as a ``Change``.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.utils import timezone
from django.utils.text import slugify

from inventory.core.choices import DeviceRole, FormFactor, PortKind, TransceiverStatus
from inventory.core.interop.netbox import NetboxSnapshot, choice
from inventory.core.interop.netbox_vocab import MODULE_STATUS_FROM_NETBOX
from inventory.core.names import name_problem
from inventory.models import (
    Cage,
    Device,
    ExternalRef,
    Port,
    PortAlias,
    PortMapping,
    Rack,
    Room,
    Row,
    Site,
    Transceiver,
    TransceiverModel,
    TransceiverPlacement,
    Vendor,
)
from inventory.services.interop.netbox_cables import NetboxCableStep
from inventory.services.interop.netbox_map import (
    LABEL_BAY,
    PORT_TYPE_CONNECTOR,
    ROLE_MAP,
    change_value,
    interface_speed,
    module_type_values,
)
from inventory.services.interop.netbox_report import Change, NetboxPlan
from inventory.services.plant import cable_sites


class NetboxImporter(NetboxCableStep):
    """One walk of a NetBox snapshot: sites, racks, devices, modules, ports, then cables."""

    def __init__(self, snap: NetboxSnapshot, plan: NetboxPlan, actor):
        self.snap = snap
        self.plan = plan
        self.actor = actor
        self.source = f"{snap.flavor}:{snap.source}"
        self.name = "Nautobot" if snap.flavor == "nautobot" else "NetBox"
        self.refs: dict[tuple[str, str], int] = {}
        self.kept: dict[tuple[str, str], dict] = {}
        for kind, ext_id, object_id, attributes in ExternalRef.objects.filter(source=self.source).values_list(
            "kind", "external_id", "object_id", "attributes"
        ):
            self.refs[(kind, ext_id)] = object_id
            self.kept[(kind, ext_id)] = attributes
        self.now = timezone.now()

    # --- bookkeeping -------------------------------------------------------------------
    # NetBox ids are integers, Nautobot's UUIDs: both are kept as text.
    def ref(self, kind: str, ext_id: int | str) -> int | None:
        return self.refs.get((kind, str(ext_id)))

    def remember(self, kind: str, ext_id: int | str, obj, attributes: dict | None = None) -> None:
        """Record that ``obj`` is that object there, with what was kept verbatim of it;
        written only when something differs (a re-import of an unchanged site writes nothing)."""
        key = (kind, str(ext_id))
        same_attrs = attributes is None or self.kept.get(key) == attributes
        if self.refs.get(key) != obj.pk or not same_attrs:
            defaults = {"object_id": obj.pk}
            if attributes is not None:
                defaults["attributes"] = attributes
                self.kept[key] = attributes
            ExternalRef.objects.update_or_create(
                source=self.source, kind=kind, external_id=str(ext_id), defaults=defaults
            )
            self.refs[key] = obj.pk

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
                k: {"old": change_value(getattr(obj, k)), "new": change_value(v)}
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

    def _refused(self, kind: str, ext_id, name) -> bool:
        """A name this plant cannot take (``core.names``): a conflict naming the object, and the
        object is left out of this run (the rest of the site is imported)."""
        problem = name_problem(name)
        if problem is None:
            return False
        detail = f"{self.name} {kind} #{ext_id} is named {name!r}: {problem} Rename it in {self.name}."
        self.plan.changes.append(Change(kind, repr(name), "conflict", detail))
        return True

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
        problem = name_problem(nb_site.get("name"))
        if problem and not self.ref("site", nb_site["id"]):
            # Nothing can be imported without the site: the run stops and says why.
            raise ValidationError(f"{self.name} site #{nb_site['id']} {nb_site.get('name')!r}: {problem}")
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
        facility = nb_site.get("facility") or "Default"
        if self._refused("site facility", nb_site["id"], facility):
            facility = "Default"
        room, _ = Room.objects.get_or_create(site=site, name=facility)
        row, _ = Row.objects.get_or_create(room=room, name=self.name)
        self.racks = {}
        refused_racks = set()
        for r in self.snap["racks"]:
            name = r["name"]
            if self._refused("rack", r["id"], name):
                refused_racks.add(r["id"])
                continue
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
            if self._refused("device", d["id"], d.get("name")):
                continue
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
            if (d.get("rack") or {}).get("id") in refused_racks:
                del values["rack"], values["position_u"]  # where it is here stays as it is
            self.devices[d["id"]] = self.upsert(
                Device, "device", d["id"], d["name"], {"name": d["name"]}, values
            )
        self._modules()
        self._ports()
        self._cables()
        # New cables, devices moved to other racks, racks to other rows: the list's site column.
        cable_sites.cable_sites_refresh_for_devices(device_ids=[d.pk for d in self.devices.values()])

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
                module_type_values(t),
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
        status = choice(m.get("status")) or "active"
        here = MODULE_STATUS_FROM_NETBOX.get(status, TransceiverStatus.INSTALLED)
        self.remember("module", m["id"], xcvr, {"netbox": {"status": status}, "here": {"status": str(here)}})

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
            speed = interface_speed(choice(it.get("type")))
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
        self.mappings = {
            m.front_port_id: m
            for m in PortMapping.objects.filter(front_port__device__in=list(self.devices.values()))
        }
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
                self._mapping(front, rear, int(mapping.get("rear_port_position") or 1))

    def _mapping(self, front: Port, rear: Port, position: int) -> None:
        """A front port's rear port and position, written (with history) only when they differ."""
        key = f"{front.device.name}:{front.name}"
        current = self.mappings.get(front.pk)
        if current is None:
            PortMapping.objects.create(front_port=front, rear_port=rear, rear_position=position)
            self.plan.changes.append(Change("port_mapping", key, "create"))
        elif (current.rear_port_id, current.rear_position) != (rear.pk, position):
            diff = {
                "rear_port": {"old": str(current.rear_port_id), "new": str(rear.pk)},
                "rear_position": {"old": str(current.rear_position), "new": str(position)},
            }
            current.rear_port, current.rear_position = rear, position
            current.save()
            self.plan.changes.append(Change("port_mapping", key, "change", diff))
        else:
            self.plan.changes.append(Change("port_mapping", key, "unchanged"))

    def _port(self, nb: dict, dev: Device, values: dict, kind: str = "interface") -> Port:
        port = self.upsert(
            Port, kind, nb["id"], f"{dev.name}:{nb['name']}", {"device": dev, "name": nb["name"]}, values
        )
        if not PortAlias.objects.filter(port=port, name=port.name, valid_to__isnull=True).exists():
            PortAlias.objects.create(port=port, device=dev, name=port.name, source="netbox")
        return port
