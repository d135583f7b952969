"""What ``evaluate`` hands back besides the findings (pure engine, no database): which ports
reported, the FEC and receive-power baselines a window teaches (only from healthy rows of tested
links), thresholds profiles that cover a single port or none, and the rows whose raw samples the
selector reads (``sample_candidates``).

Topology (as in ``test_rules``): links of two ports, rows 2i (A end) and 2i+1 (B end)::

    [row 0 / port 100 / A]--link 10--[row 1 / port 101 / B]    [row 2 / port 102]--link 11--[row 3 / port 103] ...
"""

import numpy as np

from inventory.core.telemetry.rules.config import PRESETS, Thresholds
from inventory.core.telemetry.rules.engine import evaluate, sample_candidates
from inventory.core.telemetry.rules.frames import PortWindow
from tests.inventory.core.telemetry.test_rules import LINE_BITS_PER_S, fleet

BER = 5e-9
CW_RATE = BER * LINE_BITS_PER_S / 1.2  # the fleet's corrected codewords/s


def learnt(values: np.ndarray) -> list[float | None]:
    """A baseline per row as the service stores it: a number, or None where nothing is learnt."""
    return [float(v) if np.isfinite(v) else None for v in values]


def test_only_healthy_reporting_rows_teach_a_fec_baseline():
    """Each unhealthy row is unhealthy for one reason only: FEC degradation (row 0), a histogram
    tail (row 2), a stream of uncorrectable codewords (row 4), a link-down (row 6); row 7 reports
    nothing. Rows 1, 3 and 5 are healthy and teach the window's BER and codeword rate."""
    w, f, lt = fleet(4)
    w.corrected_bits[0, -12:] *= 300
    w.hist_crit_cw[2, -4:] = 20
    w.uncorrectable_cw[4, -6::2] = 3
    w.link_down[6, -2] = 1
    w.seconds[7, :] = 0
    ev = evaluate(w, f, lt)
    assert [x.key for x in ev.findings] == [
        "fec_degradation:link:10",
        "fec_tail:link:11",
        "fec_uncorrectable:link:12",
        "link_flap:link:13",
    ]
    assert ev.reporting_port_ids.tolist() == [100, 101, 102, 103, 104, 105, 106]
    assert learnt(ev.baseline_ber) == [None, BER, None, BER, None, BER, None, None]
    times_fleet_rate = [None if v is None else round(v / CW_RATE, 9) for v in learnt(ev.baseline_cw_rate)]
    assert times_fleet_rate == [None, 1, None, 1, None, 1, None, None]


def test_receive_power_is_learnt_only_on_tested_links_and_never_off_a_link():
    """Link 10 is not tested (a segment degraded or merely installed); link 11's B end, port
    103, is on no recorded link."""
    w, f, lt = fleet(2)
    lt.tested = np.array([False, True])
    lt.b_row[1] = -1
    w.rx_power_dbm[:, :] = -2.5
    ev = evaluate(w, f, lt)
    assert ev.findings == []
    assert [learnt(r)[0] for r in ev.rx_now] == [None, None, -2.5, None]


def test_a_link_table_without_test_states_learns_receive_power_on_every_link():
    w, f, lt = fleet(2)
    lt.tested = None
    w.rx_power_dbm[:, :] = -2.5
    ev = evaluate(w, f, lt)
    assert [learnt(r)[0] for r in ev.rx_now] == [-2.5, -2.5, -2.5, -2.5]


def test_a_profile_covering_one_reporting_port_is_applied_after_an_unused_one():
    """Profiles: 0 (default) covers link 10 and port 103 (on no recorded link), 1 covers no
    row, 2 (holds FEC degradation for 5 minutes) covers link 11, whose B end reports nothing
    (no row): one row. Six minutes of errors on both links open link 11 only."""
    w, f, lt = fleet(2)
    lt.b_row[1] = -1
    lt.profile[:] = [0, 2]
    w.corrected_bits[[0, 2], -6:] *= 300
    ev = evaluate(w, f, lt, [Thresholds(), Thresholds(), Thresholds(fec_hold_s=300)])
    assert [x.key for x in ev.findings] == ["fec_degradation:link:11"]


def test_each_links_uncorrectable_codewords_are_counted_against_its_own_profile():
    """Three minutes with uncorrectable codewords on both links: a stall on link 10 (default:
    3 of them open), not on link 11 (its profile asks for 5)."""
    w, f, lt = fleet(2)
    lt.profile[:] = [0, 1]
    w.uncorrectable_cw[[0, 2], -6::2] = 3
    ev = evaluate(w, f, lt, [Thresholds(), Thresholds(uncorr_min_events=5)])
    assert [x.key for x in ev.findings] == ["fec_uncorrectable:link:10"]


