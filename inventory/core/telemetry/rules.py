"""Alert rules over windowed port telemetry: pure, ORM-free, vectorised with numpy.

Input is columnar: a :class:`PortWindow` (one row per reporting port, one column per time
bucket, NaN where a bucket holds no data or a field is not reported), the static facts of the
ports (:class:`PortFacts`: recorded module serial, expected neighbour, baselines) and of the
links (:class:`LinkTable`: which rows are its two ends, its thresholds profile, FEC limit,
medium, tested loss). Output is a short list of :class:`Finding` plus the keys whose condition
still holds (hysteresis: an open alert stays open while its condition is present in the clear
window even if it no longer meets the opening bar).

Every rule is a handful of array operations over the whole fleet, so 100,000 ports take well
under a second; Python objects are built only for the few rows that fire.

Thresholds come from :class:`Thresholds` profiles, selected per link class or PMD by
:class:`RuleConfig`. ``PRESETS["default"]`` is what we recommend; ``PRESETS["seed"]`` keeps the
seed article's thresholds (FEC corrected rate > 0.001/s for 10 min, PFC > 100 pause frames/s
for 1 min or > 10/s sustained). README explains why the defaults differ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace

import numpy as np

# FEC facts (pre-FEC BER limit, correctable symbols) and the severity ranking live with their choices.
from inventory.core.choices import FEC_LIMITS, SEVERITY_ORDER

# Rules whose finding points at the physical path (they move the cable to "degraded").
PHYSICAL_RULES = frozenset(
    {"link_flap", "link_degraded", "fec_degradation", "fec_tail", "fec_uncorrectable", "rx_power_drift"}
)


@dataclass(frozen=True)
class Thresholds:
    """One profile of thresholds and durations (seconds). ``None`` switches a check off."""

    # fec_degradation: the receiver's pre-FEC BER (or corrected-codeword rate) above
    # max(baseline x factor, floor), or above a fraction of the FEC limit whatever the
    # baseline, in every bucket with data for ``fec_hold_s``.
    fec_mode: str = "ber"  # "ber": pre-FEC BER (codeword rate when bits are missing); "cw_rate"
    fec_hold_s: float = 600.0
    fec_ber_factor: float | None = 10.0
    fec_ber_floor: float = 1e-8
    fec_limit_fraction: float | None = 0.1
    fec_cw_rate_factor: float | None = 10.0
    fec_cw_rate_floor: float = 10_000.0
    coverage: float = 0.8  # share of buckets in a hold period that must carry data
    clear_s: float = 900.0  # an open alert stays open while its condition shows in this window
    # fec_tail: codewords with 40-80% (warning) or >80% (critical) of the correctable symbol
    # errors, at least ``tail_min_cw`` of them in each of ``tail_min_buckets`` buckets.
    tail_window_s: float = 900.0
    tail_min_cw: float = 10.0
    tail_min_buckets: int = 3
    # fec_uncorrectable: uncorrectable codewords in at least this many buckets of the window.
    uncorr_window_s: float = 600.0
    uncorr_min_buckets: int = 3
    # link_flap: link-down events plus link error recoveries in the window.
    flap_window_s: float = 900.0
    flap_min_events: int = 1
    # rx_power_drift
    rx_drift_db: float | None = 2.0
    live_loss_margin_db: float | None = 2.0
    # pfc_storm: share of time paused (from pause duration) over the window; pause-frame rates
    # are used when no duration is reported (and always by the seed preset).
    pfc_window_s: float = 300.0
    pfc_share: float | None = 0.2
    pfc_burst_rate: float | None = 1000.0
    pfc_burst_s: float = 60.0
    pfc_sustained_rate: float | None = 100.0
    pfc_sustained_s: float = 600.0
    pfc_rates_always: bool = False


PRESETS: dict[str, Thresholds] = {
    "default": Thresholds(),
    # The seed article's Grafana rules, verbatim: fec_degradation is
    # rate(fec_correctable_errors[1m]) > 0.001 for 10m (any corrected error, no baseline);
    # pfc_storm is rate(pfc_pause_frames[1m]) > 100 for 1m, and > 10/s sustained.
    "seed": Thresholds(
        fec_mode="cw_rate",
        fec_ber_factor=None,
        fec_limit_fraction=None,
        fec_cw_rate_factor=None,
        fec_cw_rate_floor=0.001,
        pfc_share=None,
        pfc_burst_rate=100.0,
        pfc_burst_s=60.0,
        pfc_sustained_rate=10.0,
        pfc_sustained_s=600.0,
        pfc_rates_always=True,
    ),
}


def thresholds_from(base: Thresholds | str, overrides: dict | None = None) -> Thresholds:
    """A profile from a preset name (or profile) and a dict of field overrides."""
    if isinstance(base, str):
        if base not in PRESETS:
            raise ValueError(f"Unknown rule preset {base!r}; known: {', '.join(PRESETS)}")
        base = PRESETS[base]
    if not overrides:
        return base
    names = {f.name for f in fields(Thresholds)}
    unknown = set(overrides) - names - {"preset"}
    if unknown:
        raise ValueError(f"Unknown rule thresholds: {', '.join(sorted(unknown))}")
    if "preset" in overrides:
        base = thresholds_from(overrides["preset"])
    return replace(base, **{k: v for k, v in overrides.items() if k != "preset"})


@dataclass
class RuleConfig:
    """Which profile a link uses: its class first, then its PMD, else the default."""

    default: Thresholds = field(default_factory=Thresholds)
    by_class: dict[str, Thresholds] = field(default_factory=dict)
    by_pmd: dict[str, Thresholds] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, raw: dict | None) -> RuleConfig:
        """From settings: ``{"preset": "default", "by_class": {"rail": {...}}, "by_pmd": {...}}``."""
        raw = raw or {}
        default = thresholds_from(raw.get("preset", "default"), raw.get("overrides"))
        return cls(
            default=default,
            by_class={k: thresholds_from(default, v) for k, v in (raw.get("by_class") or {}).items()},
            by_pmd={k: thresholds_from(default, v) for k, v in (raw.get("by_pmd") or {}).items()},
        )

    def profiles(self) -> list[Thresholds]:
        out = [self.default]
        for t in [*self.by_class.values(), *self.by_pmd.values()]:
            if t not in out:
                out.append(t)
        return out

    def profile_index(self, *, link_class: str, pmd: str, profiles: list[Thresholds]) -> int:
        t = self.by_class.get(link_class) or self.by_pmd.get(pmd) or self.default
        return profiles.index(t)


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


# --- helpers ---------------------------------------------------------------------------------


def _k(window_s: float, bucket_s: float, b: int) -> int:
    return max(1, min(b, math.ceil(window_s / bucket_s - 1e-9)))


def _fmt(x: float) -> str:
    if x is None or not np.isfinite(x):
        return "n/a"
    return f"{x:.2e}"


def _num(x: float) -> float | None:
    """A JSON-safe number: NaN (unknown) becomes None."""
    return float(x) if np.isfinite(x) else None


def _series(row: np.ndarray, points: int = 12) -> list[float | None]:
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


# --- the engine ------------------------------------------------------------------------------


@dataclass
class _RowHits:
    """Per-row results of the per-port checks (vectors of N)."""

    fec_fire: np.ndarray
    fec_hold: np.ndarray
    fec_metric: np.ndarray  # float[N,B]: BER or cw/s per bucket
    fec_is_ber: np.ndarray  # bool[N]
    fec_threshold: np.ndarray
    tail_sev: np.ndarray  # 0 none, 1 warning, 2 critical
    tail_hold: np.ndarray
    tail_counts: np.ndarray  # (warn_cw, crit_cw) sums [N,2]
    uncorr_fire: np.ndarray
    uncorr_hold: np.ndarray
    uncorr_total: np.ndarray
    uncorr_buckets: np.ndarray
    flap_fire: np.ndarray
    flap_events: np.ndarray
    rx_drift: np.ndarray  # float[N] worst lane drop vs baseline (dB)
    rx_drift_fire: np.ndarray
    rx_low_fire: np.ndarray
    pfc_fire: np.ndarray
    pfc_hold: np.ndarray
    pfc_share: np.ndarray
    pfc_rate: np.ndarray
    has_data: np.ndarray
    window_ber: np.ndarray
    window_cw_rate: np.ndarray


def _profile_arrays(profiles: list[Thresholds], row_profile: np.ndarray, attr: str, none=np.nan):
    vals = np.array([none if getattr(p, attr) is None else getattr(p, attr) for p in profiles], dtype=float)
    return vals[row_profile]


def _row_checks(w: PortWindow, facts: PortFacts, profiles: list[Thresholds], row_profile, row_limit):
    n, b = w.n, w.buckets
    has = w.seconds > 0
    secs = np.where(has, w.seconds, np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        ber_bits = w.corrected_bits / w.line_bits
        ber = np.where(np.isfinite(ber_bits), ber_bits, w.pre_fec_ber)
        cw_rate = w.corrected_cw / secs
    ber = np.where(has, ber, np.nan)

    fec_fire = np.zeros(n, bool)
    fec_hold = np.zeros(n, bool)
    fec_metric = np.full((n, b), np.nan)
    fec_is_ber = np.zeros(n, bool)
    fec_threshold = np.full(n, np.nan)
    tail_sev = np.zeros(n, np.int8)
    tail_hold = np.zeros(n, bool)
    tail_counts = np.zeros((n, 2))
    uncorr_fire = np.zeros(n, bool)
    uncorr_hold = np.zeros(n, bool)
    uncorr_total = np.zeros(n)
    uncorr_buckets = np.zeros(n, np.int64)
    flap_fire = np.zeros(n, bool)
    flap_events = np.zeros(n)
    pfc_fire = np.zeros(n, bool)
    pfc_hold = np.zeros(n, bool)
    pfc_share = np.full(n, np.nan)
    pfc_rate = np.full(n, np.nan)

    for pi, p in enumerate(profiles):
        rows = np.nonzero(row_profile == pi)[0]
        if rows.size == 0 or b == 0:
            continue
        sl = rows

        # fec_degradation --------------------------------------------------------------------
        k = _k(p.fec_hold_s, w.bucket_s, b)
        kc = _k(p.clear_s, w.bucket_s, b)
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
        fec_fire[sl] = enough & all_bad & last_bad.any(axis=1)
        fec_hold[sl] = bad[:, -kc:].any(axis=1)
        fec_metric[sl] = metric
        fec_is_ber[sl] = use_ber
        fec_threshold[sl] = thr

        # fec_tail ---------------------------------------------------------------------------
        kt = _k(p.tail_window_s, w.bucket_s, b)
        warn = w.hist_warn_cw[sl, -kt:]
        crit = w.hist_crit_cw[sl, -kt:]
        with np.errstate(invalid="ignore"):
            crit_b = (crit >= p.tail_min_cw).sum(axis=1)
            any_b = ((np.nan_to_num(warn) + np.nan_to_num(crit)) >= p.tail_min_cw).sum(axis=1)
        tail_sev[sl] = np.where(crit_b >= p.tail_min_buckets, 2, np.where(any_b >= p.tail_min_buckets, 1, 0))
        tail_hold[sl] = any_b >= 1
        tail_counts[sl, 0] = np.nansum(warn, axis=1)
        tail_counts[sl, 1] = np.nansum(crit, axis=1)

        # fec_uncorrectable ------------------------------------------------------------------
        ku = _k(p.uncorr_window_s, w.bucket_s, b)
        u = w.uncorrectable_cw[sl, -ku:]
        with np.errstate(invalid="ignore"):
            nz = (u > 0).sum(axis=1)
        uncorr_fire[sl] = nz >= p.uncorr_min_buckets
        uncorr_hold[sl] = nz >= 1
        uncorr_total[sl] = np.nansum(u, axis=1)
        uncorr_buckets[sl] = nz

        # link_flap --------------------------------------------------------------------------
        kf = _k(p.flap_window_s, w.bucket_s, b)
        ev = np.nansum(w.link_down[sl, -kf:], axis=1) + np.nansum(w.error_recovery[sl, -kf:], axis=1)
        flap_fire[sl] = ev >= p.flap_min_events
        flap_events[sl] = ev

        # pfc_storm --------------------------------------------------------------------------
        kp = _k(p.pfc_window_s, w.bucket_s, b)
        pus = w.pfc_pause_us[sl, -kp:]
        psec = secs[sl, -kp:]
        dur_known = np.isfinite(pus) & np.isfinite(psec)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(
                dur_known.any(axis=1),
                np.nansum(np.where(dur_known, pus, 0), axis=1)
                / 1e6
                / np.nansum(np.where(dur_known, psec, 0), axis=1),
                np.nan,
            )
        pfc_share[sl] = share
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
            kb = _k(p.pfc_burst_s, w.bucket_s, b)
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
            ks = _k(p.pfc_sustained_s, w.bucket_s, b)
            rs = rate[:, -ks:]
            rk = np.isfinite(rs)
            with np.errstate(invalid="ignore"):
                mean = np.nansum(np.where(rk, rs, 0), axis=1) / np.maximum(rk.sum(axis=1), 1)
                sustained = (rk.sum(axis=1) >= max(1, math.ceil(p.coverage * ks))) & (
                    mean > p.pfc_sustained_rate
                )
                hold |= rates_apply & (mean > p.pfc_sustained_rate / 2)
            fire |= rates_apply & sustained
            pfc_rate[sl] = mean
        pfc_fire[sl] = fire
        pfc_hold[sl] = hold | fire

    # rx power (latest per lane) --------------------------------------------------------------
    with np.errstate(invalid="ignore"):
        drop = facts.base_rx_dbm - w.rx_power_dbm
        drop_known = np.isfinite(drop)
        rx_drift = np.where(
            drop_known.any(axis=1), np.nanmax(np.where(drop_known, drop, -np.inf), axis=1), np.nan
        )
        drift_thr = _profile_arrays(profiles, row_profile, "rx_drift_db")
        rx_drift_fire = np.isfinite(rx_drift) & (rx_drift > drift_thr)
        rx_known = np.isfinite(w.rx_power_dbm)
        rx_min = np.where(
            rx_known.any(axis=1), np.nanmin(np.where(rx_known, w.rx_power_dbm, np.inf), axis=1), np.nan
        )
        rx_low_fire = np.isfinite(rx_min) & np.isfinite(w.rx_low_warn_dbm) & (rx_min < w.rx_low_warn_dbm)

    # what a healthy window looks like (for baseline learning) ---------------------------------
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
    return _RowHits(
        fec_fire=fec_fire,
        fec_hold=fec_hold,
        fec_metric=fec_metric,
        fec_is_ber=fec_is_ber,
        fec_threshold=fec_threshold,
        tail_sev=tail_sev,
        tail_hold=tail_hold,
        tail_counts=tail_counts,
        uncorr_fire=uncorr_fire,
        uncorr_hold=uncorr_hold,
        uncorr_total=uncorr_total,
        uncorr_buckets=uncorr_buckets,
        flap_fire=flap_fire,
        flap_events=flap_events,
        rx_drift=rx_drift,
        rx_drift_fire=rx_drift_fire,
        rx_low_fire=rx_low_fire,
        pfc_fire=pfc_fire,
        pfc_hold=pfc_hold,
        pfc_share=pfc_share,
        pfc_rate=pfc_rate,
        has_data=has.any(axis=1),
        window_ber=window_ber,
        window_cw_rate=window_cw,
    )


def evaluate(
    window: PortWindow, facts: PortFacts, links: LinkTable, profiles: list[Thresholds] | None = None
) -> Evaluation:
    """Run every rule over the window. Pure: same input, same output."""
    profiles = profiles or [Thresholds()]
    n = window.n
    # Each row takes its link's profile and FEC limit (ports on no link: the default).
    row_profile = np.zeros(n, dtype=np.int64)
    row_limit = np.full(n, FEC_LIMITS["RS544"][0])
    row_link = np.full(n, -1, dtype=np.int64)  # index into the link table
    row_side = np.zeros(n, dtype=np.int8)  # 0 = a, 1 = b
    limits = np.array([FEC_LIMITS.get(f, FEC_LIMITS["RS544"])[0] for f in links.fec])
    m = links.link_id.shape[0]
    link_idx = np.arange(m)
    for side, rows in ((0, links.a_row), (1, links.b_row)):
        ok = rows >= 0
        row_profile[rows[ok]] = links.profile[ok]
        row_limit[rows[ok]] = limits[ok]
        row_link[rows[ok]] = link_idx[ok]
        row_side[rows[ok]] = side
    hits = _row_checks(window, facts, profiles, row_profile, row_limit)

    findings: list[Finding] = []
    holding: set[str] = set()
    passive = np.zeros(n, bool)
    on_link = row_link >= 0
    passive[on_link] = links.passive_copper[row_link[on_link]]

    def key_of(rule: str, row: int) -> tuple[str, int | None]:
        li = row_link[row]
        if li >= 0:
            return f"{rule}:link:{int(links.link_id[li])}", int(links.link_id[li])
        return f"{rule}:port:{int(window.port_id[row])}", None

    def side_name(row: int) -> str:
        return "port" if row_link[row] < 0 else ("a" if row_side[row] == 0 else "b")

    grouped: dict[str, Finding] = {}

    def add(rule: str, row: int, severity: str, end_evidence: dict) -> None:
        key, link_id = key_of(rule, row)
        f = grouped.get(key)
        if f is None:
            f = Finding(
                key=key,
                rule=rule,
                severity=severity,
                link_id=link_id,
                port_id=int(window.port_id[row]),
                headline="",
                recommendation="",
                recommendation_code="",
            )
            grouped[key] = f
        elif SEVERITY_ORDER[severity] > SEVERITY_ORDER[f.severity]:
            f.severity = severity
        f.ends[side_name(row)] = {"port_id": int(window.port_id[row]), **end_evidence}

    def hold(rule: str, rows: np.ndarray) -> None:
        for r in np.nonzero(rows)[0]:
            holding.add(key_of(rule, int(r))[0])

    # fec_degradation
    for r in np.nonzero(hits.fec_fire)[0]:
        r = int(r)
        series = hits.fec_metric[r]
        last = series[np.isfinite(series)][-1]
        is_ber = bool(hits.fec_is_ber[r])
        base = facts.base_ber[r] if is_ber else facts.base_cw_rate[r]
        add(
            "fec_degradation",
            r,
            "notify",
            {
                "metric": "pre_fec_ber" if is_ber else "corrected_cw_per_s",
                "value": float(last),
                "baseline": None if not np.isfinite(base) else float(base),
                "threshold": float(hits.fec_threshold[r]),
                "fec_limit": float(row_limit[r]) if is_ber else None,
                "series": _series(series),
                "bucket_s": window.bucket_s,
            },
        )
    hold("fec_degradation", hits.fec_hold)

    # fec_tail
    for r in np.nonzero(hits.tail_sev > 0)[0]:
        r = int(r)
        add(
            "fec_tail",
            r,
            "critical" if hits.tail_sev[r] == 2 else "warning",
            {
                "codewords_40_80pct": float(hits.tail_counts[r, 0]),
                "codewords_over_80pct": float(hits.tail_counts[r, 1]),
                "series_over_80pct": _series(window.hist_crit_cw[r]),
            },
        )
    hold("fec_tail", hits.tail_hold)

    # fec_uncorrectable
    for r in np.nonzero(hits.uncorr_fire)[0]:
        r = int(r)
        add(
            "fec_uncorrectable",
            r,
            "notify",
            {
                "uncorrectable_cw": float(hits.uncorr_total[r]),
                "buckets_with_uncorrectable": int(hits.uncorr_buckets[r]),
                "series": _series(window.uncorrectable_cw[r]),
            },
        )
    hold("fec_uncorrectable", hits.uncorr_hold)

    # link_flap / link_degraded
    for r in np.nonzero(hits.flap_fire)[0]:
        r = int(r)
        add(
            "link_flap",
            r,
            "page",
            {
                "link_down": float(np.nansum(window.link_down[r])),
                "error_recovery": float(np.nansum(window.error_recovery[r])),
            },
        )
    hold("link_flap", hits.flap_fire)
    exp_speed = np.full(n, np.nan)
    exp_speed[on_link] = links.expected_speed_gbps[row_link[on_link]]
    exp_width = np.full(n, np.nan)
    exp_width[on_link] = links.expected_width[row_link[on_link]]
    with np.errstate(invalid="ignore"):  # NaN (unknown) compares False: never a finding
        slow = (window.speed_gbps < exp_speed) | (window.link_width < exp_width)
    for r in np.nonzero(slow)[0]:
        r = int(r)
        add(
            "link_degraded",
            r,
            "page",
            {
                "speed_gbps": _num(window.speed_gbps[r]),
                "expected_gbps": _num(exp_speed[r]),
                "width": _num(window.link_width[r]),
                "expected_width": _num(exp_width[r]),
            },
        )
    hold("link_degraded", slow)

    # rx_power_drift: drift from baseline, live loss against the tested loss, module warning
    live_loss = np.full(n, np.nan)  # loss into this row's receiver, from the far end's tx
    tested = np.full(n, np.nan)
    for near, far in ((links.a_row, links.b_row), (links.b_row, links.a_row)):
        ok = (near >= 0) & (far >= 0)
        if ok.any():
            with np.errstate(invalid="ignore"):
                diff = window.tx_power_dbm[far[ok]] - window.rx_power_dbm[near[ok]]
                dk = np.isfinite(diff)
                worst = np.where(dk.any(axis=1), np.nanmax(np.where(dk, diff, -np.inf), axis=1), np.nan)
            live_loss[near[ok]] = worst
            tested[near[ok]] = links.tested_loss_db[ok]
    margin = _profile_arrays(profiles, row_profile, "live_loss_margin_db")
    with np.errstate(invalid="ignore"):
        loss_fire = np.isfinite(live_loss) & np.isfinite(tested) & (live_loss > tested + margin)
    rx_any = (hits.rx_drift_fire | loss_fire | hits.rx_low_fire) & ~passive
    for r in np.nonzero(rx_any)[0]:
        r = int(r)
        add(
            "rx_power_drift",
            r,
            "page" if hits.rx_low_fire[r] else "notify",
            {
                "rx_power_dbm": [
                    None if not np.isfinite(v) else round(float(v), 2) for v in window.rx_power_dbm[r]
                ],
                "baseline_rx_dbm": [
                    None if not np.isfinite(v) else round(float(v), 2) for v in facts.base_rx_dbm[r]
                ],
                "worst_drop_db": None
                if not np.isfinite(hits.rx_drift[r])
                else round(float(hits.rx_drift[r]), 2),
                "live_loss_db": None if not np.isfinite(live_loss[r]) else round(float(live_loss[r]), 2),
                "tested_loss_db": None if not np.isfinite(tested[r]) else round(float(tested[r]), 2),
                "module_rx_low_warn_dbm": None
                if not np.isfinite(window.rx_low_warn_dbm[r])
                else float(window.rx_low_warn_dbm[r]),
                "below_module_warning": bool(hits.rx_low_fire[r]),
            },
        )
    hold("rx_power_drift", rx_any)

    # pfc_storm: per port (the host end is what to look at)
    for r in np.nonzero(hits.pfc_fire)[0]:
        r = int(r)
        key = f"pfc_storm:port:{int(window.port_id[r])}"
        li = row_link[r]
        f = Finding(
            key=key,
            rule="pfc_storm",
            severity="notify",
            link_id=int(links.link_id[li]) if li >= 0 else None,
            port_id=int(window.port_id[r]),
            headline="",
            recommendation="",
            recommendation_code="",
        )
        f.ends[side_name(r)] = {
            "port_id": int(window.port_id[r]),
            "paused_share": None
            if not np.isfinite(hits.pfc_share[r])
            else round(float(hits.pfc_share[r]), 3),
            "pause_frames_per_s": None
            if not np.isfinite(hits.pfc_rate[r])
            else round(float(hits.pfc_rate[r]), 1),
            "series_pause_frames": _series(window.pfc_pause_frames[r]),
        }
        grouped[key] = f
    for r in np.nonzero(hits.pfc_hold)[0]:
        holding.add(f"pfc_storm:port:{int(window.port_id[r])}")

    # miswire: the reported neighbour is not the recorded far end
    nb = window.neighbor_port_id
    exp = facts.expected_neighbor_port_id
    mis = (nb != -1) & (exp != -1) & (nb != exp)
    for r in np.nonzero(mis)[0]:
        r = int(r)
        key = f"miswire:port:{int(window.port_id[r])}"
        li = row_link[r]
        grouped[key] = Finding(
            key=key,
            rule="miswire",
            severity="notify",
            link_id=int(links.link_id[li]) if li >= 0 else None,
            port_id=int(window.port_id[r]),
            headline=f"sees {window.neighbor_label[r] or 'an unknown neighbour'}, "
            f"expected {facts.expected_neighbor_label[r] or 'the recorded far end'}",
            recommendation="Move the cable to the recorded port, or correct the record if the plan changed.",
            recommendation_code="fix_wiring",
            ends={
                side_name(r): {
                    "port_id": int(window.port_id[r]),
                    "expected_port_id": int(exp[r]),
                    "expected": facts.expected_neighbor_label[r],
                    "seen_port_id": int(nb[r]) if nb[r] >= 0 else None,
                    "seen": window.neighbor_label[r],
                }
            },
        )
        holding.add(key)

    # unrecorded_swap: the module (or sealed cable end) serial differs from the record
    for r in _serial_mismatch_rows(window.module_serial, facts.recorded_serial):
        key = f"unrecorded_swap:port:{int(window.port_id[r])}"
        li = row_link[r]
        recorded = facts.recorded_serial[r]
        grouped[key] = Finding(
            key=key,
            rule="unrecorded_swap",
            severity="notify",
            link_id=int(links.link_id[li]) if li >= 0 else None,
            port_id=int(window.port_id[r]),
            headline=f"reports module s/n {window.module_serial[r]}, recorded "
            f"{('s/n ' + recorded) if recorded else 'no module'}",
            recommendation="Record the module swap (or find who changed the module) so its history stays true.",
            recommendation_code="record_swap",
            ends={
                side_name(r): {
                    "port_id": int(window.port_id[r]),
                    "reported_serial": window.module_serial[r],
                    "recorded_serial": recorded,
                }
            },
        )
        holding.add(key)

    link_pos = {int(lid): i for i, lid in enumerate(links.link_id)} if grouped else {}
    for f in grouped.values():
        if f.link_id is not None and f.rule in PHYSICAL_RULES:
            li = link_pos[f.link_id]
            f.evidence["reporting"] = {
                s: bool(row >= 0 and hits.has_data[row])
                for s, row in (("a", int(links.a_row[li])), ("b", int(links.b_row[li])))
            }
        if not f.headline:
            f.headline, f.recommendation, f.recommendation_code = describe(f)
        findings.append(f)
    holding |= {f.key for f in findings}

    healthy = hits.has_data & ~hits.fec_hold & ~hits.tail_hold & ~hits.uncorr_hold & ~hits.flap_fire
    return Evaluation(
        findings=sorted(findings, key=lambda f: f.key),
        holding=holding,
        reporting_port_ids=window.port_id[hits.has_data],
        baseline_ber=np.where(healthy, hits.window_ber, np.nan),
        baseline_cw_rate=np.where(healthy, hits.window_cw_rate, np.nan),
        rx_now=np.where((healthy & ~rx_any)[:, None], window.rx_power_dbm, np.nan),
    )


def _serial_mismatch_rows(reported: list[str | None], recorded: list[str | None]) -> list[int]:
    """Rows whose reported serial differs from the recorded one (both already normalised)."""
    rep = np.asarray(reported, dtype=object)
    rec = np.asarray(recorded, dtype=object)
    candidates = np.nonzero((rep != None) & (rec != None) & (rep != rec))[0]  # noqa: E711 - elementwise
    return [int(i) for i in candidates if reported[i]]


# --- words -----------------------------------------------------------------------------------

_OTHER = {"a": "b", "b": "a"}


def describe(f: Finding) -> tuple[str, str, str]:
    """Headline, recommendation and its code, from the finding's per-end evidence.

    Errors and power are measured at a receiver: errors seen at end A travelled B -> A, so
    they point at B's transmitting module, the fibre path, or A's receiving module. When only
    one direction is affected the path is shared by both and less likely; when both are, the
    cable (bend, damage, dirty connector on a shared MPO) is the suspect.
    """
    sides = [s for s in ("a", "b", "port") if s in f.ends]
    both = "a" in f.ends and "b" in f.ends
    where = " and ".join(f"{s.upper()} end" if s != "port" else "this port" for s in sides)
    if f.rule == "fec_degradation":
        e = f.ends[sides[0]]
        if e["metric"] == "pre_fec_ber":
            lim = f" (FEC limit {_fmt(e['fec_limit'])})" if e.get("fec_limit") else ""
            head = f"pre-FEC BER {_fmt(e['value'])} at the {where} receiver, threshold {_fmt(e['threshold'])}{lim}"
        else:
            head = f"corrected codewords {e['value']:.0f}/s at the {where} receiver, threshold {e['threshold']:.3g}/s"
        if e.get("baseline"):
            head += f", baseline {_fmt(e['baseline'])}"
        return (head, *_direction_advice(f, both, sides))
    if f.rule == "fec_tail":
        e = f.ends[sides[0]]
        sev = "above 80%" if f.severity == "critical" else "at 40-80%"
        return (
            f"codewords {sev} of the FEC correction limit at the {where} receiver "
            f"({e['codewords_over_80pct']:.0f} over 80%, {e['codewords_40_80pct']:.0f} at 40-80%)",
            *_direction_advice(f, both, sides),
        )
    if f.rule == "fec_uncorrectable":
        total = sum(f.ends[s]["uncorrectable_cw"] for s in sides)
        return (
            f"{total:.0f} uncorrectable codewords in the window at the {where} receiver",
            *_direction_advice(f, both, sides),
        )
    if f.rule == "link_flap":
        ev = sum(f.ends[s]["link_down"] + f.ends[s]["error_recovery"] for s in sides)
        return (
            f"{ev:.0f} link-down/error-recovery events at the {where}",
            "Re-seat both modules and the cable ends, inspect and clean the connectors; if the link flaps "
            "again replace the module at the end that reports the events, then the cable.",
            "reseat",
        )
    if f.rule == "link_degraded":
        e = f.ends[sides[0]]
        speed, want_speed = e.get("speed_gbps"), e.get("expected_gbps")
        width, want_width = e.get("width"), e.get("expected_width")
        parts = []
        if speed is not None and want_speed is not None and speed < want_speed:
            parts.append(f"running at {speed:g}G, expected {want_speed:g}G")
        if width is not None and want_width is not None and width < want_width:
            parts.append(f"{width:g} of {want_width:g} lanes up")
        return (
            "; ".join(parts) or "running below its recorded speed or width",
            "A lane is down: re-seat the modules and clean the connectors; replace the module if a lane stays dark.",
            "reseat",
        )
    if f.rule == "rx_power_drift":
        parts = []
        code, rec = "clean", "Inspect and clean the connectors on the path, then retest the link."
        for s in sides:
            e = f.ends[s]
            lbl = "this port" if s == "port" else f"{s.upper()} end"
            if e["below_module_warning"]:
                parts.append(f"rx power below the module's warning threshold at the {lbl}")
            if (
                e["live_loss_db"] is not None
                and e["tested_loss_db"] is not None
                and e["live_loss_db"] > e["tested_loss_db"]
            ):
                parts.append(
                    f"live loss {e['live_loss_db']:.1f} dB into the {lbl} vs {e['tested_loss_db']:.1f} dB tested"
                )
            if e["worst_drop_db"] is not None and e["worst_drop_db"] > 0:
                parts.append(f"rx power {e['worst_drop_db']:.1f} dB below baseline at the {lbl}")
        if both:
            code = "replace_cable"
            rec = (
                "Both directions lost light: the shared path is suspect (bend, damage, dirty MPO). Clean and "
                "inspect every connector on the path; if loss stays high, replace the segment and retest."
            )
        elif any(f.ends[s]["below_module_warning"] for s in sides):
            rec = (
                "Receive power is under the module's own warning threshold: clean and inspect the connectors; "
                "if light stays low with the far module transmitting normally, replace the segment, else "
                "replace the far module."
            )
        return ("; ".join(parts) or "rx power drift", rec, code)
    if f.rule == "pfc_storm":
        e = f.ends[sides[0]]
        what = (
            f"paused {e['paused_share'] * 100:.0f}% of the time"
            if e.get("paused_share") is not None
            else f"{e.get('pause_frames_per_s') or 0:.0f} pause frames/s"
        )
        return (
            f"PFC storm: {what}",
            "Check the host: PFC storms are usually a stuck or slow receiver (NIC, driver, PCIe, GPU memory "
            "pressure), not the cable. Do not replace the cable for this.",
            "check_host",
        )
    return (f.rule, "", "")


def _direction_advice(f: Finding, both: bool, sides: list[str]) -> tuple[str, str]:
    if both:
        return (
            "Errors in both directions: the shared cable path is the suspect. Clean and inspect every "
            "connector on the path and re-seat both modules; if errors persist, replace the cable segment "
            "(bend or damage) and retest.",
            "replace_cable",
        )
    side = sides[0]
    if side == "port":
        return (
            "Clean and re-seat the connectors on the path; if errors persist, replace the far-end module "
            "(its transmitter) or this port's module.",
            "clean",
        )
    far = _OTHER[side].upper()
    other_clean = bool(f.evidence.get("reporting", {}).get(_OTHER[side]))
    return (
        f"Errors only at the {side.upper()} end's receiver (the {far} -> {side.upper()} direction): suspect "
        f"the {far} end's transmitting module or the {side.upper()} end's receiving module. Clean and re-seat "
        f"both ends first; if errors persist, replace the {far} module, then the {side.upper()} module."
        + (" The other direction is clean, so the cable is less likely." if other_clean else ""),
        "replace_module",
    )
