"""Arista EOS ``show interfaces transceiver detail`` (text).

Read with ntc-templates' TextFSM template ``arista_eos_show_interfaces_transceiver_detail``
(maintained against real EOS outputs): one row per port and quantity (Temperature, Voltage,
Current, Tx Power, Rx Power) with the module's four thresholds. The template refuses any line
it does not know ("LINE NOT FOUND") rather than skipping it, so a changed layout is a 400
naming the line, never a partial sample. EOS abbreviates ``Ethernet`` as ``Et``; the port is
given its full name. One row per port is one lane (EOS prints breakout lanes as ports).
"""

from __future__ import annotations

from typing import Any

from ntc_templates.parse import parse_output
from textfsm import TextFSMError

from inventory.core.telemetry.adapters.common import AdapterError, Context, as_float, body_text, need_device

# quantity -> (sample field, lane field?)
_QUANTITY = {
    "Temperature": ("temperature_c", False),
    "Voltage": ("voltage_v", False),
    "Current": ("bias_ma", True),
    "Tx Power": ("tx_power_dbm", True),
    "Rx Power": ("rx_power_dbm", True),
}
# (quantity, threshold column) -> sample field; the other thresholds are reported as ignored
_THRESHOLDS = {
    ("Rx Power", "low_warn_threshold"): "rx_power_low_warn_dbm",
    ("Rx Power", "low_alarm_threshold"): "rx_power_low_alarm_dbm",
    ("Temperature", "high_warn_threshold"): "temperature_high_warn_c",
}
_THRESHOLD_COLUMNS = (
    "high_alarm_threshold",
    "high_warn_threshold",
    "low_alarm_threshold",
    "low_warn_threshold",
)


def _port(name: str) -> str:
    return "Ethernet" + name[2:] if name.startswith("Et") and not name.startswith("Eth") else name


def parse_arista_eos(body: bytes, ctx: Context) -> list[dict]:
    device = need_device(ctx, "arista-eos")
    try:
        rows = parse_output(
            platform="arista_eos", command="show interfaces transceiver detail", data=body_text(body)
        )
    except TextFSMError as exc:
        raise AdapterError(f"Not Arista EOS show interfaces transceiver detail output: {exc}") from None
    if not rows:
        raise AdapterError("No port rows in the Arista EOS show interfaces transceiver detail output.")
    samples: dict[str, dict[str, Any]] = {}
    for row in rows:
        port = _port(row["port"])
        s = samples.setdefault(port, {"device": device, "port": port, "ts": ctx.ts})
        quantity = row["type"].strip()
        if quantity not in _QUANTITY:
            ctx.report.ignore([quantity])
            continue
        field, per_lane = _QUANTITY[quantity]
        value = as_float(row["current_value"])
        if value is not None:
            s[field] = [value] if per_lane else value
        for column in _THRESHOLD_COLUMNS:
            target = _THRESHOLDS.get((quantity, column))
            if target is not None:
                s[target] = as_float(row[column])
            else:
                ctx.report.ignore([f"{quantity} {column.replace('_', ' ')}"])
    return [{k: v for k, v in s.items() if v is not None} for s in samples.values()]
