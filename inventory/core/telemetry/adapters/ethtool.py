"""ethtool outputs: ``--show-fec`` (FEC stats and histogram), ``-S`` (NIC driver counter names), ``-m`` (module DOM)."""

from __future__ import annotations

import re
from typing import Any

from inventory.core.telemetry.adapters.common import (
    AdapterError,
    Context,
    Fields,
    as_int,
    body_json,
    body_text,
    clean,
    judgement_fields,
    lane_list,
    merge_flag,
    module_key,
    need_device,
    need_port,
    on_off,
    threshold_value,
)
from inventory.core.telemetry.adapters.nic_stats import map_ethtool_counters

# ------------------------------------------------------------------------------------------
# ethtool --show-fec (netlink FEC stats and histogram)

_FEC_FIELDS = {
    "corrected_blocks": "fec_corrected_codewords",
    "uncorrectable_blocks": "fec_uncorrectable_codewords",
    "corrected_bits": "fec_corrected_bits",
}


def parse_ethtool_fec(body: bytes, ctx: Context) -> list[dict]:
    device = need_device(ctx, "ethtool-fec")
    stripped = body.lstrip()
    if stripped[:1] in (b"[", b"{"):
        data = body_json(body)
        items = data if isinstance(data, list) else [data]
        out = []
        for item in items:
            if not isinstance(item, dict):
                raise AdapterError("ethtool --json output: expected a list of objects.")
            item = Fields(item)
            stats = Fields(item.get("statistics") or {})
            s: dict[str, Any] = {
                "device": device,
                "port": item.get("ifname") or need_port(ctx, "ethtool-fec"),
                "ts": ctx.ts,
            }
            for key, field in _FEC_FIELDS.items():
                v = stats.get(key)
                s[field] = as_int(v.get("total") if isinstance(v, dict) else v)
            hist = stats.get("hist") or []
            if hist:
                s["fec_hist"] = [as_int(b.get("total")) or 0 for b in hist]
                s["fec_hist_bins"] = [[int(b["bin_low"]), int(b["bin_high"])] for b in hist]
            ctx.report.ignore(item.unused())
            ctx.report.ignore(f"statistics.{k}" for k in stats.unused())
            out.append(clean(s))
        return out
    text = body_text(body)
    out = []
    cur: dict[str, Any] | None = None
    hist: list[tuple[int, int, int]] = []

    def flush():
        if cur is not None:
            if hist:
                cur["fec_hist"] = [c for _, _, c in hist]
                cur["fec_hist_bins"] = [[lo, hi] for lo, hi, _ in hist]
            out.append(clean(cur))

    for line in text.splitlines():
        m = re.match(r"\s*FEC parameters for (\S+?):?\s*$", line)
        if m:
            flush()
            cur = {"device": device, "port": m.group(1), "ts": ctx.ts}
            hist = []
            continue
        if cur is None:
            continue
        m = re.match(r"\s*(corrected_blocks|uncorrectable_blocks|corrected_bits):\s*(\d+)", line)
        if m:
            cur[_FEC_FIELDS[m.group(1)]] = int(m.group(2))
            continue
        m = re.match(r"\s*fec_bit_err_(\d+)(?:_to_(\d+))?:\s*(\d+)", line)
        if m:
            lo = int(m.group(1))
            hi = int(m.group(2)) if m.group(2) else lo
            hist.append((lo, hi, int(m.group(3))))
            continue
        m = re.match(r"\s*([A-Za-z][\w /.()-]*?)\s*:", line)
        if m:
            ctx.report.ignore([m.group(1)])
    flush()
    if not out:
        raise AdapterError("No 'FEC parameters for <interface>' block found in ethtool output.")
    return out


# ------------------------------------------------------------------------------------------
# ethtool -S (mlx5, bnxt_en, ice, i40e names: the table in nic_stats) and node_exporter's ethtool
# collector (same stat names)


def map_ethtool_stats(stats: dict[str, int]) -> dict[str, Any]:
    """NIC driver ``ethtool -S`` counter names -> sample fields (``nic_stats.ETHTOOL_S_COUNTERS``)."""
    return map_ethtool_counters(stats)[0]


