"""Counter maths with Prometheus ``rate()`` / ``increase()`` semantics, and pre-FEC BER.

Pure: plain numbers and dataclasses in, plain numbers out.

* Counters are cumulative since the device's last clear. A drop between two consecutive
  samples is a **reset**: the new value is counted from zero (``increase += new``), never a
  negative delta. A drop from the top quarter of a 32- or 64-bit range to the bottom quarter
  is a **wrap** when the counter's width is known (``wrap_bits``): ``2**bits - old + new``.
* A jump larger than any counter can make between two samples (more than ``MAX_INCREASE`` =
  2**63-1, which a 400G port's bit counter needs some 267 days at line rate to gain; e.g.
  0 -> 2**64-1, a collector that read the register wrong or a device that re-based it) is no
  increase: it counts as a reset that added nothing, and counting goes on from the new value.
  So every increase fits a signed 64-bit column, whatever the unsigned counters do.
* Samples are sorted by time first and repeated timestamps collapse to the first, so an
  out-of-order arrival never looks like a reset.
* ``extrapolated_increase``/``rate`` extrapolate to the window edges exactly as Prometheus'
  ``extrapolatedRate`` does (not beyond 1.1 x the average sample interval, and never below zero
  at the start of a counter).
* Pre-FEC BER = delta corrected bits / line bits, line bits = delta t x lanes x lane
  signalling rate (53.125 Gb/s per 50G PAM4 lane, 106.25 Gb/s per 100G lane). Interface byte
  counters count payload and give the wrong answer.
* InfiniBand's ``SymbolErrorCounter`` (PHY symbol errors, a 16-bit saturating counter) is not
  the FEC's corrected-symbol count: it is a separate series (``ib_symbol_errors``) and never
  enters the BER.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# Nominal lane rate (Gb/s) -> line signalling rate (Gb/s, with FEC and encoding overhead)
LANE_SIGNALLING_GBPS = {10: 10.3125, 25: 25.78125, 50: 53.125, 100: 106.25, 200: 212.5}


@dataclass(frozen=True, slots=True)
class Point:
    t: float  # seconds (epoch or any monotonic origin)
    v: int | float


@dataclass(frozen=True, slots=True)
class Increase:
    """What a counter gained over consecutive samples."""

    increase: float
    resets: int
    seconds: float  # first to last sample


def ordered(points: Iterable[Point]) -> list[Point]:
    """Sort by time; a repeated timestamp keeps its first value (duplicates are not data)."""
    out: list[Point] = []
    last_t = None
    for p in sorted(points, key=lambda p: p.t):
        if p.t == last_t:
            continue
        out.append(p)
        last_t = p.t
    return out


# The largest increase one interval may carry (the signed 64-bit maximum of the rollup columns).
MAX_INCREASE = (1 << 63) - 1


def step(old: int | float, new: int | float, *, wrap_bits: int | None = None) -> tuple[float, bool]:
    """The increase from one sample to the next, and whether a reset (or wrap) happened.
    An implausible jump (above ``MAX_INCREASE``) is a reset that added nothing."""
    if new >= old:
        d = new - old
        return (d, False) if d <= MAX_INCREASE else (0, True)
    if wrap_bits:
        top = 1 << wrap_bits
        if old < top and old >= top - (top >> 2) and new < (top >> 2):
            return top - old + new, True
    return (new if new <= MAX_INCREASE else 0), True


def increase(points: Sequence[Point], *, wrap_bits: int | None = None, presorted: bool = False) -> Increase:
    """Sum of consecutive increases (no extrapolation): the exact counts between samples."""
    pts = list(points) if presorted else ordered(points)
    if len(pts) < 2:
        return Increase(0.0, 0, 0.0)
    total = 0.0
    resets = 0
    prev = pts[0]
    for p in pts[1:]:
        d, reset = step(prev.v, p.v, wrap_bits=wrap_bits)
        total += d
        resets += reset
        prev = p
    return Increase(total, resets, pts[-1].t - pts[0].t)


def extrapolated_increase(
    points: Sequence[Point], *, start: float, end: float, wrap_bits: int | None = None
) -> float | None:
    """Prometheus ``increase(x[end-start])`` over samples within [start, end]. None with fewer
    than two samples (Prometheus returns no value)."""
    pts = [p for p in ordered(points) if start <= p.t <= end]
    if len(pts) < 2:
        return None
    inc = increase(pts, wrap_bits=wrap_bits, presorted=True)
    result = inc.increase
    sampled = pts[-1].t - pts[0].t
    if sampled <= 0:
        return None
    to_start = pts[0].t - start
    to_end = end - pts[-1].t
    avg = sampled / (len(pts) - 1)
    if result > 0 and pts[0].v >= 0:
        to_zero = sampled * (pts[0].v / result)
        if to_zero < to_start:
            to_start = to_zero
    threshold = avg * 1.1
    interval = sampled
    interval += to_start if to_start < threshold else avg / 2
    interval += to_end if to_end < threshold else avg / 2
    return result * (interval / sampled)


def rate(points: Sequence[Point], *, start: float, end: float, wrap_bits: int | None = None) -> float | None:
    """Prometheus ``rate()``: the extrapolated increase per second of the window. Never negative."""
    inc = extrapolated_increase(points, start=start, end=end, wrap_bits=wrap_bits)
    if inc is None or end <= start:
        return None
    return inc / (end - start)


def lane_signalling_gbps(
    *, speed_gbps: int | None, lanes: int | None, lane_rate_gbaud: float | None = None
) -> float | None:
    """Per-lane line rate: the link's recorded rate, else derived from the nominal lane speed."""
    if lane_rate_gbaud:
        return float(lane_rate_gbaud)
    if not speed_gbps or not lanes:
        return None
    nominal = speed_gbps // lanes
    return LANE_SIGNALLING_GBPS.get(nominal)


def line_bits(*, seconds: float, lanes: int, lane_gbps: float) -> float:
    return seconds * lanes * lane_gbps * 1e9


def pre_fec_ber(*, corrected_bits: float, seconds: float, lanes: int, lane_gbps: float) -> float | None:
    """Delta corrected bits / (delta t x lanes x lane signalling rate)."""
    bits = line_bits(seconds=seconds, lanes=lanes, lane_gbps=lane_gbps)
    if bits <= 0:
        return None
    return corrected_bits / bits


def hist_increase(
    old: Sequence[int], new: Sequence[int], *, wrap_bits: int | None = None
) -> tuple[list[float], bool]:
    """Per-bin increases of a cumulative codeword histogram; a drop in any bin is a reset of
    the whole histogram (the device cleared it), counted from zero."""
    if len(old) != len(new):
        return list(map(float, new)), True
    if any(n < o for o, n in zip(old, new, strict=True)):
        return list(map(float, new)), True
    return [float(n - o) for o, n in zip(old, new, strict=True)], False


def bin_severity(*, bin_low: int, limit: int) -> str | None:
    """'warn' for bins whose low edge is at 40-80% of the correction limit, 'crit' at or above
    80% (KP4, limit 15: warn 6-11, crit 12-15), None below."""
    if limit <= 0:
        return None
    if bin_low * 5 >= limit * 4:  # integer maths: 12/15 is exactly 80%
        return "crit"
    if bin_low * 5 >= limit * 2:
        return "warn"
    return None
