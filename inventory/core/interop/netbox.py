"""Read a NetBox (4.x) site through its REST API with pynetbox, into plain dicts.

Only what cabletrack models is fetched: sites, racks, devices, module bays, module types,
modules (transceivers), interfaces, front/rear ports with their mappings, and cables with
their terminations and custom fields. Nautobot 2.x/3.x answers the same DCIM endpoints for
these objects closely enough for this reader (its module bays and cable terminations use
the same shapes); differences are handled where they show.
"""

from __future__ import annotations

import requests

from inventory.core.interop.clients import api_client
from inventory.core.interop.nautobot import nautobot_fetch
from inventory.core.interop.snapshot import NetboxError, NetboxSnapshot

#: snapshot key -> pynetbox endpoint, each filtered by the site's slug (NetBox's ``site`` filter)
SITE_ENDPOINTS = (
    "racks",
    "devices",
    "module_bays",
    "modules",
    "interfaces",
    "front_ports",
    "rear_ports",
    "cables",
)
#: ids per request when fetching the manufacturers and module types a site references
ID_CHUNK = 100


def netbox_fetch(*, url: str, token: str, site: str, timeout: float = 30.0) -> NetboxSnapshot:
    """Read one site from NetBox. Raises ``NetboxError`` with a clear message on failure.

    The site is found by slug (else by name): NetBox's ``sites`` endpoint has no ``site``
    filter. Everything else is filtered by that slug, and only the manufacturers and module
    types the site's devices and modules reference are read (by id), never the instance's whole
    catalogue.
    """
    pynetbox = api_client("netbox")
    api = pynetbox.api(url.rstrip("/"), token=token, threading=False)
    session = requests.Session()
    session.headers["Accept"] = "application/json"
    api.http_session = session
    snap = NetboxSnapshot(source=url.rstrip("/"), site=site)
    try:
        sites = [dict(r) for r in api.dcim.sites.filter(slug=site)] or [
            dict(r) for r in api.dcim.sites.filter(name=site)
        ]
        snap.objects["sites"] = sites
        if not sites:
            return snap
        slug = sites[0]["slug"]
        for key in SITE_ENDPOINTS:
            snap.objects[key] = [dict(r) for r in getattr(api.dcim, key).filter(site=slug)]
        type_ids = {(m.get("module_type") or {}).get("id") for m in snap["modules"]} - {None}
        snap.objects["module_types"] = _by_ids(api.dcim.module_types, type_ids)
        makers = {
            ((d.get("device_type") or {}).get("manufacturer") or {}).get("id") for d in snap["devices"]
        } | {(t.get("manufacturer") or {}).get("id") for t in snap["module_types"]}
        snap.objects["manufacturers"] = _by_ids(api.dcim.manufacturers, makers - {None})
    except pynetbox.RequestError as exc:
        raise NetboxError(f"NetBox refused {exc.req.url}: {exc.req.status_code} {exc.error}") from exc
    except requests.RequestException as exc:
        raise NetboxError(f"NetBox at {url} is not reachable: {exc}") from exc
    return snap


def _by_ids(endpoint, ids: set) -> list[dict]:
    """The records with these ids (none asked, none read: ``filter(id=[])`` would list all)."""
    wanted = sorted(ids)
    out: list[dict] = []
    for i in range(0, len(wanted), ID_CHUNK):
        out += [dict(r) for r in endpoint.filter(id=wanted[i : i + ID_CHUNK])]
    return out


FLAVORS = ("netbox", "nautobot")


def source_fetch(*, url: str, token: str, site: str, flavor: str = "netbox") -> NetboxSnapshot:
    """Read one site from NetBox, or one location from Nautobot (``flavor="nautobot"``)."""
    if flavor == "nautobot":
        return nautobot_fetch(url=url, token=token, site=site)
    if flavor != "netbox":
        raise NetboxError(f"Unknown source {flavor!r}: use one of {', '.join(FLAVORS)}.")
    return netbox_fetch(url=url, token=token, site=site)


def choice(value) -> str:
    """NetBox returns choices as ``{value, label}`` in some places and plain strings in others."""
    if isinstance(value, dict):
        return str(value.get("value", ""))
    return "" if value is None else str(value)
