"""The FEC rules at their edges (pure engine, no database): which measure a port is judged on,
the exact thresholds and hold bars, the clear window's first bucket, the evidence an alert
carries, what a healthy window teaches as a baseline, and which ports need their raw samples.

Topology (as in ``test_rules``): links of two ports, rows 2i (A end) and 2i+1 (B end); 30
one-minute buckets ending at ``end``::

    [row 0 / port 100 / A]--link 10--[row 1 / port 101 / B]    [row 2]--link 11--[row 3] ...
"""

import numpy as np
import pytest

from inventory.core.telemetry.rules.config import Thresholds
from inventory.core.telemetry.rules.engine import evaluate, sample_candidates
from inventory.core.telemetry.rules.frames import SampleSteps
from tests.inventory.core.telemetry.test_rules import LINE_BITS_PER_S, fleet

THR = 5e-8  # the default threshold over the fleet's baseline of 5e-9: max(10 x 5e-9, 1e-8)
CW_MODE = Thresholds(fec_mode="cw_rate", fec_cw_rate_factor=None)  # opens above 10,000 cw/s


def found(ev) -> dict[str, str]:
    return {x.key: x.severity for x in ev.findings}


def ber(w, row: int, cols, value: float) -> None:
    """Row ``row`` measures ``value`` pre-FEC BER (from bits) in buckets ``cols``."""
    w.corrected_bits[row, cols] = value * w.line_bits[row, cols]


def only_buckets(w, buckets: int):
    """The window cut to its last ``buckets`` buckets (same end)."""
    cut = w.seconds.shape[1] - buckets
    for name, value in vars(w).items():
        if isinstance(value, np.ndarray) and value.ndim == 2 and name not in ("rx_power_dbm", "tx_power_dbm"):
            setattr(w, name, value[:, cut:].copy())
    w.t_start += cut * w.bucket_s
    return w


def test_a_port_reporting_only_the_devices_ber_gauge_is_judged_on_it():
    w, f, lt = fleet(2)
    w.corrected_bits[0, :] = np.nan  # no bit counts: the device's own pre-FEC BER gauge
    w.line_bits[0, :] = np.nan
    w.pre_fec_ber[0, :] = 5e-9
    w.pre_fec_ber[0, -12:] = 1.5e-6
    ev = evaluate(w, f, lt)
    assert found(ev) == {"fec_degradation:link:10": "notify"}
    end = ev.findings[0].ends["a"]
    assert (end["metric"], end["value"], end["threshold"]) == (
        "pre_fec_ber",
        pytest.approx(1.5e-6, rel=1e-12, abs=0),
        pytest.approx(THR, rel=1e-12, abs=0),
    )


def test_a_port_counting_bits_but_no_codewords_is_judged_on_its_ber():
    w, f, lt = fleet(2)
    w.corrected_cw[0, :] = np.nan
    ber(w, 0, slice(-12, None), 1.5e-6)
    assert found(evaluate(w, f, lt)) == {"fec_degradation:link:10": "notify"}


def test_intervals_whose_line_rate_is_unknown_do_not_cover_the_hold_period():
    """Corrected bits without the line's bit count (a port whose speed is not recorded) give no
    BER: three such minutes of the last ten leave 70% of the hold period covered."""
    w, f, lt = fleet(2)
    ber(w, 0, slice(-12, None), 1.5e-6)
    w.corrected_cw[0, :] = np.nan
    w.line_bits[0, [-9, -6, -3]] = np.nan
    assert evaluate(w, f, lt).findings == []
    w.line_bits[0, [-9, -6, -3]] = LINE_BITS_PER_S * 60
    assert found(evaluate(w, f, lt)) == {"fec_degradation:link:10": "notify"}


def test_ber_missing_from_the_hold_period_is_judged_on_the_codeword_rate():
    """Bits stopped 10 minutes ago (the hold period) while codewords are still counted: the
    codeword rate is judged, not the older BER."""
    w, f, lt = fleet(2)
    w.corrected_bits[0, -10:] = np.nan
    w.line_bits[0, -10:] = np.nan
    w.corrected_cw[0, -12:] *= 300
    (x,) = evaluate(w, f, lt).findings
    assert (x.key, x.ends["a"]["metric"], x.ends["a"]["fec_limit"]) == (
        "fec_degradation:link:10",
        "corrected_cw_per_s",
        None,
    )


