"""The per-row results of the per-port checks (one vector of N per result), filled family by family."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class RowHits:
    """Per-row results of the per-port checks (vectors of N)."""

    fec_fire: np.ndarray
    fec_hold: np.ndarray
    fec_metric: np.ndarray  # float[N,B]: BER or cw/s per bucket (the evidence's series)
    fec_value: np.ndarray  # float[N]: the latest sliding-window BER or cw/s
    fec_is_ber: np.ndarray  # bool[N]
    fec_threshold: np.ndarray
    tail_sev: np.ndarray  # 0 none, 1 warning, 2 critical
    tail_hold: np.ndarray
    tail_counts: np.ndarray  # (warn_cw, crit_cw) sums [N,2]
    uncorr_fire: np.ndarray
    uncorr_hold: np.ndarray
    uncorr_total: np.ndarray
    uncorr_events: np.ndarray
    flap_fire: np.ndarray
    flap_events: np.ndarray
    rx_drift: np.ndarray  # float[N] worst lane drop vs baseline (dB), latest bucket
    rx_drift_lane: np.ndarray  # int[N] that lane (-1: unknown)
    rx_drift_fire: np.ndarray
    rx_drift_hold: np.ndarray
    rx_low_fire: np.ndarray
    rx_low_hold: np.ndarray
    pfc_sent_fire: np.ndarray  # this port sends pause frames past a preset
    pfc_recv_fire: np.ndarray  # this port receives them (or is paused) past a preset
    pfc_sent_hold: np.ndarray
    pfc_recv_hold: np.ndarray
    pfc_share: np.ndarray  # share of time paused (received pauses)
    pfc_sent_rate: np.ndarray  # highest sliding-window rates (frames/s): sustained, burst
    pfc_recv_rate: np.ndarray
    pfc_sent_burst: np.ndarray
    pfc_recv_burst: np.ndarray
    has_data: np.ndarray
    window_ber: np.ndarray
    window_cw_rate: np.ndarray

    @classmethod
    def empty(cls, n: int, b: int) -> RowHits:
        """Nothing fired yet: the vectors the checks fill in (NaN where a value is unknown)."""
        return cls(
            fec_fire=np.zeros(n, bool),
            fec_hold=np.zeros(n, bool),
            fec_metric=np.full((n, b), np.nan),
            fec_value=np.full(n, np.nan),
            fec_is_ber=np.zeros(n, bool),
            fec_threshold=np.full(n, np.nan),
            tail_sev=np.zeros(n, np.int8),
            tail_hold=np.zeros(n, bool),
            tail_counts=np.zeros((n, 2)),
            uncorr_fire=np.zeros(n, bool),
            uncorr_hold=np.zeros(n, bool),
            uncorr_total=np.zeros(n),
            uncorr_events=np.zeros(n, np.int64),
            flap_fire=np.zeros(n, bool),
            flap_events=np.zeros(n),
            rx_drift=np.full(n, np.nan),
            rx_drift_lane=np.full(n, -1, dtype=np.int64),
            rx_drift_fire=np.zeros(n, bool),
            rx_drift_hold=np.zeros(n, bool),
            rx_low_fire=np.zeros(n, bool),
            rx_low_hold=np.zeros(n, bool),
            pfc_sent_fire=np.zeros(n, bool),
            pfc_recv_fire=np.zeros(n, bool),
            pfc_sent_hold=np.zeros(n, bool),
            pfc_recv_hold=np.zeros(n, bool),
            pfc_share=np.full(n, np.nan),
            pfc_sent_rate=np.full(n, np.nan),
            pfc_recv_rate=np.full(n, np.nan),
            pfc_sent_burst=np.full(n, np.nan),
            pfc_recv_burst=np.full(n, np.nan),
            has_data=np.zeros(n, bool),
            window_ber=np.full(n, np.nan),
            window_cw_rate=np.full(n, np.nan),
        )
