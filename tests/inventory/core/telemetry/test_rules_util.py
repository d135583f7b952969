"""The helpers every rule shares (pure, no database): the figures they print and store, the
histogram bands, how many buckets a window takes, and the edges of the sliding windows as the
alerts show them.

Topology of the engine tests here (as in ``test_rules``): links of two ports, rows 2i (A end)
and 2i+1 (B end), 30 one-minute buckets ending at ``end``::

    [row 0 / port 100 / A]--link 10--[row 1 / port 101 / B]    [row 2 / port 102]--link 11--[row 3 / port 103]
"""

import numpy as np
import pytest

from inventory.core.telemetry.rules.config import Thresholds
from inventory.core.telemetry.rules.engine import evaluate, sample_candidates
from inventory.core.telemetry.rules.frames import SampleSteps
from inventory.core.telemetry.rules.util import (
    bucket_count,
    fmt_sci,
    json_number,
    short_series,
    spill,
    tail_split,
)
from tests.inventory.core.telemetry.test_rules_hold_and_windows import quiet_fleet


def test_a_ber_prints_in_scientific_notation_and_unknown_as_n_a():
    assert fmt_sci(1.5e-6) == "1.50e-06"
    assert fmt_sci(None) == "n/a"
    assert fmt_sci(float("nan")) == "n/a"


def test_an_unknown_evidence_number_is_stored_as_null():
    assert json_number(np.float64(2.5)) == 2.5
    assert json_number(np.nan) is None


def test_a_short_series_keeps_a_single_bucket_and_shows_an_empty_stretch_as_none():
    assert short_series(np.array([5.0])) == [5.0]
    assert short_series(np.array([np.nan, np.nan, 3.0, 5.0]), points=2) == [None, 4.0]
    assert short_series(np.array([])) == []


def test_a_window_shorter_than_a_bucket_is_one_bucket_and_a_longer_one_rounds_up():
    assert bucket_count(30, 60, 30) == 1
    assert bucket_count(600, 60, 30) == 10
    assert bucket_count(610, 60, 30) == 11
    assert bucket_count(3600, 60, 30) == 30


@pytest.mark.parametrize(
    ("span_s", "bucket_s", "share"),
    [(60, 60, 1 / 2), (90, 60, 1 / 3), (600, 60, 1 / 11)],
)
def test_a_sliding_window_overlaps_at_most_one_bucket_more_than_it_spans(span_s, bucket_s, share):
    assert spill(span_s, bucket_s) == pytest.approx(share)


def test_without_fec_nothing_is_a_tail():
    bins = [(0, 0, 1e12), (1, 1, 40.0), (3, 3, 2.0)]
    assert tail_split(bins, 0) == (0.0, 0.0)


def test_a_code_correcting_one_symbol_counts_a_one_error_codeword_as_critical():
    assert tail_split([(0, 0, 1e12), (1, 1, 5.0)], 1) == (0.0, 5.0)


def test_a_bin_reported_without_a_count_skips_only_that_bin():
    bins = [(6, 6, 30.0), (9, 9, None), (13, 13, 2.0)]
    assert tail_split(bins, 15) == (30.0, 2.0)


def test_pause_rates_exactly_at_the_hold_floor_or_a_few_frames_need_no_raw_samples():
    """An open storm holds above 5 pause frames/s (half the 10/s sustained bar): ports at exactly
    5/s either way, or sending and receiving one frame a minute, have nothing to judge; 5.5/s
    has."""
    w, f, lt = quiet_fleet(3)
    w.pfc_pause_rx[0, -1] = 5 * 60
    w.pfc_pause_tx[1, -1] = 5 * 60
    w.pfc_pause_rx[2, -1] = 1
    w.pfc_pause_tx[3, -1] = 1
    w.pfc_pause_tx[5, -1] = 5.5 * 60
    assert sample_candidates(w, f, lt, [Thresholds()]).tolist() == [5]


