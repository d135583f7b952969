"""pfc_storm, per direction: pause frames sent (this port asks its neighbour to stop) and received
(its neighbour asks it), each against the design's two presets, a burst rate and a sustained rate
over sliding windows of samples, plus the share of time paused where the duration is reported.

PFC storms are usually host-caused (a stuck or slow receiver keeps sending pauses), so the finding
names the end that SENDS the pauses: a port sending them is the sender; a port receiving them (or
paused) points at its recorded far end. Both ends of one storm make one alert, keyed by the sender.
"""

from __future__ import annotations

import numpy as np

from inventory.core.telemetry.rules.collect import Collector
from inventory.core.telemetry.rules.config import Thresholds
from inventory.core.telemetry.rules.frames import Finding, PortFacts, PortWindow
from inventory.core.telemetry.rules.hits import RowHits
from inventory.core.telemetry.rules.util import bucket_count, short_series, sliding_max_rate


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


def _direction(p: Thresholds, w: PortWindow, values: np.ndarray, since: float) -> tuple[np.ndarray, ...]:
    """(sustained rate, burst rate, fire, hold) per row for one direction's pause frames."""
    steps = w.sample_steps()
    end, n, cov = w.end, w.n, p.coverage
    nan = np.full(n, np.nan)
    sustained = burst = nan
    fire = np.zeros(n, bool)
    hold = np.zeros(n, bool)
    with np.errstate(invalid="ignore"):
        if p.pfc_sustained_rate is not None:
            width = p.pfc_sustained_s
            sustained = sliding_max_rate(steps, values, n, width=width, since=since, end=end, coverage=cov)
            fire |= sustained > p.pfc_sustained_rate
            held = sliding_max_rate(
                steps, values, n, width=width, since=end - p.clear_s, end=end, coverage=cov
            )
            hold |= held > p.pfc_sustained_rate * p.hold_ratio
        if p.pfc_burst_rate is not None:
            width = p.pfc_burst_s
            burst = sliding_max_rate(steps, values, n, width=width, since=since, end=end, coverage=cov)
            fire |= burst > p.pfc_burst_rate
            held = sliding_max_rate(
                steps, values, n, width=width, since=end - p.clear_s, end=end, coverage=cov
            )
            hold |= held > p.pfc_burst_rate * p.hold_ratio
    return sustained, burst, fire, hold | fire


def pfc_storm_rows(hits: RowHits, p: Thresholds, sl: np.ndarray, w: PortWindow, secs: np.ndarray) -> None:
    share = _paused_share(p, sl, w, secs)
    hits.pfc_share[sl] = share
    steps = w.sample_steps()
    since = w.end - p.pfc_window_s
    s_rate, s_burst, s_fire, s_hold = _direction(p, w, steps.pfc_pause_tx, since)
    r_rate, r_burst, r_fire, r_hold = _direction(p, w, steps.pfc_pause_rx, since)
    recv_fire = np.zeros(sl.size, bool)
    recv_hold = np.zeros(sl.size, bool)
    if p.pfc_share is not None:
        with np.errstate(invalid="ignore"):
            recv_fire |= share >= p.pfc_share
            recv_hold |= share >= p.pfc_share * p.hold_ratio
    rates_apply = np.full(sl.size, p.pfc_rates_always) | ~np.isfinite(share)
    recv_fire |= rates_apply & r_fire[sl]
    recv_hold |= rates_apply & r_hold[sl]
    hits.pfc_sent_fire[sl] = s_fire[sl]
    hits.pfc_sent_hold[sl] = s_hold[sl]
    hits.pfc_recv_fire[sl] = recv_fire
    hits.pfc_recv_hold[sl] = recv_hold | recv_fire
    hits.pfc_sent_rate[sl] = s_rate[sl]
    hits.pfc_recv_rate[sl] = r_rate[sl]
    hits.pfc_sent_burst[sl] = s_burst[sl]
    hits.pfc_recv_burst[sl] = r_burst[sl]


def _num(x: float, nd: int = 1) -> float | None:
    return None if not np.isfinite(x) else round(float(x), nd)


def _sender_of(out: Collector, facts: PortFacts, r: int, sends: bool) -> int | None:
    """The port that sends the pauses: this row's port when it sends them, else its recorded
    far end (None when nothing is recorded)."""
    if sends:
        return int(out.window.port_id[r])
    far = int(facts.expected_neighbor_port_id[r])
    return far if far >= 0 else None


def _storm_key(sender: int | None, receiver_port: int) -> str:
    return f"pfc_storm:port:{sender}" if sender is not None else f"pfc_storm:toward:{receiver_port}"


def pfc_findings(out: Collector, hits: RowHits, window: PortWindow, facts: PortFacts) -> None:
    """One finding per sending port, with the evidence of both ends (either may report it)."""
    firing = np.nonzero(hits.pfc_sent_fire | hits.pfc_recv_fire)[0]
    row_of = {int(pid): i for i, pid in enumerate(window.port_id)} if firing.size else {}
    for r in firing:
        r = int(r)
        sends = bool(hits.pfc_sent_fire[r])
        sender = _sender_of(out, facts, r, sends)
        key = _storm_key(sender, int(window.port_id[r]))
        f = out.grouped.get(key)
        if f is None:
            f = Finding(
                key=key,
                rule="pfc_storm",
                severity="notify",
                link_id=out.link_id_of(r),
                port_id=sender if sender is not None else int(window.port_id[r]),
                headline="",
                recommendation="",
                recommendation_code="",
                evidence={"sender_port_id": sender},
            )
            out.grouped[key] = f
        rows = [r]
        srow = row_of.get(sender) if sender is not None else None
        if srow is not None and srow != r:
            rows.append(srow)
        for row in rows:
            role = "sender" if sender is not None and int(window.port_id[row]) == sender else "receiver"
            f.ends[out.side_name(row)] = {
                "port_id": int(window.port_id[row]),
                "role": role,
                "pause_frames_sent_per_s": _num(hits.pfc_sent_rate[row]),
                "pause_frames_received_per_s": _num(hits.pfc_recv_rate[row]),
                "burst_sent_per_s": _num(hits.pfc_sent_burst[row]),
                "burst_received_per_s": _num(hits.pfc_recv_burst[row]),
                "paused_share": _num(hits.pfc_share[row], 3),
                "series_pause_sent": short_series(window.pfc_pause_tx[row]),
                "series_pause_received": short_series(window.pfc_pause_rx[row]),
            }
        if sender is not None and srow is None:
            f.evidence["sender_reporting"] = False
    for r in np.nonzero(hits.pfc_sent_hold)[0]:
        r = int(r)
        out.holding.add(_storm_key(int(window.port_id[r]), int(window.port_id[r])))
    for r in np.nonzero(hits.pfc_recv_hold)[0]:
        r = int(r)
        out.holding.add(_storm_key(_sender_of(out, facts, r, False), int(window.port_id[r])))
