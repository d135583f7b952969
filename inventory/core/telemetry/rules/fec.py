"""FEC rules: degradation (pre-FEC BER or corrected-codeword rate), tail (histogram), uncorrectable."""

from __future__ import annotations

import numpy as np

from inventory.core.telemetry.rules.collect import Collector
from inventory.core.telemetry.rules.config import Thresholds
from inventory.core.telemetry.rules.frames import PortFacts, PortWindow
from inventory.core.telemetry.rules.hits import RowHits
from inventory.core.telemetry.rules.util import (
    bucket_count,
    episodes,
    known_seconds,
    per_row,
    short_series,
    sliding_ratio,
    sliding_sums,
    spill,
    step_window,
)


def fec_rates(w: PortWindow, has: np.ndarray, secs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per bucket: pre-FEC BER (from bits, else the device's gauge) and corrected codewords/s."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ber_bits = w.corrected_bits / w.line_bits
        ber = np.where(np.isfinite(ber_bits), ber_bits, w.pre_fec_ber)
        cw_rate = w.corrected_cw / secs
    ber = np.where(has, ber, np.nan)
    return ber, cw_rate


# --- row checks (one profile's rows at a time) ------------------------------------------------


def use_ber_rows(p: Thresholds, sl: np.ndarray, w: PortWindow, ber: np.ndarray) -> np.ndarray:
    """Rows judged on pre-FEC BER (the profile asks for it and the hold period has a BER);
    the others on the corrected-codeword rate."""
    k = bucket_count(p.fec_hold_s, w.bucket_s, w.buckets)
    return (p.fec_mode == "ber") & np.isfinite(ber[sl][:, -k:]).any(axis=1)


def fec_threshold(
    p: Thresholds, sl: np.ndarray, facts: PortFacts, row_limit: np.ndarray, use_ber: np.ndarray
) -> np.ndarray:
    """The degradation threshold of each row of ``sl``: max(baseline x factor, floor) of its
    metric, BER also capped at a fraction of the FEC limit whatever the baseline."""
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
    return np.where(use_ber, thr_ber, thr_cw)


def fec_candidates(
    p: Thresholds,
    sl: np.ndarray,
    w: PortWindow,
    facts: PortFacts,
    *,
    ber: np.ndarray,
    cw_rate: np.ndarray,
    row_limit: np.ndarray,
) -> np.ndarray:
    """Rows of ``sl`` whose buckets could hide a sliding window that opens a FEC degradation
    or tail alert: only these need their sample steps. A window over its bar leaves at least
    ``spill`` of its total in one bucket it overlaps (and a rate window needs ``coverage`` of
    its span), so a row with every bucket under the scaled bar cannot open either rule. Holding
    an open alert is also judged on the buckets (``_bucket_hold``), so it needs no steps."""
    use_ber = use_ber_rows(p, sl, w, ber)
    thr = fec_threshold(p, sl, facts, row_limit, use_ber)
    metric = np.where(use_ber[:, None], ber[sl], cw_rate[sl])
    share = spill(p.fec_span_s, w.bucket_s)
    rate_bar = thr * share * p.coverage * p.fec_span_s / w.bucket_s
    with np.errstate(invalid="ignore"):
        degr = (metric > rate_bar[:, None]).any(axis=1)
        tail = np.nan_to_num(w.hist_warn_cw[sl]) + np.nan_to_num(w.hist_crit_cw[sl])
        tails = (tail >= p.tail_min_cw * share).any(axis=1)
    return degr | tails


def _bucket_hold(p: Thresholds, w: PortWindow, values: np.ndarray, bar) -> np.ndarray:
    """Rows with a bucket of the last ``clear_s`` past ``bar`` (per row or scalar): the hold of
    rows whose samples were not read, as the sliding hold of those that were."""
    kc = bucket_count(p.clear_s, w.bucket_s, w.buckets)
    bar = np.asarray(bar, dtype=float)
    with np.errstate(invalid="ignore"):
        return (values[:, -kc:] > (bar[:, None] if bar.ndim else bar)).any(axis=1)


def _step_metric(p: Thresholds, steps, *, since: float, end: float) -> tuple:
    """Per step: the sliding ``fec_span_s`` pre-FEC BER (from bits, else the device's gauge)
    and corrected-codeword rate, and whether each is known at the step."""
    span, cov = p.fec_span_s, p.coverage
    ber_bits = sliding_ratio(
        steps, steps.corrected_bits, width=span, since=since, end=end, coverage=cov, den=steps.line_bits
    )
    ber_gauge = sliding_ratio(
        steps, steps.pre_fec_ber * steps.dt, width=span, since=since, end=end, coverage=cov
    )
    ber = np.where(np.isfinite(ber_bits), ber_bits, ber_gauge)
    cw = sliding_ratio(steps, steps.corrected_cw, width=span, since=since, end=end, coverage=cov)
    ber_known = (np.isfinite(steps.corrected_bits) & np.isfinite(steps.line_bits)) | np.isfinite(
        steps.pre_fec_ber
    )
    return ber, cw, ber_known, np.isfinite(steps.corrected_cw)


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
    """The metric above the threshold in every sliding ``fec_span_s`` window of samples ending
    in the last ``fec_hold_s`` (each window past ``coverage`` of its span, the hold period too):
    the same degradation opens whatever the sample phase. Held open while any window (or
    bucket) of the last ``clear_s`` is above ``hold_ratio`` of the threshold."""
    n, end, span = w.n, w.end, p.fec_span_s
    use_ber = use_ber_rows(p, sl, w, ber)
    thr_sl = fec_threshold(p, sl, facts, row_limit, use_ber)
    steps = w.sample_steps()
    first = end - max(p.fec_hold_s, p.clear_s)
    s_ber, s_cw, ber_known, cw_known = _step_metric(p, steps, since=first, end=end)
    row_ber = np.zeros(n, bool)
    row_ber[sl] = use_ber
    thr = np.full(n, np.nan)
    thr[sl] = thr_sl
    on_ber = row_ber[steps.row]  # steps.row is int64, empty or not
    metric = np.where(on_ber, s_ber, s_cw)
    known = np.where(on_ber, ber_known, cw_known)
    hold_from = end - p.fec_hold_s + span  # windows inside the hold period
    in_hold = (steps.t > hold_from - 1e-9) & (steps.t <= end)
    covered = known_seconds(steps, known, n, since=end - p.fec_hold_s, end=end)
    lowest = per_row(steps, np.where(in_hold, metric, np.nan), n, "min")
    with np.errstate(invalid="ignore"):
        fire = (covered >= p.coverage * p.fec_hold_s - 1e-6) & (lowest > thr)
        in_clear = steps.t > end - p.clear_s
        highest = per_row(steps, np.where(in_clear, metric, np.nan), n, "max")
        hold = highest > thr * p.hold_ratio
    series = np.where(use_ber[:, None], ber[sl], cw_rate[sl])
    hits.fec_fire[sl] = fire[sl]
    hits.fec_hold[sl] = hold[sl] | fire[sl] | _bucket_hold(p, w, series, thr_sl * p.hold_ratio)
    hits.fec_value[sl] = per_row(steps, metric, n, "latest")[sl]
    hits.fec_metric[sl] = series  # evidence
    hits.fec_is_ber[sl] = use_ber
    hits.fec_threshold[sl] = thr_sl


def fec_tail_rows(hits: RowHits, p: Thresholds, sl: np.ndarray, w: PortWindow) -> None:
    """Codewords in the histogram's high bins (40-80%: warning, over 80%: critical) counted
    over sliding ``fec_span_s`` windows of samples: the rule opens when windows holding at least
    ``tail_min_cw`` of them make ``tail_min_spans`` episodes (``util.episodes``: separate bursts,
    or a tail lasting that many spans) in the last ``tail_window_s``, wherever the samples fall
    on the bucket grid. Held open while a window (or bucket) of the last ``clear_s`` holds
    ``hold_ratio`` of ``tail_min_cw``."""
    n, end, span = w.n, w.end, p.fec_span_s
    steps = w.sample_steps()
    since = end - max(p.tail_window_s, p.clear_s)
    warn, crit = steps.hist_warn_cw, steps.hist_crit_cw
    known = np.isfinite(warn) | np.isfinite(crit)
    both = np.where(known, np.nan_to_num(warn) + np.nan_to_num(crit), np.nan)
    any_sum, _, _ = sliding_sums(steps, both, width=span, since=since, end=end)
    crit_sum, _, _ = sliding_sums(steps, crit, width=span, since=since, end=end)
    in_tail = steps.t > end - p.tail_window_s
    with np.errstate(invalid="ignore"):
        any_n = episodes(steps, in_tail & (any_sum >= p.tail_min_cw), n, span=span, among=known)
        crit_n = episodes(steps, in_tail & (crit_sum >= p.tail_min_cw), n, span=span, among=np.isfinite(crit))
        in_clear = steps.t > end - p.clear_s
        highest = per_row(steps, np.where(in_clear, any_sum, np.nan), n, "max")
        still = highest >= p.tail_min_cw * p.hold_ratio
    sev = np.where(crit_n >= p.tail_min_spans, 2, np.where(any_n >= p.tail_min_spans, 1, 0))
    warn_total, _ = step_window(steps, warn, n, since=end - p.tail_window_s, end=end)
    crit_total, _ = step_window(steps, crit, n, since=end - p.tail_window_s, end=end)
    hits.tail_sev[sl] = sev[sl]
    bucket_tail = np.nan_to_num(w.hist_warn_cw[sl]) + np.nan_to_num(w.hist_crit_cw[sl])
    held = _bucket_hold(p, w, bucket_tail, p.tail_min_cw * p.hold_ratio - 1e-9)
    hits.tail_hold[sl] = still[sl] | (sev[sl] > 0) | held
    hits.tail_counts[sl, 0] = warn_total[sl]
    hits.tail_counts[sl, 1] = crit_total[sl]


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
        last = hits.fec_value[r]
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