def test_with_both_pfc_rates_switched_off_no_pausing_port_needs_raw_samples():
    w, f, lt = quiet_fleet()
    w.pfc_pause_tx[0, -5:] = 150 * 60
    no_rates = Thresholds(pfc_burst_rate=None, pfc_sustained_rate=None)
    assert sample_candidates(w, f, lt, [no_rates]).tolist() == []
    assert evaluate(w, f, lt, [no_rates]).findings == []


def test_an_uncorrectable_sample_exactly_ten_minutes_old_is_out_of_the_window():
    """Uncorrectables in the minutes ending 10, 4 and 2 minutes ago: only two samples in the
    10-minute window (a stall takes three); one more inside it opens one."""
    w, f, lt = quiet_fleet()
    w.uncorrectable_cw[0, [19, 25, 27]] = 3  # bucket 19 ends at end - 600 s
    assert evaluate(w, f, lt).findings == []
    w.uncorrectable_cw[0, 23] = 3
    assert [x.key for x in evaluate(w, f, lt).findings] == ["fec_uncorrectable:link:10"]


def test_a_burst_in_the_minute_that_ended_exactly_five_minutes_ago_is_out_of_the_window():
    w, f, lt = quiet_fleet()
    w.pfc_pause_tx[0, 24] = 150 * 60  # bucket 24 ends at end - 300 s
    burst_only = Thresholds(pfc_sustained_rate=None)
    assert evaluate(w, f, lt, [burst_only]).findings == []
    w.pfc_pause_tx[0, 25] = 150 * 60
    assert [x.key for x in evaluate(w, f, lt, [burst_only]).findings] == ["pfc_storm:port:100"]


@pytest.mark.parametrize(
    ("minutes_reported", "opens"),
    [(8, True), (7, False), (4, False)],
)
def test_a_sustained_rate_is_judged_only_with_80_percent_of_its_ten_minutes_reported(minutes_reported, opens):
    """Port 100 reports only its last ``minutes_reported`` minutes, sending 15 pause frames/s:
    8 of 10 minutes is enough to judge the sustained rate, 7 is not."""
    w, f, lt = quiet_fleet()
    w.seconds[0, :] = 0
    w.seconds[0, -minutes_reported:] = 60
    w.pfc_pause_tx[0, -minutes_reported:] = 15 * 60
    ev = evaluate(w, f, lt, [Thresholds(pfc_burst_rate=None)])
    assert [x.key for x in ev.findings] == (["pfc_storm:port:100"] if opens else [])


def test_a_port_reporting_no_pause_counters_does_not_blind_the_others():
    """Port 100 reports no PFC counters at all (a NIC without them) and one uncorrectable
    codeword (so its samples are read); port 102 sends 150 pause frames/s."""
    w, f, lt = quiet_fleet()
    w.pfc_pause_rx[0, :] = np.nan
    w.pfc_pause_tx[0, :] = np.nan
    w.uncorrectable_cw[0, -3] = 1
    w.pfc_pause_tx[2, -5:] = 150 * 60
    assert [x.key for x in evaluate(w, f, lt).findings] == ["pfc_storm:port:102"]


@pytest.mark.parametrize(
    ("minutes", "opens"),
    [(range(22, 30), True), (range(23, 30), False), ([19, *range(23, 30)], False)],
)
def test_fec_degradation_needs_80_percent_of_its_ten_minutes_reported(minutes, opens):
    """Port 100 reports only the given minutes, at 300x its baseline BER: its last 8 minutes
    are 80% of the 10-minute hold (opens), its last 7 are not, nor 7 plus the minute that ended
    exactly 10 minutes ago (bucket 19: outside the hold)."""
    w, f, lt = quiet_fleet()
    reported = np.zeros(w.buckets, bool)
    reported[list(minutes)] = True
    w.seconds[0, ~reported] = 0
    for counter in (w.line_bits, w.corrected_bits, w.corrected_cw):
        counter[0, ~reported] = np.nan
    w.corrected_bits[0, reported] *= 300
    ev = evaluate(w, f, lt)
    assert [x.key for x in ev.findings] == (["fec_degradation:link:10"] if opens else [])


