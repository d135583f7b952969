"""Arista EOS ``show interfaces transceiver detail`` (text), ``show interfaces transceiver [detail] | json``
and ``show interfaces phy detail | json``.

Read with ntc-templates' TextFSM template ``arista_eos_show_interfaces_transceiver_detail``
(maintained against real EOS outputs): one row per port and quantity (Temperature, Voltage,
Current, Tx Power, Rx Power) with the module's four thresholds (all kept as the module's judgement). The template refuses any line
it does not know ("LINE NOT FOUND") rather than skipping it, so a changed layout is a 400
naming the line, never a partial sample. EOS abbreviates ``Ethernet`` as ``Et``; the port is
given its full name. One row per port is one lane (EOS prints breakout lanes as ports).

The JSON form (the body starts with ``{``; the one napalm's EOS driver reads for ``get_optics``)
is ``{"interfaces": {port: {"temperature", "voltage", "txBias", "txPower", "rxPower",
"vendorSn", "mediaType", "updateTime", ...}}}``: one lane per port, the serial kept as the
module's. ``show interfaces transceiver detail | json`` adds ``details``: the module's own four
thresholds of each quantity (``txBias`` ``highAlarm`` ...), kept as its judgement; a threshold
the operator overrode (``highAlarmOverridden: true``) is not the module's and is reported as
ignored, as are the ``...Overridden`` flags and ``totalRxPower`` (no numbers). Every other key
(``mediaType``, ``updateTime``, ``slot``, ...) is reported as ignored, never dropped in silence.

``show interfaces phy detail | json`` (``{"interfacePhyStatuses": {port: {"phyStatuses": [...],
...}}}``): from the PHY on the line side (the one facing the module; a port with a single PHY
uses it), the RS-FEC ``correctedCodewords`` and ``uncorrectedCodewords`` values (cumulative
since the last ``clear counters``), the per-lane ``correctedSymbols`` summed as the corrected
symbols, and ``operSpeed`` as the trained speed. Their ``changes`` / ``lastChange`` companions,
the serdes tuning, PCS and PMA states, MAC faults and the transceiver block are reported as
ignored. Hand-read, not TextFSM: ntc-templates ships no template for this command.
"""

from __future__ import annotations

import re
from typing import Any

from ntc_templates.parse import parse_output
from textfsm import TextFSMError

