"""Read a Nautobot (2.x/3.x) location through its REST API with pynautobot, in NetBox's shapes.

The importer (``inventory.services.interop.netbox``) speaks NetBox 4.x. Nautobot's DCIM models
are NetBox's ancestors and differ in a handful of places, which this module translates, so one
importer serves both:

- a *site* is a Nautobot **location** (found by name), and racks and devices hang off it;
- ids are UUIDs, not integers (``ExternalRef.external_id`` is text for that reason);
- statuses and roles are objects with a ``name`` (``{"name": "Connected"}``), not
  ``{"value": "connected"}``; manufacturers and roles have no slug;
- a cable joins exactly one termination to one: ``termination_a_type`` / ``termination_a_id``
  become NetBox's ``a_terminations`` lists; lengths are integers with a unit;
- a front port names one ``rear_port`` and ``rear_port_position`` (NetBox 4.x: a list);
- a module sits in a ``parent_module_bay`` whose ``parent_device`` is the device; a
  component owned by a module has ``device: null``, so its device is found through the bay;
- module types have no ``attributes``: the transceiver attributes NetBox's "Pluggable
  Transceiver" profile carries (form_factor, ports, port_speed_gbps, media, connector,
  wavelength_nm, reach_m) are read from custom fields named ``transceiver_<attribute>``.

Everything is fetched with ``depth=1`` so nested objects carry their names.
"""

from __future__ import annotations

import requests
from django.utils.text import slugify

from inventory.core.interop.clients import api_client
from inventory.core.interop.snapshot import NetboxError, NetboxSnapshot

#: snapshot key -> (pynautobot endpoint, filter by the location?); module types and
#: manufacturers are read afterwards, by the ids the location's modules and devices reference
ENDPOINTS = {
    "racks": ("racks", True),
    "devices": ("devices", True),
    "module_bays": ("module_bays", False),
    "modules": ("modules", False),
    "interfaces": ("interfaces", False),
    "front_ports": ("front_ports", False),
    "rear_ports": ("rear_ports", False),
    "cables": ("cables", False),
}
ATTRIBUTE_PREFIX = "transceiver_"


def nautobot_fetch(*, url: str, token: str, site: str, timeout: float = 30.0) -> NetboxSnapshot:
    """Read one Nautobot location (``site`` is its name) as a NetBox-shaped snapshot.

    Racks and devices are read by the location, module types and manufacturers by the ids the
    modules and devices reference; components and cables are kept for the location's devices
    only (``nautobot_to_netbox``). Raises ``NetboxError`` with a clear message on failure.
    """
    pynautobot = api_client("nautobot")

    api = pynautobot.api(url.rstrip("/"), token=token, api_version="2.3")
    api.http_session.headers["Accept"] = "application/json"
    raw: dict[str, list[dict]] = {}
    try:
        locations = [dict(r) for r in api.dcim.locations.filter(name=site, depth=1)]
        if not locations:
            raise NetboxError(f"Nautobot has no location {site!r}.")
        location = locations[0]
        raw["locations"] = locations
        for key, (endpoint, by_location) in ENDPOINTS.items():
            ep = getattr(api.dcim, endpoint)
            records = ep.filter(location=location["id"], depth=1) if by_location else ep.filter(depth=1)
            raw[key] = [dict(r) for r in records]
        type_ids = {_id(m.get("module_type")) for m in raw["modules"]} - {None}
        raw["module_types"] = _by_ids(api.dcim.module_types, type_ids)
        makers = {_id((d.get("device_type") or {}).get("manufacturer")) for d in raw["devices"]}
        makers |= {_id(t.get("manufacturer")) for t in raw["module_types"]}
        raw["manufacturers"] = _by_ids(api.dcim.manufacturers, makers - {None})
    except pynautobot.RequestError as exc:
        raise NetboxError(f"Nautobot refused {exc.req.url}: {exc.req.status_code} {exc.error}") from exc
    except requests.RequestException as exc:
        raise NetboxError(f"Nautobot at {url} is not reachable: {exc}") from exc
    snap = NetboxSnapshot(source=url.rstrip("/"), site=site, flavor="nautobot")
    snap.objects = nautobot_to_netbox(raw)
    return snap


def nautobot_to_netbox(raw: dict[str, list[dict]]) -> dict[str, list[dict]]:
    """Nautobot depth-1 records -> the NetBox 4.x shapes the importer reads (pure; tested)."""
    devices = {d["id"] for d in raw.get("devices", [])}
    bays = {b["id"]: b for b in raw.get("module_bays", []) if _id(b.get("parent_device")) in devices}
    modules = {m["id"]: m for m in raw.get("modules", []) if _id(m.get("parent_module_bay")) in bays}
    module_device = {
        mid: _id(bays[_id(m["parent_module_bay"])]["parent_device"]) for mid, m in modules.items()
    }

    def owner(component: dict) -> str | None:
        return _id(component.get("device")) or module_device.get(_id(component.get("module")))

    def local(rows: list[dict]) -> list[dict]:
        return [c for c in rows if owner(c) in devices]

    ports = {
        kind: local(raw.get(key, []))
        for kind, key in (
            ("interface", "interfaces"),
            ("frontport", "front_ports"),
            ("rearport", "rear_ports"),
        )
    }
    port_ids = {p["id"] for rows in ports.values() for p in rows}
    return {
        **_places_and_devices(raw),
        **_modules(raw, bays, modules),
        **_ports(ports, owner),
        "cables": _cables(raw.get("cables", []), port_ids),
    }