def test_a_window_of_no_buckets_finds_nothing_and_learns_nothing():
    w, f, lt = fleet(2)
    w0 = PortWindow.empty(4, 0, bucket_s=60.0)
    w0.port_id = w.port_id
    ev = evaluate(w0, f, lt)
    assert (ev.findings, ev.holding, ev.reporting_port_ids.tolist()) == ([], set(), [])
    assert learnt(ev.baseline_ber) == [None] * 4


def test_a_window_of_one_bucket_is_judged():
    """A one-minute window: a link-down in it is a flap, and the pausing port's raw samples
    are read."""
    w, f, lt = fleet(2)
    w1 = PortWindow.empty(4, 1, bucket_s=60.0)
    w1.port_id = w.port_id
    w1.seconds[:] = 60.0
    w1.link_down[:] = 0
    w1.link_down[1, 0] = 1
    w1.pfc_pause_tx[:] = 0
    w1.pfc_pause_tx[2, 0] = 150 * 60
    assert sample_candidates(w1, f, lt, [Thresholds()]).tolist() == [2]
    ev = evaluate(w1, f, lt)
    assert [x.key for x in ev.findings] == ["link_flap:link:10", "pfc_storm:port:102"]


def test_the_selector_reads_raw_samples_of_the_rows_a_sliding_rule_could_judge_only():
    """Called as the selector calls it (no precomputed rates): row 0's BER sits at the
    degradation bar, row 3 had one uncorrectable codeword, row 5 received 8 pause frames/s (an
    open storm would hold at 5/s); every other row is healthy and quiet."""
    w, f, lt = fleet(4)
    w.pfc_pause_rx[:] = 0
    w.pfc_pause_tx[:] = 0
    w.corrected_bits[0, -1] *= 10
    w.uncorrectable_cw[3, -7] = 1
    w.pfc_pause_rx[5, -20] = 8 * 60
    assert sample_candidates(w, f, lt, [Thresholds()]).tolist() == [0, 3, 5]


def test_under_the_seed_preset_the_selector_reads_the_rows_with_corrected_codewords():
    """The seed preset judges the corrected-codeword rate (opens above 0.001/s): only port
    101, at 0.002/s, has anything to judge."""
    w, f, lt = fleet(2)
    w.pfc_pause_rx[:] = 0
    w.pfc_pause_tx[:] = 0
    w.corrected_cw[:] = 0
    w.corrected_bits[:] = 0
    w.corrected_cw[1, :] = 0.002 * 60
    assert sample_candidates(w, f, lt, [PRESETS["seed"]]).tolist() == [1]


def one_second_at_the_end(w: PortWindow, row: int, ber: float) -> None:
    """``row`` came up one second before the window ended: its last bucket covers that second
    alone (at ``ber``), its earlier buckets nothing."""
    w.seconds[row, :] = 0
    for a in (w.corrected_bits, w.line_bits, w.corrected_cw):
        a[row, :] = np.nan
    w.seconds[row, -1] = 1.0
    w.line_bits[row, -1] = LINE_BITS_PER_S
    w.corrected_bits[row, -1] = ber * LINE_BITS_PER_S
    w.corrected_cw[row, -1] = ber * LINE_BITS_PER_S / 1.2


def test_a_port_that_reported_a_single_second_reports_and_teaches_its_baseline():
    w, f, lt = fleet(1)
    one_second_at_the_end(w, 1, BER)
    ev = evaluate(w, f, lt)
    assert ev.findings == []
    assert ev.reporting_port_ids.tolist() == [100, 101]
    assert learnt(ev.baseline_ber) == [BER, BER]


def test_a_last_bucket_of_one_second_over_the_bar_holds_an_open_degradation():
    """Port 101's only second reads a BER of 1e-4 (over the 2.4e-5 cap of the degradation
    bar): too short to open, but an open alert holds on it."""
    w, f, lt = fleet(1)
    one_second_at_the_end(w, 1, 1e-4)
    ev = evaluate(w, f, lt)
    assert ev.findings == []
    assert ev.holding == {"fec_degradation:link:10"}


def test_the_selector_reads_the_raw_samples_behind_a_one_second_bucket():
    w, f, lt = fleet(1)
    one_second_at_the_end(w, 1, 1e-4)
    assert sample_candidates(w, f, lt, [Thresholds()]).tolist() == [1]
