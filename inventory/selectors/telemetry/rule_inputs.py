"""The rule engine's input, read set-based: windowed rollups plus what the plant records.

``rule_inputs(now=...)`` returns the columnar arrays of :mod:`inventory.core.telemetry.rules`. The
rollups come from one query over the window (``rollup_rows``); the plant facts (links, their
profiles, passive copper, recorded module serials, expected neighbours and baselines) from a
fixed handful of queries, whatever the number of ports.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
import orjson
from django.db import connection
from django.db.models import BooleanField, QuerySet, TextField
from django.db.models.expressions import RawSQL
from django.db.models.functions import Cast

from inventory.core.choices import CableKind, CableStatus, PortKind
from inventory.core.telemetry.rates import hist_increase, line_bits, step
from inventory.core.telemetry.rollup import Layout, split_bins
from inventory.core.telemetry.rules.config import RuleConfig, Thresholds
from inventory.core.telemetry.rules.engine import sample_candidates
from inventory.core.telemetry.rules.frames import LinkTable, PortFacts, PortWindow, SampleSteps
from inventory.models import (
    CableEnd,
    FecBinLayout,
    Link,
    LinkSegment,
    Port,
    PortBaseline,
    TelemetryHistogram,
    TelemetrySample,
    Transceiver,
)
from inventory.selectors.plant.ports import ports_resolve
from inventory.selectors.telemetry.alert_shards import AlertShard
from inventory.selectors.telemetry.lines import port_lines
from inventory.selectors.telemetry.source import LANES, WINDOW_COLUMNS, RollupRows, read_rollups

# A lane's receive power is a baseline to learn only while every segment of its link is tested
# and in service (not degraded, faulty or merely installed).
TESTED_STATUSES = frozenset({CableStatus.TESTED, CableStatus.IN_PRODUCTION})
# Raw counters read per sample for the sliding-window rules (FEC degradation, uncorrectables,
# PFC per direction).
STEP_FIELDS = (
    "fec_uncorrectable_cw",
    "pfc_pause_rx",
    "pfc_pause_tx",
    "fec_corrected_cw",
    "fec_corrected_bits",
)

# The per-bucket fields the engine reads, in PortWindow's names (the reader's columns).
WINDOW_FIELDS = tuple(WINDOW_COLUMNS)


@dataclass
class RuleInputs:
    window: PortWindow
    facts: PortFacts
    links: LinkTable
    profiles: list[Thresholds]
    link_rows: dict[int, tuple[int, int]]  # link id -> (a port id, b port id)


def _epoch(dt: datetime) -> float:
    return dt.timestamp()


def pivot(rows: RollupRows, *, start: float, bucket_s: float, buckets: int) -> PortWindow:
    """Long rows -> (ports x buckets) arrays on a fixed grid ending at ``start + buckets*bucket_s``.

    Column by column in numpy: a site's window is millions of rows and half a million ports,
    so nothing here runs Python per row (the per-port identity strings aside)."""
    ports, inverse = np.unique(rows.port_id, return_inverse=True)
    w = PortWindow.empty(len(ports), buckets, bucket_s=bucket_s, lanes=LANES, t_start=start)
    w.port_id = ports.astype(np.int64)
    col = np.floor((rows.bucket_start - start) / bucket_s).astype(np.int64)
    ok = (col >= 0) & (col < buckets)
    r, c = inverse[ok], col[ok]
    np.add.at(w.seconds, (r, c), rows.seconds[ok])
    for name in WINDOW_FIELDS:
        vals = rows.values.get(name)
        if vals is None:
            continue
        vals = vals[ok]
        target = getattr(w, name)
        known = np.isfinite(vals)
        if name == "pre_fec_ber":  # a gauge: keep the worst
            target[r[known], c[known]] = np.fmax(target[r[known], c[known]], vals[known])
            continue
        cur = target[r[known], c[known]]
        target[r[known], c[known]] = np.where(np.isfinite(cur), cur, 0.0)
        np.add.at(target, (r[known], c[known]), vals[known])
    _pivot_lanes(w, rows, start=start, bucket_s=bucket_s, buckets=buckets)
    at, i = _rows_of(w, rows.trained_port)
    w.speed_gbps[i] = rows.speed_gbps[at]
    w.link_width[i] = rows.link_width[at]
    ident = rows.identity
    if ident is not None:
        at, i = _rows_of(w, ident.port_id)
        w.rx_low_warn_dbm[i] = ident.rx_low_warn_dbm[at]
        for k, row in zip(at.tolist(), i.tolist(), strict=True):
            serial = ident.module_serial[k]
            w.module_serial[row] = serial.strip().upper() if serial else None
            device = ident.neighbor_device[k]
            if device:
                w.neighbor_label[row] = f"{device}:{ident.neighbor_port[k] or '?'}"
    return w


def _rows_of(w: PortWindow, port_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each of ``port_ids`` in the window: its position in ``port_ids`` and its window row."""
    if not port_ids.size or not w.n:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    row = np.minimum(np.searchsorted(w.port_id, port_ids), w.n - 1)
    found = w.port_id[row] == port_ids
    return np.nonzero(found)[0], row[found]


