"""pfc_storm: share of time paused (from pause duration), or pause-frame rates (burst, sustained)."""

from __future__ import annotations

import math

import numpy as np

from inventory.core.telemetry.rules.collect import Collector
from inventory.core.telemetry.rules.config import Thresholds
from inventory.core.telemetry.rules.frames import Finding, PortWindow
from inventory.core.telemetry.rules.hits import RowHits
from inventory.core.telemetry.rules.util import bucket_count, short_series


def _paused_share(p: Thresholds, sl: np.ndarray, w: PortWindow, secs: np.ndarray) -> np.ndarray:
    """Share of the window's time paused, where the pause duration is reported (else NaN)."""
    kp = bucket_count(p.pfc_window_s, w.bucket_s, w.buckets)
    pus = w.pfc_pause_us[sl, -kp:]
    psec = secs[sl, -kp:]
    dur_known = np.isfinite(pus) & np.isfinite(psec)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(
            dur_known.any(axis=1),
            np.nansum(np.where(dur_known, pus, 0), axis=1)
            / 1e6
            / np.nansum(np.where(dur_known, psec, 0), axis=1),
            np.nan,
        )


def pfc_storm_rows(hits: RowHits, p: Thresholds, sl: np.ndarray, w: PortWindow, secs: np.ndarray) -> None:
    b = w.buckets
    share = _paused_share(p, sl, w, secs)
    hits.pfc_share[sl] = share
    fire = np.zeros(sl.size, bool)
    hold = np.zeros(sl.size, bool)
    if p.pfc_share is not None:
        with np.errstate(invalid="ignore"):
            fire |= share >= p.pfc_share
            hold |= share >= p.pfc_share / 2
    rates_apply = np.full(sl.size, p.pfc_rates_always) | ~np.isfinite(share)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = w.pfc_pause_frames[sl] / secs[sl]
    if p.pfc_burst_rate is not None:
        kb = bucket_count(p.pfc_burst_s, w.bucket_s, b)
        rb = rate[:, -kb:]
        rk = np.isfinite(rb)
        with np.errstate(invalid="ignore"):
            burst = (
                (rk.sum(axis=1) >= max(1, math.ceil(p.coverage * kb)))
                & ((rb > p.pfc_burst_rate) | ~rk).all(axis=1)
                & rk.any(axis=1)
            )
        fire |= rates_apply & burst
    if p.pfc_sustained_rate is not None:
        ks = bucket_count(p.pfc_sustained_s, w.bucket_s, b)
        rs = rate[:, -ks:]
        rk = np.isfinite(rs)
        with np.errstate(invalid="ignore"):
            mean = np.nansum(np.where(rk, rs, 0), axis=1) / np.maximum(rk.sum(axis=1), 1)
            sustained = (rk.sum(axis=1) >= max(1, math.ceil(p.coverage * ks))) & (mean > p.pfc_sustained_rate)
            hold |= rates_apply & (mean > p.pfc_sustained_rate / 2)
        fire |= rates_apply & sustained
        hits.pfc_rate[sl] = mean
    hits.pfc_fire[sl] = fire
    hits.pfc_hold[sl] = hold | fire


def pfc_findings(out: Collector, hits: RowHits, window: PortWindow) -> None:
    """Per port (the host end is what to look at), whatever link the port is on."""
    for r in np.nonzero(hits.pfc_fire)[0]:
        r = int(r)
        key = out.port_key("pfc_storm", r)
        f = Finding(
            key=key,
            rule="pfc_storm",
            severity="notify",
            link_id=out.link_id_of(r),
            port_id=int(window.port_id[r]),
            headline="",
            recommendation="",
            recommendation_code="",
        )
        f.ends[out.side_name(r)] = {
            "port_id": int(window.port_id[r]),
            "paused_share": None
            if not np.isfinite(hits.pfc_share[r])
            else round(float(hits.pfc_share[r]), 3),
            "pause_frames_per_s": None
            if not np.isfinite(hits.pfc_rate[r])
            else round(float(hits.pfc_rate[r]), 1),
            "series_pause_frames": short_series(window.pfc_pause_frames[r]),
        }
        out.grouped[key] = f
    for r in np.nonzero(hits.pfc_hold)[0]:
        out.holding.add(out.port_key("pfc_storm", int(r)))