from inventory.core.telemetry.adapters.common import (
    AdapterError,
    Context,
    Fields,
    as_float,
    as_int,
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
    if isinstance(doc, dict) and "interfacePhyStatuses" in doc:
        return _parse_phy_json(doc, ctx, device)
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
        details = row.get("details")
        if details is not None:
            s.update(judgement_fields(_details(details, ctx), {}))
        ctx.report.ignore(row.unused())
        samples.append({k: v for k, v in s.items() if v is not None})
    return samples


# show interfaces transceiver detail | json, "details": quantity -> key prefix, limit -> level
_DETAIL_QUANTITY = {
    "temperature": "temperature",
    "voltage": "voltage",
    "txBias": "bias",
    "txPower": "tx_power",
    "rxPower": "rx_power",
}
_DETAIL_LEVEL = {
    "highAlarm": "high_alarm",
    "highWarn": "high_warn",
    "lowAlarm": "low_alarm",
    "lowWarn": "low_warn",
}


def _details(details: Any, ctx: Context) -> dict[str, float | None]:
    """The module's own thresholds from the ``details`` block; what is not one is named."""
    if not isinstance(details, dict):
        raise AdapterError("Arista EOS JSON: details is not an object of thresholds.")
    out: dict[str, float | None] = {}
    ignored: list[str] = []
    for quantity, limits in details.items():
        prefix = _DETAIL_QUANTITY.get(quantity)
        if not isinstance(limits, dict):
            ignored.append(f"details.{quantity}")
            continue
        for key, value in limits.items():
            level = _DETAIL_LEVEL.get(key)
            number = as_float(value)
            if prefix is None or level is None or number is None or limits.get(f"{key}Overridden") is True:
                ignored.append(f"details.{quantity}.{key}")
                continue
            out[f"{prefix}_{level}"] = number
    ctx.report.ignore(ignored)
    return out


_SPEED = re.compile(r"^(\d+(?:\.\d+)?)Gbps$")
_PHY_FEC = (
    ("correctedCodewords", "fec_corrected_codewords"),
    ("uncorrectedCodewords", "fec_uncorrectable_codewords"),
)


def _count(attr: Any, where: str, ctx: Context) -> int:
    """A PHY attribute ``{"value", "changes", "lastChange"}`` -> its value, a count."""
    if not isinstance(attr, dict) or "value" not in attr:
        raise AdapterError(f"Arista EOS phy JSON: {where} has no value.")
    value = attr["value"]
    n = as_int(value)
    if n is None or n < 0 or isinstance(value, bool):
        raise AdapterError(f"Arista EOS phy JSON: {where} is not a count: {value!r}.")
    ctx.report.ignore(f"{where}.{k}" for k in attr if k != "value")
    return n


def _line_phy(statuses: Any, port: str) -> dict | None:
    """The PHY facing the module: the only one, or the one whose location is ``line``."""
    if not isinstance(statuses, list):
        raise AdapterError(f"Arista EOS phy JSON: {port} phyStatuses is not a list.")
    if len(statuses) <= 1:
        phy = statuses[0] if statuses else None
    else:
        line = [
            p
            for p in statuses
            if isinstance(p, dict) and (p.get("description") or {}).get("location") == "line"
        ]
        if len(line) != 1:
            raise AdapterError(
                f"Arista EOS phy JSON: {port} has {len(statuses)} PHYs and not one on the line side."
            )
        phy = line[0]
    if phy is not None and not isinstance(phy, dict):
        raise AdapterError(f"Arista EOS phy JSON: {port} phyStatuses holds a non-object.")
    return phy


def _parse_phy_json(doc: dict, ctx: Context, device: str) -> list[dict]:
    statuses = doc["interfacePhyStatuses"]
    if not isinstance(statuses, dict) or not statuses:
        raise AdapterError('Arista EOS phy JSON: "interfacePhyStatuses" holds no port.')
    ctx.report.ignore(k for k in doc if k != "interfacePhyStatuses")
    samples = []
    for name, values in statuses.items():
        if not isinstance(values, dict):
            raise AdapterError(f"Arista EOS phy JSON: port {name!r} is not an object.")
        row = Fields(values)
        s: dict[str, Any] = {"device": device, "port": _port(str(name)), "ts": ctx.ts}
        phys = row.get("phyStatuses")
        phy = _line_phy(phys, str(name))
        if phy is not None:
            p = Fields(phy)
            fec = p.get("fec")
            if isinstance(fec, dict):
                f = Fields(fec)
                for key, field in _PHY_FEC:
                    if key in f:
                        s[field] = _count(f[key], f"fec.{key}", ctx)
                symbols = f.get("correctedSymbols")
                if isinstance(symbols, dict) and symbols:
                    s["fec_symbol_errors"] = sum(
                        _count(a, "fec.correctedSymbols", ctx) for a in symbols.values()
                    )
                ctx.report.ignore(f"fec.{k}" for k in f.unused())
            elif fec is not None:
                raise AdapterError(f"Arista EOS phy JSON: {name} fec is not an object.")
            m = _SPEED.match(str(p.get("operSpeed") or ""))
            if m:
                s["speed_gbps"] = float(m.group(1))
            elif "operSpeed" in p:
                ctx.report.ignore(["operSpeed"])
            ctx.report.ignore(p.unused())
        for extra in phys if isinstance(phys, list) else []:
            if extra is not phy:
                ctx.report.ignore(["phyStatuses (not the line side)"])
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