def _pivot_lanes(w: PortWindow, rows: RollupRows, *, start: float, bucket_s: float, buckets: int) -> None:
    """The latest per-lane power (the newest bucket that reported receive lanes, and that
    bucket's transmit lanes), and every bucket's receive lanes, so a drift must hold to alert."""
    if not rows.rx_port.size:
        return
    # newest first per port (the reader's order on one database, not on another): sort here
    order = np.lexsort((-rows.rx_bucket, rows.rx_port))
    port, bucket, rx = rows.rx_port[order], rows.rx_bucket[order], rows.rx[order]
    newest = np.r_[True, port[1:] != port[:-1]]
    at, i = _rows_of(w, port[newest])
    w.rx_power_dbm[i] = rx[newest][at]
    at, i = _rows_of(w, rows.tx_port)
    w.tx_power_dbm[i] = rows.tx[at]
    out = np.full((w.n, buckets, LANES), np.nan, dtype=np.float32)  # 0.01 dB is plenty
    at, i = _rows_of(w, port)
    col = np.floor((bucket[at] - start) / bucket_s).astype(np.int64)
    ok = (col >= 0) & (col < buckets)
    out[i[ok], col[ok]] = rx[at][ok]
    w.rx_power_dbm_b = out


def rollup_rows(*, start: datetime, end: datetime, shard: AlertShard | None = None) -> RollupRows:
    """Read the window's rollups (of one alert shard's ports, or of all). Wired to the ingest
    side's per-port rollup model."""
    return read_rollups(start=start, end=end, shard=shard)


def _resolve_neighbors(w: PortWindow, rows: RollupRows) -> None:
    ident = rows.identity
    if ident is None:
        return
    pairs = {}
    at, i = _rows_of(w, ident.port_id)
    for k, row in zip(at.tolist(), i.tolist(), strict=True):
        if ident.neighbor_device[k]:
            pairs[row] = (ident.neighbor_device[k], ident.neighbor_port[k] or "")
    found = ports_resolve(set(pairs.values()))
    for row, pair in pairs.items():
        w.neighbor_port_id[row] = found.get(pair, -2)


