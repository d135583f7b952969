"""The pure rule engine: realistic 400G PAM4 numbers, no database.

Topology of every test here: links of two ports, rows 2i (A end) and 2i+1 (B end)::

    [row 0 / A]--link 0--[row 1 / B]    [row 2 / A]--link 1--[row 3 / B] ...
"""

import numpy as np
import pytest

from inventory.core.telemetry.rules.config import PRESETS, RuleConfig, Thresholds, thresholds_from
from inventory.core.telemetry.rules.engine import evaluate
from inventory.core.telemetry.rules.frames import LinkTable, PortFacts, PortWindow
from inventory.core.telemetry.rules.util import tail_split

LINE_BITS_PER_S = 4 * 106.25e9  # 400G: 4 x 100G lanes at 106.25 Gb/s
B = 30  # 30 one-minute buckets


def fleet(links: int = 4, *, ber: float = 5e-9):
    """A healthy fleet: pre-FEC BER ~5e-9, i.e. thousands of corrected codewords per second."""
    n = links * 2
    w = PortWindow.empty(n, B, bucket_s=60.0)
    w.port_id = np.arange(100, 100 + n, dtype=np.int64)
    w.seconds[:] = 60.0
    w.line_bits[:] = LINE_BITS_PER_S * 60
    w.corrected_bits[:] = ber * w.line_bits
    w.corrected_cw[:] = w.corrected_bits / 1.2
    w.uncorrectable_cw[:] = 0
    w.hist_warn_cw[:] = 0
    w.hist_crit_cw[:] = 0
    w.link_down[:] = 0
    w.error_recovery[:] = 0
    w.rx_power_dbm[:] = -2.0
    w.tx_power_dbm[:] = 1.0
    w.rx_low_warn_dbm[:] = -9.0
    f = PortFacts.empty(n)
    f.base_ber[:] = ber
    f.base_cw_rate[:] = ber * LINE_BITS_PER_S / 1.2
    f.base_rx_dbm[:] = -2.0
    lt = LinkTable.empty(links)
    lt.link_id = np.arange(10, 10 + links, dtype=np.int64)
    lt.a_row = np.arange(0, n, 2)
    lt.b_row = np.arange(1, n, 2)
    return w, f, lt


def rules_of(ev):
    return sorted((x.rule, x.key) for x in ev.findings)


def test_a_healthy_400g_fleet_with_thousands_of_corrected_codewords_per_second_is_quiet():
    w, f, lt = fleet(50)
    assert (w.corrected_cw / 60 > 1000).all()  # busy FEC, as PAM4 always is
    ev = evaluate(w, f, lt)
    assert ev.findings == []


def test_corrected_rate_climbing_past_the_threshold_for_ten_minutes_alerts_that_link_only():
    w, f, lt = fleet(4)
    w.corrected_bits[2, -10:] *= 300  # link 1, A end receiver: 1.5e-6, 300x its baseline
    ev = evaluate(w, f, lt)
    assert rules_of(ev) == [("fec_degradation", "fec_degradation:link:11")]
    finding = ev.findings[0]
    assert finding.severity == "notify"
    assert set(finding.ends) == {"a"}
    assert finding.ends["a"]["baseline"] == pytest.approx(5e-9)
    assert "B module" in finding.recommendation  # errors at A's receiver: B's transmitter


def test_nine_minutes_of_high_errors_do_not_alert_yet():
    w, f, lt = fleet(2)
    w.corrected_bits[0, -9:] *= 300
    assert evaluate(w, f, lt).findings == []


def test_a_rise_that_stays_within_the_baseline_factor_is_not_degradation():
    w, f, lt = fleet(2)
    w.corrected_bits[0, -20:] *= 5  # 5x: still a healthy link
    assert evaluate(w, f, lt).findings == []


def test_without_a_baseline_only_approaching_the_kp4_limit_alerts():
    w, f, lt = fleet(2)
    f.base_ber[:] = np.nan
    w.corrected_bits[0, -12:] *= 300  # 1.5e-6: far from 2.4e-4, no baseline to compare
    assert evaluate(w, f, lt).findings == []
    w.corrected_bits[2, -12:] = 3e-5 * w.line_bits[2, -12:]  # above 10% of the KP4 limit
    ev = evaluate(w, f, lt)
    assert rules_of(ev) == [("fec_degradation", "fec_degradation:link:11")]
    assert ev.findings[0].ends["a"]["fec_limit"] == pytest.approx(2.4e-4)


def test_errors_in_both_directions_point_at_the_cable():
    w, f, lt = fleet(1)
    w.corrected_bits[:, -12:] *= 1000
    ev = evaluate(w, f, lt)
    (finding,) = ev.findings
    assert set(finding.ends) == {"a", "b"}
    assert finding.recommendation_code == "replace_cable"


