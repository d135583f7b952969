"""Reads of the ingest side's telemetry tables for the rules, the pages and /metrics.

``PortRollup`` (per port, per bucket: counter increases with reset handling, gauges) is the
table the rules judge; ``PortTelemetryState`` holds each port's last identity and neighbour.
The rule window is read with one raw query returning plain numbers (no model instances: a
fleet of 100,000 ports has millions of rollup rows in a 15-minute window).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from django.db import connection
from django.db.models import Avg, Max, Q, Sum

from inventory.db.copy import read_columns
from inventory.models import PortRollup, PortTelemetryState
from inventory.selectors.telemetry.alert_shards import AlertShard

LANES = 8  # lanes the rules read per port (the decoder's bound; longer lists are cut)

# The per-bucket fields the rules read: PortWindow's names -> PortRollup's columns.
WINDOW_COLUMNS = {
    "corrected_cw": "fec_corrected_cw",
    "uncorrectable_cw": "fec_uncorrectable_cw",
    "corrected_bits": "fec_corrected_bits",
    "line_bits": "line_bits",
    "pre_fec_ber": "pre_fec_ber",
    "hist_warn_cw": "hist_cw_warn",
    "hist_crit_cw": "hist_cw_crit",
    # Per direction: received pauses point at the far end, sent ones name this port.
    "pfc_pause_rx": "pfc_pause_rx",
    "pfc_pause_tx": "pfc_pause_tx",
    "pfc_pause_us": "pfc_pause_duration_us",
    "link_down": "link_down_events",
    "error_recovery": "link_error_recovery",
}


@dataclass
class RollupRows:
    """The window's rollups as columns: one entry per (port, bucket), plus what the rules take
    from each port's newest buckets and its state row. NaN stands for "not reported"."""

    port_id: np.ndarray  # int64[R]
    bucket_start: np.ndarray  # epoch seconds
    seconds: np.ndarray
    values: dict[str, np.ndarray] = field(default_factory=dict)  # PortWindow's names -> float[R]
    # Every bucket's per-lane receive power minimum (rows whose list is not null), so a drift
    # must hold to alert: port, bucket, lanes (float[X, LANES]).
    rx_port: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    rx_bucket: np.ndarray = field(default_factory=lambda: np.zeros(0))
    rx: np.ndarray = field(default_factory=lambda: np.zeros((0, LANES)))
    # The transmit lanes of each port's newest bucket with receive lanes (one row a port).
    tx_port: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    tx: np.ndarray = field(default_factory=lambda: np.zeros((0, LANES)))
    # The link as trained, from each port's newest bucket that reported it (link_degraded).
    trained_port: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    speed_gbps: np.ndarray = field(default_factory=lambda: np.zeros(0))
    link_width: np.ndarray = field(default_factory=lambda: np.zeros(0))
    identity: Identity | None = None

    def only(self, keep: Callable[[np.ndarray], np.ndarray]) -> RollupRows:
        """These rows restricted to the ports ``keep`` (port ids -> booleans) accepts."""
        rows, rx, trained = keep(self.port_id), keep(self.rx_port), keep(self.trained_port)
        tx = keep(self.tx_port)
        return RollupRows(
            port_id=self.port_id[rows],
            bucket_start=self.bucket_start[rows],
            seconds=self.seconds[rows],
            values={k: v[rows] for k, v in self.values.items()},
            rx_port=self.rx_port[rx],
            rx_bucket=self.rx_bucket[rx],
            rx=self.rx[rx],
            tx_port=self.tx_port[tx],
            tx=self.tx[tx],
            trained_port=self.trained_port[trained],
            speed_gbps=self.speed_gbps[trained],
            link_width=self.link_width[trained],
            identity=self.identity,
        )


@dataclass
class Identity:
    """Each reporting port's sticky identity (collectors send the EEPROM rarely: the latest,
    however old), from ``PortTelemetryState``. Empty strings are None."""

    port_id: np.ndarray  # int64[S]
    module_serial: list[str | None]
    neighbor_device: list[str | None]
    neighbor_port: list[str | None]
    rx_low_warn_dbm: np.ndarray  # float[S]


def _epoch_sql(col: str) -> str:
    if connection.vendor == "postgresql":
        return f"EXTRACT(EPOCH FROM {col})::float8"
    return f"CAST(strftime('%%s', {col}) AS REAL)"  # %% : the query takes parameters


