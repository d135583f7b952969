"""Small helpers the rules share: bucket counts, evidence numbers and series, sliding windows of samples."""

from __future__ import annotations

import math

import numpy as np

from inventory.core.telemetry.rules.config import Thresholds


def bucket_count(window_s: float, bucket_s: float, b: int) -> int:
    """How many of the ``b`` buckets of ``bucket_s`` seconds cover ``window_s`` (at least one)."""
    return max(1, min(b, math.ceil(window_s / bucket_s - 1e-9)))


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


def sliding_sums(
    steps, values: np.ndarray, *, width: float, since: float, end: float, den: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For every sample step ending in (``since``, ``end``] where ``values`` (and ``den``) are
    known: the sums of ``values``, of ``den`` (default: the steps' seconds) and of the seconds
    covered, over the sliding ``width`` seconds of the same row's steps ending at that step.
    Arrays of the steps' length, NaN where a step ends no judged window. ``steps`` must be
    sorted by (row, time) (``SampleSteps.ordered``; ``PortWindow.sample_steps`` is).

    Windows end at every sample, so a burst or a degradation is measured whole wherever the
    samples fall on a bucket grid: the one home of the sliding-window logic (FEC degradation and
    tail, uncorrectables, PFC). Vectorised: cumulative sums over the sorted steps, each window's
    start found once per width (``SampleSteps.window_start``)."""
    e = steps.t.shape[0]
    nan = np.full(e, np.nan)
    if e == 0:
        return nan, nan.copy(), nan.copy()
    d = steps.dt if den is None else den
    known = np.isfinite(values) & np.isfinite(d)
    judged = known & (steps.t > since) & (steps.t <= end)
    if not judged.any():
        return nan, nan.copy(), nan.copy()
    j = steps.window_start(width)
    i = np.arange(1, e + 1)
    out = []
    for col in (values, d, steps.dt):
        cs = np.concatenate([[0.0], np.cumsum(np.where(known, col, 0.0))])
        out.append(np.where(judged, cs[i] - cs[j], np.nan))
    return out[0], out[1], out[2]


def sliding_ratio(
    steps,
    values: np.ndarray,
    *,
    width: float,
    since: float,
    end: float,
    coverage: float,
    den: np.ndarray | None = None,
) -> np.ndarray:
    """Per step (see ``sliding_sums``): sum(values) / sum(den) over its sliding window, a rate
    per second by default; NaN where the window has less than ``coverage`` of its time covered."""
    sums, dens, covered = sliding_sums(steps, values, width=width, since=since, end=end, den=den)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(covered >= coverage * width, sums / np.where(dens > 0, dens, np.nan), np.nan)


def per_row(steps, values: np.ndarray, n: int, how: str) -> np.ndarray:
    """Per row, the max / min / latest (``how``) of a per-step array's known values (NaN: none)."""
    out = np.full(n, np.nan)
    good = np.isfinite(values)
    if not good.any():
        return out
    r, v = steps.row[good], values[good]
    if how == "latest":
        order = np.argsort(steps.t[good], kind="stable")
        out[r[order]] = v[order]  # later assignments win
        return out
    if how == "max":
        acc = np.full(n, -np.inf)
        np.maximum.at(acc, r, v)
    else:
        acc = np.full(n, np.inf)
        np.minimum.at(acc, r, v)
    return np.where(np.isfinite(acc), acc, np.nan)


def sliding_max_rate(
    steps, values: np.ndarray, n: int, *, width: float, since: float, end: float, coverage: float
) -> np.ndarray:
    """Per row: the highest rate of ``values`` over any sliding ``width`` seconds of samples whose
    window ends in (``since``, ``end``] (NaN when no window has ``coverage`` of its time covered)."""
    rate = sliding_ratio(steps, values, width=width, since=since, end=end, coverage=coverage)
    return per_row(steps, rate, n, "max")


def known_seconds(steps, known: np.ndarray, n: int, *, since: float, end: float) -> np.ndarray:
    """Per row: the seconds of steps ending in (``since``, ``end``] where ``known`` is true."""
    sel = known & (steps.t > since) & (steps.t <= end)
    return np.bincount(steps.row[sel], weights=steps.dt[sel], minlength=n)[:n]


def episodes(steps, flag: np.ndarray, n: int, *, span: float, among: np.ndarray | None = None) -> np.ndarray:
    """Per row: how many ``span``-second episodes the flagged steps make. Consecutive flagged
    steps of a row are one run (consecutive ``among`` the steps carrying the value, so entries
    of other tables in between do not cut it); a run lasting L seconds (first to last flagged
    step) counts 1 + floor(L / span). A burst counts once however the samples split it,
    separate bursts count apart, and a tail that lasts counts one per span (as consecutive
    buckets would)."""
    if not flag.any():
        return np.zeros(n, dtype=np.int64)
    keep = np.ones(flag.shape[0], bool) if among is None else among
    row, t, flag = steps.row[keep], steps.t[keep], flag[keep]
    prev_flag = np.concatenate([[False], flag[:-1]])
    same_row = np.concatenate([[False], row[1:] == row[:-1]])
    starts = flag & ~(prev_flag & same_row)
    run = np.cumsum(starts) - 1  # run id of every step (meaningful where flagged)
    f_run, f_t = run[flag], t[flag]
    k = int(starts.sum())
    first = np.full(k, np.inf)
    last = np.full(k, -np.inf)
    np.minimum.at(first, f_run, f_t)
    np.maximum.at(last, f_run, f_t)
    count = 1 + np.floor((last - first) / span + 1e-9).astype(np.int64)
    return np.bincount(row[starts], weights=count, minlength=n)[:n].astype(np.int64)


def spill(span_s: float, bucket_s: float) -> float:
    """How much of a sliding ``span_s`` window's total at least one of the buckets it overlaps
    holds: a window overlaps at most ceil(span/bucket) + 1 buckets. Used to pick the rows whose
    buckets could hide a window past a bar (the rows that need their raw samples)."""
    return 1.0 / (math.ceil(span_s / bucket_s - 1e-9) + 1)


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