def test_a_missing_bucket_does_not_break_a_sustained_condition_but_a_gap_does():
    w, f, lt = fleet(2)
    w.corrected_bits[0, -10:] *= 300
    w.seconds[0, -4] = 0  # one lost poll
    w.corrected_bits[0, -4] = np.nan
    assert [x.rule for x in evaluate(w, f, lt).findings] == ["fec_degradation"]
    w.seconds[0, -8:-3] = 0  # five lost polls: not enough evidence that it held
    w.corrected_bits[0, -8:-3] = np.nan
    assert evaluate(w, f, lt).findings == []


def test_an_open_alert_keeps_holding_while_the_condition_still_shows():
    w, f, lt = fleet(1)
    w.corrected_bits[0, -12:-2] *= 300  # it held 10 min, then the last two buckets recovered
    ev = evaluate(w, f, lt)
    assert ev.findings == []
    assert "fec_degradation:link:10" in ev.holding


def test_isolated_high_bin_codewords_on_a_healthy_link_are_not_a_tail():
    w, f, lt = fleet(2)
    w.hist_crit_cw[0, -5] = 1  # one codeword with 14 symbol errors: happens on healthy links
    w.hist_warn_cw[1, -3] = 40  # one burst
    assert evaluate(w, f, lt).findings == []


def test_a_sustained_histogram_tail_is_warning_or_critical():
    w, f, lt = fleet(2)
    w.hist_warn_cw[0, -6:] = 50
    w.hist_crit_cw[3, -4:] = 20
    ev = evaluate(w, f, lt)
    sev = {x.key: x.severity for x in ev.findings}
    assert sev == {"fec_tail:link:10": "warning", "fec_tail:link:11": "critical"}


def test_tail_split_counts_bins_against_the_correction_limit():
    bins = [(0, 0, 1e12), (1, 3, 5e6), (6, 6, 30), (12, 12, 4), (13, 13, 2), (15, 15, 1)]
    assert tail_split(bins, 15) == (34, 3)  # KP4: 6..12 warning, 13..15 critical
    assert tail_split(bins, 7) == (0, 37)  # KR4: T=7, 6 > 5.6 is already critical


def test_a_single_uncorrectable_codeword_is_not_a_stall_but_a_sustained_stream_is():
    w, f, lt = fleet(2)
    w.uncorrectable_cw[0, -3] = 1
    assert evaluate(w, f, lt).findings == []
    w.uncorrectable_cw[2, -6::2] = 3
    ev = evaluate(w, f, lt)
    assert rules_of(ev) == [("fec_uncorrectable", "fec_uncorrectable:link:11")]


def test_a_link_down_event_pages():
    w, f, lt = fleet(2)
    w.link_down[1, -2] = 1
    ev = evaluate(w, f, lt)
    assert [(x.rule, x.severity) for x in ev.findings] == [("link_flap", "page")]


def test_link_running_below_its_speed_is_degraded():
    w, f, lt = fleet(1)
    lt.expected_speed_gbps[:] = 400
    w.speed_gbps[:] = [400, 200]
    assert [(x.rule, x.severity) for x in evaluate(w, f, lt).findings] == [("link_degraded", "page")]


def test_link_running_on_fewer_lanes_is_degraded_and_unknown_width_is_not():
    w, f, lt = fleet(2)
    lt.expected_width[:] = [4, np.nan]
    w.link_width[:] = [4, 2, 2, 2]  # link 0: end b trained to 2 lanes; link 1: nothing recorded
    ev = evaluate(w, f, lt)
    assert [(x.rule, x.link_id, x.headline) for x in ev.findings if x.rule == "link_degraded"] == [
        ("link_degraded", int(lt.link_id[0]), ev.findings[0].headline)
    ]
    assert "2 of 4 lanes up" in ev.findings[0].headline


def test_rx_power_is_judged_against_each_lanes_own_baseline_never_the_tested_loss():
    w, f, lt = fleet(3)
    w.rx_power_dbm[0, 2] = -4.5  # lane 3 lost 2.5 dB against its baseline: notify
    # DOM says 6 dB of "live loss" (far tx 1.0 - rx -5.0) on a link tested at 2.5 dB: the
    # module's +-3 dB accuracy, not a fault; this lane has always read -5.0 dBm.
    w.rx_power_dbm[2, :] = -5.0
    f.base_rx_dbm[2, :] = -5.0
    w.rx_power_dbm[5, 0] = -10.0  # below the module's own -9 dBm warning: page
    ev = evaluate(w, f, lt)
    got = {x.key: x.severity for x in ev.findings}
    assert got == {"rx_power_drift:link:10": "notify", "rx_power_drift:link:12": "page"}
    drift = next(x for x in ev.findings if x.key.endswith(":10"))
    assert drift.ends["a"]["worst_lane"] == 3
    assert "lane 3 rx power 2.5 dB below its own baseline" in drift.headline
    assert "live_loss_db" not in drift.ends["a"]