def read_rollups(*, start: datetime, end: datetime, shard: AlertShard | None = None) -> RollupRows:
    """The window's rollups as columns, plus each port's newest lanes, trained link and
    identity. On PostgreSQL the rows travel as binary records straight into numpy
    (``inventory.db.copy.read_columns``), in one read: a site's window is millions of rows, and a
    Python tuple a row cost a 131,072-GPU site's evaluation most of its 106 s and 13 GB.
    Elsewhere (SQLite) through the cursor.

    ``shard``: only that alert shard's ports (``alert_shards``); on PostgreSQL the rows of the
    other shards never leave the server."""
    if connection.vendor == "postgresql":
        rows = _read_records(start, end, shard)
    else:
        rows = _read_cursor(start, end)
        if shard is not None:
            rows = rows.only(shard.mask)
    rows.identity = _identity(shard)
    return rows


def _window_from(shard: AlertShard | None = None) -> tuple[str, list]:
    """The window's rows, ``bucket`` in [%s, %s), of one shard's ports or of all; and the
    shard condition's parameters (after the bounds)."""
    qn = connection.ops.quote_name
    bucket = qn("bucket")
    sql = f"FROM {qn(PortRollup._meta.db_table)} WHERE {bucket} >= %s AND {bucket} < %s"  # noqa: S608 - quoted identifiers
    if shard is None:
        return sql, []
    cond, params = shard.sql(qn("port_id"))
    return f"{sql} AND {cond}", params


def _lane_columns(col: str) -> list[tuple[str, str]]:
    qn = connection.ops.quote_name
    return [(f"{qn(col)}[{i}]", "f4") for i in range(1, LANES + 1)]


def _read_records(start: datetime, end: datetime, shard: AlertShard | None) -> RollupRows:
    """The window as numpy arrays (PostgreSQL): one read of every column the rules take per
    bucket, then the transmit lanes of each port's newest bucket with receive lanes, looked up
    by key (a lane list costs PostgreSQL about half a microsecond a lane to pick apart: the
    transmit lanes of every bucket were a sixth of the read, for one bucket a port)."""
    qn = connection.ops.quote_name
    window, shard_params = _window_from(shard)
    cols = read_columns(
        [
            (qn("port_id"), "i8"),
            (f"EXTRACT(EPOCH FROM {qn('bucket')})", "f8"),
            (qn("covered_s"), "f8"),
            *((qn(c), "f8") for c in WINDOW_COLUMNS.values()),
            # 1: the row reported receive lanes (a null list is not a list of nulls)
            (f"CASE WHEN {qn('rx_power_min_dbm')} IS NULL THEN 0 ELSE 1 END", "f4"),
            *_lane_columns("rx_power_min_dbm"),
            (qn("speed_gbps_min"), "f8"),
            (qn("link_width_min"), "f8"),
        ],
        window,
        [start, end, *shard_params],
    )
    port, bucket, covered = cols[0], cols[1], cols[2]
    n = len(WINDOW_COLUMNS)
    rows = RollupRows(
        port_id=port,
        bucket_start=bucket,
        seconds=covered,
        values=dict(zip(WINDOW_COLUMNS, cols[3 : 3 + n], strict=True)),
    )
    has_rx = cols[3 + n] == 1
    rows.rx_port, rows.rx_bucket = port[has_rx], bucket[has_rx]
    rows.rx = np.stack(cols[4 + n : 4 + n + LANES], axis=1)[has_rx]
    newest = _newest(rows.rx_port, rows.rx_bucket)
    if newest.size:
        keys = (rows.rx_port[newest], rows.rx_bucket[newest])
        tx = read_columns(
            [(qn("port_id"), "i8"), *_lane_columns("tx_power_min_dbm")],
            f"FROM unnest(%s::bigint[], %s::float8[]) AS k(port, epoch) "  # noqa: S608 - quoted identifiers
            f"JOIN {qn(PortRollup._meta.db_table)} ON {qn('port_id')} = k.port "
            f"AND {qn('bucket')} = to_timestamp(k.epoch)",
            [_array(keys[0]), _array(keys[1])],
        )
        rows.tx_port, rows.tx = tx[0], np.stack(tx[1:], axis=1)
    speed, width = cols[-2], cols[-1]
    trained = ~(np.isnan(speed) & np.isnan(width))
    newest = _newest(port[trained], bucket[trained])
    rows.trained_port = port[trained][newest]
    rows.speed_gbps, rows.link_width = speed[trained][newest], width[trained][newest]
    return rows


def _newest(port: np.ndarray, bucket: np.ndarray) -> np.ndarray:
    """The index of each port's newest bucket, in port order."""
    if not port.size:
        return np.zeros(0, np.int64)
    order = np.lexsort((-bucket, port))
    return order[np.r_[True, port[order][1:] != port[order][:-1]]]


