"""The engine's columnar inputs (window, port facts, link table) and its outputs (findings, evaluation)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# --- input -----------------------------------------------------------------------------------


@dataclass
class PortWindow:
    """Windowed telemetry of N ports over B buckets of ``bucket_s`` seconds, the last ending now.

    Counter fields are per-bucket increases (resets already handled by the rate math); NaN means
    "not reported". ``seconds`` is the time each bucket's increases cover (0 = no data).
    """

    port_id: np.ndarray  # int64[N]
    bucket_s: float
    seconds: np.ndarray  # float[N,B]
    corrected_cw: np.ndarray
    uncorrectable_cw: np.ndarray
    corrected_bits: np.ndarray
    line_bits: np.ndarray
    pre_fec_ber: np.ndarray  # gauge (device-computed), used when bits are missing
    hist_warn_cw: np.ndarray  # codewords in bins 40-80% of the correction limit
    hist_crit_cw: np.ndarray  # codewords in bins above 80%
    pfc_pause_frames: np.ndarray
    pfc_pause_us: np.ndarray
    link_down: np.ndarray
    error_recovery: np.ndarray
    rx_power_dbm: np.ndarray  # float[N,L], latest per lane
    tx_power_dbm: np.ndarray  # float[N,L]
    rx_low_warn_dbm: np.ndarray  # float[N], the module's own threshold (NaN: unknown)
    speed_gbps: np.ndarray  # float[N] as reported (NaN: unknown)
    link_width: np.ndarray  # float[N] lanes in use as reported (NaN: unknown)
    module_serial: list[str | None]  # latest reported, None: not reported
    neighbor_port_id: np.ndarray  # int64[N]: -1 none reported, -2 reported but unknown to us
    neighbor_label: list[str | None]
    t_start: float = 0.0  # epoch seconds of the first bucket

    @property
    def n(self) -> int:
        return int(self.port_id.shape[0])

    @property
    def buckets(self) -> int:
        return int(self.seconds.shape[1]) if self.seconds.ndim == 2 else 0

    @classmethod
    def empty(cls, n: int, buckets: int, *, bucket_s: float = 60.0, lanes: int = 8, t_start: float = 0.0):
        """All-NaN arrays to fill in (tests, the selector, the bench)."""

        def nan2():
            return np.full((n, buckets), np.nan)

        return cls(
            port_id=np.arange(n, dtype=np.int64),
            bucket_s=bucket_s,
            seconds=np.zeros((n, buckets)),
            corrected_cw=nan2(),
            uncorrectable_cw=nan2(),
            corrected_bits=nan2(),
            line_bits=nan2(),
            pre_fec_ber=nan2(),
            hist_warn_cw=nan2(),
            hist_crit_cw=nan2(),
            pfc_pause_frames=nan2(),
            pfc_pause_us=nan2(),
            link_down=nan2(),
            error_recovery=nan2(),
            rx_power_dbm=np.full((n, lanes), np.nan),
            tx_power_dbm=np.full((n, lanes), np.nan),
            rx_low_warn_dbm=np.full(n, np.nan),
            speed_gbps=np.full(n, np.nan),
            link_width=np.full(n, np.nan),
            module_serial=[None] * n,
            neighbor_port_id=np.full(n, -1, dtype=np.int64),
            neighbor_label=[None] * n,
            t_start=t_start,
        )


@dataclass
class PortFacts:
    """What the plant records for each row of the window (same order)."""

    recorded_serial: list[str | None]  # None: nothing to compare (unknown); "": nothing recorded
    expected_neighbor_port_id: np.ndarray  # int64[N], -1: no recorded far end
    expected_neighbor_label: list[str | None]
    base_ber: np.ndarray  # float[N]
    base_cw_rate: np.ndarray  # float[N]
    base_rx_dbm: np.ndarray  # float[N,L]

    @classmethod
    def empty(cls, n: int, lanes: int = 8) -> PortFacts:
        return cls(
            recorded_serial=[None] * n,
            expected_neighbor_port_id=np.full(n, -1, dtype=np.int64),
            expected_neighbor_label=[None] * n,
            base_ber=np.full(n, np.nan),
            base_cw_rate=np.full(n, np.nan),
            base_rx_dbm=np.full((n, lanes), np.nan),
        )


@dataclass
class LinkTable:
    """M links; ``a_row``/``b_row`` index the window rows of their two ends (-1: not reporting)."""

    link_id: np.ndarray  # int64[M]
    a_row: np.ndarray
    b_row: np.ndarray
    profile: np.ndarray  # int64[M], index into the profiles list
    fec: list[str]
    passive_copper: np.ndarray  # bool[M]
    tested_loss_db: np.ndarray  # float[M]
    expected_speed_gbps: np.ndarray  # float[M]
    expected_width: np.ndarray  # float[M] lanes the link is recorded with (NaN: unknown)

    @classmethod
    def empty(cls, m: int) -> LinkTable:
        return cls(
            link_id=np.arange(m, dtype=np.int64),
            a_row=np.full(m, -1, dtype=np.int64),
            b_row=np.full(m, -1, dtype=np.int64),
            profile=np.zeros(m, dtype=np.int64),
            fec=["RS544"] * m,
            passive_copper=np.zeros(m, dtype=bool),
            tested_loss_db=np.full(m, np.nan),
            expected_speed_gbps=np.full(m, np.nan),
            expected_width=np.full(m, np.nan),
        )


# --- output ----------------------------------------------------------------------------------


@dataclass
class Finding:
    """One alert-worthy condition. ``ends`` holds per-end evidence keyed "a"/"b" (or "port")."""

    key: str
    rule: str
    severity: str
    link_id: int | None
    port_id: int
    headline: str
    recommendation: str
    recommendation_code: str
    ends: dict = field(default_factory=dict)
    evidence: dict = field(default_factory=dict)


@dataclass
class Evaluation:
    findings: list[Finding]
    holding: set[str]  # keys whose condition still shows (keep an open alert open)
    reporting_port_ids: np.ndarray  # ports that had data in the window
    baseline_ber: np.ndarray  # float[N] window BER of healthy rows (NaN otherwise): for learning
    baseline_cw_rate: np.ndarray
    rx_now: np.ndarray  # float[N,L]