def test_passive_dac_links_have_no_optical_power_rule():
    w, f, lt = fleet(1)
    lt.passive_copper[:] = True
    w.rx_power_dbm[0, :] = -20
    assert evaluate(w, f, lt).findings == []


def test_pfc_storm_from_pause_duration_recommends_the_host():
    w, f, lt = fleet(2)
    w.pfc_pause_us[:] = 0
    w.pfc_pause_rx[:] = 0
    w.pfc_pause_tx[:] = 0
    f.expected_neighbor_port_id[:] = [101, 100, 103, 102]
    w.pfc_pause_us[1, -5:] = 0.5 * 60e6  # B end of link 0 paused half the time: A sends the pauses
    ev = evaluate(w, f, lt)
    (x,) = ev.findings
    assert (x.rule, x.key, x.recommendation_code) == ("pfc_storm", "pfc_storm:port:100", "check_host")
    assert x.port_id == 100
    assert "the B end is paused 50% of the time" in x.headline


def test_the_seed_preset_keeps_the_articles_thresholds():
    seed = PRESETS["seed"]
    assert seed.fec_cw_rate_floor == 0.001 and seed.fec_hold_s == 600
    assert (seed.pfc_burst_rate, seed.pfc_burst_s, seed.pfc_sustained_rate) == (100.0, 60.0, 10.0)
    w, f, lt = fleet(2)
    # Under the seed preset every healthy PAM4 link "degrades": why it is not the default.
    ev = evaluate(w, f, lt, [seed])
    assert {x.rule for x in ev.findings} == {"fec_degradation"}
    assert len(ev.findings) == 2
    w.pfc_pause_rx[:] = 0
    w.pfc_pause_tx[:] = 0
    w.pfc_pause_tx[0, -2:] = 150 * 60  # > 100/s for a minute
    assert any(x.rule == "pfc_storm" for x in evaluate(w, f, lt, [seed]).findings)


def test_thresholds_are_chosen_per_link_class():
    cfg = RuleConfig.from_dict({"preset": "default", "by_class": {"rail": {"fec_hold_s": 300}}})
    profiles = cfg.profiles()
    w, f, lt = fleet(2)
    lt.profile[1] = cfg.profile_index(link_class="rail", pmd="", profiles=profiles)
    lt.profile[0] = cfg.profile_index(link_class="leaf-spine", pmd="", profiles=profiles)
    w.corrected_bits[[0, 2], -6:] *= 300  # six minutes on both links
    ev = evaluate(w, f, lt, profiles)
    assert [x.key for x in ev.findings] == ["fec_degradation:link:11"]


def test_unknown_threshold_names_are_refused():
    with pytest.raises(ValueError, match="fec_hold"):
        thresholds_from("default", {"fec_hold": 5})
    with pytest.raises(ValueError, match="preset"):
        RuleConfig.from_dict({"preset": "nope"})


def test_miswire_and_unrecorded_swap_say_what_was_expected_and_seen():
    w, f, lt = fleet(2)
    f.expected_neighbor_port_id[:] = [101, 100, 103, 102]
    f.expected_neighbor_label[:] = ["b0:e1", "a0:e1", "b1:e1", "a1:e1"]
    w.neighbor_port_id[:] = [101, 100, 102, -1]  # row 2 sees itself's neighbour... a loop: wrong
    w.neighbor_label[2] = "a1:e1"
    f.recorded_serial[:] = ["S0", "S1", "S2", None]
    w.module_serial[:] = ["S0", "S9", None, "S3"]
    ev = evaluate(w, f, lt)
    got = {x.key: x for x in ev.findings}
    assert set(got) == {"miswire:port:102", "unrecorded_swap:port:101"}
    assert got["miswire:port:102"].ends["a"]["expected"] == "b1:e1"
    assert got["miswire:port:102"].ends["a"]["seen"] == "a1:e1"
    assert "S9" in got["unrecorded_swap:port:101"].headline


def test_rule_evaluation_is_vectorised_over_a_large_fleet():
    """Not a timing test: 20,000 ports give the same answer as the small case."""
    w, f, lt = fleet(10_000)
    w.corrected_bits[12_345, -10:] *= 300
    ev = evaluate(w, f, lt, [Thresholds()])
    assert [x.key for x in ev.findings] == [f"fec_degradation:link:{10 + 12_345 // 2}"]
