"""Reads of the ingest side's telemetry tables for the rules, the pages and /metrics.

``PortRollup`` (per port, per bucket: counter increases with reset handling, gauges) is the
table the rules judge; ``PortTelemetryState`` holds each port's last identity and neighbour.
The rule window is read with one raw query returning plain numbers (no model instances: a
fleet of 100,000 ports has millions of rollup rows in a 15-minute window).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from django.db import connection
from django.db.models import Avg, Max, Q, Sum

from inventory.models import PortRollup, PortTelemetryState

_COLS = [
    "port_id",
    "covered_s",
    "fec_corrected_cw",
    "fec_uncorrectable_cw",
    "fec_corrected_bits",
    "line_bits",
    "pre_fec_ber",
    "hist_cw_warn",
    "hist_cw_crit",
    "pfc_pause_rx",
    "pfc_pause_tx",
    "pfc_pause_duration_us",
    "link_down_events",
    "link_error_recovery",
]


@dataclass
class RollupRows:
    """Long-form rollups of the window: one entry per (port, bucket), plus the latest gauges."""

    port_id: np.ndarray
    bucket_start: np.ndarray  # epoch seconds
    seconds: np.ndarray
    values: dict[str, np.ndarray] = field(default_factory=dict)  # rule_inputs.WINDOW_FIELDS -> float[R]
    latest: dict[int, dict] = field(default_factory=dict)  # port_id -> rx/tx/serial/neighbour ...
    # Every bucket's per-lane receive power minimum: (port id, bucket epoch, lanes), newest first
    # per port (rx_power_drift judges it bucket by bucket, so a drift must hold to alert).
    rx_by_bucket: list[tuple[int, float, list]] = field(default_factory=list)


def _epoch_sql(col: str) -> str:
    if connection.vendor == "postgresql":
        return f"EXTRACT(EPOCH FROM {col})::float8"
    return f"CAST(strftime('%%s', {col}) AS REAL)"  # %% : the query takes parameters


def read_rollups(*, start: datetime, end: datetime) -> RollupRows:
    """The window's rollups as long arrays, plus each port's latest lane power and identity."""
    qn = connection.ops.quote_name
    table = qn(PortRollup._meta.db_table)
    cols = ", ".join(qn(c) for c in _COLS)
    sql = (
        f"SELECT {cols}, {_epoch_sql(qn('bucket'))} FROM {table} "  # noqa: S608 - quoted identifiers
        f"WHERE {qn('bucket')} >= %s AND {qn('bucket')} < %s"
    )
    with connection.cursor() as cur:
        cur.execute(sql, [start, end])
        raw = cur.fetchall()
    if not raw:
        return RollupRows(port_id=np.zeros(0, np.int64), bucket_start=np.zeros(0), seconds=np.zeros(0))
    a = np.array(raw, dtype=float)  # None -> NaN
    col = {c: a[:, i] for i, c in enumerate(_COLS)}
    rows = RollupRows(
        port_id=col["port_id"].astype(np.int64),
        bucket_start=a[:, len(_COLS)],
        seconds=np.nan_to_num(col["covered_s"]),
        values={
            "corrected_cw": col["fec_corrected_cw"],
            "uncorrectable_cw": col["fec_uncorrectable_cw"],
            "corrected_bits": col["fec_corrected_bits"],
            "line_bits": col["line_bits"],
            "pre_fec_ber": col["pre_fec_ber"],
            "hist_warn_cw": col["hist_cw_warn"],
            "hist_crit_cw": col["hist_cw_crit"],
            # Per direction: received pauses point at the far end, sent ones name this port.
            "pfc_pause_rx": col["pfc_pause_rx"],
            "pfc_pause_tx": col["pfc_pause_tx"],
            "pfc_pause_us": col["pfc_pause_duration_us"],
            "link_down": col["link_down_events"],
            "error_recovery": col["link_error_recovery"],
        },
    )
    rows.latest = _latest(start=start, end=end, port_ids=None, rx_by_bucket=rows.rx_by_bucket)
    return rows


def _latest(
    *, start: datetime, end: datetime, port_ids: list[int] | None, rx_by_bucket: list | None = None
) -> dict[int, dict]:
    """Latest per-lane power (the last bucket's minimum per lane) and identity per port; every
    bucket's receive lanes appended to ``rx_by_bucket`` when given (same read)."""
    out: dict[int, dict] = defaultdict(dict)
    qs = PortRollup.objects.filter(bucket__gte=start, bucket__lt=end).filter(rx_power_min_dbm__isnull=False)
    if port_ids is not None:
        qs = qs.filter(port_id__in=port_ids)
    # Only the newest bucket per port matters: read newest first, keep the first seen.
    for pid, rx, tx, bucket in qs.order_by("port_id", "-bucket").values_list(
        "port_id", "rx_power_min_dbm", "tx_power_min_dbm", "bucket"
    ):
        if rx_by_bucket is not None:
            rx_by_bucket.append((pid, bucket.timestamp(), rx))
        if "rx_power_dbm" in out[pid]:
            continue
        out[pid]["rx_power_dbm"] = rx
        out[pid]["tx_power_dbm"] = tx
    # The link as trained, from the newest bucket that reported it (link_degraded).
    trained = PortRollup.objects.filter(bucket__gte=start, bucket__lt=end).filter(
        Q(speed_gbps_min__isnull=False) | Q(link_width_min__isnull=False)
    )
    if port_ids is not None:
        trained = trained.filter(port_id__in=port_ids)
    for pid, speed, width in trained.order_by("port_id", "-bucket").values_list(
        "port_id", "speed_gbps_min", "link_width_min"
    ):
        if "speed_gbps" not in out[pid]:
            out[pid]["speed_gbps"] = speed
            out[pid]["link_width"] = width
    # Identity is sticky (collectors send the EEPROM rarely): the latest per port, however old.
    states = PortTelemetryState.objects.all()
    if port_ids is not None:
        states = states.filter(port_id__in=port_ids)
    for pid, serial, ndev, nport, seen, warn in states.values_list(
        "port_id",
        "module_serial",
        "neighbor_device",
        "neighbor_port",
        "identity_seen_at",
        "rx_power_low_warn_dbm",
    ):
        d = out[pid]
        d["module_serial"] = serial or None
        d["neighbor_device"] = ndev or None
        d["neighbor_port"] = nport or None
        d["rx_low_warn_dbm"] = warn
        d["ts"] = seen
    return dict(out)


def fec_series(*, port_ids: list[int], start: datetime, end: datetime, bucket_s: float) -> dict[int, list]:
    """Per port, per ``bucket_s`` from ``start``: (corrected codewords/s, pre-FEC BER) or Nones."""
    if not port_ids:
        return {}
    n = int(round((end - start).total_seconds() / bucket_s))
    acc: dict[int, list[list[float]]] = {p: [[0.0, 0.0, 0.0, 0.0] for _ in range(n)] for p in port_ids}
    for pid, bucket, covered, cw, bits, line in PortRollup.objects.filter(
        port_id__any=list(port_ids), bucket__gte=start, bucket__lt=end
    ).values_list("port_id", "bucket", "covered_s", "fec_corrected_cw", "fec_corrected_bits", "line_bits"):
        i = int((bucket - start).total_seconds() // bucket_s)
        if not 0 <= i < n:
            continue
        a = acc[pid][i]
        if cw is not None and covered:
            a[0] += cw
            a[1] += covered
        if bits is not None and line:
            a[2] += bits
            a[3] += line
    return {
        p: [((a[0] / a[1]) if a[1] else None, (a[2] / a[3]) if a[3] else None) for a in rows]
        for p, rows in acc.items()
    }


def port_stats(*, start: datetime, end: datetime, port_ids: list[int] | None = None) -> dict[int, dict]:
    """Per port over [start, end): corrected/uncorrectable codewords per second, pre-FEC BER
    (from bits), worst pre-FEC BER, mean of the bucket temperature maxima."""
    qs = PortRollup.objects.filter(bucket__gte=start, bucket__lt=end)
    if port_ids is not None and len(port_ids) <= 5000:
        qs = qs.filter(port_id__in=port_ids)
    rows = (
        qs.values("port_id")
        .annotate(
            cw=Sum("fec_corrected_cw"),
            unc=Sum("fec_uncorrectable_cw"),
            bits=Sum("fec_corrected_bits"),
            line=Sum("line_bits"),
            secs=Sum("covered_s"),
            ber_gauge=Avg("pre_fec_ber"),
            ber_max=Max("pre_fec_ber"),
            temp=Avg("temperature_max_c"),
        )
        .order_by()
    )
    wanted = set(port_ids) if port_ids is not None else None
    out = {}
    for r in rows:
        pid = r["port_id"]
        if wanted is not None and pid not in wanted:
            continue
        secs = r["secs"] or 0
        ber = (r["bits"] / r["line"]) if r["bits"] is not None and r["line"] else r["ber_gauge"]
        out[pid] = {
            "corrected_cw_rate": (r["cw"] / secs) if r["cw"] is not None and secs else None,
            "uncorrectable_cw_rate": (r["unc"] / secs) if r["unc"] is not None and secs else None,
            "pre_fec_ber": ber,
            "pre_fec_ber_max": r["ber_max"],
            "temperature_c": r["temp"],
        }
    return out


def port_optics_and_pfc(*, start: datetime, end: datetime, port_ids: list[int]) -> dict[int, dict]:
    """Per port over [start, end): the newest bucket's per-lane receive power minimum, and PFC
    pause frames received and sent per second (for ``/metrics``; two grouped reads)."""
    out: dict[int, dict] = defaultdict(dict)
    if not port_ids:
        return {}
    wanted = set(port_ids)
    base = PortRollup.objects.filter(bucket__gte=start, bucket__lt=end)
    small = len(port_ids) <= 5000
    qs = base.filter(port_id__in=port_ids) if small else base
    for r in (
        qs.filter(Q(pfc_pause_rx__isnull=False) | Q(pfc_pause_tx__isnull=False))
        .values("port_id")
        .annotate(rx=Sum("pfc_pause_rx"), tx=Sum("pfc_pause_tx"), secs=Sum("covered_s"))
        .order_by()
    ):
        pid, secs = r["port_id"], r["secs"] or 0
        if pid not in wanted or not secs:
            continue
        if r["rx"] is not None:
            out[pid]["pfc_received_rate"] = r["rx"] / secs
        if r["tx"] is not None:
            out[pid]["pfc_sent_rate"] = r["tx"] / secs
    newest = {
        r["port_id"]: r["b"]
        for r in qs.filter(rx_power_min_dbm__isnull=False)
        .values("port_id")
        .annotate(b=Max("bucket"))
        .order_by()
    }
    if newest:
        lanes = qs.filter(rx_power_min_dbm__isnull=False, bucket__gte=min(newest.values()))
        for pid, bucket, rx in lanes.values_list("port_id", "bucket", "rx_power_min_dbm"):
            if pid in wanted and newest.get(pid) == bucket:
                out[pid]["rx_power_dbm"] = rx if isinstance(rx, list) else [rx]
    return dict(out)