def test_the_hold_period_opens_with_eighty_percent_of_it_reported_and_not_less():
    w, f, lt = fleet(2)
    ber(w, 0, slice(-12, None), 1.5e-6)
    w.seconds[0, [-9, -5]] = 0  # two lost polls of ten: 480 s of 600, exactly 80%
    w.corrected_bits[0, [-9, -5]] = np.nan
    assert found(evaluate(w, f, lt)) == {"fec_degradation:link:10": "notify"}
    w.seconds[0, -3] = 59.5  # half a second less
    w.line_bits[0, -3] *= 59.5 / 60
    ber(w, 0, [-3], 1.5e-6)
    assert found(evaluate(w, f, lt)) == {}


def test_a_rate_exactly_at_the_threshold_does_not_open_and_exactly_half_of_it_does_not_hold():
    w, f, lt = fleet(2)
    w.corrected_cw[0, :] = 10_000.0 * 60  # the threshold, every minute of the window
    w.corrected_cw[2, :] = 5_000.0 * 60  # the hold bar (0.5 x threshold)
    w.corrected_cw[3, :] = 5_000.5 * 60
    ev = evaluate(w, f, lt, [CW_MODE])
    assert ev.findings == []
    assert {k for k in ev.holding if k.startswith("fec")} == {
        "fec_degradation:link:10",
        "fec_degradation:link:11",
    }
    w.corrected_cw[3, :] = 5_000.0 * 60
    assert {k for k in evaluate(w, f, lt, [CW_MODE]).holding if k.startswith("fec")} == {
        "fec_degradation:link:10"
    }


def test_a_codeword_rate_past_its_baseline_factor_carries_its_whole_evidence():
    """Codeword mode with the default factor: threshold 10 x a baseline of 2,000/s (above the
    10,000/s floor); a port with no codeword baseline has no threshold at all."""
    w, f, lt = fleet(2)
    profile = Thresholds(fec_mode="cw_rate")
    for row in (0, 2):
        w.corrected_cw[row, :] = 1_000.0 * 60
        w.corrected_cw[row, -12:] = 30_000.0 * 60
    f.base_cw_rate[0] = 2_000.0
    f.base_cw_rate[2] = np.nan
    ev = evaluate(w, f, lt, [profile])
    assert found(ev) == {"fec_degradation:link:10": "notify"}
    assert ev.findings[0].ends == {
        "a": {
            "port_id": 100,
            "metric": "corrected_cw_per_s",
            "value": 30_000.0,
            "baseline": 2_000.0,
            "threshold": 20_000.0,
            "fec_limit": None,
            # 30 buckets in 12 points: six of 3 buckets, then six of 2
            "series": [1_000.0] * 6 + [30_000.0] * 6,
            "bucket_s": 60.0,
        }
    }


def test_without_a_baseline_factor_ber_is_judged_against_the_fec_limit_alone():
    w, f, lt = fleet(2)
    profile = Thresholds(fec_ber_factor=None)  # 10% of KP4's 2.4e-4, whatever the baseline
    ber(w, 0, slice(-12, None), 1.5e-6)  # 300x the baseline, far from the limit
    ber(w, 2, slice(-12, None), 3e-5)
    ev = evaluate(w, f, lt, [profile])
    assert found(ev) == {"fec_degradation:link:11": "notify"}
    assert ev.findings[0].ends["a"]["threshold"] == pytest.approx(2.4e-5, rel=1e-12, abs=0)


def test_a_degradation_whose_last_minute_recovered_does_not_open_but_holds():
    w, f, lt = fleet(2)
    ber(w, 0, slice(-12, -1), 1.5e-6)
    ev = evaluate(w, f, lt)
    assert ev.findings == []
    assert "fec_degradation:link:10" in ev.holding


def test_the_clear_window_starts_with_the_bucket_ending_fifteen_minutes_before_the_end():
    """A bucket ending exactly 15 minutes (``clear_s``) ago is out of the clear window and of a
    tail's window; the next one is in. Degradation at 0.8 x threshold on link 10, a tail of 10
    codewords on link 11 (and three bursts of 12 on link 12: the oldest 15 minutes ago)."""
    w, f, lt = fleet(3)
    ber(w, 0, [14], 0.8 * THR)  # column 14 of 30 ends at end - 900 s
    w.hist_crit_cw[2, 14] = 10
    w.hist_crit_cw[4, [14, 20, 26]] = 12
    ev = evaluate(w, f, lt)
    assert ev.findings == []
    assert {k for k in ev.holding if k.startswith("fec")} == {"fec_tail:link:12"}  # its later bursts
    ber(w, 0, [15], 0.8 * THR)
    w.hist_crit_cw[2, 15] = 10
    w.hist_crit_cw[4, 15] = 12
    ev = evaluate(w, f, lt)
    assert found(ev) == {"fec_tail:link:12": "critical"}
    assert {k for k in ev.holding if k.startswith("fec")} == {
        "fec_degradation:link:10",
        "fec_tail:link:11",
        "fec_tail:link:12",
    }


