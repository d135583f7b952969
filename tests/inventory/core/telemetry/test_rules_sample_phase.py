"""FEC degradation and tail judged on sliding windows of samples: the same condition opens (and a
healthy or too-short one does not) at every sample phase, i.e. wherever the evaluation and the
10-s samples fall on the one-minute bucket grid.

Each case is built from raw 10-s samples the way the selector builds it: one-minute buckets
ending on the last full minute before the evaluation (each sample's increase in the bucket of
the later sample), plus the sample steps up to the evaluation. Topology as in ``test_rules``::

    [row 0 / port 100]--link 10--[row 1 / port 101]    [row 2]--link 11--[row 3]
"""

import numpy as np
import pytest

from inventory.core.telemetry.rules.engine import evaluate
from inventory.core.telemetry.rules.frames import SampleSteps
from tests.inventory.core.telemetry.test_rules import LINE_BITS_PER_S, fleet

BASE_BER = 5e-9  # every port's baseline; the degradation threshold is 10x: 5e-8
THRESHOLD = 5e-8
T_GRID = 1_800_000_000.0  # a minute boundary (epoch seconds)
PHASES = range(12)


def window_from_samples(offset: float, sample_phase: float, ber_of, tail_of):
    """The evaluation runs ``offset`` s past a minute; every row samples every 10 s at
    ``sample_phase``. ``ber_of(row, t_before_end)`` is the pre-FEC BER of the interval ending
    then; ``tail_of(row, t_before_end)`` the (warning, critical) codewords it adds."""
    w, f, lt = fleet(2)
    end = T_GRID + offset
    grid_end = np.floor(end / 60) * 60
    w.t_start = grid_end - w.buckets * 60.0
    w.t_end = end
    for name in ("seconds", "corrected_bits", "corrected_cw", "line_bits", "hist_warn_cw", "hist_crit_cw"):
        getattr(w, name)[:] = 0.0
    t = np.arange(end - 1800 + sample_phase, end + 1e-9, 10.0)
    cols = {k: [] for k in ("row", "t", "dt", "bits", "line", "warn", "crit")}
    for row in range(w.n):
        for t0, t1 in zip(t[:-1], t[1:], strict=True):
            dt = t1 - t0
            line = LINE_BITS_PER_S * dt
            bits = ber_of(row, end - t1) * line
            warn, crit = tail_of(row, end - t1)
            for k, v in zip(cols, (row, t1, dt, bits, line, warn, crit), strict=True):
                cols[k].append(v)
            c = int(np.floor((t1 - w.t_start) / 60))
            if 0 <= c < w.buckets and t1 <= grid_end:
                w.seconds[row, c] += dt
                w.corrected_bits[row, c] += bits
                w.corrected_cw[row, c] += bits / 1.2
                w.line_bits[row, c] += line
                w.hist_warn_cw[row, c] += warn
                w.hist_crit_cw[row, c] += crit
    e = len(cols["row"])
    w.steps = SampleSteps(
        row=np.asarray(cols["row"], dtype=np.int64),
        t=np.asarray(cols["t"]),
        dt=np.asarray(cols["dt"]),
        uncorrectable_cw=np.zeros(e),
        pfc_pause_rx=np.zeros(e),
        pfc_pause_tx=np.zeros(e),
        corrected_cw=np.asarray(cols["bits"]) / 1.2,
        corrected_bits=np.asarray(cols["bits"]),
        line_bits=np.asarray(cols["line"]),
        hist_warn_cw=np.asarray(cols["warn"]),
        hist_crit_cw=np.asarray(cols["crit"]),
    )
    return w, f, lt


def phase(k: int) -> tuple[float, float]:
    """The k-th of 12 phases: the evaluation 5k s past the minute, samples at 10k/12 s."""
    return 5.0 * k, (10.0 * k / 12) % 10.0


def no_tail(_row, _before):
    return 0.0, 0.0


def degraded_since(seconds: float, level: float):
    """Row 0 (link 10's A end) at ``level`` x the threshold for the last ``seconds``; the
    others at their baseline, wandering +-10% sample to sample."""
    rng = np.random.default_rng(7)
    noise = rng.uniform(0.9, 1.1, 10_000)

    def ber(row, before):
        if row == 0 and before < seconds:
            return THRESHOLD * level
        return BASE_BER * noise[int(before) % noise.size]

    return ber