def plant_facts(
    w: PortWindow, config: RuleConfig, shard: AlertShard | None = None
) -> tuple[PortFacts, LinkTable, list[Thresholds], dict]:
    """What the plant records for the reporting ports, in a fixed number of queries (the
    per-port tables of one alert shard's ports when ``shard`` is given, on PostgreSQL)."""
    profiles = config.profiles()
    row_of = {int(p): i for i, p in enumerate(w.port_id)}
    facts = PortFacts.empty(w.n, LANES)

    links = [
        lk
        # a link's two ends are in one shard: its A end's shard is the link's
        for lk in _of_shard(Link.objects.filter(active=True), Link, "a_port_id", shard).values_list(
            "id", "a_port_id", "b_port_id", "link_class", "pmd", "fec", "speed_gbps", "lanes"
        )
        if lk[1] in row_of or lk[2] in row_of
    ]
    link_ids = {lk[0] for lk in links}
    segmented: set[int] = set()
    passive: set[int] = set()
    untested: set[int] = set()
    for link_id, kind, status in _of_shard(
        LinkSegment.objects.filter(link__active=True), Link, "a_port_id", shard
    ).values_list("link_id", "cable__kind", "cable__status"):
        if link_id in link_ids:
            segmented.add(link_id)
            if kind in (CableKind.DAC, CableKind.CAT6A):
                passive.add(link_id)
            if status not in TESTED_STATUSES:
                untested.add(link_id)

    lt = LinkTable.empty(len(links))
    link_rows = {}
    labels = _port_labels({p for lk in links for p in lk[1:3]})
    for i, (lid, a, b, cls, pmd, fec, speed, lanes) in enumerate(links):
        lt.link_id[i] = lid
        lt.a_row[i] = row_of.get(a, -1)
        lt.b_row[i] = row_of.get(b, -1)
        lt.profile[i] = config.profile_index(link_class=cls, pmd=pmd, profiles=profiles)
        lt.fec[i] = fec
        lt.passive_copper[i] = lid in passive
        lt.tested[i] = lid in segmented and lid not in untested
        lt.expected_speed_gbps[i] = speed if speed else np.nan
        lt.expected_width[i] = lanes if lanes else np.nan
        link_rows[lid] = (a, b)
        for near, far in ((a, b), (b, a)):
            if near in row_of:
                facts.expected_neighbor_port_id[row_of[near]] = far
                facts.expected_neighbor_label[row_of[near]] = labels.get(far)

    # Recorded module serials: the module in the port's cage, or the sealed cable's end.
    port_cage = dict(
        _of_shard(
            Port.objects.filter(kind=PortKind.INTERFACE, cage__isnull=False), Port, "id", shard
        ).values_list("pk", "cage_id")
    )
    cage_serial = dict(Transceiver.objects.filter(cage__isnull=False).values_list("cage_id", "serial"))
    sealed: dict[int, str | None] = {}
    for cage_id, side, sa, sb in CableEnd.objects.filter(
        active=True, cage__isnull=False, cable__kind__in=CableKind.sealed()
    ).values_list("cage_id", "side", "cable__serial_a", "cable__serial_b"):
        s = sa if side == "A" else sb
        sealed[cage_id] = s or None
    for pid, i in row_of.items():
        cage = port_cage.get(pid)
        if cage is None:
            continue
        if cage in cage_serial:
            facts.recorded_serial[i] = cage_serial[cage].strip().upper()
        elif cage in sealed:
            s = sealed[cage]
            facts.recorded_serial[i] = s.strip().upper() if s else None
        # Nothing recorded in the cage: not a swap but a missing record (the reconciliation
        # report, ``inventory.selectors.telemetry.reconciliation``, lists those), so no comparison.

    # the lanes as JSON text, parsed by orjson: the field's own json.loads was 2.9 s of a
    # 131,072-GPU site's evaluation
    for pid, ber, cw, rx_text in (
        _of_shard(PortBaseline.objects.all(), PortBaseline, "port_id", shard)
        .annotate(rx_text=Cast("rx_power_dbm", TextField()))
        .values_list("port_id", "pre_fec_ber", "cw_rate", "rx_text")
    ):
        i = row_of.get(pid)
        if i is None:
            continue
        facts.base_ber[i] = np.nan if ber is None else ber
        facts.base_cw_rate[i] = np.nan if cw is None else cw
        rx = orjson.loads(rx_text) if rx_text else None
        if rx:
            vals = np.array([np.nan if v is None else v for v in rx[:LANES]], dtype=float)
            facts.base_rx_dbm[i, : len(vals)] = vals
    return facts, lt, profiles, link_rows