def test_a_tail_over_exactly_three_minutes_is_three_episodes():
    """High-bin codewords in each of the last three minutes: the first and last one-minute windows
    past the bar end exactly two spans apart, which counts three episodes (the rule's three)."""
    w, f, lt = quiet_fleet()
    w.hist_warn_cw[0, -3:] = 12
    (x,) = evaluate(w, f, lt).findings
    assert (x.key, x.severity) == ("fec_tail:link:10", "warning")


def test_each_port_counts_its_own_tail_episodes():
    """Port 100's tail lasts six minutes (an alert), port 102 had one burst (no alert)."""
    w, f, lt = quiet_fleet()
    w.hist_warn_cw[0, -6:] = 12
    w.hist_warn_cw[2, -3] = 40
    ev = evaluate(w, f, lt)
    assert [(x.key, x.severity) for x in ev.findings] == [("fec_tail:link:10", "warning")]


def histogram_between_counters(w, bursts: dict[float, float]) -> SampleSteps:
    """Port 100's raw samples over the 20 minutes before the window's end: the FEC histogram
    every 10 s and, 5 s before each, a sample of the counters (another table: no histogram).
    ``bursts`` maps seconds before the end to warning-bin codewords in the histogram interval
    ending then (also added to the bucket holding it)."""
    end = w.end
    t_hist = end - 1200 + 10.0 * np.arange(1, 121)
    warn = np.zeros(120)
    for before, count in bursts.items():
        i = int(np.searchsorted(t_hist, end - before))
        warn[i] += count
        w.hist_warn_cw[0, int((t_hist[i] - w.t_start) // w.bucket_s)] += count
    t = np.empty(240)
    t[0::2], t[1::2] = t_hist - 5.0, t_hist
    hist = np.full(240, np.nan)
    hist[1::2] = warn
    counters = np.full(240, np.nan)
    counters[0::2] = 0.0
    return SampleSteps(
        row=np.zeros(240, dtype=np.int64),
        t=t,
        dt=np.full(240, 10.0),
        uncorrectable_cw=counters,
        pfc_pause_rx=counters.copy(),
        pfc_pause_tx=counters.copy(),
        hist_warn_cw=hist,
        hist_crit_cw=np.where(np.isfinite(hist), 0.0, np.nan),
    )


def test_a_burst_whose_histogram_samples_sit_between_counter_samples_is_one_episode():
    """12 warning-bin codewords in one 10-s histogram interval: every one-minute window holding it
    is past the 10-codeword bar (six histogram samples in a row, with the counter samples between
    them): one episode, no alert; an open tail holds on it."""
    w, f, lt = quiet_fleet()
    w.steps = histogram_between_counters(w, {290.0: 12})
    ev = evaluate(w, f, lt)
    assert ev.findings == []
    assert ev.holding == {"fec_tail:link:10"}


def test_samples_without_a_histogram_add_nothing_to_a_tail_window():
    """Three separate bursts of 9 warning-bin codewords (under the 10 of the bar) with counter
    samples between the histogram's: no window reaches the bar, so no episode and no alert."""
    w, f, lt = quiet_fleet()
    w.steps = histogram_between_counters(w, {290.0: 9, 490.0: 9, 690.0: 9})
    ev = evaluate(w, f, lt)
    assert ev.findings == []
    assert ev.holding == {"fec_tail:link:10"}  # 9 is past half the bar


def test_pause_frames_in_a_bucket_covered_by_a_single_second_need_raw_samples():
    """Port 100 came up one second before the window ended and sent 150 pause frames in it
    (150/s, over the 5/s an open storm holds at): its raw samples are read."""
    w, f, lt = quiet_fleet()
    w.seconds[0, :] = 0
    w.seconds[0, -1] = 1.0
    w.pfc_pause_tx[0, :] = np.nan
    w.pfc_pause_tx[0, -1] = 150
    assert sample_candidates(w, f, lt, [Thresholds()]).tolist() == [0]
