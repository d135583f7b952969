"""SONiC transceiver DOM: ``show interfaces transceiver eeprom --dom`` and STATE_DB's
``TRANSCEIVER_DOM_SENSOR`` / ``TRANSCEIVER_DOM_THRESHOLD`` / ``TRANSCEIVER_INFO`` hashes.

Read from sonic-utilities' own ``sfpshow`` output layout (``<port>: SFP EEPROM detected``, then
``Key: value`` lines and the ``ChannelMonitorValues`` / ``ChannelThresholdValues`` /
``ModuleMonitorValues`` / ``ModuleThresholdValues`` sections) and from the STATE_DB field names
xcvrd writes (``rx1power``, ``tx1bias``, ``tx1power``, ``temperature``, ``voltage``,
``rxpowerlowwarning``, ...). Lanes are numbered from 1 in both; sample lanes from 0.
"""

from __future__ import annotations

import re
from typing import Any

from inventory.core.telemetry.adapters.common import (
    AdapterError,
    Context,
    Fields,
    as_float,
    body_json,
    body_text,
    clean,
    judgement_fields,
    lane_list,
    need_device,
)

_NUMBER = re.compile(r"^\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)")
# CLI identity keys and STATE_DB TRANSCEIVER_INFO names (old and new xcvrd schema) -> fields
_IDENTITY = {
    "Vendor Name": "module_vendor",
    "Vendor PN": "module_part",
    "Vendor SN": "module_serial",
    "manufacturer": "module_vendor",
    "manufacturename": "module_vendor",
    "model": "module_part",
    "modelname": "module_part",
    "serial": "module_serial",
    "serialnum": "module_serial",
}
# STATE_DB names (the CLI's are the same, lower-cased without spaces) -> fields
_SCALARS = {"temperature": "temperature_c", "voltage": "voltage_v", "vcc": "voltage_v"}
# the module's thresholds: rxpowerhighalarm, txbiaslowwarning, temphighwarning, vcclowalarm, ...
_THRESHOLD = re.compile(r"(rxpower|txpower|txbias|temp|vcc)(high|low)(alarm|warning)")
_THRESHOLD_QUANTITY = {
    "rxpower": "rx_power",
    "txpower": "tx_power",
    "txbias": "bias",
    "temp": "temperature",
    "vcc": "voltage",
}
_LANE = re.compile(r"(rx|tx)(\d+)(power|bias)")
_LANE_FIELD = {("rx", "power"): "rx_power_dbm", ("tx", "power"): "tx_power_dbm", ("tx", "bias"): "bias_ma"}


def _value(text: Any) -> float | None:
    """'0.3802dBm' / '6.7500mA' / '30.9258C' / '3.2824Volts' / 'N/A' -> number or None."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text)
    m = _NUMBER.match(str(text))
    return as_float(m.group(1)) if m else None


def _sample(device: str, port: str, ctx: Context, record: Fields) -> dict[str, Any]:
    """One port's record (name -> value, names normalised to STATE_DB's) -> a sample dict."""
    s: dict[str, Any] = {"device": device, "port": port, "ts": ctx.ts}
    lanes: dict[str, dict[int, float | None]] = {}
    thresholds: dict[str, float | None] = {}
    for name in list(record):
        key = name.replace(" ", "").lower()
        if m := _THRESHOLD.fullmatch(key):
            level = f"{m.group(2)}_{'alarm' if m.group(3) == 'alarm' else 'warn'}"
            thresholds[f"{_THRESHOLD_QUANTITY[m.group(1)]}_{level}"] = _value(record[name])
        elif name in _IDENTITY:
            value = str(record[name]).strip()
            if value and value.upper() != "N/A":
                s[_IDENTITY[name]] = value
        elif key in _SCALARS:
            s[_SCALARS[key]] = _value(record[name])
        elif (m := _LANE.fullmatch(key)) and (m.group(1), m.group(3)) in _LANE_FIELD:
            lanes.setdefault(_LANE_FIELD[(m.group(1), m.group(3))], {})[int(m.group(2)) - 1] = _value(
                record[name]
            )
            record.use(name)
    for field, values in lanes.items():
        if any(v is not None for v in values.values()):
            s[field] = lane_list(values)
    s.update(judgement_fields(thresholds, {}))
    ctx.report.ignore(record.unused())
    return clean(s)


def _parse_cli(text: str, device: str, ctx: Context) -> list[dict]:
    records: list[tuple[str, Fields]] = []
    for line in text.splitlines():
        head = re.match(r"^(\S+): SFP EEPROM (detected|not detected|Not detected)", line)
        if head:
            if head.group(2) == "detected":
                records.append((head.group(1), Fields()))
            else:
                ctx.report.ignore([f"{head.group(1)}: SFP EEPROM not detected"])
            continue
        if not records or ":" not in line:
            continue
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if not key or not value:
            continue  # a section heading ("ChannelMonitorValues:") or an empty value
        records[-1][1][key] = value
    if not records:
        raise AdapterError(
            "No '<port>: SFP EEPROM detected' block in the output of show interfaces transceiver eeprom --dom."
        )
    return [_sample(device, port, ctx, record) for port, record in records]


def _parse_state_db(data: Any, device: str, ctx: Context) -> list[dict]:
    if not isinstance(data, dict):
        raise AdapterError("STATE_DB JSON: expected an object of TRANSCEIVER_* hashes.")
    by_port: dict[str, Fields] = {}
    flat = {k: v for k, v in data.items() if not isinstance(v, dict)}
    if flat:
        if not ctx.port:
            raise AdapterError("A single TRANSCEIVER_DOM_SENSOR hash does not name the port: pass ?port=.")
        by_port[ctx.port] = Fields(flat)
    for key, value in data.items():
        if not isinstance(value, dict):
            continue
        table, _, port = str(key).partition("|")
        if (
            table not in ("TRANSCEIVER_DOM_SENSOR", "TRANSCEIVER_DOM_THRESHOLD", "TRANSCEIVER_INFO")
            or not port
        ):
            ctx.report.ignore([str(key)])
            continue
        by_port.setdefault(port, Fields()).update(value)
    if not by_port:
        raise AdapterError("No TRANSCEIVER_DOM_SENSOR / TRANSCEIVER_DOM_THRESHOLD hash in the STATE_DB JSON.")
    return [_sample(device, port, ctx, record) for port, record in by_port.items()]


def parse_sonic_dom(body: bytes, ctx: Context) -> list[dict]:
    device = need_device(ctx, "sonic-dom")
    if body.lstrip()[:1] == b"{":
        return _parse_state_db(body_json(body), device, ctx)
    return _parse_cli(body_text(body), device, ctx)
