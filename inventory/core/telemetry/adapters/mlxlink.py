"""NVIDIA ``mlxlink`` output (JSON or text): module info, physical counters and BER, FEC histogram."""

from __future__ import annotations

import re
from typing import Any

from inventory.core.telemetry.adapters.common import (
    AdapterError,
    Context,
    Fields,
    as_float,
    as_int,
    body_json,
    body_text,
    clean,
    limit_from_fec,
    need_device,
    need_port,
)


def _strip_range(v: str) -> str:
    return re.sub(r"\s*\[[^\]]*\]\s*$", "", str(v)).strip()


def _float_list(v: Any) -> list[float | None] | None:
    if isinstance(v, dict):
        v = v.get("values")
    if isinstance(v, list):
        items = v
    elif v is None:
        return None
    else:
        items = _strip_range(v).split(",")
    out = [as_float(x) for x in items]
    return out if any(x is not None for x in out) else None


def _mlxlink_flatten(body: bytes) -> tuple[dict[str, Any], list[tuple[int, int, int]]]:
    fields: dict[str, Any] = {}
    hist: list[tuple[int, int, int]] = []
    stripped = body.lstrip()
    if stripped[:1] == b"{":
        data = body_json(body)
        output = ((data.get("result") or {}).get("output")) if isinstance(data, dict) else None
        if not isinstance(output, dict):
            raise AdapterError("mlxlink --json output: no result.output object.")
        for section, content in output.items():
            if not isinstance(content, dict):
                continue
            if section.startswith("Histogram"):
                for key, val in content.items():
                    m = re.fullmatch(r"Bin (\d+)", key)
                    vals = val.get("values") if isinstance(val, dict) else None
                    if m and isinstance(vals, list) and len(vals) == 2:
                        r = re.fullmatch(r"\[(\d+)(?:\.\.(\d+))?\]", str(vals[0]).strip())
                        lo = int(r.group(1)) if r else int(m.group(1))
                        hi = int(r.group(2)) if r and r.group(2) else lo
                        hist.append((lo, hi, as_int(vals[1]) or 0))
            else:
                fields.update(content)
    else:
        for line in body_text(body).splitlines():
            m = re.match(r"\s*Bin\s+(\d+)\s*[:|]?\s*\[(\d+)(?:\.\.(\d+))?\]\s*[:|]?\s*(\d+)", line)
            if m:
                lo = int(m.group(2))
                hist.append((lo, int(m.group(3)) if m.group(3) else lo, int(m.group(4))))
                continue
            if ":" in line:
                key, _, value = line.partition(" : ") if " : " in line else line.partition(":")
                key = key.strip()
                if key and not set(key) <= {"-"}:
                    fields[key] = value.strip()
    hist.sort()
    return fields, hist


def parse_mlxlink(body: bytes, ctx: Context) -> list[dict]:
    device = need_device(ctx, "mlxlink")
    port = need_port(ctx, "mlxlink")
    raw, hist = _mlxlink_flatten(body)
    f = Fields(raw)
    s: dict[str, Any] = {"device": device, "port": port, "ts": ctx.ts}
    if "Temperature [C]" in f:
        s["temperature_c"] = as_float(_strip_range(f["Temperature [C]"]))
    if "Voltage [mV]" in f:
        mv = as_float(_strip_range(f["Voltage [mV]"]))
        s["voltage_v"] = None if mv is None else mv / 1000
    s["bias_ma"] = _float_list(f.get("Bias Current [mA]"))
    s["rx_power_dbm"] = _float_list(f.get("Rx Power Current [dBm]"))
    s["tx_power_dbm"] = _float_list(f.get("Tx Power Current [dBm]"))
    for key, field in (
        ("Vendor Name", "module_vendor"),
        ("Vendor Part Number", "module_part"),
        ("Vendor Serial Number", "module_serial"),
    ):
        if f.get(key) not in (None, "", "N/A"):
            s[field] = str(f[key]).strip()
    lanes = f.get("Raw Physical Errors Per Lane")
    if lanes is not None:
        values = lanes.get("values") if isinstance(lanes, dict) else str(lanes).split(",")
        ints = [as_int(x) for x in values]
        if ints and all(x is not None for x in ints):
            s["fec_corrected_bits"] = sum(ints)
    s["pre_fec_ber"] = as_float(f.get("Raw Physical BER"))
    s["post_fec_ber"] = as_float(f.get("Effective Physical BER"))
    s["link_down_events"] = as_int(f.get("Link Down Counter"))
    s["link_error_recovery"] = as_int(f.get("Link Error Recovery Counter"))
    # the link as trained ("Speed": "400G", "Width": "4x"; "N/A" or absent when down)
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*G(?:b/s)?\s*", str(f.get("Speed") or ""))
    if m:
        s["speed_gbps"] = float(m.group(1))
    m = re.fullmatch(r"\s*(\d+)\s*[xX]\s*", str(f.get("Width") or ""))
    if m:
        s["link_width"] = int(m.group(1))
    if hist:
        s["fec_hist"] = [c for _, _, c in hist]
        s["fec_hist_bins"] = [[lo, hi] for lo, hi, _ in hist]
        s["fec_correction_limit"] = limit_from_fec(f.get("FEC"))
    ctx.report.ignore(f.unused())
    # "61 [-10..80]": the bracket is a range the module reports beside the reading (its
    # thresholds); no sample field takes it: named, not stripped in silence
    ctx.report.ignore(
        f"{k} range" for k in f.used if isinstance(f[k], str) and re.search(r"\[[^\]]*\.\.[^\]]*\]\s*$", f[k])
    )
    s = clean(s)
    if len(s) == 3:
        raise AdapterError("No module info, counters or histogram found in mlxlink output.")
    return [s]
