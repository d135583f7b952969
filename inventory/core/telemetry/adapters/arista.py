"""Arista EOS ``show interfaces transceiver detail`` (text) and ``show interfaces transceiver | json``.

Read with ntc-templates' TextFSM template ``arista_eos_show_interfaces_transceiver_detail``
(maintained against real EOS outputs): one row per port and quantity (Temperature, Voltage,
Current, Tx Power, Rx Power) with the module's four thresholds (all kept as the module's judgement). The template refuses any line
it does not know ("LINE NOT FOUND") rather than skipping it, so a changed layout is a 400
naming the line, never a partial sample. EOS abbreviates ``Ethernet`` as ``Et``; the port is
given its full name. One row per port is one lane (EOS prints breakout lanes as ports).

The JSON form (the body starts with ``{``; the one napalm's EOS driver reads for ``get_optics``)
is ``{"interfaces": {port: {"temperature", "voltage", "txBias", "txPower", "rxPower",
"vendorSn", "mediaType", "updateTime", ...}}}``: one lane per port, the serial kept as the
module's. Every other key (``mediaType``, ``updateTime``, and the ``details`` thresholds block
of ``show interfaces transceiver detail | json``, which no real capture here proves) is reported
as ignored, never dropped in silence.
"""

from __future__ import annotations

from typing import Any

from ntc_templates.parse import parse_output
from textfsm import TextFSMError

from inventory.core.telemetry.adapters.common import (
    AdapterError,
    Context,
    Fields,
    as_float,
    body_json,
    body_text,
    judgement_fields,
    need_device,
)

# quantity -> (sample field, lane field?)
_QUANTITY = {
    "Temperature": ("temperature_c", False),
    "Voltage": ("voltage_v", False),
    "Current": ("bias_ma", True),
    "Tx Power": ("tx_power_dbm", True),
    "Rx Power": ("rx_power_dbm", True),
}
# the module's thresholds: quantity -> key prefix, column -> level
_THRESHOLD_QUANTITY = {
    "Temperature": "temperature",
    "Voltage": "voltage",
    "Current": "bias",
    "Tx Power": "tx_power",
    "Rx Power": "rx_power",
}
_THRESHOLD_COLUMNS = {
    "high_alarm_threshold": "high_alarm",
    "high_warn_threshold": "high_warn",
    "low_alarm_threshold": "low_alarm",
    "low_warn_threshold": "low_warn",
}


def _port(name: str) -> str:
    return "Ethernet" + name[2:] if name.startswith("Et") and not name.startswith("Eth") else name


# JSON key -> (sample field, lane field?)
_JSON_FIELDS = {
    "temperature": ("temperature_c", False),
    "voltage": ("voltage_v", False),
    "txBias": ("bias_ma", True),
    "txPower": ("tx_power_dbm", True),
    "rxPower": ("rx_power_dbm", True),
}


def _parse_json(body: bytes, ctx: Context, device: str) -> list[dict]:
    doc = body_json(body)
    interfaces = doc.get("interfaces") if isinstance(doc, dict) else None
    if not isinstance(interfaces, dict) or not interfaces:
        raise AdapterError(
            'Not Arista EOS show interfaces transceiver | json output: no "interfaces" object of ports.'
        )
    ctx.report.ignore(k for k in doc if k != "interfaces")
    samples = []
    for name, values in interfaces.items():
        if not isinstance(values, dict):
            raise AdapterError(f"Arista EOS JSON: port {name!r} is not an object of readings.")
        row = Fields(values)
        s: dict[str, Any] = {"device": device, "port": _port(str(name)), "ts": ctx.ts}
        for key, (field, per_lane) in _JSON_FIELDS.items():
            value = as_float(row.get(key))
            if value is not None:
                s[field] = [value] if per_lane else value
        serial = row.get("vendorSn")
        if isinstance(serial, str) and serial.strip():
            s["module_serial"] = serial.strip()
        ctx.report.ignore(row.unused())
        samples.append(s)
    return samples


def parse_arista_eos(body: bytes, ctx: Context) -> list[dict]:
    device = need_device(ctx, "arista-eos")
    if body.lstrip()[:1] == b"{":
        return _parse_json(body, ctx, device)
    try:
        rows = parse_output(
            platform="arista_eos", command="show interfaces transceiver detail", data=body_text(body)
        )
    except TextFSMError as exc:
        raise AdapterError(f"Not Arista EOS show interfaces transceiver detail output: {exc}") from None
    if not rows:
        raise AdapterError("No port rows in the Arista EOS show interfaces transceiver detail output.")
    samples: dict[str, dict[str, Any]] = {}
    thresholds: dict[str, dict[str, float | None]] = {}
    for row in rows:
        port = _port(row["port"])
        s = samples.setdefault(port, {"device": device, "port": port, "ts": ctx.ts})
        own = thresholds.setdefault(port, {})
        quantity = row["type"].strip()
        if quantity not in _QUANTITY:
            ctx.report.ignore([quantity])
            continue
        field, per_lane = _QUANTITY[quantity]
        value = as_float(row["current_value"])
        if value is not None:
            s[field] = [value] if per_lane else value
        for column, level in _THRESHOLD_COLUMNS.items():
            own[f"{_THRESHOLD_QUANTITY[quantity]}_{level}"] = as_float(row[column])
    for port, s in samples.items():
        s.update(judgement_fields(thresholds[port], {}))
    return [{k: v for k, v in s.items() if v is not None} for s in samples.values()]