def test_a_bucket_ending_exactly_at_a_windows_start_stays_out_when_a_longer_window_reads_it():
    """Profiles whose hold or tail window is longer than the clear window judge the sliding
    window ending exactly 15 minutes ago; it still neither holds (clear window) nor counts as a
    burst of a 15-minute tail window (the clear window 20 minutes here)."""
    w, f, lt = fleet(3)
    ber(w, 0, [14], 0.8 * THR)
    w.hist_crit_cw[2, 14] = 10
    ev = evaluate(w, f, lt, [Thresholds(fec_hold_s=1200, tail_window_s=1200)])
    assert ev.findings == []
    assert not {k for k in ev.holding if k.startswith("fec")}
    w.hist_crit_cw[4, [14, 20, 26]] = 12
    assert evaluate(w, f, lt, [Thresholds(clear_s=1200)]).findings == []


def test_a_port_whose_raw_samples_were_not_read_is_held_on_its_buckets():
    """No raw samples (the selector reads them only for ports that may open): an open alert
    holds on a bucket of the last 15 minutes past the hold bar, 12 minutes ago here in a
    20-minute window; a tail's bar is 5 codewords (warning and critical bins together)."""
    w, f, lt = fleet(4)
    w = only_buckets(w, 20)
    w.steps = SampleSteps.empty()
    ber(w, 0, [8], 0.8 * THR)  # held
    ber(w, 2, [8], 0.4 * THR)  # under the hold bar of 0.5 x threshold
    w.hist_warn_cw[4, 8] = 3  # 3 + 2: exactly the tail's hold bar
    w.hist_crit_cw[4, 8] = 2
    w.hist_crit_cw[6, 8] = 4.5
    ev = evaluate(w, f, lt)
    assert ev.findings == []
    assert {k for k in ev.holding if k.startswith("fec")} == {"fec_degradation:link:10", "fec_tail:link:12"}


