"""Per-port, per-bucket rollups from raw samples (pure; the service feeds it rows).

For each pair of consecutive samples of a counter (sorted by time, duplicates collapsed), the
increase (``rates.step``: a drop is a reset counted from zero, never negative) is attributed to
the bucket holding the later sample. Gauges are min/max within the bucket. Identity is the last
observation at or before the bucket's end.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from datetime import UTC, datetime

from inventory.core.telemetry.rates import bin_severity, hist_increase, pre_fec_ber, step

ROLLUP_COUNTERS = (
    "fec_corrected_cw",
    "fec_uncorrectable_cw",
    "fec_corrected_bits",
    "fec_symbol_errors",
    "ib_symbol_errors",
    "pfc_pause_rx",
    "pfc_pause_tx",
    "pfc_pause_duration_us",
    "link_down_events",
    "link_error_recovery",
)
IDENTITY = ("module_vendor", "module_part", "module_serial", "neighbor_device", "neighbor_port")


@dataclass(slots=True)
class RawSample:
    t: float
    counters: dict[str, int | None]
    pre_fec_ber: float | None = None
    post_fec_ber: float | None = None
    temperature_c: float | None = None
    speed_gbps: float | None = None
    link_width: int | None = None
    rx_power_dbm: list[float | None] | None = None
    tx_power_dbm: list[float | None] | None = None
    hist_layout: int | None = None
    hist: list[int] | None = None


@dataclass(frozen=True, slots=True)
class Layout:
    bin_low: list[int]
    bin_high: list[int]
    limit: int


@dataclass(frozen=True, slots=True)
class PortLine:
    lanes: int
    lane_gbps: float | None


@dataclass(slots=True)
class Bucket:
    start: float
    samples: int = 0
    covered_s: float = 0.0
    resets: int = 0
    counters: dict[str, float] = field(default_factory=dict)
    bits_seconds: float = 0.0
    pre_fec_ber_sum: float = 0.0
    pre_fec_ber_n: int = 0
    pre_fec_ber_max: float | None = None
    post_fec_ber_max: float | None = None
    temperature_max_c: float | None = None
    speed_min: float | None = None
    width_min: int | None = None
    rx_min: list[float | None] | None = None
    tx_min: list[float | None] | None = None
    hist_layout: int | None = None
    hist_limit: int | None = None
    hist_warn: float | None = None
    hist_crit: float | None = None
    hist_max_bin_high: int | None = None
    line_bits: float | None = None
    pre_fec_ber: float | None = None
    identity: dict[str, str] = field(default_factory=dict)

    @property
    def start_dt(self) -> datetime:
        return datetime.fromtimestamp(self.start, UTC)


def _lane_min(cur: list[float | None] | None, new: list[float | None] | None) -> list[float | None] | None:
    if new is None:
        return cur
    if cur is None:
        return list(new)
    n = max(len(cur), len(new))
    out: list[float | None] = []
    for i in range(n):
        a = cur[i] if i < len(cur) else None
        b = new[i] if i < len(new) else None
        out.append(b if a is None else (a if b is None else min(a, b)))
    return out


def _max(a: float | None, b: float | None) -> float | None:
    if b is None:
        return a
    return b if a is None else max(a, b)


def _min(a, b):
    if b is None:
        return a
    return b if a is None else min(a, b)


def split_bins(layout: Layout, inc: list[float]) -> tuple[float, float]:
    """Codewords of a histogram increase in the warning (40-80% of the correction limit) and
    critical (over 80%) bins."""
    warn = crit = 0.0
    for lo, n in zip(layout.bin_low, inc, strict=False):
        sev = bin_severity(bin_low=lo, limit=layout.limit)
        if sev == "warn":
            warn += n
        elif sev == "crit":
            crit += n
    return warn, crit


def rollup_port(
    samples: list[RawSample],
    *,
    width: int,
    since: float,
    line: PortLine | None,
    layouts: dict[int, Layout],
    observations: list[tuple[float, dict[str, str]]] = (),
    wrap_bits: int | None = 64,
) -> list[Bucket]:
    """Buckets starting at or after ``since`` (aligned down to ``width``) from these samples.

    ``samples`` may include a few before ``since`` (the lookback) so the first interval has
    its predecessor; ``observations`` are (time, identity) sorted by time.
    """
    since = since - (since % width)
    pts = sorted(samples, key=lambda s: s.t)
    buckets: dict[float, Bucket] = {}
    last: dict[str, tuple[float, int]] = {}
    last_hist: tuple[int, list[int]] | None = None
    prev_t: float | None = None
    for s in pts:
        if prev_t is not None and s.t == prev_t:
            continue  # a repeated timestamp is not data
        start = s.t - (s.t % width)
        b = None
        if start >= since:
            b = buckets.get(start)
            if b is None:
                b = buckets[start] = Bucket(start)
            b.samples += 1
            if prev_t is not None:
                b.covered_s += s.t - prev_t
        for name in ROLLUP_COUNTERS:
            v = s.counters.get(name)
            if v is None:
                continue
            before = last.get(name)
            last[name] = (s.t, v)
            if before is None or b is None:
                continue
            d, reset = step(before[1], v, wrap_bits=wrap_bits)
            b.counters[name] = b.counters.get(name, 0.0) + d
            b.resets += reset
            if name == "fec_corrected_bits":
                b.bits_seconds += s.t - before[0]
        if s.hist is not None and s.hist_layout is not None:
            before_h = last_hist
            last_hist = (s.hist_layout, s.hist)
            if b is not None and before_h is not None:
                layout = layouts.get(s.hist_layout)
                if before_h[0] == s.hist_layout:
                    inc, reset = hist_increase(before_h[1], s.hist)
                    b.resets += reset
                else:
                    inc = [float(x) for x in s.hist]
                if layout is not None:
                    b.hist_layout = s.hist_layout
                    b.hist_limit = layout.limit
                    warn, crit = split_bins(layout, inc)
                    for lo, hi, n in zip(layout.bin_low, layout.bin_high, inc, strict=False):
                        if n > 0 and lo > 0:
                            b.hist_max_bin_high = max(b.hist_max_bin_high or 0, hi)
                    b.hist_warn = (b.hist_warn or 0.0) + warn
                    b.hist_crit = (b.hist_crit or 0.0) + crit
        prev_t = s.t
        if b is None:
            continue
        if s.pre_fec_ber is not None:
            b.pre_fec_ber_sum += s.pre_fec_ber
            b.pre_fec_ber_n += 1
            b.pre_fec_ber_max = _max(b.pre_fec_ber_max, s.pre_fec_ber)
        b.post_fec_ber_max = _max(b.post_fec_ber_max, s.post_fec_ber)
        b.temperature_max_c = _max(b.temperature_max_c, s.temperature_c)
        b.speed_min = _min(b.speed_min, s.speed_gbps)
        b.width_min = _min(b.width_min, s.link_width)
        b.rx_min = _lane_min(b.rx_min, s.rx_power_dbm)
        b.tx_min = _lane_min(b.tx_min, s.tx_power_dbm)
    obs_t = [t for t, _ in observations]
    out = []
    for start in sorted(buckets):
        b = buckets[start]
        bits = b.counters.get("fec_corrected_bits")
        if bits is not None and line is not None and line.lane_gbps and b.bits_seconds > 0:
            b.line_bits = b.bits_seconds * line.lanes * line.lane_gbps * 1e9
            b.pre_fec_ber = pre_fec_ber(
                corrected_bits=bits, seconds=b.bits_seconds, lanes=line.lanes, lane_gbps=line.lane_gbps
            )
        elif b.pre_fec_ber_n:
            b.pre_fec_ber = b.pre_fec_ber_sum / b.pre_fec_ber_n
        i = bisect_right(obs_t, start + width - 1e-6)
        if i:
            b.identity = observations[i - 1][1]
        out.append(b)
    return out
