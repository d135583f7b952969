"""rx_power_drift: a lane's receive power below that lane's own baseline, holding; or below the
module's own warning threshold (page).

Module DOM readings are accurate to only about +-3 dB (SFF-8636, CMIS), but a lane's offset is
stable: so each lane is judged against its own baseline, learned while its link was healthy and
tested (``Evaluation.rx_now`` feeds the learning), never by DOM-derived "live loss" (far-end
transmit minus near-end receive) against the OLTS-tested loss, which alerted on 40% of healthy
links. Not for passive DAC. Hysteresis: an alert holds while a lane stays within ``rx_clear_db``
of the opening threshold anywhere in the clear window.
"""

from __future__ import annotations

import math

import numpy as np

from inventory.core.telemetry.rules.collect import Collector
from inventory.core.telemetry.rules.config import Thresholds
from inventory.core.telemetry.rules.frames import PortFacts, PortWindow
from inventory.core.telemetry.rules.hits import RowHits
from inventory.core.telemetry.rules.util import bucket_count


def _worst_drop(w: PortWindow, facts: PortFacts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row and bucket: the worst lane's drop below its baseline (dB), that lane, and the
    lowest receive power of any lane (dBm). NaN where unknown."""
    rx_b = w.rx_buckets()
    lanes = min(rx_b.shape[2], facts.base_rx_dbm.shape[1])
    with np.errstate(invalid="ignore"):
        drop = facts.base_rx_dbm[:, None, :lanes] - rx_b[:, :, :lanes]
    known = np.isfinite(drop)
    filled = np.where(known, drop, -np.inf)
    worst = np.where(known.any(axis=2), filled.max(axis=2), np.nan)
    lane = filled.argmax(axis=2)
    rx_known = np.isfinite(rx_b)
    rx_min = np.where(rx_known.any(axis=2), np.where(rx_known, rx_b, np.inf).min(axis=2), np.nan)
    return worst, lane, rx_min


def _holding(series: np.ndarray, bad: np.ndarray, k: int, coverage: float) -> np.ndarray:
    """Every known value of the last ``k`` buckets is bad, and enough of them are known."""
    known = np.isfinite(series[:, -k:])
    b = bad[:, -k:]
    need = max(1, math.ceil(coverage * k)) if k > 1 else 1
    return (known.sum(axis=1) >= need) & (b | ~known).all(axis=1) & b.any(axis=1)


def _latest(series: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's last known value and its column (-1: none)."""
    known = np.isfinite(series)
    col = np.where(known.any(axis=1), series.shape[1] - 1 - np.argmax(known[:, ::-1], axis=1), -1)
    rows = np.arange(series.shape[0])
    return np.where(col >= 0, series[rows, np.maximum(col, 0)], np.nan), col


def rx_power_rows(
    hits: RowHits, w: PortWindow, facts: PortFacts, profiles: list[Thresholds], row_profile: np.ndarray
) -> None:
    worst, lane, rx_min = _worst_drop(w, facts)
    latest, col = _latest(worst)
    rows = np.arange(w.n)
    hits.rx_drift = latest
    hits.rx_drift_lane = np.where(col >= 0, lane[rows, np.maximum(col, 0)], -1)
    per_bucket = w.rx_power_dbm_b is not None
    warn = w.rx_low_warn_dbm[:, None]
    for pi, p in enumerate(profiles):
        sl = np.nonzero(row_profile == pi)[0]
        if sl.size == 0:
            continue
        k = bucket_count(p.rx_hold_s, w.bucket_s, worst.shape[1]) if per_bucket else 1
        kc = bucket_count(p.clear_s, w.bucket_s, worst.shape[1])
        with np.errstate(invalid="ignore"):
            if p.rx_drift_db is not None:
                d = worst[sl]
                hits.rx_drift_fire[sl] = _holding(d, d > p.rx_drift_db, k, p.coverage)
                hits.rx_drift_hold[sl] = (d[:, -kc:] > p.rx_drift_db - p.rx_clear_db).any(axis=1)
            m = rx_min[sl]
            hits.rx_low_fire[sl] = _holding(m, m < warn[sl], k, p.coverage)
            hits.rx_low_hold[sl] = (m[:, -kc:] < warn[sl] + p.rx_clear_db).any(axis=1)


def _rounded(x: float, digits: int = 2) -> float | None:
    return None if not np.isfinite(x) else round(float(x), digits)


def rx_power_findings(out: Collector, hits: RowHits, window: PortWindow, facts: PortFacts) -> np.ndarray:
    """Add the rx_power_drift findings; return the rows whose receive power is not a baseline to
    learn now (firing or holding)."""
    passive = out.rows.passive
    fire = (hits.rx_drift_fire | hits.rx_low_fire) & ~passive
    for r in np.nonzero(fire)[0]:
        r = int(r)
        out.add(
            "rx_power_drift",
            r,
            "page" if hits.rx_low_fire[r] else "notify",
            {
                "rx_power_dbm": [_rounded(v) for v in window.rx_power_dbm[r]],
                "baseline_rx_dbm": [_rounded(v) for v in facts.base_rx_dbm[r]],
                "worst_drop_db": _rounded(hits.rx_drift[r]),
                "worst_lane": int(hits.rx_drift_lane[r]) + 1 if hits.rx_drift_lane[r] >= 0 else None,
                "module_rx_low_warn_dbm": _rounded(window.rx_low_warn_dbm[r]),
                "below_module_warning": bool(hits.rx_low_fire[r]),
            },
        )
    held = (hits.rx_drift_hold | hits.rx_low_hold) & ~passive
    out.hold("rx_power_drift", held)
    return fire | held