def _places_and_devices(raw: dict[str, list[dict]]) -> dict[str, list[dict]]:
    """The location (as NetBox's site), its racks, the manufacturers and the devices."""
    loc = raw["locations"][0]
    return {
        "sites": [
            {
                "id": loc["id"],
                "name": loc["name"],
                "slug": slugify(loc["name"]),
                "facility": loc.get("facility") or "",
            }
        ],
        "racks": [
            {"id": r["id"], "name": r["name"], "u_height": r.get("u_height")} for r in raw.get("racks", [])
        ],
        "manufacturers": [
            {"id": m["id"], "name": m["name"], "slug": slugify(m["name"])}
            for m in raw.get("manufacturers", [])
        ],
        "devices": [
            {
                "id": d["id"],
                "name": d["name"],
                "device_type": {
                    "model": (d.get("device_type") or {}).get("model", ""),
                    "manufacturer": {"id": _id((d.get("device_type") or {}).get("manufacturer"))},
                },
                "role": {"slug": slugify((d.get("role") or {}).get("name", ""))},
                "rack": {"id": _id(d.get("rack"))} if d.get("rack") else None,
                "position": d.get("position"),
                "serial": d.get("serial") or "",
                "asset_tag": d.get("asset_tag"),
            }
            for d in raw.get("devices", [])
        ],
    }


def _modules(
    raw: dict[str, list[dict]], bays: dict[str, dict], modules: dict[str, dict]
) -> dict[str, list[dict]]:
    """Module types (transceiver attributes from custom fields), the local bays and modules."""
    return {
        "module_types": [
            {
                "id": t["id"],
                "model": t["model"],
                "part_number": t.get("part_number") or "",
                "manufacturer": {"id": _id(t.get("manufacturer"))},
                "attributes": {
                    k.removeprefix(ATTRIBUTE_PREFIX): v
                    for k, v in (t.get("custom_fields") or {}).items()
                    if k.startswith(ATTRIBUTE_PREFIX) and v not in (None, "")
                },
            }
            for t in raw.get("module_types", [])
        ],
        "module_bays": [
            {
                "id": b["id"],
                "name": b["name"],
                "position": b.get("position"),
                "device": {"id": _id(b["parent_device"])},
            }
            for b in bays.values()
        ],
        "modules": [
            {
                "id": m["id"],
                "serial": m.get("serial") or "",
                "module_type": {"id": _id(m.get("module_type"))},
                "module_bay": {"id": _id(m.get("parent_module_bay"))},
                "status": {"value": _status(m)},
            }
            for m in modules.values()
        ],
    }


def _ports(ports: dict[str, list[dict]], owner) -> dict[str, list[dict]]:
    """Interfaces, rear ports and front ports (a front port's one rear port becomes a list)."""
    return {
        "interfaces": [
            {
                "id": i["id"],
                "name": i["name"],
                "label": i.get("label") or "",
                "type": i.get("type"),
                "device": {"id": owner(i)},
                "module": {"id": _id(i["module"])} if i.get("module") else None,
            }
            for i in ports["interface"]
        ],
        "rear_ports": [
            {
                "id": p["id"],
                "name": p["name"],
                "type": p.get("type"),
                "positions": p.get("positions") or 1,
                "device": {"id": owner(p)},
            }
            for p in ports["rearport"]
        ],
        "front_ports": [
            {
                "id": p["id"],
                "name": p["name"],
                "type": p.get("type"),
                "device": {"id": owner(p)},
                "rear_ports": [
                    {"rear_port": _id(p["rear_port"]), "rear_port_position": p.get("rear_port_position") or 1}
                ]
                if p.get("rear_port")
                else [],
            }
            for p in ports["frontport"]
        ],
    }


def _cables(cables: list[dict], port_ids: set[str]) -> list[dict]:
    """Cables between two local ports, their one-to-one ends as NetBox's termination lists."""
    return [
        {
            "id": c["id"],
            "label": c.get("label") or "",
            "type": c.get("type"),
            "status": {"value": _status(c)},
            "color": c.get("color") or "",
            "length": c.get("length"),
            "length_unit": c.get("length_unit"),
            "description": c.get("description") or "",
            "custom_fields": c.get("custom_fields") or {},
            "a_terminations": [{"object_type": c["termination_a_type"], "object_id": c["termination_a_id"]}],
            "b_terminations": [{"object_type": c["termination_b_type"], "object_id": c["termination_b_id"]}],
        }
        for c in cables
        if c.get("termination_a_id") in port_ids and c.get("termination_b_id") in port_ids
    ]


def _by_ids(endpoint, ids: set) -> list[dict]:
    """The records with these ids, 100 per request (none asked, none read)."""
    wanted = sorted(ids)
    out: list[dict] = []
    for i in range(0, len(wanted), 100):
        out += [dict(r) for r in endpoint.filter(id=wanted[i : i + 100], depth=1)]
    return out


def _id(ref) -> str | None:
    if isinstance(ref, dict):
        return ref.get("id")
    return ref


def _status(obj: dict) -> str:
    s = obj.get("status")
    if isinstance(s, dict):
        return slugify(s.get("name") or s.get("value") or "")
    return slugify(s or "")
