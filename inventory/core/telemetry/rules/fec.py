"""FEC rules: degradation (pre-FEC BER or corrected-codeword rate), tail (histogram), uncorrectable."""

from __future__ import annotations

import math

import numpy as np

from inventory.core.telemetry.rules.collect import Collector
from inventory.core.telemetry.rules.config import Thresholds
from inventory.core.telemetry.rules.frames import PortFacts, PortWindow
from inventory.core.telemetry.rules.hits import RowHits
from inventory.core.telemetry.rules.util import bucket_count, short_series, step_window


def fec_rates(w: PortWindow, has: np.ndarray, secs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per bucket: pre-FEC BER (from bits, else the device's gauge) and corrected codewords/s."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ber_bits = w.corrected_bits / w.line_bits
        ber = np.where(np.isfinite(ber_bits), ber_bits, w.pre_fec_ber)
        cw_rate = w.corrected_cw / secs
    ber = np.where(has, ber, np.nan)
    return ber, cw_rate


# --- row checks (one profile's rows at a time) ------------------------------------------------


def fec_degradation_rows(
    hits: RowHits,
    p: Thresholds,
    sl: np.ndarray,
    w: PortWindow,
    facts: PortFacts,
    *,
    ber: np.ndarray,
    cw_rate: np.ndarray,
    row_limit: np.ndarray,
) -> None:
    b = w.buckets
    k = bucket_count(p.fec_hold_s, w.bucket_s, b)
    kc = bucket_count(p.clear_s, w.bucket_s, b)
    r_ber = ber[sl]
    r_cw = cw_rate[sl]
    use_ber = (p.fec_mode == "ber") & np.isfinite(r_ber[:, -k:]).any(axis=1)
    base_ber = facts.base_ber[sl]
    base_cw = facts.base_cw_rate[sl]
    thr_ber = np.full(sl.size, np.inf)
    if p.fec_ber_factor is not None:
        thr_ber = np.where(
            np.isfinite(base_ber), np.maximum(base_ber * p.fec_ber_factor, p.fec_ber_floor), np.inf
        )
    if p.fec_limit_fraction is not None:
        thr_ber = np.minimum(thr_ber, row_limit[sl] * p.fec_limit_fraction)
    if p.fec_cw_rate_factor is not None:
        thr_cw = np.where(
            np.isfinite(base_cw), np.maximum(base_cw * p.fec_cw_rate_factor, p.fec_cw_rate_floor), np.inf
        )
    else:
        thr_cw = np.full(sl.size, p.fec_cw_rate_floor)
    metric = np.where(use_ber[:, None], r_ber, r_cw)
    thr = np.where(use_ber, thr_ber, thr_cw)
    known = np.isfinite(metric)
    with np.errstate(invalid="ignore"):
        bad = known & (metric > thr[:, None])
    last_known = known[:, -k:]
    last_bad = bad[:, -k:]
    enough = last_known.sum(axis=1) >= max(1, math.ceil(p.coverage * k))
    all_bad = (last_bad | ~last_known).all(axis=1)
    hits.fec_fire[sl] = enough & all_bad & last_bad.any(axis=1)
    with np.errstate(invalid="ignore"):
        # Hysteresis: open until the metric is clearly below (``hold_ratio`` of the threshold).
        still = known & (metric > (thr * p.hold_ratio)[:, None])
    hits.fec_hold[sl] = still[:, -kc:].any(axis=1)
    hits.fec_metric[sl] = metric
    hits.fec_is_ber[sl] = use_ber
    hits.fec_threshold[sl] = thr


def fec_tail_rows(hits: RowHits, p: Thresholds, sl: np.ndarray, w: PortWindow) -> None:
    kt = bucket_count(p.tail_window_s, w.bucket_s, w.buckets)
    warn = w.hist_warn_cw[sl, -kt:]
    crit = w.hist_crit_cw[sl, -kt:]
    with np.errstate(invalid="ignore"):
        crit_b = (crit >= p.tail_min_cw).sum(axis=1)
        any_b = ((np.nan_to_num(warn) + np.nan_to_num(crit)) >= p.tail_min_cw).sum(axis=1)
        kc = bucket_count(p.clear_s, w.bucket_s, w.buckets)
        tail_c = np.nan_to_num(w.hist_warn_cw[sl, -kc:]) + np.nan_to_num(w.hist_crit_cw[sl, -kc:])
        still = (tail_c >= p.tail_min_cw * p.hold_ratio).any(axis=1)
    hits.tail_sev[sl] = np.where(crit_b >= p.tail_min_buckets, 2, np.where(any_b >= p.tail_min_buckets, 1, 0))
    hits.tail_hold[sl] = still
    hits.tail_counts[sl, 0] = np.nansum(warn, axis=1)
    hits.tail_counts[sl, 1] = np.nansum(crit, axis=1)


def fec_uncorrectable_rows(hits: RowHits, p: Thresholds, sl: np.ndarray, w: PortWindow) -> None:
    """Sample intervals with uncorrectable codewords in the sliding window ending now (not
    distinct buckets: four bursts in five minutes are four, wherever the samples fall)."""
    steps = w.sample_steps()
    end = w.end
    total, events = step_window(steps, steps.uncorrectable_cw, w.n, since=end - p.uncorr_window_s, end=end)
    _, recent = step_window(steps, steps.uncorrectable_cw, w.n, since=end - p.clear_s, end=end)
    hits.uncorr_fire[sl] = events[sl] >= p.uncorr_min_events
    hits.uncorr_hold[sl] = recent[sl] >= 1
    hits.uncorr_total[sl] = total[sl]
    hits.uncorr_events[sl] = events[sl]


def window_rates(hits: RowHits, w: PortWindow, has: np.ndarray) -> None:
    """What a healthy window looks like (for baseline learning): its BER and codeword rate."""
    with np.errstate(invalid="ignore", divide="ignore"):
        bits_c = np.nansum(np.where(has, w.corrected_bits, 0), axis=1)
        bits_l = np.nansum(np.where(has, w.line_bits, 0), axis=1)
        gauge = np.where(has, w.pre_fec_ber, np.nan)
        gauge_n = np.isfinite(gauge).sum(axis=1)
        gauge_mean = np.nansum(gauge, axis=1) / np.maximum(gauge_n, 1)
        window_ber = np.where(bits_l > 0, bits_c / bits_l, np.where(gauge_n > 0, gauge_mean, np.nan))
        cw_known = has & np.isfinite(w.corrected_cw)
        window_cw = np.where(
            cw_known.any(axis=1),
            np.nansum(np.where(cw_known, w.corrected_cw, 0), axis=1)
            / np.maximum(np.nansum(np.where(cw_known, w.seconds, 0), axis=1), 1e-9),
            np.nan,
        )
    hits.window_ber = window_ber
    hits.window_cw_rate = window_cw


# --- findings ----------------------------------------------------------------------------------


def fec_findings(out: Collector, hits: RowHits, window: PortWindow, facts: PortFacts) -> None:
    # fec_degradation
    for r in np.nonzero(hits.fec_fire)[0]:
        r = int(r)
        series = hits.fec_metric[r]
        last = series[np.isfinite(series)][-1]
        is_ber = bool(hits.fec_is_ber[r])
        base = facts.base_ber[r] if is_ber else facts.base_cw_rate[r]
        out.add(
            "fec_degradation",
            r,
            "notify",
            {
                "metric": "pre_fec_ber" if is_ber else "corrected_cw_per_s",
                "value": float(last),
                "baseline": None if not np.isfinite(base) else float(base),
                "threshold": float(hits.fec_threshold[r]),
                "fec_limit": float(out.rows.limit[r]) if is_ber else None,
                "series": short_series(series),
                "bucket_s": window.bucket_s,
            },
        )
    out.hold("fec_degradation", hits.fec_hold)

    # fec_tail
    for r in np.nonzero(hits.tail_sev > 0)[0]:
        r = int(r)
        out.add(
            "fec_tail",
            r,
            "critical" if hits.tail_sev[r] == 2 else "warning",
            {
                "codewords_40_80pct": float(hits.tail_counts[r, 0]),
                "codewords_over_80pct": float(hits.tail_counts[r, 1]),
                "series_over_80pct": short_series(window.hist_crit_cw[r]),
            },
        )
    out.hold("fec_tail", hits.tail_hold)

    # fec_uncorrectable
    for r in np.nonzero(hits.uncorr_fire)[0]:
        r = int(r)
        out.add(
            "fec_uncorrectable",
            r,
            "notify",
            {
                "uncorrectable_cw": float(hits.uncorr_total[r]),
                "samples_with_uncorrectable": int(hits.uncorr_events[r]),
                "series": short_series(window.uncorrectable_cw[r]),
            },
        )
    out.hold("fec_uncorrectable", hits.uncorr_hold)