def _of_shard(qs: QuerySet, model, column: str, shard: AlertShard | None) -> QuerySet:
    """``qs`` narrowed to the rows whose ``model.column`` (a port id: ``qs``'s own model, or one
    it joins) is one of an alert shard's ports, on PostgreSQL: a site's tables of a row per port
    or per link, read by every shard's run. Unchanged elsewhere, where the window's ports pick."""
    if shard is None or connection.vendor != "postgresql":
        return qs
    qn = connection.ops.quote_name
    cond, params = shard.sql(f"{qn(model._meta.db_table)}.{qn(column)}")
    return qs.alias(in_shard=RawSQL(cond, params, output_field=BooleanField())).filter(in_shard=True)  # noqa: S611 - quoted names, numbers and array parameters


def _port_labels(port_ids: set[int]) -> dict[int, str]:
    out = {}
    ids = list(port_ids)
    for k in range(0, len(ids), 5000):
        for pid, dev, name in Port.objects.filter(pk__any=ids[k : k + 5000]).values_list(
            "pk", "device__name", "name"
        ):
            out[pid] = f"{dev}:{name}"
    return out


def sample_steps(w: PortWindow, rows: np.ndarray, *, start: datetime, end: datetime) -> SampleSteps:
    """Sample-to-sample increases of the step counters for the given rows, read from the raw
    samples (resets count from zero, as in the rollup); duplicates cannot exist (the sample key
    is (port, ts)) and late samples are in time order here whatever their arrival. The FEC
    histogram (a side table) gives its own steps, its bins split as the rollup splits them."""
    if rows.size == 0:
        return SampleSteps.empty()
    row_of = {int(w.port_id[i]): int(i) for i in rows}
    ids = list(row_of)
    lines = port_lines(ids)
    out: dict[str, list] = {k: [] for k in ("row", "t", "dt", "line_bits", "pre_fec_ber", *STEP_FIELDS)}
    for k in range(0, len(ids), 5000):
        prev: dict[int, tuple] = {}
        for pid, ts, gauge, *vals in (
            TelemetrySample.objects.filter(port_id__any=ids[k : k + 5000], ts__gte=start, ts__lte=end)
            .order_by("port_id", "ts")
            .values_list("port_id", "ts", "pre_fec_ber", *STEP_FIELDS)
        ):
            t = ts.timestamp()
            last = prev.get(pid)
            prev[pid] = (t, vals)
            if last is None:
                continue
            line = lines.get(pid)
            out["row"].append(row_of[pid])
            out["t"].append(t)
            out["dt"].append(t - last[0])
            out["pre_fec_ber"].append(np.nan if gauge is None else gauge)
            out["line_bits"].append(
                line_bits(seconds=t - last[0], lanes=line.lanes, lane_gbps=line.lane_gbps)
                if line is not None and line.lane_gbps
                else np.nan
            )
            for name, old, new in zip(STEP_FIELDS, last[1], vals, strict=True):
                out[name].append(np.nan if old is None or new is None else float(step(old, new)[0]))
    steps = SampleSteps(
        row=np.asarray(out["row"], dtype=np.int64),
        t=np.asarray(out["t"], dtype=float),
        dt=np.asarray(out["dt"], dtype=float),
        uncorrectable_cw=np.asarray(out["fec_uncorrectable_cw"], dtype=float),
        pfc_pause_rx=np.asarray(out["pfc_pause_rx"], dtype=float),
        pfc_pause_tx=np.asarray(out["pfc_pause_tx"], dtype=float),
        corrected_cw=np.asarray(out["fec_corrected_cw"], dtype=float),
        corrected_bits=np.asarray(out["fec_corrected_bits"], dtype=float),
        line_bits=np.asarray(out["line_bits"], dtype=float),
        pre_fec_ber=np.asarray(out["pre_fec_ber"], dtype=float),
    )
    return steps.concat(_histogram_steps(row_of, start=start, end=end))


