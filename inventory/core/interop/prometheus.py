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
* ``ethtool_prefix``: series named ``<prefix><stat>`` are read as ``ethtool -S`` stats
  (node_exporter's ethtool collector: ``node_ethtool_``) and mapped like that adapter;
  ``ethtool_stats`` names them in the driver's words and the query asks for both spellings,
  the driver's and node_exporter's (``rx_corrected_bits_phy`` and
  ``received_corrected_bits_phy``, ``nic_stats.node_exporter_stat``);
* ``series``: explicit ``metric name -> telemetry field`` for everything else (SONiC or
  mlxlink exporters), e.g. ``{"sonic_port_fec_correctable_frames": "fec_corrected_codewords"}``;
* ``lane_label``: for per-lane gauges (receive/transmit power, bias), the label holding the
  lane number; the lanes of one port and timestamp become the field's list, lowest first;
* ``match``: extra label matchers for the query, e.g. ``job="node"``.

Prometheus evaluates ``query_range`` at each step and answers with the latest scraped value
at or before it, so counters arrive as cumulative values every ``step`` seconds and the
ingest's rate maths (resets included) work on them as on a collector's samples.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import requests

from inventory.core.telemetry.adapters.ethtool import map_ethtool_stats
from inventory.core.telemetry.adapters.nic_stats import node_exporter_stat, stat_from_node_exporter
from inventory.core.telemetry.decode import Sample

DEFAULT_MAPPING = {
    "match": "",
    "lane_label": "lane",
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
LANE_FIELDS = {"rx_power_dbm", "tx_power_dbm", "bias_ma"}
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
    warnings: list[str] = field(default_factory=list)


_KEYS = {
    "match": str,
    "lane_label": str,
    "device_labels": list,
    "device_regex": str,
    "port_labels": list,
    "ethtool_prefix": str,
    "ethtool_stats": list,
    "series": dict,
}


def mapping_effective(mapping: dict | None) -> dict:
    """The default mapping overlaid with a site's; a clear error for anything malformed."""
    mapping = mapping or {}
    if not isinstance(mapping, dict):
        raise PrometheusError("The Prometheus mapping must be a JSON object.")
    unknown = sorted(set(mapping) - set(_KEYS))
    if unknown:
        raise PrometheusError(
            f"Unknown Prometheus mapping key(s): {', '.join(unknown)} (known: {', '.join(_KEYS)})."
        )
    out = {**DEFAULT_MAPPING, **mapping}
    for key, kind in _KEYS.items():
        if not isinstance(out[key], kind):
            raise PrometheusError(f"Prometheus mapping {key!r} must be a {kind.__name__}.")
    try:
        re.compile(out["device_regex"])
    except re.error as exc:
        raise PrometheusError(
            f"Prometheus mapping 'device_regex' is not a regular expression: {exc}"
        ) from exc
    fields = set(Sample.__struct_fields__) - {"device", "port", "ts"}
    bad = sorted(f"{m} -> {f}" for m, f in out["series"].items() if f not in fields)
    if bad:
        raise PrometheusError(f"Prometheus mapping names unknown telemetry field(s): {', '.join(bad)}.")
    if not out["ethtool_stats"] and not out["series"]:
        raise PrometheusError("The Prometheus mapping selects no series (no ethtool_stats, no series).")
    return out


def _selector(mapping: dict) -> str:
    stats = mapping.get("ethtool_stats", [])
    spellings = dict.fromkeys(s for stat in stats for s in (stat, node_exporter_stat(stat)))
    names = [mapping["ethtool_prefix"] + s for s in spellings] + list(mapping.get("series", {}))
    match = f",{mapping['match']}" if mapping.get("match") else ""
    return '{__name__=~"' + "|".join(re.escape(n) for n in names) + '"' + match + "}"


def query_params(mapping: dict, *, end: float, window: float, step: int) -> dict:
    """The ``query_range`` parameters for the window ending at ``end`` (epoch seconds)."""
    return {"query": _selector(mapping), "start": end - window, "end": end, "step": step}


def samples_from_matrix(result: list[dict], mapping: dict) -> Pulled:
    """Turn a ``query_range`` matrix into telemetry samples (pure; used by the task and tests)."""
    prefix = mapping.get("ethtool_prefix", "")
    direct = mapping.get("series", {})
    lane_label = mapping.get("lane_label") or ""
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
            if not math.isfinite(value):  # NaN or an infinity
                continue
            g = groups.setdefault((device, port, float(ts)), {"ethtool": {}, "direct": {}, "lanes": {}})
            if name in direct and direct[name] in LANE_FIELDS and labels.get(lane_label, "").isdigit():
                g["lanes"].setdefault(direct[name], {})[int(labels[lane_label])] = value
            elif name in direct:
                g["direct"][direct[name]] = value
            elif prefix and name.startswith(prefix):
                g["ethtool"][stat_from_node_exporter(name[len(prefix) :])] = int(value)
    for (device, port, ts), g in sorted(groups.items()):
        sample = {"device": device, "port": port, "ts": datetime.fromtimestamp(ts, UTC).isoformat()}
        sample.update(map_ethtool_stats(g["ethtool"]))
        for fld, v in g["direct"].items():
            sample[fld] = v if fld in GAUGES else int(v)
        for fld, lanes in g["lanes"].items():
            sample[fld] = [lanes[k] for k in sorted(lanes)]
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
    """Query Prometheus for the window ending at ``now``; return samples (nothing stored).

    Raises ``PrometheusError`` with a message a person can act on when Prometheus cannot be
    reached, answers with an error (HTTP 4xx/5xx, ``"status": "error"``) or with something
    that is not a ``query_range`` matrix.
    """
    if not url:
        raise PrometheusError("No Prometheus URL configured (CABLETRACK_PROMETHEUS_URL).")
    mapping = mapping_effective(mapping)
    params = query_params(mapping, end=now.timestamp(), window=window.total_seconds(), step=step)
    where = f"{url.rstrip('/')}/api/v1/query_range"
    try:
        resp = requests.get(where, params=params, timeout=timeout)
    except requests.RequestException as exc:
        raise PrometheusError(f"Prometheus at {url} is not reachable: {exc}") from exc
    try:
        body = resp.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        text = resp.text.strip()[:200]
        raise PrometheusError(
            f"Prometheus at {url} answered HTTP {resp.status_code} without a JSON body: {text!r}"
        )
    if resp.status_code != 200 or body.get("status") != "success":
        kind = body.get("errorType") or "error"
        raise PrometheusError(
            f"Prometheus at {url} refused the query (HTTP {resp.status_code}, {kind}): {body.get('error', '')}"
        )
    data = body.get("data") or {}
    if data.get("resultType") != "matrix":
        raise PrometheusError(f"Prometheus at {url}: expected a matrix, got {data.get('resultType')!r}")
    pulled = samples_from_matrix(data.get("result") or [], mapping)
    pulled.warnings = [str(w) for w in body.get("warnings") or []]
    return pulled
