"""The engine's columnar inputs (window, port facts, link table) and its outputs (findings, evaluation)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# --- input -----------------------------------------------------------------------------------


@dataclass
class SampleSteps:
    """Sample-to-sample counter increases (resets handled), for the sliding-window rules.

    One entry per interval between two consecutive samples of a port: ``row`` (window row),
    ``t`` (epoch seconds of the later sample), ``dt`` (seconds). Counted per sample, so whether
    a burst, a degradation or a tail is caught never depends on where samples fall on the bucket
    grid. NaN: the value was not reported in that interval (an entry may carry only some
    values, e.g. the FEC histogram's, which is stored apart from the counters).
    """

    row: np.ndarray  # int64[E]
    t: np.ndarray  # float[E]
    dt: np.ndarray  # float[E]
    uncorrectable_cw: np.ndarray  # float[E]
    pfc_pause_rx: np.ndarray  # float[E]
    pfc_pause_tx: np.ndarray  # float[E]
    # FEC degradation and tail (NaN where not given: a window built for the other rules)
    corrected_cw: np.ndarray | None = None
    corrected_bits: np.ndarray | None = None
    line_bits: np.ndarray | None = None  # bits the line carried in the interval
    pre_fec_ber: np.ndarray | None = None  # the device's gauge at the later sample
    hist_warn_cw: np.ndarray | None = None  # codewords in bins 40-80% of the correction limit
    hist_crit_cw: np.ndarray | None = None  # codewords in bins above 80%

    OPTIONAL = ("corrected_cw", "corrected_bits", "line_bits", "pre_fec_ber", "hist_warn_cw", "hist_crit_cw")

    # Sliding windows are found on a key ordered by (row, time); widths up to this many seconds.
    MAX_WIDTH = 1e6

    def __post_init__(self):
        for k in self.OPTIONAL:
            if getattr(self, k) is None:
                setattr(self, k, np.full(self.t.shape[0], np.nan))
        self._key: np.ndarray | None = None
        self._starts: dict[float, np.ndarray] = {}

    def key(self) -> np.ndarray:
        """(row, time) as one float, rows far enough apart that no window crosses a row."""
        if self._key is None:
            t0 = float(self.t.min()) if self.t.size else 0.0
            span = (float(self.t.max()) - t0 if self.t.size else 0.0) + 2 * self.MAX_WIDTH
            self._key = self.row.astype(float) * span + (self.t - t0)
        return self._key

    def ordered(self) -> SampleSteps:
        """These steps sorted by (row, time) (itself when already so): what ``window_start``
        and the sliding sums need. Sorted once per evaluation, not once per rule."""
        k = self.key()
        if k.size < 2 or bool((np.diff(k) >= 0).all()):
            return self
        order = np.lexsort((self.t, self.row))
        return SampleSteps(*(getattr(self, f)[order] for f in self.__dataclass_fields__))

    def window_start(self, width: float) -> np.ndarray:
        """Per step (sorted), the index of the first step of its row inside (t - width, t]."""
        if width not in self._starts:
            if width >= self.MAX_WIDTH:
                raise ValueError(f"a sliding window of {width} s is longer than {self.MAX_WIDTH:.0f} s")
            k = self.key()
            self._starts[width] = np.searchsorted(k, k - width, side="right")
        return self._starts[width]

    @classmethod
    def empty(cls) -> SampleSteps:
        z = np.zeros(0)
        return cls(np.zeros(0, dtype=np.int64), z, z.copy(), z.copy(), z.copy(), z.copy())

    def concat(self, other: SampleSteps) -> SampleSteps:
        return SampleSteps(
            *(np.concatenate([getattr(self, k), getattr(other, k)]) for k in self.__dataclass_fields__)
        )

    @classmethod
    def from_buckets(cls, w: PortWindow, rows: np.ndarray | None = None) -> SampleSteps:
        """One step per bucket with data (its end, its covered seconds) of ``rows`` (default:
        all): what a window built without raw samples (tests, the bench) offers the
        sliding-window rules."""
        has = w.seconds > 0
        if rows is not None:
            keep = np.zeros(w.n, bool)
            keep[rows] = True
            has &= keep[:, None]
        rows, cols = np.nonzero(has)
        t = w.t_start + (cols + 1) * w.bucket_s
        return cls(
            row=rows.astype(np.int64),
            t=t.astype(float),
            dt=w.seconds[rows, cols].astype(float),
            uncorrectable_cw=w.uncorrectable_cw[rows, cols],
            pfc_pause_rx=w.pfc_pause_rx[rows, cols],
            pfc_pause_tx=w.pfc_pause_tx[rows, cols],
            corrected_cw=w.corrected_cw[rows, cols],
            corrected_bits=w.corrected_bits[rows, cols],
            line_bits=w.line_bits[rows, cols],
            pre_fec_ber=w.pre_fec_ber[rows, cols],
            hist_warn_cw=w.hist_warn_cw[rows, cols],
            hist_crit_cw=w.hist_crit_cw[rows, cols],
        )


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
    pfc_pause_rx: np.ndarray  # pause frames this port received (its far end asked it to stop)
    pfc_pause_tx: np.ndarray  # pause frames this port sent (it is the one asking)
    pfc_pause_us: np.ndarray  # time this port's transmitter was paused
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
    # Per bucket, per lane: the lowest receive power in the bucket (float[N,B,L]); None: only
    # the latest (``rx_power_dbm``) is known, taken as the last bucket.
    rx_power_dbm_b: np.ndarray | None = None
    # Raw sample steps of the ports that may fire or hold a sliding-window rule (FEC degradation,
    # tail, uncorrectables, PFC); None: derived from the buckets (``SampleSteps.from_buckets``).
    steps: SampleSteps | None = None
    t_end: float | None = None  # epoch seconds the evaluation runs at (default: the window's end)

    @property
    def n(self) -> int:
        return int(self.port_id.shape[0])

    @property
    def buckets(self) -> int:
        return int(self.seconds.shape[1]) if self.seconds.ndim == 2 else 0

    @property
    def end(self) -> float:
        """When the evaluation runs (epoch seconds): sliding windows end here."""
        return self.t_end if self.t_end is not None else self.t_start + self.buckets * self.bucket_s

    def sample_steps(self) -> SampleSteps:
        """The steps, sorted by (row, time) once (kept, so every rule shares the order)."""
        if self.steps is None:
            self.steps = SampleSteps.from_buckets(self)
        self.steps = self.steps.ordered()
        return self.steps

    def rx_buckets(self) -> np.ndarray:
        """float[N,B',L] receive power per bucket and lane (B' = 1, the latest, when only that
        is known)."""
        if self.rx_power_dbm_b is not None:
            return self.rx_power_dbm_b
        return self.rx_power_dbm[:, None, :]

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
            pfc_pause_rx=nan2(),
            pfc_pause_tx=nan2(),
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
    expected_speed_gbps: np.ndarray  # float[M]
    expected_width: np.ndarray  # float[M] lanes the link is recorded with (NaN: unknown)
    # Every segment tested and in service (not degraded): only then is a lane's receive power a
    # baseline to learn. Defaults to True (a table built without the plant, tests and bench).
    tested: np.ndarray | None = None

    @classmethod
    def empty(cls, m: int) -> LinkTable:
        return cls(
            link_id=np.arange(m, dtype=np.int64),
            a_row=np.full(m, -1, dtype=np.int64),
            b_row=np.full(m, -1, dtype=np.int64),
            profile=np.zeros(m, dtype=np.int64),
            fec=["RS544"] * m,
            passive_copper=np.zeros(m, dtype=bool),
            expected_speed_gbps=np.full(m, np.nan),
            expected_width=np.full(m, np.nan),
            tested=np.ones(m, dtype=bool),
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
