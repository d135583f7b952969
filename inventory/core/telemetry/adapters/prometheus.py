"""Prometheus text exposition: node_exporter's ethtool collector and ``cabletrack_<field>`` series.

node_exporter names a driver's stat ``node_ethtool_<stat>`` with ``rx``/``tx`` spelled
``received``/``transmitted`` (``nic_stats``); a series in the driver's own words (another
exporter, a textfile) is read the same way."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from inventory.core.telemetry.adapters.common import AdapterError, Context, as_float, body_text, clean
from inventory.core.telemetry.adapters.nic_stats import map_ethtool_counters, stat_from_node_exporter
from inventory.core.telemetry.decode import COUNTER_FIELDS, GAUGE_FIELDS

_PROM_LINE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+(-?\d+))?\s*$")
_PROM_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"')
_HOST_LABELS = ("hostname", "host", "nodename", "node")
# a label value escapes exactly three characters (``\\``, ``\"``, ``\n``); anything else is
# the text itself, UTF-8 included ("café"), and an unknown escape is kept as written, as
# Prometheus' own parser keeps it
_LABEL_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_UNESCAPED = {"\\": "\\", '"': '"', "n": "\n"}


def _label_value(raw: str) -> str:
    return _LABEL_ESCAPE.sub(lambda m: _UNESCAPED.get(m.group(1), m.group()), raw)


# ``cabletrack_<field>`` series: the sample format's own counters and gauges
_CT_FIELDS = frozenset(COUNTER_FIELDS) | frozenset(GAUGE_FIELDS)


def _series_time(ms: str) -> datetime | float:
    seconds = float(ms) / 1000
    try:
        return datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        return seconds  # refused for its own item by the sample checks


_LINES = re.compile(r"[^\r\n]+")


def parse_prometheus(body: bytes, ctx: Context) -> list[dict]:
    """Samples grouped by (device, port, time). Lines are read one at a time (never split into
    one list) and the samples counted as they are built: past ``ctx.max_items`` the body is
    refused before the rest is read. A series' own timestamp (ms) passes as epoch seconds, so an
    absurd one is refused for its item by the sample checks, not for the body."""
    groups: dict[tuple[str, str, datetime | float], dict[str, Any]] = {}
    g_names: dict[str, str] = {}  # a stat in the table's words -> the series name it came as
    cap = ctx.max_items
    for found in _LINES.finditer(body_text(body)):
        line = found.group().strip()
        if not line or line.startswith("#"):
            continue
        m = _PROM_LINE.match(line)
        if not m:
            raise AdapterError(f"Not a Prometheus text line: {line[:80]!r}")
        name, labels_text, value_text, ts_text = m.groups()
        labels = {k: _label_value(v) for k, v in _PROM_LABEL.findall(labels_text or "")}
        value = as_float(value_text)
        if value is None:
            continue  # NaN, +Inf
        ts = _series_time(ts_text) if ts_text else ctx.ts
        if name.startswith("node_ethtool_"):
            # node_exporter writes rx_/tx_ as received_/transmitted_: the table's words back
            stat = stat_from_node_exporter(name[len("node_ethtool_") :])
            g_names[stat] = name
            port = labels.get("device") or labels.get("interface") or ctx.port
            device = next((labels[k] for k in _HOST_LABELS if k in labels), None) or ctx.device
            kind = "ethtool"
        elif name.startswith("cabletrack_"):
            stat = name[len("cabletrack_") :]
            if stat.endswith("_total"):
                stat = stat[: -len("_total")]
            if stat not in _CT_FIELDS:
                ctx.report.ignore([name])
                continue
            port = labels.get("port") or ctx.port
            device = labels.get("device") or ctx.device
            kind = "direct"
        else:
            ctx.report.ignore([name])
            continue
        if not device:
            raise AdapterError("Prometheus series without a host label: pass ?device=.")
        if not port:
            raise AdapterError(f"Prometheus series {name} without an interface label: pass ?port=.")
        g = groups.get((device, port, ts))
        if g is None:
            if cap is not None and len(groups) >= cap:
                raise AdapterError(f"Too many samples: more than {cap:,} (at most {cap:,} per request).")
            g = groups[(device, port, ts)] = {"ethtool": {}, "direct": {}}
        g[kind][stat] = value
    out = []
    for (device, port, ts), g in groups.items():
        s: dict[str, Any] = {"device": device, "port": port, "ts": ts}
        counters = {k: int(v) for k, v in g["ethtool"].items() if float(v).is_integer()}
        fields, used = map_ethtool_counters(counters)
        ctx.report.ignore(g_names[k] for k in g["ethtool"] if k not in used)
        s.update(fields)
        for k, v in g["direct"].items():
            s[k] = v if k in ("pre_fec_ber", "post_fec_ber", "temperature_c", "voltage_v") else int(v)
        out.append(clean(s))
    if not out:
        raise AdapterError("No node_ethtool_* or cabletrack_* series found.")
    return out
