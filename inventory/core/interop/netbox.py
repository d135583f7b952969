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

ENDPOINTS = {
    "sites": "sites",
    "racks": "racks",
    "devices": "devices",
    "manufacturers": None,
    "module_bays": "module_bays",
    "module_types": None,
    "modules": "modules",
    "interfaces": "interfaces",
    "front_ports": "front_ports",
    "rear_ports": "rear_ports",
    "cables": "cables",
}


def netbox_fetch(*, url: str, token: str, site: str, timeout: float = 30.0) -> NetboxSnapshot:
    """Read one site from NetBox. Raises ``NetboxError`` with a clear message on failure."""
    pynetbox = api_client("netbox")
    api = pynetbox.api(url.rstrip("/"), token=token, threading=False)
    session = requests.Session()
    session.headers["Accept"] = "application/json"
    api.http_session = session
    snap = NetboxSnapshot(source=url.rstrip("/"), site=site)
    try:
        for key, filt in ENDPOINTS.items():
            endpoint = getattr(api.dcim, key)
            records = endpoint.filter(site=site) if filt else endpoint.all()
            snap.objects[key] = [dict(r) for r in records]
    except pynetbox.RequestError as exc:
        raise NetboxError(f"NetBox refused {exc.req.url}: {exc.req.status_code} {exc.error}") from exc
    except requests.RequestException as exc:
        raise NetboxError(f"NetBox at {url} is not reachable: {exc}") from exc
    return snap


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