def findings(ev):
    return sorted(x.key for x in ev.findings)


@pytest.mark.parametrize("k", PHASES)
def test_ten_minutes_and_twenty_seconds_of_degradation_open_at_every_phase(k):
    """On buckets this one depended on the phase: with the evaluation 35 s or more past the
    minute, the first of the ten buckets is a third healthy and averages under the threshold."""
    w, f, lt = window_from_samples(*phase(k), degraded_since(620, 1.2), no_tail)
    ev = evaluate(w, f, lt)
    assert findings(ev) == ["fec_degradation:link:10"]
    (x,) = ev.findings
    assert x.ends["a"]["value"] == pytest.approx(THRESHOLD * 1.2)
    assert x.ends["a"]["threshold"] == pytest.approx(THRESHOLD)


@pytest.mark.parametrize("k", PHASES)
def test_eight_minutes_of_degradation_are_not_yet_an_alert_at_any_phase(k):
    ev = evaluate(*window_from_samples(*phase(k), degraded_since(480, 3.0), no_tail))
    assert findings(ev) == []
    assert "fec_degradation:link:10" in ev.holding  # an alert already open would stay open


@pytest.mark.parametrize("k", PHASES)
def test_a_rise_below_the_threshold_is_not_degradation_at_any_phase(k):
    ev = evaluate(*window_from_samples(*phase(k), degraded_since(1800, 0.8), no_tail))
    assert findings(ev) == []


def bursts_at(row: int, starts: list[float], *, crit: bool = True, per_sample: float = 4.0):
    """``row`` gets three samples of ``per_sample`` high-bin codewords (12 in 30 s) from each
    of ``starts`` (seconds before the evaluation); every row has a healthy tail: a single
    warning-bin codeword every 50 s."""

    def tail(r, before):
        healthy = (1.0 if int(before) % 50 < 10 else 0.0), 0.0
        if r != row:
            return healthy
        for s in starts:
            if s - 30 < before <= s:
                return (0.0, per_sample) if crit else (per_sample, 0.0)
        return healthy

    return tail


def healthy(_row, before):
    return BASE_BER


@pytest.mark.parametrize("k", PHASES)
def test_three_tail_bursts_in_fifteen_minutes_open_a_critical_tail_at_every_phase(k):
    """12 codewords over 30 s each: split by a minute boundary a burst leaves fewer than 10 in
    each bucket, so on buckets the count depended on where the samples fell."""
    w, f, lt = window_from_samples(*phase(k), healthy, bursts_at(2, [700.0, 455.0, 215.0]))
    ev = evaluate(w, f, lt)
    assert findings(ev) == ["fec_tail:link:11"]
    (x,) = ev.findings
    assert x.severity == "critical"
    assert x.ends["a"]["codewords_over_80pct"] == pytest.approx(36.0)


@pytest.mark.parametrize("k", PHASES)
def test_warning_bin_bursts_open_a_warning_tail_at_every_phase(k):
    ev = evaluate(*window_from_samples(*phase(k), healthy, bursts_at(2, [800.0, 500.0, 200.0], crit=False)))
    assert [(x.key, x.severity) for x in ev.findings] == [("fec_tail:link:11", "warning")]


@pytest.mark.parametrize("k", PHASES)
def test_two_bursts_or_a_healthy_tail_open_nothing_at_any_phase(k):
    ev = evaluate(*window_from_samples(*phase(k), healthy, bursts_at(2, [700.0, 215.0])))
    assert findings(ev) == []
    assert "fec_tail:link:11" in ev.holding  # the last burst is recent: an open alert holds
    quiet = evaluate(*window_from_samples(*phase(k), healthy, bursts_at(2, [])))
    assert findings(quiet) == [] and not any(key.startswith("fec_") for key in quiet.holding)


@pytest.mark.parametrize("k", [0, 7])
def test_a_tail_lasting_three_spans_counts_as_three(k):
    """Two high-bin codewords every 10 s (12 a minute) for three and a half minutes."""

    def tail(r, before):
        return (0.0, 2.0) if r == 0 and 100 < before <= 310 else (0.0, 0.0)

    ev = evaluate(*window_from_samples(*phase(k), healthy, tail))
    assert [(x.key, x.severity) for x in ev.findings] == [("fec_tail:link:10", "critical")]