def _array(values: np.ndarray) -> str:
    """A PostgreSQL array literal (numbers: ``repr``, exact for a float): one parameter instead
    of psycopg adapting half a million elements one by one."""
    return "{" + ",".join(map(repr, values.tolist())) + "}"


def _lanes(values) -> list[float]:
    """A stored lane list as LANES floats, NaN for a missing lane or value."""
    if isinstance(values, int | float):
        values = [values]
    out = [np.nan if v is None else float(v) for v in (values or [])[:LANES]]
    return out + [np.nan] * (LANES - len(out))


def _read_cursor(start: datetime, end: datetime) -> RollupRows:
    qn = connection.ops.quote_name
    cols = ", ".join(qn(c) for c in ["port_id", "covered_s", *WINDOW_COLUMNS.values()])
    # the bounds in the form the ORM stores them: SQLite compares text, and its driver's own
    # form of a datetime sorts after the stored one, which lost the window's first bucket
    bounds = [connection.ops.adapt_datetimefield_value(t) for t in (start, end)]
    with connection.cursor() as cur:
        cur.execute(f"SELECT {cols}, {_epoch_sql(qn('bucket'))} {_window_from()[0]}", bounds)
        raw = cur.fetchall()
    if not raw:
        return RollupRows(port_id=np.zeros(0, np.int64), bucket_start=np.zeros(0), seconds=np.zeros(0))
    a = np.array(raw, dtype=float)  # None -> NaN
    rows = RollupRows(
        port_id=a[:, 0].astype(np.int64),
        bucket_start=a[:, -1],
        seconds=np.nan_to_num(a[:, 1]),
        values={name: a[:, 2 + i] for i, name in enumerate(WINDOW_COLUMNS)},
    )
    window = PortRollup.objects.filter(bucket__gte=start, bucket__lt=end)
    # newest first per port: the first row of a port is its newest
    lanes = list(
        window.filter(rx_power_min_dbm__isnull=False)
        .order_by("port_id", "-bucket")
        .values_list("port_id", "bucket", "rx_power_min_dbm", "tx_power_min_dbm")
    )
    if lanes:
        rows.rx_port = np.array([r[0] for r in lanes], np.int64)
        rows.rx_bucket = np.array([r[1].timestamp() for r in lanes])
        rows.rx = np.array([_lanes(r[2]) for r in lanes])
        first = np.r_[True, rows.rx_port[1:] != rows.rx_port[:-1]]
        rows.tx_port = rows.rx_port[first]
        rows.tx = np.array([_lanes(r[3]) for r, f in zip(lanes, first, strict=True) if f])
    trained: dict[int, tuple] = {}
    for pid, speed, width in (
        window.filter(Q(speed_gbps_min__isnull=False) | Q(link_width_min__isnull=False))
        .order_by("port_id", "-bucket")
        .values_list("port_id", "speed_gbps_min", "link_width_min")
    ):
        trained.setdefault(pid, (speed, width))
    if trained:
        rows.trained_port = np.array(list(trained), np.int64)
        rows.speed_gbps = np.array([np.nan if s is None else s for s, _ in trained.values()], float)
        rows.link_width = np.array([np.nan if w is None else w for _, w in trained.values()], float)
    return rows


def _identity(shard: AlertShard | None = None) -> Identity:
    qn = connection.ops.quote_name
    cols = ["port_id", "module_serial", "neighbor_device", "neighbor_port", "rx_power_low_warn_dbm"]
    sql = f"SELECT {', '.join(qn(c) for c in cols)} FROM {qn(PortTelemetryState._meta.db_table)}"  # noqa: S608 - quoted identifiers
    params: list = []
    if shard is not None and connection.vendor == "postgresql":
        cond, params = shard.sql(qn("port_id"))
        sql = f"{sql} WHERE {cond}"
    with connection.cursor() as cur:
        cur.execute(sql, params)
        raw = cur.fetchall()
    if shard is not None and connection.vendor != "postgresql":
        raw = [r for r, ok in zip(raw, shard.mask([r[0] for r in raw]), strict=True) if ok]
    return Identity(
        port_id=np.array([r[0] for r in raw], np.int64),
        module_serial=[r[1] or None for r in raw],
        neighbor_device=[r[2] or None for r in raw],
        neighbor_port=[r[3] or None for r in raw],
        rx_low_warn_dbm=np.array([np.nan if r[4] is None else r[4] for r in raw], float),
    )


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
