"""Small helpers the rules share: bucket counts, per-row profile values, evidence numbers and series."""

from __future__ import annotations

import math

import numpy as np

from inventory.core.telemetry.rules.config import Thresholds


def bucket_count(window_s: float, bucket_s: float, b: int) -> int:
    """How many of the ``b`` buckets of ``bucket_s`` seconds cover ``window_s`` (at least one)."""
    return max(1, min(b, math.ceil(window_s / bucket_s - 1e-9)))


def profile_values(profiles: list[Thresholds], row_profile: np.ndarray, attr: str, none=np.nan):
    """One threshold per row: ``attr`` of each row's profile (``none`` where it is switched off)."""
    vals = np.array([none if getattr(p, attr) is None else getattr(p, attr) for p in profiles], dtype=float)
    return vals[row_profile]


def fmt_sci(x: float) -> str:
    if x is None or not np.isfinite(x):
        return "n/a"
    return f"{x:.2e}"


def json_number(x: float) -> float | None:
    """A JSON-safe number: NaN (unknown) becomes None."""
    return float(x) if np.isfinite(x) else None


def short_series(row: np.ndarray, points: int = 12) -> list[float | None]:
    """A short series (for evidence): the row downsampled to ``points`` by bucket means."""
    if row.size == 0:
        return []
    chunks = np.array_split(row, min(points, row.size))
    out = []
    for c in chunks:
        c = c[np.isfinite(c)]
        out.append(float(c.mean()) if c.size else None)
    return out


def tail_split(bins: list[tuple[int, int, float]], correction_limit: int) -> tuple[float, float]:
    """Codewords in the warning (40-80% of T) and critical (> 80% of T) histogram bins.

    ``bins`` are (bin_low, bin_high, count) in symbol errors per codeword, as ethtool reports
    them; a bin counts by its lower edge.
    """
    if correction_limit <= 0:
        return 0.0, 0.0
    warn = crit = 0.0
    lo_warn, lo_crit = 0.4 * correction_limit, 0.8 * correction_limit
    for lo, _hi, count in bins:
        if count is None:
            continue
        if lo > lo_crit:
            crit += count
        elif lo >= lo_warn:
            warn += count
    return warn, crit


def step_window(
    steps, values: np.ndarray, n: int, *, since: float, end: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per row, over the sample steps ending in (``since``, ``end``]: the sum of ``values`` and
    the number of steps where it rose (``values > 0``). Rows without steps: 0, 0."""
    sel = (steps.t > since) & (steps.t <= end) & np.isfinite(values)
    r, v = steps.row[sel], values[sel]
    total = np.bincount(r, weights=v, minlength=n)[:n] if r.size else np.zeros(n)
    events = np.bincount(r[v > 0], minlength=n)[:n] if r.size else np.zeros(n, dtype=np.int64)
    return total, events


def sliding_max_rate(
    steps, values: np.ndarray, n: int, *, width: float, since: float, end: float, coverage: float
) -> np.ndarray:
    """Per row: the highest rate of ``values`` over any sliding ``width`` seconds of samples whose
    window ends in (``since``, ``end``] (NaN when no window has ``coverage`` of its time covered).

    Windows end at every sample, so a burst is measured whole wherever the samples fall on a
    bucket grid. Vectorised: cumulative sums over the steps sorted by (row, time), each
    window's start found by one ``searchsorted``."""
    out = np.full(n, np.nan)
    sel = (steps.t > since - width) & (steps.t <= end) & np.isfinite(values)
    if not sel.any():
        return out
    r, t, dt, v = steps.row[sel], steps.t[sel], steps.dt[sel], values[sel]
    order = np.lexsort((t, r))
    r, t, dt, v = r[order], t[order], dt[order], v[order]
    base = float(t.min())
    span = float(t.max()) - base + width + 1.0
    key = r.astype(float) * span + (t - base)
    cs_v = np.concatenate([[0.0], np.cumsum(v)])
    cs_dt = np.concatenate([[0.0], np.cumsum(dt)])
    j = np.searchsorted(key, key - width, side="right")
    i = np.arange(key.size) + 1
    sum_v = cs_v[i] - cs_v[j]
    sum_dt = cs_dt[i] - cs_dt[j]
    ok = (t > since) & (sum_dt >= coverage * width)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(ok, sum_v / np.maximum(sum_dt, 1e-9), np.nan)
    good = np.isfinite(rate)
    if good.any():
        best = np.full(n, -np.inf)
        np.maximum.at(best, r[good], rate[good])
        out = np.where(np.isfinite(best), best, np.nan)
    return out


def step_candidates(w, profiles: list[Thresholds]) -> np.ndarray:
    """Rows whose buckets show something a sliding-window rule could judge or hold: any
    uncorrectable codeword, or pause frames (either direction) in some bucket at a rate an open
    PFC alert would hold at (the lowest preset rate x ``hold_ratio``). Every other row has
    nothing to count, so only these need their raw samples (or bucket steps)."""
    rates = [p.pfc_sustained_rate for p in profiles if p.pfc_sustained_rate is not None]
    rates += [p.pfc_burst_rate for p in profiles if p.pfc_burst_rate is not None]
    ratio = min((p.hold_ratio for p in profiles), default=0.5)
    floor = min(rates) * ratio if rates else np.inf
    with np.errstate(invalid="ignore", divide="ignore"):
        secs = np.where(w.seconds > 0, w.seconds, np.nan)
        uncorr = (np.nan_to_num(w.uncorrectable_cw) > 0).any(axis=1)
        pfc = ((w.pfc_pause_rx / secs > floor) | (w.pfc_pause_tx / secs > floor)).any(axis=1)
    return np.nonzero(uncorr | pfc)[0]