# ``name: value``; bnxt_en (and bnx2x) print their per-ring counters as ``[N]: name: value``
_STATS_LINE = re.compile(r"\s*((?:\[\d+\]:\s*)?[A-Za-z0-9_\[\]\.\-]+):\s*(\d+)\s*$")
_STATS_HEADER = re.compile(r"NIC statistics:")


def parse_ethtool_stats(body: bytes, ctx: Context) -> list[dict]:
    device = need_device(ctx, "ethtool-stats")
    port = need_port(ctx, "ethtool-stats")
    stats: dict[str, int] = {}
    unread: list[str] = []
    for line in body_text(body).splitlines():
        if not line.strip() or _STATS_HEADER.fullmatch(line.strip()):
            continue
        m = _STATS_LINE.match(line)
        if m:
            stats[m.group(1)] = int(m.group(2))
        else:
            unread.append(line.split(":", 1)[0].strip())
    if not stats:
        raise AdapterError("No 'name: value' counters found in ethtool -S output.")
    sample, used = map_ethtool_counters(stats)
    # per-queue counters (bnxt_en's ``[3]: rx_ucast_packets``) and any line that is no counter
    # are named too: no line of the output disappears without a word
    ctx.report.ignore([*(k for k in stats if k not in used), *unread])
    return [clean({"device": device, "port": port, "ts": ctx.ts, **sample})]


# ------------------------------------------------------------------------------------------
# ethtool -m (module EEPROM / DOM)


def _dbm(value: str) -> float | None:
    m = re.search(r"(-?[\d.]+|-inf)\s*dBm", value)
    if not m or m.group(1) == "-inf":
        return None
    return float(m.group(1))


def parse_ethtool_module(body: bytes, ctx: Context) -> list[dict]:
    device = need_device(ctx, "ethtool-module")
    port = need_port(ctx, "ethtool-module")
    s: dict[str, Any] = {"device": device, "port": port, "ts": ctx.ts}
    rx: dict[int, float | None] = {}
    tx: dict[int, float | None] = {}
    bias: dict[int, float | None] = {}
    thresholds: dict[str, float | None] = {}
    flags: dict[str, bool] = {}
    found = False
    for line in body_text(body).splitlines():
        if ":" not in line:
            continue
        key, _, value = line.partition(":")
        key = " ".join(key.split()).lower()
        value = value.strip()
        ch = re.search(r"\((?:channel|chan|lane)\s*(\d+)\)", key)
        lane = int(ch.group(1)) - 1 if ch else 0
        judged = module_key(key)
        if judged is not None:
            name, is_threshold = judged
            if is_threshold:
                limit = threshold_value(name, value)
                if limit is None:  # "0.0000 mW / -inf dBm": the module sets no such threshold
                    ctx.report.ignore([" ".join(line.partition(":")[0].split())])
                else:
                    thresholds[name] = limit
            else:
                merge_flag(flags, name, on_off(value))
            found = True
            continue
        if key == "vendor name":
            s["module_vendor"] = value
        elif key == "vendor pn":
            s["module_part"] = value
        elif key == "vendor sn":
            s["module_serial"] = value
        elif key == "module temperature":
            m = re.match(r"(-?[\d.]+)", value)
            s["temperature_c"] = float(m.group(1)) if m else None
        elif key == "module voltage":
            m = re.match(r"([\d.]+)", value)
            s["voltage_v"] = float(m.group(1)) if m else None
        elif (key.startswith("laser tx bias current") or key == "laser bias current") and not re.search(
            r"threshold|alarm|warning", key
        ):
            m = re.match(r"([\d.]+)\s*mA", value)
            bias[lane] = float(m.group(1)) if m else None
        elif (
            key.startswith("transmit avg optical power") or key == "laser output power"
        ) and "threshold" not in key:
            tx[lane] = _dbm(value)
        elif key.startswith("rcvr signal avg optical power") or key.startswith(
            "receiver signal average optical power"
        ):
            rx[lane] = _dbm(value)
        else:
            ctx.report.ignore([" ".join(line.partition(":")[0].split())])
            continue
        found = True
    if not found:
        raise AdapterError("No module fields (Vendor SN, temperature, optical power) in ethtool -m output.")
    s["rx_power_dbm"] = lane_list(rx)
    s["tx_power_dbm"] = lane_list(tx)
    s["bias_ma"] = lane_list(bias)
    s.update(judgement_fields(thresholds, flags))
    return [clean(s)]
