"""NetBox (and Nautobot, read into NetBox's shapes) mapped onto our plant: roles, cable types and
statuses, units, connectors, and the field values of module types and cables. No ORM."""

from __future__ import annotations

import re
from datetime import date

from django.core.exceptions import ValidationError

from inventory.core.choices import CableStatus, ConnectorType, DeviceRole, FormFactor, Polish
from inventory.core.interop.netbox import choice
from inventory.core.interop.netbox_vocab import (
    CABLE_STATUS_FROM_NETBOX,
    LengthUnitError,
    length_in_m,
    netbox_number,
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


def module_type_values(t: dict) -> dict:
    """A NetBox module type (its custom attributes) as our transceiver model's fields."""
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


def cable_values(c: dict) -> tuple[dict, dict[str, str]]:
    """A NetBox cable's length, colour, install date, status and notes as our cable's fields, and
    the fields it gives no value of ours for, with why (a length in a unit NetBox does not have:
    never read as metres; that field is ``None`` in the values)."""
    install = (c.get("custom_fields") or {}).get("install_date")
    problems = {}
    try:
        length_m = length_in_m(c.get("length"), choice(c.get("length_unit")) or "m")
    except LengthUnitError as exc:
        length_m, problems["length_m"] = None, str(exc)
    values = {
        "length_m": length_m,
        "color": (c.get("color") or "")[:6],
        "install_date": date.fromisoformat(install) if install else None,
        "status": CABLE_STATUS_FROM_NETBOX.get(choice(c.get("status")), CableStatus.PLANNED),
        "notes": c.get("description") or "",
    }
    return values, problems


def cable_netbox_values(c: dict) -> dict:
    """The NetBox values of a cable that an import keeps verbatim (see ``netbox_vocab``)."""
    return {
        "type": choice(c.get("type")),
        "status": choice(c.get("status")),
        "length": netbox_number(c.get("length")) or None,
        "length_unit": choice(c.get("length_unit")) or None,
        "profile": choice(c.get("profile")) or None,
        # Kept so the NetBox CSV export writes them back (cabletrack has no tags; comments are
        # NetBox's long text, apart from the description that becomes our notes).
        "tags": ",".join(sorted(t.get("slug") or t.get("name") or "" for t in c.get("tags") or [])) or None,
        "comments": c.get("comments") or None,
    }


def interface_speed(iftype: str) -> int | None:
    """Gb/s from a NetBox interface type (``400gbase-x-osfp`` -> 400)."""
    m = re.match(r"^(\d+)g", iftype)
    return int(m.group(1)) if m else None


def change_value(v):
    """A value as a change report shows it: text, a related object by its id, or None."""
    return None if v is None else str(getattr(v, "pk", v))


def validation_messages(exc: ValidationError) -> list[str]:
    """A ValidationError as ``field: message`` lines."""
    if hasattr(exc, "message_dict"):
        return [f"{k}: {m}" for k, ms in exc.message_dict.items() for m in ms]
    return list(exc.messages)