def raw_steps(w, rows, *, bits_of, hist_of):
    """10-s samples of ``rows`` over the whole window, ``bits_of(row, t)`` the pre-FEC BER and
    ``hist_of(row, t)`` the (warning, critical) codewords of the interval ending at ``t``; the
    rows' buckets rebuilt from them (each sample in the bucket its end falls in)."""
    cols = {k: [] for k in ("row", "t", "bits", "line", "warn", "crit")}
    end = w.end
    for row in rows:
        w.corrected_bits[row] = 0.0
        w.line_bits[row] = 0.0
        w.hist_warn_cw[row] = 0.0
        w.hist_crit_cw[row] = 0.0
        for t in np.arange(w.t_start + 10.0, end + 1e-9, 10.0):
            line = LINE_BITS_PER_S * 10
            bits = bits_of(row, t) * line
            warn, crit = hist_of(row, t)
            c = min(int((t - w.t_start) // 60), w.buckets - 1)
            w.corrected_bits[row, c] += bits
            w.line_bits[row, c] += line
            w.hist_warn_cw[row, c] += warn
            w.hist_crit_cw[row, c] += crit
            for k, v in zip(cols, (row, t, bits, line, warn, crit), strict=True):
                cols[k].append(v)
    e = len(cols["row"])
    return SampleSteps(
        row=np.asarray(cols["row"], dtype=np.int64),
        t=np.asarray(cols["t"]),
        dt=np.full(e, 10.0),
        uncorrectable_cw=np.zeros(e),
        pfc_pause_rx=np.zeros(e),
        pfc_pause_tx=np.zeros(e),
        corrected_bits=np.asarray(cols["bits"]),
        line_bits=np.asarray(cols["line"]),
        hist_warn_cw=np.asarray(cols["warn"]),
        hist_crit_cw=np.asarray(cols["crit"]),
    )


def test_a_burst_straddling_two_buckets_holds_on_its_sliding_window():
    """A minute at 0.8 x threshold (link 10) and exactly 5 tail codewords in a minute (link 11,
    the tail's hold bar), each split half and half across two buckets: no bucket reaches the
    hold bar (0.5 x threshold, 5 codewords), the sliding minute of samples does."""
    w, f, lt = fleet(2)
    start = w.end - 340  # samples ending at end-330 ... end-280, three in each bucket

    def bits_of(row, t):
        return 0.8 * THR if row == 0 and start < t <= start + 60 else 5e-9

    def hist_of(row, t):
        return (1.25, 0.0) if row == 2 and start + 10 < t <= start + 50 else (0.0, 0.0)

    w.steps = raw_steps(w, [0, 2], bits_of=bits_of, hist_of=hist_of)
    assert w.corrected_bits[0, 24] / w.line_bits[0, 24] < 0.5 * THR
    assert w.corrected_bits[0, 25] / w.line_bits[0, 25] < 0.5 * THR
    assert (w.hist_warn_cw[2, 24], w.hist_warn_cw[2, 25]) == (2.5, 2.5)
    ev = evaluate(w, f, lt)
    assert ev.findings == []
    assert {k for k in ev.holding if k.startswith("fec")} == {"fec_degradation:link:10", "fec_tail:link:11"}


def test_only_windows_wholly_inside_the_hold_period_are_judged():
    """The evaluation runs half a second after the last bucket (samples every 10 s on the
    minute grid), so the hold period starts at end - 600 s and its windows end after end - 540 s.
    The window ending at end - 540.5 s starts half a second before the hold period and reads
    0.85 x threshold: it is not judged. Every window after it reads more than the threshold, so
    the degradation opens."""
    w, f, lt = fleet(1)
    w.t_end = w.t_start + w.buckets * 60 + 0.5

    def bits_of(row, t):
        if row != 0 or t <= w.end - 600.5:
            return 5e-9
        return THR if t <= w.end - 540.5 else 2 * THR

    w.steps = raw_steps(w, [0], bits_of=bits_of, hist_of=lambda row, t: (0.0, 0.0))
    assert found(evaluate(w, f, lt)) == {"fec_degradation:link:10": "notify"}


def test_a_tail_whose_histogram_samples_interleave_with_counter_samples_is_one_burst():
    """The histogram is stored apart from the counters and its steps are read after them (as
    the selector joins the two tables): its samples (every 10 s, at :05) fall between the
    counters' (at :00). Four samples of 12 critical codewords are one burst of two spans (with
    the minute after it that still holds 10), not one episode per sample."""
    w, f, lt = fleet(1)
    w.hist_crit_cw[0, [-3, -2]] = [36.0, 12.0]
    t0 = w.end - 150
    t = np.arange(w.end - 300, w.end + 1e-9, 10.0)
    zeros = np.zeros(t.size)
    counters = SampleSteps(np.zeros(t.size, dtype=np.int64), t, np.full(t.size, 10.0), zeros, zeros, zeros)
    th = t[:-1] + 5.0
    nan = np.full(th.size, np.nan)
    hist = SampleSteps(
        np.zeros(th.size, dtype=np.int64),
        th,
        np.full(th.size, 10.0),
        nan,
        nan,
        nan,
        hist_warn_cw=np.zeros(th.size),
        hist_crit_cw=np.where((th >= t0) & (th < t0 + 40), 12.0, 0.0),
    )
    w.steps = counters.concat(hist)
    ev = evaluate(w, f, lt)
    assert found(ev) == {}
    assert "fec_tail:link:10" in ev.holding


def test_exactly_ten_codewords_in_three_bursts_open_a_tail_of_their_band():
    w, f, lt = fleet(3)
    w.hist_warn_cw[0, [20, 24, 28]] = 10
    w.hist_crit_cw[2, [20, 24, 28]] = 10
    w.hist_warn_cw[4, [20, 24, 28]] = 6  # the bands together: 12 a burst, no band alone 10
    w.hist_crit_cw[4, [20, 24, 28]] = 6
    ev = evaluate(w, f, lt)
    assert found(ev) == {
        "fec_tail:link:10": "warning",
        "fec_tail:link:11": "critical",
        "fec_tail:link:12": "warning",
    }
    ends = {x.key: x.ends["a"] for x in ev.findings}
    assert ends["fec_tail:link:12"] == {
        "port_id": 104,
        "codewords_40_80pct": 18.0,
        "codewords_over_80pct": 18.0,
        "series_over_80pct": [0.0] * 6 + [0.0, 3.0, 0.0, 3.0, 0.0, 3.0],
    }


def test_a_warning_tail_opens_when_the_critical_bins_are_not_reported():
    w, f, lt = fleet(1)
    w.hist_crit_cw[0, :] = np.nan
    w.hist_warn_cw[0, [20, 24, 28]] = 12
    (x,) = evaluate(w, f, lt).findings
    assert (x.key, x.severity, x.ends["a"]["codewords_over_80pct"]) == ("fec_tail:link:10", "warning", 0.0)


def test_uncorrectable_codewords_carry_their_count_samples_and_series():
    w, f, lt = fleet(1)
    w.uncorrectable_cw[0, [-8, -6, -4]] = [2.0, 5.0, 1.0]
    (x,) = evaluate(w, f, lt).findings
    assert (x.key, x.severity) == ("fec_uncorrectable:link:10", "notify")
    assert x.ends == {
        "a": {
            "port_id": 100,
            "uncorrectable_cw": 8.0,
            "samples_with_uncorrectable": 3,
            "series": [0.0] * 6 + [0.0, 0.0, 1.0, 2.5, 0.5, 0.0],
        }
    }


def test_a_healthy_window_teaches_each_port_its_own_ber_and_codeword_rate():
    """What a healthy window is learnt as (``baseline_ber``, ``baseline_cw_rate``): BER from the
    bits over the line bits of the buckets with data, else the mean of the device's gauge; the
    codeword rate over the seconds of the buckets that count codewords; nothing known: none."""
    w, f, lt = fleet(3)
    w.seconds[0, :5] = 0  # five lost polls: not part of the baseline
    for name in ("corrected_bits", "line_bits", "corrected_cw"):
        getattr(w, name)[0, :5] = np.nan
    ber(w, 1, slice(None), 2e-9)
    w.corrected_cw[1, :] = 500.0 * 60
    w.corrected_cw[1, :10] = np.nan  # counted in 20 of its 30 reported minutes
    for row in (2, 3, 4):
        w.corrected_bits[row, :] = np.nan
        w.line_bits[row, :] = np.nan
    w.seconds[2, 0] = 0  # a lost poll on a port that counts no bits
    w.pre_fec_ber[2, [3, 9, 17]] = 1e-8
    w.pre_fec_ber[2, [22, 28]] = 2e-8
    w.pre_fec_ber[3, 12] = 1.2e-8  # one reading
    w.corrected_cw[4, :] = np.nan  # reports, but no FEC counter at all
    ev = evaluate(w, f, lt)
    assert ev.findings == []
    assert np.isnan(ev.baseline_ber[4])
    assert np.isnan(ev.baseline_cw_rate[4])
    assert ev.baseline_ber[:4].tolist() == pytest.approx([5e-9, 2e-9, 1.4e-8, 1.2e-8], rel=1e-12, abs=0)
    assert ev.baseline_cw_rate[:2].tolist() == pytest.approx(
        [5e-9 * LINE_BITS_PER_S / 1.2, 500.0], rel=1e-12, abs=0
    )


def test_only_ports_whose_buckets_could_hide_a_window_past_a_bar_need_raw_samples():
    """A one-minute window over a bar leaves at least half its total in one of the two buckets
    it overlaps: a bucket above 0.4 x threshold (half of a window over it with 80% of its time
    covered) or with 5 tail codewords (half of 10) may hide one; less cannot."""
    w, f, lt = fleet(4)
    ber(w, 0, [20], 0.5 * THR)
    ber(w, 2, [20], 0.3 * THR)
    w.hist_warn_cw[4, 20] = 5
    w.hist_warn_cw[6, 20] = 4
    assert sample_candidates(w, f, lt, [Thresholds()]).tolist() == [0, 4]
    w, f, lt = fleet(2)
    w.corrected_cw[0, 20] = 4_000.0 * 60  # exactly 0.4 x 10,000/s: cannot hide a window over it
    w.corrected_cw[2, 20] = 4_000.5 * 60
    assert sample_candidates(w, f, lt, [CW_MODE]).tolist() == [2]


def test_a_healthy_window_covered_under_a_second_teaches_its_true_rate():
    """A port seen for half a second of the window (one short interval, every other bucket lost)
    with 10 corrected codewords learns 20/s, not 10/s; a port whose counters carried a single
    line bit with no error learns a BER of 0, not "unknown". Edges no healthy link reaches, but the
    arithmetic must hold at them."""
    w, f, lt = fleet(2)
    for name in ("corrected_bits", "line_bits", "corrected_cw"):
        getattr(w, name)[:, :] = np.nan
    w.seconds[:, :] = 0
    w.seconds[0, -1] = 0.5
    w.corrected_cw[0, -1] = 10.0
    w.seconds[1, -1] = 60
    w.line_bits[1, -1] = 1.0
    w.corrected_bits[1, -1] = 0.0
    ev = evaluate(w, f, lt)
    assert ev.findings == []
    assert ev.baseline_cw_rate[0] == pytest.approx(20.0, rel=1e-12)
    assert ev.baseline_ber[1] == 0.0
