"""The device page and the port page: where a device sits, what is plugged in, and the path."""

from __future__ import annotations

from django.utils import timezone

from inventory.core.natsort import natural_key
from inventory.models import Device, Port, PortAlias, PortTelemetryState
from inventory.models.devices import device_url, port_url
from inventory.selectors.pages.path import path_diagram, port_cable_ends
from inventory.selectors.pages.rack import device_rows
from inventory.selectors.plant.trace import port_trace


def device_page(device: Device) -> dict:
    """The device's cables (ports in natural order), its modules and every port it has."""
    rows, _ = device_rows([device], timezone.now())
    row = rows[device.pk]
    ports = sorted(
        Port.objects.filter(device=device, retired_at__isnull=True)
        .select_related("cage")
        .only("name", "kind", "connector", "cage__name", "cage__index", "speed_gbps", "device_id"),
        key=lambda p: (p.cage.index if p.cage_id else 10_000, natural_key(p.name)),
    )
    by_socket: dict[tuple[str, int], list[Port]] = {}
    for p in ports:
        p.url = port_url(device.name, p.name)
        if p.cage_id:
            by_socket.setdefault((p.cage.name, p.connector or 1), []).append(p)
    # Each plugged cage with the logical ports it carries (the faceplate first, then eth0).
    for c in row.cables:
        for f in c["far"]:
            f["device_url"] = device_url(f["device"])
        if not c["port_id"]:
            c["ports"] = by_socket.get((c["cage"], c["connector"]), [])
    return {
        "device": device,
        "row": row,
        "ports": ports,
        "alert_count": row.alert_count,
        "overdue_count": row.overdue_count,
    }


def port_page(port: Port) -> dict:
    """One port: where it is, the cable in it, the traced path and the names it goes by."""
    ends = port_cable_ends(port)
    trace = port_trace(port) if ends else None
    return {
        "port": port,
        "device": port.device,
        "ends": ends,
        "diagram": path_diagram(trace),
        "aliases": list(
            PortAlias.objects.filter(port=port, valid_to__isnull=True)
            .exclude(name=port.name)
            .order_by("name")
        ),
        "module": getattr(port.cage, "transceiver", None) if port.cage_id else None,
        "module_judgement": module_judgement(port.pk),
    }


_LEVEL_ORDER = ("high_alarm", "high_warn", "low_warn", "low_alarm")
_QUANTITY_LABEL = {
    "temperature": ("Temperature", "°C"),
    "voltage": ("Supply", "V"),
    "bias": ("Tx bias", "mA"),
    "tx_power": ("Tx power", "dBm"),
    "rx_power": ("Rx power", "dBm"),
}


def module_judgement(port_id: int) -> dict | None:
    """The module's own judgement as it last reported it: thresholds per quantity, the flags it
    reports On, and the reading set aside as "sensor suspect" (core.telemetry.dom decides)."""
    state = (
        PortTelemetryState.objects.filter(port_id=port_id)
        .values("module_thresholds", "module_flags", "dom_suspect", "dom_suspect_at")
        .first()
    )
    if state is None or not (state["module_thresholds"] or state["module_flags"] or state["dom_suspect"]):
        return None
    thresholds = state["module_thresholds"] or {}
    rows = []
    for quantity, (label, unit) in _QUANTITY_LABEL.items():
        values = [thresholds.get(f"{quantity}_{level}") for level in _LEVEL_ORDER]
        if any(v is not None for v in values):
            rows.append({"label": label, "unit": unit, "values": values})
    flags = state["module_flags"] or {}
    return {
        "thresholds": rows,
        "flags_on": sorted(k.replace("_", " ") for k, on in flags.items() if on),
        "flags_reported": bool(flags),
        "suspect": state["dom_suspect"],
        "suspect_at": state["dom_suspect_at"],
    }
