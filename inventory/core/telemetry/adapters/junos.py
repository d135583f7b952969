"""Junos text: ``show interfaces diagnostics optics`` and ``show interfaces extensive``.

Both print one block per ``Physical interface: <name>``. From the optics block: module
temperature and voltage, per-lane bias, Tx and Rx power (a module without ``Lane N`` sections
reports one lane), the module's own alarm/warning flags (On/Off; a lane's On makes the
quantity's flag On) and thresholds. From the extensive block: ``FEC Corrected Errors`` and ``FEC Uncorrected Errors``
(codewords, cumulative). The ``... Errors Rate`` lines are per-second rates, never counters:
they are reported as ignored like every other line no sample field takes.

Hand-written, not TextFSM: ntc-templates ships no template for either command (its
``juniper_junos_show_interfaces`` template reads neither optics nor FEC lines).
"""

from __future__ import annotations

import re
from typing import Any

from inventory.core.telemetry.adapters.common import (
    AdapterError,
    Context,
    body_text,
    clean,
    judgement_fields,
    lane_list,
    merge_flag,
    module_key,
    need_device,
    on_off,
    threshold_value,
)

_BLOCK = re.compile(r"^\s*Physical interface:\s*([^,\s]+)", re.M)
_LANE = re.compile(r"^\s*Lane\s+(\d+)\s*$")
_KEY_VALUE = re.compile(r"^\s*([A-Za-z][^:]*?)\s*:\s*(.*?)\s*$")
_FEC = re.compile(r"^\s*FEC (Corrected|Uncorrected) Errors\s+(\d+)\s*$")
_LABEL = re.compile(r"^\s*([A-Za-z][A-Za-z0-9 /().\-]*?)(?:\s*:|\s{2,}|\s*$)")
_DBM = re.compile(r"(-?\d+(?:\.\d+)?)\s*dBm")
_FIRST = re.compile(r"(-?\d+(?:\.\d+)?)")


def _dbm(value: str) -> float | None:
    m = _DBM.search(value)
    return float(m.group(1)) if m else None


def _first(value: str) -> float | None:
    m = _FIRST.match(value)
    return float(m.group(1)) if m else None


def _block(port: str, lines: list[str], device: str, ctx: Context) -> dict[str, Any]:
    s: dict[str, Any] = {"device": device, "port": port, "ts": ctx.ts}
    lanes: dict[str, dict[int, float | None]] = {"bias_ma": {}, "tx_power_dbm": {}, "rx_power_dbm": {}}
    lane = 0
    ignored: list[str] = []
    thresholds: dict[str, float | None] = {}
    flags: dict[str, bool] = {}
    for line in lines:
        if not line.strip():
            continue
        m = _LANE.match(line)
        if m:
            lane = int(m.group(1))
            continue
        m = _FEC.match(line)
        if m:
            field = "fec_corrected_codewords" if m.group(1) == "Corrected" else "fec_uncorrectable_codewords"
            s[field] = int(m.group(2))
            continue
        m = _KEY_VALUE.match(line)
        key = " ".join(m.group(1).split()).lower() if m else ""
        value = m.group(2) if m else ""
        judged = module_key(key) if key else None
        if judged is not None:
            name, is_threshold = judged
            if is_threshold:
                thresholds[name] = threshold_value(name, value)
            else:
                merge_flag(flags, name, on_off(value))
            continue
        if key == "laser bias current":
            lanes["bias_ma"][lane] = _first(value)
        elif key == "laser output power":
            lanes["tx_power_dbm"][lane] = _dbm(value)
        elif key in ("receiver signal average optical power", "laser receiver power", "laser rx power"):
            lanes["rx_power_dbm"][lane] = _dbm(value)
        elif key == "module temperature":
            s["temperature_c"] = _first(value)
        elif key == "module voltage":
            s["voltage_v"] = _first(value)
        else:
            label = _LABEL.match(line)
            ignored.append(" ".join(label.group(1).split()) if label else line.strip()[:40])
    for field, values in lanes.items():
        if values:
            s[field] = lane_list(values)
    s.update(judgement_fields(thresholds, flags))
    ctx.report.ignore(ignored)
    return clean(s)


def parse_junos(body: bytes, ctx: Context) -> list[dict]:
    device = need_device(ctx, "junos")
    text = body_text(body)
    heads = list(_BLOCK.finditer(text))
    if not heads:
        raise AdapterError(
            "No 'Physical interface:' block: not Junos show interfaces diagnostics optics / extensive output."
        )
    out = []
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        lines = text[head.end() : end].splitlines()[1:]  # the rest of the heading line is its state
        out.append(_block(head.group(1), lines, device, ctx))
    return out
