"""Adapters for the native outputs collectors already produce -> samples (dicts in the
``{"samples": [...]}`` item format, validated afterwards like any posted item).

Pure: no ORM. Each adapter takes the raw body and a ``Context`` (device/port/time from the
request, for outputs that do not name them) and returns a list of sample dicts. Formats
(``?format=``):

=================  ==========================================================================
``ethtool-fec``    ``ethtool [--json] -I --show-fec IF``: corrected/uncorrectable blocks,
                   corrected bits, histogram bins (``bin_low..bin_high``). JSON or text.
``ethtool-stats``  ``ethtool -S IF`` (mlx5 names: ``rx_corrected_bits_phy``,
                   ``link_down_events_phy``, ``rx_prioN_pause[_duration]``, ...). Needs port.
``ethtool-module`` ``ethtool -m IF``: DOM per lane, temperature, voltage, EEPROM identity,
                   the module's own warning/alarm thresholds. Needs port.
``mlxlink``        ``mlxlink ... [--json]``: module info (DOM, identity), physical counters and
                   BER, FEC histogram. JSON or text. Needs port.
``perfquery``      InfiniBand ``perfquery [-x|-E]``: one sample per "port N" block; the port is
                   ``N``, or ``port`` when given for a single block, or ``port`` with
                   ``{port}`` replaced by ``N`` (e.g. ``?port=mlx5_0/{port}``).
``sonic-counters`` SONiC COUNTERS_DB: a JSON hash of ``SAI_PORT_STAT_*`` (flat, or keyed by
                   port name), or ``redis-cli hgetall`` text (RATES/COUNTERS, with the
                   ``COUNTERS_PORT_NAME_MAP`` lookup naming the port).
``sonic-cli``      ``show interfaces counters fec-stats`` and ``... fec-histogram IF`` tables.
``gnmi``           gNMI JSON (``openconfig`` is the same adapter): proto-JSON notifications
                   (``notification[].update[]``) or gnmic output (``updates[].values``), with
                   OpenConfig leaves (interfaces, transceiver channels, LLDP) or SONiC
                   ``COUNTERS/<port>`` hashes.
``prometheus``     Prometheus text exposition: node_exporter's ethtool collector
                   (``node_ethtool_<stat>{device="<interface>"}``, mlx5 stat names) and
                   ``cabletrack_<field>{device=..., port=...}``.
``xena``           Xena ``PP_RXFECSTATS`` (codeword histogram, uncorrectable, total).
=================  ==========================================================================

InfiniBand's ``SymbolErrorCounter`` becomes ``ib_symbol_errors``, never ``fec_symbol_errors``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from inventory.core.choices import FEC_LIMITS, FecType
from inventory.core.telemetry.decode import COUNTER_FIELDS, GAUGE_FIELDS


class AdapterError(ValueError):
    """The body cannot be read as the chosen format (a 400)."""


@dataclass(frozen=True)
class Context:
    device: str | None
    port: str | None
    ts: datetime


def _num(v: Any) -> float | int | None:
    """'136,403' -> 136403; '1.18e-12' -> float; 'N/A' / '' -> None."""
    if v is None or isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return v
    s = str(v).strip().replace(",", "")
    if not s or s.upper() in ("N/A", "NA", "-", "NONE"):
        return None
    try:
        return int(s)
    except ValueError:
        pass
    try:
        f = float(s)
    except ValueError:
        return None
    return f if math.isfinite(f) else None


def _int(v: Any) -> int | None:
    n = _num(v)
    if n is None:
        return None
    if isinstance(n, float):
        return int(n) if n.is_integer() else None
    return n


def _float(v: Any) -> float | None:
    n = _num(v)
    return None if n is None else float(n)


def _device(ctx: Context, fmt: str) -> str:
    if not ctx.device:
        raise AdapterError(f"{fmt} output does not name the device: pass ?device= (or X-Cabletrack-Device).")
    return ctx.device


def _port(ctx: Context, fmt: str) -> str:
    if not ctx.port:
        raise AdapterError(f"{fmt} output does not name the port: pass ?port= (or X-Cabletrack-Port).")
    return ctx.port


def _text(body: bytes) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AdapterError(f"Body is not UTF-8 text: {exc}") from exc


def _json(body: bytes) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise AdapterError(f"Body is not valid JSON: {exc}") from exc


def _clean(sample: dict) -> dict:
    return {k: v for k, v in sample.items() if v is not None and v != []}


def _lanes(values: dict[int, float | None]) -> list[float | None] | None:
    if not values:
        return None
    n = max(values) + 1
    return [values.get(i) for i in range(n)]


def _limit_from_fec(text: str | None) -> int | None:
    if not text:
        return None
    if "544" in text:
        return FEC_LIMITS[FecType.KP4].correctable_symbols
    if "528" in text:
        return FEC_LIMITS[FecType.KR4].correctable_symbols
    return None


# ------------------------------------------------------------------------------------------
# ethtool --show-fec (netlink FEC stats and histogram)

_FEC_FIELDS = {
    "corrected_blocks": "fec_corrected_codewords",
    "uncorrectable_blocks": "fec_uncorrectable_codewords",
    "corrected_bits": "fec_corrected_bits",
}


def parse_ethtool_fec(body: bytes, ctx: Context) -> list[dict]:
    device = _device(ctx, "ethtool-fec")
    stripped = body.lstrip()
    if stripped[:1] in (b"[", b"{"):
        data = _json(body)
        items = data if isinstance(data, list) else [data]
        out = []
        for item in items:
            if not isinstance(item, dict):
                raise AdapterError("ethtool --json output: expected a list of objects.")
            stats = item.get("statistics") or {}
            s: dict[str, Any] = {
                "device": device,
                "port": item.get("ifname") or _port(ctx, "ethtool-fec"),
                "ts": ctx.ts,
            }
            for key, field in _FEC_FIELDS.items():
                v = stats.get(key)
                s[field] = _int(v.get("total") if isinstance(v, dict) else v)
            hist = stats.get("hist") or []
            if hist:
                s["fec_hist"] = [_int(b.get("total")) or 0 for b in hist]
                s["fec_hist_bins"] = [[int(b["bin_low"]), int(b["bin_high"])] for b in hist]
            out.append(_clean(s))
        return out
    text = _text(body)
    out = []
    cur: dict[str, Any] | None = None
    hist: list[tuple[int, int, int]] = []

    def flush():
        if cur is not None:
            if hist:
                cur["fec_hist"] = [c for _, _, c in hist]
                cur["fec_hist_bins"] = [[lo, hi] for lo, hi, _ in hist]
            out.append(_clean(cur))

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
    flush()
    if not out:
        raise AdapterError("No 'FEC parameters for <interface>' block found in ethtool output.")
    return out


# ------------------------------------------------------------------------------------------
# ethtool -S (mlx5 names) and node_exporter's ethtool collector (same stat names)


def map_ethtool_stats(stats: dict[str, int]) -> dict[str, Any]:
    """mlx5 ``ethtool -S`` counter names -> sample fields."""
    s: dict[str, Any] = {}
    if "rx_corrected_bits_phy" in stats:
        s["fec_corrected_bits"] = stats["rx_corrected_bits_phy"]
    elif any(k.startswith("rx_err_lane_") for k in stats):
        s["fec_corrected_bits"] = sum(v for k, v in stats.items() if re.fullmatch(r"rx_err_lane_\d+_phy", k))
    for name, field in (
        ("link_down_events_phy", "link_down_events"),
        ("rx_fec_corrected_blocks_phy", "fec_corrected_codewords"),
        ("rx_fec_uncorrectable_blocks_phy", "fec_uncorrectable_codewords"),
        ("rx_bits_phy", "rx_bits"),
    ):
        if name in stats:
            s[field] = stats[name]
    for direction in ("rx", "tx"):
        prio = [v for k, v in stats.items() if re.fullmatch(rf"{direction}_prio\d+_pause", k)]
        if prio:
            s[f"pfc_pause_{direction}"] = sum(prio)
        elif f"{direction}_pause_ctrl_phy" in stats:
            s[f"pfc_pause_{direction}"] = stats[f"{direction}_pause_ctrl_phy"]
    durations = [v for k, v in stats.items() if re.fullmatch(r"rx_prio\d+_pause_duration", k)]
    if durations:
        s["pfc_pause_duration_us"] = sum(durations)
    return s


def parse_ethtool_stats(body: bytes, ctx: Context) -> list[dict]:
    device = _device(ctx, "ethtool-stats")
    port = _port(ctx, "ethtool-stats")
    stats: dict[str, int] = {}
    for line in _text(body).splitlines():
        m = re.match(r"\s*([A-Za-z0-9_\[\]\.\-]+):\s*(\d+)\s*$", line)
        if m:
            stats[m.group(1)] = int(m.group(2))
    if not stats:
        raise AdapterError("No 'name: value' counters found in ethtool -S output.")
    return [_clean({"device": device, "port": port, "ts": ctx.ts, **map_ethtool_stats(stats)})]


# ------------------------------------------------------------------------------------------
# ethtool -m (module EEPROM / DOM)


def _dbm(value: str) -> float | None:
    m = re.search(r"(-?[\d.]+|-inf)\s*dBm", value)
    if not m or m.group(1) == "-inf":
        return None
    return float(m.group(1))


def parse_ethtool_module(body: bytes, ctx: Context) -> list[dict]:
    device = _device(ctx, "ethtool-module")
    port = _port(ctx, "ethtool-module")
    s: dict[str, Any] = {"device": device, "port": port, "ts": ctx.ts}
    rx: dict[int, float | None] = {}
    tx: dict[int, float | None] = {}
    bias: dict[int, float | None] = {}
    found = False
    for line in _text(body).splitlines():
        if ":" not in line:
            continue
        key, _, value = line.partition(":")
        key = " ".join(key.split()).lower()
        value = value.strip()
        ch = re.search(r"\((?:channel|chan|lane)\s*(\d+)\)", key)
        lane = int(ch.group(1)) - 1 if ch else 0
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
        elif key.startswith("laser tx bias current") or key == "laser bias current":
            m = re.match(r"([\d.]+)\s*mA", value)
            if m and "threshold" not in key and "alarm" not in key and "warning" not in key:
                bias[lane] = float(m.group(1))
        elif (
            key.startswith("transmit avg optical power") or key == "laser output power"
        ) and "threshold" not in key:
            tx[lane] = _dbm(value)
        elif key.startswith("rcvr signal avg optical power") or key.startswith(
            "receiver signal average optical power"
        ):
            rx[lane] = _dbm(value)
        elif key == "laser rx power low warning threshold":
            s["rx_power_low_warn_dbm"] = _dbm(value)
        elif key == "laser rx power low alarm threshold":
            s["rx_power_low_alarm_dbm"] = _dbm(value)
        elif key == "module temperature high warning threshold":
            m = re.match(r"(-?[\d.]+)", value)
            s["temperature_high_warn_c"] = float(m.group(1)) if m else None
        else:
            continue
        found = True
    if not found:
        raise AdapterError("No module fields (Vendor SN, temperature, optical power) in ethtool -m output.")
    s["rx_power_dbm"] = _lanes(rx)
    s["tx_power_dbm"] = _lanes(tx)
    s["bias_ma"] = _lanes(bias)
    return [_clean(s)]


# ------------------------------------------------------------------------------------------
# mlxlink (JSON and text)


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
    out = [_float(x) for x in items]
    return out if any(x is not None for x in out) else None


def _mlxlink_flatten(body: bytes) -> tuple[dict[str, Any], list[tuple[int, int, int]]]:
    fields: dict[str, Any] = {}
    hist: list[tuple[int, int, int]] = []
    stripped = body.lstrip()
    if stripped[:1] == b"{":
        data = _json(body)
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
                        hist.append((lo, hi, _int(vals[1]) or 0))
            else:
                fields.update(content)
    else:
        for line in _text(body).splitlines():
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
    device = _device(ctx, "mlxlink")
    port = _port(ctx, "mlxlink")
    f, hist = _mlxlink_flatten(body)
    s: dict[str, Any] = {"device": device, "port": port, "ts": ctx.ts}
    if "Temperature [C]" in f:
        s["temperature_c"] = _float(_strip_range(f["Temperature [C]"]))
    if "Voltage [mV]" in f:
        mv = _float(_strip_range(f["Voltage [mV]"]))
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
        ints = [_int(x) for x in values]
        if ints and all(x is not None for x in ints):
            s["fec_corrected_bits"] = sum(ints)
    s["pre_fec_ber"] = _float(f.get("Raw Physical BER"))
    s["post_fec_ber"] = _float(f.get("Effective Physical BER"))
    s["link_down_events"] = _int(f.get("Link Down Counter"))
    s["link_error_recovery"] = _int(f.get("Link Error Recovery Counter"))
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
        s["fec_correction_limit"] = _limit_from_fec(f.get("FEC"))
    s = _clean(s)
    if len(s) == 3:
        raise AdapterError("No module info, counters or histogram found in mlxlink output.")
    return [s]


# ------------------------------------------------------------------------------------------
# InfiniBand perfquery

_PERFQUERY = {
    "SymbolErrorCounter": "ib_symbol_errors",
    "LinkErrorRecoveryCounter": "link_error_recovery",
    "LinkDownedCounter": "link_down_events",
}


def parse_perfquery(body: bytes, ctx: Context) -> list[dict]:
    device = _device(ctx, "perfquery")
    blocks: list[tuple[str, dict[str, Any]]] = []
    for line in _text(body).splitlines():
        m = re.match(r"\s*#.*\bport\s+(\d+)", line, re.IGNORECASE)
        if m:
            blocks.append((m.group(1), {}))
            continue
        m = re.match(r"\s*([A-Za-z0-9]+):\.*\s*(\S+)\s*$", line)
        if m:
            if not blocks:
                blocks.append(("", {}))
            blocks[-1][1][m.group(1)] = m.group(2)
    if not blocks:
        raise AdapterError("No perfquery counters found.")
    out = []
    for num, counters in blocks:
        num = num or str(counters.get("PortSelect", ""))
        if ctx.port and ("{port}" in ctx.port or len(blocks) == 1):
            port = ctx.port.replace("{port}", num)
        elif num:
            port = num
        else:
            raise AdapterError("perfquery output without a port number: pass ?port=.")
        s: dict[str, Any] = {"device": device, "port": port, "ts": ctx.ts}
        for key, field in _PERFQUERY.items():
            if key in counters:
                s[field] = _int(counters[key])
        out.append(_clean(s))
    return out


# ------------------------------------------------------------------------------------------
# SONiC: COUNTERS_DB names, redis-cli text, CLI tables


def map_sai(stats: dict[str, Any]) -> dict[str, Any]:
    """SONiC COUNTERS_DB / RATES names (``SAI_PORT_STAT_*``, ``*_last``) -> sample fields."""
    norm = {(k[:-5] if k.endswith("_last") else k): v for k, v in stats.items()}
    s: dict[str, Any] = {}
    for key, field in (
        ("SAI_PORT_STAT_IF_IN_FEC_CORRECTABLE_FRAMES", "fec_corrected_codewords"),
        ("SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES", "fec_uncorrectable_codewords"),
        ("SAI_PORT_STAT_IF_FEC_NOT_CORRECTABLE_FARMES", "fec_uncorrectable_codewords"),  # SONiC's spelling
        ("SAI_PORT_STAT_IF_FEC_NOT_CORRECTABLE_FRAMES", "fec_uncorrectable_codewords"),
        ("SAI_PORT_STAT_IF_IN_FEC_SYMBOL_ERRORS", "fec_symbol_errors"),
        ("SAI_PORT_STAT_IF_IN_FEC_CORRECTED_BITS", "fec_corrected_bits"),
        ("SAI_PORT_STAT_IF_FEC_CORRECTED_BITS", "fec_corrected_bits"),
    ):
        if key in norm and field not in s:
            s[field] = _int(norm[key])
    for key, field in (("FEC_PRE_BER", "pre_fec_ber"), ("FEC_POST_BER", "post_fec_ber")):
        if key in norm:
            s[field] = _float(norm[key])
    bins = {
        int(m.group(1)): _int(v)
        for k, v in norm.items()
        if (m := re.fullmatch(r"SAI_PORT_STAT_IF_IN_FEC_CODEWORD_ERRORS_S(\d+)", k))
    }
    if bins:
        s["fec_hist"] = [bins.get(i) or 0 for i in range(max(bins) + 1)]
    for direction in ("RX", "TX"):
        pkts = [
            _int(v) or 0
            for k, v in norm.items()
            if re.fullmatch(rf"SAI_PORT_STAT_PFC_\d_{direction}_PKTS", k)
        ]
        if pkts:
            s[f"pfc_pause_{direction.lower()}"] = sum(pkts)
    dur = [
        _int(v) or 0 for k, v in norm.items() if re.fullmatch(r"SAI_PORT_STAT_PFC_\d_RX_PAUSE_DURATION_US", k)
    ]
    if dur:
        s["pfc_pause_duration_us"] = sum(dur)
    return s


def _redis_text(text: str) -> list[tuple[str | None, dict[str, str]]]:
    """``redis-cli hgetall KEY`` listings -> [(oid or key, hash)], port-name lookups applied."""
    hashes: list[tuple[str | None, dict[str, str]]] = []
    names: dict[str, str] = {}
    pending_name: str | None = None
    items: list[str] = []
    key: str | None = None

    def flush():
        if items:
            hashes.append((key, dict(zip(items[0::2], items[1::2], strict=False))))

    for line in text.splitlines():
        cmd = re.search(
            r"redis-cli\b.*?\b(hgetall|hget)\s+\"?([^\"\s]+)\"?(?:\s+\"?([^\"\s]+)\"?)?", line, re.I
        )
        if cmd:
            flush()
            items = []
            key = None
            if cmd.group(1).lower() == "hget" and cmd.group(2) == "COUNTERS_PORT_NAME_MAP":
                pending_name = cmd.group(3)
            else:
                pending_name = None
                m = re.search(r"(oid:0x[0-9a-fA-F]+)", cmd.group(2))
                key = m.group(1) if m else cmd.group(2)
            continue
        m = re.match(r"\s*\d+\)\s+\"(.*)\"\s*$", line)
        if m:
            items.append(m.group(1))
            continue
        m = re.match(r"\s*\"(oid:0x[0-9a-fA-F]+)\"\s*$", line)
        if m and pending_name:
            names[m.group(1)] = pending_name
            pending_name = None
    flush()
    return [(names.get(k or "") if k and k.startswith("oid:") else k, h) for k, h in hashes]


def parse_sonic_counters(body: bytes, ctx: Context) -> list[dict]:
    device = _device(ctx, "sonic-counters")
    stripped = body.lstrip()
    if stripped[:1] in (b"{", b"["):
        data = _json(body)
        if isinstance(data, dict) and "notification" in data or isinstance(data, list):
            return parse_gnmi(body, ctx)
        if not isinstance(data, dict):
            raise AdapterError("COUNTERS_DB JSON: expected an object.")
        if any(str(k).startswith("SAI_") for k in data):
            hashes = [(None, data)]
        else:
            hashes = [(k, v) for k, v in data.items() if isinstance(v, dict)]
    else:
        hashes = _redis_text(_text(body))
    out = []
    for name, h in hashes:
        port = name if name and not name.startswith(("oid:", "RATES", "COUNTERS")) else ctx.port
        if not port:
            raise AdapterError(
                "COUNTERS_DB hash without a port name: pass ?port= or include the port name map."
            )
        s = _clean({"device": device, "port": port, "ts": ctx.ts, **map_sai(h)})
        out.append(s)
    if not out:
        raise AdapterError("No COUNTERS_DB hashes found.")
    return out


_CLI_COLUMNS = {
    "FEC_CORR": "fec_corrected_codewords",
    "FEC_UNCORR": "fec_uncorrectable_codewords",
    "FEC_SYMBOL_ERR": "fec_symbol_errors",
    "FEC_PRE_BER": "pre_fec_ber",
    "FEC_POST_BER": "post_fec_ber",
}


def parse_sonic_cli(body: bytes, ctx: Context) -> list[dict]:
    device = _device(ctx, "sonic-cli")
    lines = _text(body).splitlines()
    for i, line in enumerate(lines):
        cols = re.split(r"\s{2,}", line.strip())
        if cols and cols[0] == "IFACE":
            out = []
            for row in lines[i + 1 :]:
                cells = re.split(r"\s{2,}", row.strip())
                if not row.strip() or set(row.strip()) <= {"-", " "}:
                    continue
                if len(cells) < 2:
                    continue
                s: dict[str, Any] = {"device": device, "port": cells[0], "ts": ctx.ts}
                for name, cell in zip(cols[1:], cells[1:], strict=False):
                    field = _CLI_COLUMNS.get(name)
                    if field:
                        s[field] = _float(cell) if field.endswith("_ber") else _int(cell)
                out.append(_clean(s))
            return out
        if re.match(r"\s*Symbol Errors Per Codeword", line):
            port = ctx.port
            for prev in lines[:i]:
                m = re.search(r"fec-histogram\s+(\S+)", prev)
                if m:
                    port = m.group(1)
            if not port:
                raise AdapterError("fec-histogram output without the interface: pass ?port=.")
            bins = {}
            for row in lines[i + 1 :]:
                m = re.match(r"\s*BIN(\d+)\s+(\d+)", row)
                if m:
                    bins[int(m.group(1))] = int(m.group(2))
            if not bins:
                raise AdapterError("fec-histogram output without BIN rows.")
            return [
                {
                    "device": device,
                    "port": port,
                    "ts": ctx.ts,
                    "fec_hist": [bins.get(i, 0) for i in range(max(bins) + 1)],
                }
            ]
    raise AdapterError("No 'IFACE' fec-stats table or fec-histogram found in SONiC CLI output.")


# ------------------------------------------------------------------------------------------
# gNMI / OpenConfig JSON


def _path_elems(path: Any) -> list[tuple[str, dict[str, str]]]:
    if path is None:
        return []
    if isinstance(path, dict):
        elems = path.get("elem") or path.get("elems") or []
        out = [(e.get("name", ""), dict(e.get("key") or {})) for e in elems if isinstance(e, dict)]
        if not out and path.get("element"):
            out = [(str(x), {}) for x in path["element"]]
        return out
    text = str(path).strip("/")
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "/" and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur:
        parts.append(cur)
    out = []
    for p in parts:
        name = p.split("[", 1)[0]
        if ":" in name:
            name = name.split(":", 1)[1]
        keys = dict(re.findall(r"\[([^=\]]+)=([^\]]*)\]", p))
        out.append((name, keys))
    return out


def _flatten(elems: list[tuple[str, dict]], val: Any, out: list[tuple[list[tuple[str, dict]], Any]]) -> None:
    if isinstance(val, dict) and not ({"digits", "precision"} >= set(val) and val):
        for k, v in val.items():
            sub = _path_elems(k) if "/" in str(k) else [(str(k).split(":", 1)[-1], {})]
            _flatten(elems + sub, v, out)
    elif isinstance(val, list) and val and all(isinstance(x, dict) for x in val):
        for item in val:
            keys = {k: str(v) for k, v in item.items() if not isinstance(v, (dict, list))}
            name = elems[-1][0] if elems else ""
            _flatten([*elems[:-1], (name, keys)] if elems else [], item, out)
    else:
        if isinstance(val, dict):  # gNMI decimal64
            val = int(val["digits"]) / (10 ** int(val.get("precision", 0)))
        out.append((elems, val))


def _scalar(v: Any) -> Any:
    if isinstance(v, dict):
        for k in ("uintVal", "intVal", "floatVal", "doubleVal", "stringVal", "jsonVal", "jsonIetfVal"):
            if k in v:
                return v[k]
    return v


def _oc_leaf(elems: list[tuple[str, dict]]) -> tuple[str | None, str | None, int | None]:
    """(port, field, lane) for an OpenConfig/SONiC leaf path, or Nones."""
    names = [n for n, _ in elems]
    port = None
    for n, keys in elems:
        if n in ("interface", "component") and "name" in keys:
            port = keys["name"]
    if len(names) >= 2 and names[0] == "COUNTERS":
        port = names[1]
    leaf = names[-1] if names else ""
    parent = names[-2] if len(names) >= 2 else ""
    lane = None
    for n, keys in elems:
        if n == "channel" and "index" in keys:
            lane = int(keys["index"]) if str(keys["index"]).isdigit() else None
    if leaf.startswith("SAI_") or leaf in ("FEC_PRE_BER", "FEC_POST_BER"):
        return port, "sai:" + leaf, None
    if leaf == "instant" or leaf == "avg":
        if leaf == "avg":
            return port, None, None
        return (
            port,
            {
                "input-power": "rx_power_dbm",
                "output-power": "tx_power_dbm",
                "laser-bias-current": "bias_ma",
                "temperature": "temperature_c",
                "supply-voltage": "voltage_v",
                "pre-fec-ber": "pre_fec_ber",
                "post-fec-ber": "post_fec_ber",
            }.get(parent),
            lane,
        )
    field = {
        "fec-corrected-bits": "fec_corrected_bits",
        "fec-corrected-codewords": "fec_corrected_codewords",
        "fec-corrected-blocks": "fec_corrected_codewords",
        "fec-uncorrectable-blocks": "fec_uncorrectable_codewords",
        "fec-uncorrectable-words": "fec_uncorrectable_codewords",
        "fec-uncorrectable-codewords": "fec_uncorrectable_codewords",
        "fec-symbol-errors": "fec_symbol_errors",
        "in-mac-pause-frames": "pfc_pause_rx",
        "out-mac-pause-frames": "pfc_pause_tx",
    }.get(leaf)
    if field:
        return port, field, None
    if "transceiver" in names and "state" in names:
        field = {"vendor": "module_vendor", "vendor-part": "module_part", "serial-no": "module_serial"}.get(
            leaf
        )
        if field:
            return port, field, None
    if "neighbor" in names and leaf in ("system-name", "port-id"):
        return port, "neighbor_device" if leaf == "system-name" else "neighbor_port", None
    return port, None, None


def parse_gnmi(body: bytes, ctx: Context) -> list[dict]:
    device = _device(ctx, "gnmi")
    data = _json(body)
    messages = data if isinstance(data, list) else [data]
    leaves: list[tuple[datetime, list, Any]] = []
    for msg in messages:
        if not isinstance(msg, dict):
            raise AdapterError("gNMI JSON: expected objects.")
        notes = msg.get("notification")
        if notes is None and "update" in msg:
            notes = [msg]
        if notes is None and "updates" in msg:
            notes = [msg]
        if isinstance(notes, dict):
            notes = [notes]
        for note in notes or []:
            ts = ctx.ts
            raw_ts = note.get("timestamp")
            if isinstance(raw_ts, (int, str)) and str(raw_ts).isdigit() and int(raw_ts) > 0:
                ts = datetime.fromtimestamp(int(raw_ts) / 1e9, UTC)
            prefix = _path_elems(note.get("prefix"))
            for upd in note.get("update") or []:
                flat: list = []
                _flatten(prefix + _path_elems(upd.get("path")), _scalar(upd.get("val")), flat)
                leaves.extend((ts, e, v) for e, v in flat)
            for upd in note.get("updates") or []:
                base = prefix + _path_elems(upd.get("Path") or upd.get("path"))
                for k, v in (upd.get("values") or {}).items():
                    flat = []
                    # gnmic repeats the path without its keys as the value's key: keep the keyed one
                    _flatten(base or _path_elems(k), v, flat)
                    leaves.extend((ts, e, v) for e, v in flat)
    if not leaves:
        raise AdapterError("No gNMI updates found.")
    samples: dict[tuple[str, datetime], dict[str, Any]] = {}
    sai: dict[tuple[str, datetime], dict[str, Any]] = {}
    lanes: dict[tuple[str, datetime, str], dict[int, float | None]] = {}
    for ts, elems, value in leaves:
        port, field, lane = _oc_leaf(elems)
        if field is None:
            continue
        port = port or ctx.port
        if not port:
            raise AdapterError("gNMI update without an interface or component name: pass ?port=.")
        key = (port, ts)
        s = samples.setdefault(key, {"device": device, "port": port, "ts": ts})
        if field.startswith("sai:"):
            sai.setdefault(key, {})[field[4:]] = value
        elif field in ("rx_power_dbm", "tx_power_dbm", "bias_ma"):
            lanes.setdefault((port, ts, field), {})[lane or 0] = _float(value)
        elif field.startswith(("module_", "neighbor_")):
            s[field] = str(value)
        elif field in ("pre_fec_ber", "post_fec_ber", "temperature_c", "voltage_v"):
            s[field] = _float(value)
        else:
            s[field] = _int(value)
    for key, h in sai.items():
        samples[key].update(map_sai(h))
    for (port, ts, field), values in lanes.items():
        samples[(port, ts)][field] = _lanes(values)
    out = [_clean(s) for s in samples.values()]
    if not out:
        raise AdapterError("No known OpenConfig or SONiC counters in the gNMI updates.")
    return out


# ------------------------------------------------------------------------------------------
# Prometheus text exposition

_PROM_LINE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+(-?\d+))?\s*$")
_PROM_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"')
_HOST_LABELS = ("hostname", "host", "nodename", "node")
# ``cabletrack_<field>`` series: the sample format's own counters and gauges
_CT_FIELDS = frozenset(COUNTER_FIELDS) | frozenset(GAUGE_FIELDS)


def parse_prometheus(body: bytes, ctx: Context) -> list[dict]:
    groups: dict[tuple[str, str, datetime], dict[str, Any]] = {}
    for line in _text(body).splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = _PROM_LINE.match(line)
        if not m:
            raise AdapterError(f"Not a Prometheus text line: {line[:80]!r}")
        name, labels_text, value_text, ts_text = m.groups()
        labels = {
            k: bytes(v, "utf-8").decode("unicode_escape") for k, v in _PROM_LABEL.findall(labels_text or "")
        }
        value = _float(value_text)
        if value is None:
            continue  # NaN, +Inf
        ts = datetime.fromtimestamp(int(ts_text) / 1000, UTC) if ts_text else ctx.ts
        if name.startswith("node_ethtool_"):
            stat = name[len("node_ethtool_") :]
            port = labels.get("device") or labels.get("interface") or ctx.port
            device = next((labels[k] for k in _HOST_LABELS if k in labels), None) or ctx.device
            kind = "ethtool"
        elif name.startswith("cabletrack_"):
            stat = name[len("cabletrack_") :]
            if stat.endswith("_total"):
                stat = stat[: -len("_total")]
            if stat not in _CT_FIELDS:
                continue
            port = labels.get("port") or ctx.port
            device = labels.get("device") or ctx.device
            kind = "direct"
        else:
            continue
        if not device:
            raise AdapterError("Prometheus series without a host label: pass ?device=.")
        if not port:
            raise AdapterError(f"Prometheus series {name} without an interface label: pass ?port=.")
        g = groups.setdefault((device, port, ts), {"ethtool": {}, "direct": {}})
        g[kind][stat] = value
    out = []
    for (device, port, ts), g in groups.items():
        s: dict[str, Any] = {"device": device, "port": port, "ts": ts}
        s.update(map_ethtool_stats({k: int(v) for k, v in g["ethtool"].items() if float(v).is_integer()}))
        for k, v in g["direct"].items():
            s[k] = v if k in ("pre_fec_ber", "post_fec_ber", "temperature_c", "voltage_v") else int(v)
        out.append(_clean(s))
    if not out:
        raise AdapterError("No node_ethtool_* or cabletrack_* series found.")
    return out


# ------------------------------------------------------------------------------------------
# Xena PP_RXFECSTATS


def parse_xena(body: bytes, ctx: Context) -> list[dict]:
    device = _device(ctx, "xena")
    out = []
    for line in _text(body).splitlines():
        parts = line.split()
        if len(parts) < 4 or parts[1].upper() != "PP_RXFECSTATS":
            continue
        count = int(parts[3])
        values = [int(x) for x in parts[4:]]
        if len(values) != count or count < 3:
            raise AdapterError(f"PP_RXFECSTATS declares {count} values but has {len(values)}.")
        bins, uncorrectable = values[: count - 2], values[count - 2]
        out.append(
            {
                "device": device,
                "port": ctx.port or parts[0],
                "ts": ctx.ts,
                "fec_hist": bins,
                "fec_correction_limit": len(bins) - 1,
                "fec_uncorrectable_codewords": uncorrectable,
                "fec_corrected_codewords": sum(bins[1:]),
            }
        )
    if not out:
        raise AdapterError("No PP_RXFECSTATS line found.")
    return out


FORMATS: dict[str, Callable[[bytes, Context], list[dict]]] = {
    "ethtool-fec": parse_ethtool_fec,
    "ethtool-stats": parse_ethtool_stats,
    "ethtool-module": parse_ethtool_module,
    "mlxlink": parse_mlxlink,
    "perfquery": parse_perfquery,
    "sonic-counters": parse_sonic_counters,
    "sonic-cli": parse_sonic_cli,
    "gnmi": parse_gnmi,
    "openconfig": parse_gnmi,
    "prometheus": parse_prometheus,
    "xena": parse_xena,
}


def parse(fmt: str, body: bytes, ctx: Context) -> list[dict]:
    try:
        return FORMATS[fmt](body, ctx)
    except AdapterError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
        raise AdapterError(f"Cannot read the body as {fmt}: {exc}") from exc
