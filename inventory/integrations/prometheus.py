"""Pull telemetry from a Prometheus that already scrapes the fabric, instead of a second collector.

A periodic task asks Prometheus's HTTP API (``/api/v1/query_range``) for the configured
series over the last window at a fixed step, turns each (host, interface, timestamp) into a
sample of the telemetry vocabulary in DESIGN.md, and hands the batch to the same ingest
service as ``POST /api/telemetry/``: the same resolution by alias, the same idempotent
storage, the same rate maths and rollups, so the rules and alerts work exactly the same.

The mapping from a site's metric and label names is configuration
(``CABLETRACK_PROMETHEUS_MAPPING``, JSON):

* ``device_labels``: labels that name the host (first present wins); ``device_regex`` keeps
  the first group of it (``leaf-01:9100`` -> ``leaf-01``);
* ``port_labels``: labels that name the interface;
* ``ethtool_prefix``: series named ``<prefix><stat>`` are read as mlx5 ``ethtool -S`` stats
  (node_exporter's ethtool collector: ``node_ethtool_``) and mapped like that adapter;
* ``series``: explicit ``metric name -> telemetry field`` for everything else (SONiC or
  mlxlink exporters), e.g. ``{"sonic_port_fec_correctable_frames": "fec_corrected_codewords"}``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

DEFAULT_MAPPING = {
    "device_labels": ["hostname", "nodename", "instance"],
    "device_regex": r"^([^:]+)",
    "port_labels": ["device", "interface", "port"],
    "ethtool_prefix": "node_ethtool_",
    "ethtool_stats": [
        "rx_corrected_bits_phy",
        "rx_fec_corrected_blocks_phy",
        "rx_fec_uncorrectable_blocks_phy",
        "rx_bits_phy",
        "link_down_events_phy",
        "rx_pause_ctrl_phy",
        "tx_pause_ctrl_phy",
    ],
    "series": {},
}
GAUGES = {
    "pre_fec_ber",
    "post_fec_ber",
    "temperature_c",
    "voltage_v",
    "bias_ma",
    "rx_power_dbm",
    "tx_power_dbm",
}


class PrometheusError(RuntimeError):
    pass


@dataclass
class Pulled:
    samples: list[dict] = field(default_factory=list)
    series: int = 0
    skipped: list[str] = field(default_factory=list)


def _selector(mapping: dict) -> str:
    names = [mapping["ethtool_prefix"] + s for s in mapping.get("ethtool_stats", [])] + list(
        mapping.get("series", {})
    )
    return '{__name__=~"' + "|".join(re.escape(n) for n in names) + '"}'


def samples_from_matrix(result: list[dict], mapping: dict) -> Pulled:
    """Turn a ``query_range`` matrix into telemetry samples (pure; used by the task and tests)."""
    from ..telemetry.adapters import map_ethtool_stats

    prefix = mapping.get("ethtool_prefix", "")
    direct = mapping.get("series", {})
    host_re = re.compile(mapping.get("device_regex") or r"^(.*)$")
    groups: dict[tuple[str, str, float], dict] = {}
    out = Pulled(series=len(result))
    for series in result:
        labels = series.get("metric", {})
        name = labels.get("__name__", "")
        host = next((labels[k] for k in mapping["device_labels"] if labels.get(k)), None)
        port = next((labels[k] for k in mapping["port_labels"] if labels.get(k)), None)
        if not host or not port:
            out.skipped.append(f"{name}{labels}: no host or interface label")
            continue
        m = host_re.match(host)
        device = m.group(1) if m else host
        for ts, raw in series.get("values", []):
            try:
                value = float(raw)
            except (TypeError, ValueError):
                continue
            if value != value or value in (float("inf"), float("-inf")):
                continue
            g = groups.setdefault((device, port, float(ts)), {"ethtool": {}, "direct": {}})
            if name in direct:
                g["direct"][direct[name]] = value
            elif prefix and name.startswith(prefix):
                g["ethtool"][name[len(prefix) :]] = int(value)
    for (device, port, ts), g in sorted(groups.items()):
        sample = {"device": device, "port": port, "ts": datetime.fromtimestamp(ts, UTC).isoformat()}
        sample.update(map_ethtool_stats(g["ethtool"]))
        for fld, v in g["direct"].items():
            sample[fld] = v if fld in GAUGES else int(v)
        if len(sample) > 3:
            out.samples.append(sample)
    return out


def prometheus_pull(
    *,
    url: str,
    mapping: dict | None = None,
    now: datetime,
    window: timedelta,
    step: int = 60,
    timeout: float = 30,
) -> Pulled:
    """Query Prometheus for the window ending at ``now``; return samples (nothing stored)."""
    import requests

    mapping = {**DEFAULT_MAPPING, **(mapping or {})}
    params = {
        "query": _selector(mapping),
        "start": (now - window).timestamp(),
        "end": now.timestamp(),
        "step": step,
    }
    try:
        resp = requests.get(f"{url.rstrip('/')}/api/v1/query_range", params=params, timeout=timeout)
    except requests.RequestException as exc:
        raise PrometheusError(f"Prometheus at {url} is not reachable: {exc}") from exc
    try:
        body = resp.json()
    except ValueError as exc:
        raise PrometheusError(f"Prometheus answered {resp.status_code} with no JSON") from exc
    if resp.status_code != 200 or body.get("status") != "success":
        raise PrometheusError(f"Prometheus refused the query: {resp.status_code} {body.get('error', '')}")
    data = body.get("data", {})
    if data.get("resultType") != "matrix":
        raise PrometheusError(f"Expected a matrix, got {data.get('resultType')!r}")
    return samples_from_matrix(data.get("result", []), mapping)