def _histogram_steps(row_of: dict[int, int], *, start: datetime, end: datetime) -> SampleSteps:
    """Codewords in the warning and critical bins between consecutive histograms of each port
    (a reset counts from zero, a changed layout counts the new histogram whole, as the rollup)."""
    ids = list(row_of)
    out: dict[str, list] = {k: [] for k in ("row", "t", "dt", "warn", "crit")}
    layouts: dict[int, Layout] = {}
    for k in range(0, len(ids), 5000):
        hists = list(
            TelemetryHistogram.objects.filter(port_id__any=ids[k : k + 5000], ts__gte=start, ts__lte=end)
            .order_by("port_id", "ts")
            .values_list("port_id", "ts", "layout_id", "counts")
        )
        missing = {h[2] for h in hists} - set(layouts)
        for pk, lo, hi, limit in FecBinLayout.objects.filter(pk__in=missing).values_list(
            "pk", "bin_low", "bin_high", "correction_limit"
        ):
            layouts[pk] = Layout(lo, hi, limit)
        prev: dict[int, tuple] = {}
        for pid, ts, layout_id, counts in hists:
            t = ts.timestamp()
            last = prev.get(pid)
            prev[pid] = (t, layout_id, counts)
            layout = layouts.get(layout_id)
            if last is None or layout is None:
                continue
            inc = hist_increase(last[2], counts)[0] if last[1] == layout_id else [float(x) for x in counts]
            warn, crit = split_bins(layout, inc)
            out["row"].append(row_of[pid])
            out["t"].append(t)
            out["dt"].append(t - last[0])
            out["warn"].append(warn)
            out["crit"].append(crit)
    e = len(out["row"])
    nan = np.full(e, np.nan)
    return SampleSteps(
        row=np.asarray(out["row"], dtype=np.int64),
        t=np.asarray(out["t"], dtype=float),
        dt=np.asarray(out["dt"], dtype=float),
        uncorrectable_cw=nan,
        pfc_pause_rx=nan.copy(),
        pfc_pause_tx=nan.copy(),
        hist_warn_cw=np.asarray(out["warn"], dtype=float),
        hist_crit_cw=np.asarray(out["crit"], dtype=float),
    )


def rule_inputs(
    *, now: datetime, config: RuleConfig, lookback_s: float, bucket_s: float, shard: AlertShard | None = None
) -> RuleInputs:
    """The rules' input over the window ending at ``now``: of every reporting port, or of one
    alert shard's (``alert_shards``: a link's two ends are always in one shard)."""
    buckets = max(1, int(round(lookback_s / bucket_s)))
    end_epoch = np.floor(_epoch(now) / bucket_s) * bucket_s
    start_epoch = end_epoch - buckets * bucket_s
    start = now - timedelta(seconds=_epoch(now) - start_epoch)
    rows = rollup_rows(start=start, end=now, shard=shard)
    w = pivot(rows, start=start_epoch, bucket_s=bucket_s, buckets=buckets)
    w.t_end = _epoch(now)
    _resolve_neighbors(w, rows)
    del rows  # the long columns (a site's window: over a gigabyte) are in the window now
    facts, links, profiles, link_rows = plant_facts(w, config, shard)
    candidates = sample_candidates(w, facts, links, profiles)
    steps = sample_steps(w, candidates, start=start, end=now)
    # Rollups whose raw samples are gone (retention) or never stored here: their buckets' steps.
    missing = np.setdiff1d(candidates, steps.row)
    w.steps = steps.concat(SampleSteps.from_buckets(w, missing)) if missing.size else steps
    return RuleInputs(window=w, facts=facts, links=links, profiles=profiles, link_rows=link_rows)
