"""The words an engineer reads on an alert (pure engine, no database): each rule's headline, its
recommendation and the recommendation's code, in full, for each direction the evidence can take.

Topology (as in ``test_rules``): links of two ports, rows 2i (A end) and 2i+1 (B end)::

    [row 0 / port 100 / A]--link 10--[row 1 / port 101 / B]    [row 2]--link 11--[row 3] ...
"""

import numpy as np
import pytest

from inventory.core.telemetry.rules.config import PRESETS, Thresholds
from inventory.core.telemetry.rules.engine import evaluate
from inventory.core.telemetry.rules.frames import Finding
from inventory.core.telemetry.rules.words import describe
from tests.inventory.core.telemetry.test_rules import fleet
from tests.inventory.core.telemetry.test_rules_hold_and_windows import quiet_fleet

ONE_WAY_A = (
    "Errors only at the A end's receiver (the B -> A direction): suspect the B end's transmitting "
    "module or the A end's receiving module. Clean and re-seat both ends first; if errors persist, "
    "replace the B module, then the A module."
)
OTHER_CLEAN = " The other direction is clean, so the cable is less likely."
BOTH_WAYS = (
    "Errors in both directions: the shared cable path is the suspect. Clean and inspect every "
    "connector on the path and re-seat both modules; if errors persist, replace the cable segment "
    "(bend or damage) and retest."
)
ON_NO_LINK = (
    "Clean and re-seat the connectors on the path; if errors persist, replace the far-end module "
    "(its transmitter) or this port's module."
)
LANE_DOWN = (
    "A lane is down: re-seat the modules and clean the connectors; replace the module if a lane stays dark."
)
PFC_ADVICE = (
    "which sends the pause frames: PFC storms are usually a stuck or slow receiver there (NIC, "
    "driver, PCIe, GPU memory pressure), not the cable. Do not replace the cable for this."
)


def words(ev) -> dict[str, tuple[str, str, str, str]]:
    return {x.key: (x.severity, x.headline, x.recommendation, x.recommendation_code) for x in ev.findings}


def test_errors_at_one_receiver_suspect_the_far_transmitter_and_say_the_other_way_is_clean():
    w, f, lt = fleet(2)
    w.corrected_bits[0, -12:] *= 300  # link 10, A end: 1.5e-6, 300x its baseline of 5e-9
    assert words(evaluate(w, f, lt)) == {
        "fec_degradation:link:10": (
            "notify",
            "pre-FEC BER 1.50e-06 at the A end receiver, threshold 5.00e-08 (FEC limit 2.40e-04), "
            "baseline 5.00e-09",
            ONE_WAY_A + OTHER_CLEAN,
            "replace_module",
        )
    }
    w.seconds[1, :] = 0  # the B end reports nothing: its direction is not known to be clean
    (x,) = evaluate(w, f, lt).findings
    assert (x.recommendation, x.recommendation_code) == (ONE_WAY_A, "replace_module")


def test_errors_at_the_b_end_suspect_the_a_transmitter():
    w, f, lt = fleet(1)
    w.corrected_bits[1, -12:] *= 300
    (x,) = evaluate(w, f, lt).findings
    assert x.headline.startswith("pre-FEC BER 1.50e-06 at the B end receiver,")
    assert x.recommendation == (
        "Errors only at the B end's receiver (the A -> B direction): suspect the A end's transmitting "
        "module or the B end's receiving module. Clean and re-seat both ends first; if errors persist, "
        "replace the A module, then the B module." + OTHER_CLEAN
    )


def test_errors_in_both_directions_blame_the_shared_cable_path():
    w, f, lt = fleet(1)
    w.corrected_bits[:, -12:] *= 1000
    w.uncorrectable_cw[0, -6::2] = 3  # 9 at the A end, in three intervals
    w.uncorrectable_cw[1, -5::2] = 2  # 6 at the B end
    assert words(evaluate(w, f, lt)) == {
        "fec_degradation:link:10": (
            "notify",
            "pre-FEC BER 5.00e-06 at the A end and B end receiver, threshold 5.00e-08 "
            "(FEC limit 2.40e-04), baseline 5.00e-09",
            BOTH_WAYS,
            "replace_cable",
        ),
        "fec_uncorrectable:link:10": (
            "notify",
            "15 uncorrectable codewords in the window at the A end and B end receiver",
            BOTH_WAYS,
            "replace_cable",
        ),
    }


def test_a_port_on_no_recorded_link_reads_as_this_port():
    """A port the plant has on no link: "at this port's receiver", never "at the this port
    receiver" (as it read before), and the advice to clean without naming ends."""
    w, f, lt = fleet(2)
    lt.a_row[0] = -1  # port 100 is on no recorded link
    w.corrected_bits[0, -12:] *= 300
    w.link_down[0, -2] = 1
    w.rx_power_dbm[0, 1] = -5.0  # lane 2: 3 dB below its baseline of -2 dBm
    assert words(evaluate(w, f, lt)) == {
        "fec_degradation:port:100": (
            "notify",
            "pre-FEC BER 1.50e-06 at this port's receiver, threshold 5.00e-08 (FEC limit 2.40e-04), "
            "baseline 5.00e-09",
            ON_NO_LINK,
            "clean",
        ),
        "link_flap:port:100": (
            "page",
            "1 link-down/error-recovery events at this port",
            "Re-seat both modules and the cable ends, inspect and clean the connectors; if the link flaps "
            "again replace the module at the end that reports the events, then the cable.",
            "reseat",
        ),
        "rx_power_drift:port:100": (
            "notify",
            "lane 2 rx power 3.0 dB below its own baseline at this port",
            ON_NO_LINK,
            "clean",
        ),
    }


def test_the_seed_presets_corrected_codeword_rate_reads_as_measured():
    """The seed preset opens at 0.001 corrected codewords/s with no baseline: half a codeword a
    second reads "0.5/s" (it read "0/s", under a threshold of 0.001/s); busy links read whole."""
    w, f, lt = fleet(2)
    f.base_cw_rate[:] = np.nan
    w.corrected_bits[:] = np.nan  # codeword counts only: the seed's rate, not a BER
    w.line_bits[:] = np.nan
    w.corrected_cw[:] = 0.0
    w.corrected_cw[0, -12:] = 0.5 * 60
    w.corrected_cw[3, -12:] = 1234.4 * 60
    got = words(evaluate(w, f, lt, [PRESETS["seed"]]))
    assert (
        got["fec_degradation:link:10"][1]
        == "corrected codewords 0.5/s at the A end receiver, threshold 0.001/s"
    )
    assert got["fec_degradation:link:11"][1] == (
        "corrected codewords 1234/s at the B end receiver, threshold 0.001/s"
    )


def test_a_tail_names_its_band_and_both_counts():
    w, f, lt = fleet(2)
    w.hist_warn_cw[0, -6:] = 50
    w.hist_crit_cw[3, -4:] = 20
    w.hist_warn_cw[3, -4:] = 7
    got = words(evaluate(w, f, lt))
    assert got["fec_tail:link:10"][:2] == (
        "warning",
        "codewords at 40-80% of the FEC correction limit at the A end receiver (0 over 80%, 300 at 40-80%)",
    )
    assert got["fec_tail:link:11"][:2] == (
        "critical",
        "codewords above 80% of the FEC correction limit at the B end receiver (80 over 80%, 28 at 40-80%)",
    )
    assert got["fec_tail:link:11"][2:] == (
        "Errors only at the B end's receiver (the A -> B direction): suspect the A end's transmitting "
        "module or the B end's receiving module. Clean and re-seat both ends first; if errors persist, "
        "replace the A module, then the B module." + OTHER_CLEAN,
        "replace_module",
    )


def test_a_tail_on_both_ends_blames_the_cable():
    w, f, lt = fleet(1)
    w.hist_crit_cw[:, -4:] = 20
    (x,) = evaluate(w, f, lt).findings
    assert x.headline.endswith("at the A end and B end receiver (160 over 80%, 0 at 40-80%)")
    assert (x.recommendation, x.recommendation_code) == (BOTH_WAYS, "replace_cable")


def test_flaps_count_link_downs_and_error_recoveries_together():
    w, f, lt = fleet(1)
    w.link_down[0, -2] = 2
    w.error_recovery[0, -3] = 3
    (x,) = evaluate(w, f, lt).findings
    assert (x.severity, x.headline, x.recommendation_code) == (
        "page",
        "5 link-down/error-recovery events at the A end",
        "reseat",
    )


def test_a_degraded_link_names_what_fell_short_and_only_that():
    w, f, lt = fleet(5)
    lt.expected_speed_gbps[:] = 400
    lt.expected_width[:] = 8
    w.speed_gbps[:] = 400
    w.link_width[:] = 8
    w.speed_gbps[0] = 200  # link 10: slow, every lane up
    w.link_width[2] = 4  # link 11: full speed, half the lanes
    w.speed_gbps[4], w.link_width[4] = 200, 4  # link 12: both
    w.speed_gbps[6], w.link_width[6] = np.nan, 4  # link 13: lanes short, speed not reported
    w.speed_gbps[8], w.link_width[8] = 100, np.nan  # link 14: slow, width not reported
    got = words(evaluate(w, f, lt))
    assert {k: v[1] for k, v in got.items()} == {
        "link_degraded:link:10": "running at 200G, expected 400G",
        "link_degraded:link:11": "4 of 8 lanes up",
        "link_degraded:link:12": "running at 200G, expected 400G; 4 of 8 lanes up",
        "link_degraded:link:13": "4 of 8 lanes up",
        "link_degraded:link:14": "running at 100G, expected 400G",
    }
    assert {v[2:] for v in got.values()} == {(LANE_DOWN, "reseat")}
    assert {v[0] for v in got.values()} == {"page"}


def test_light_lost_names_the_lane_the_drop_and_the_modules_own_warning():
    w, f, lt = fleet(3)
    w.rx_power_dbm[0, 2] = -5.0  # link 10, A end, lane 3: 3 dB below its own baseline
    w.rx_power_dbm[2, :] = -10.0  # link 11, A end: every lane under the module's -9 dBm warning
    f.base_rx_dbm[5, :] = -9.5  # link 12, B end: a weak link from the start ...
    w.rx_power_dbm[5, :] = -9.5  # ... under the warning, at its own baseline (no drop)
    got = words(evaluate(w, f, lt))
    light_lost_a = ONE_WAY_A.replace("Errors only", "Light lost only") + OTHER_CLEAN
    assert got["rx_power_drift:link:10"] == (
        "notify",
        "lane 3 rx power 3.0 dB below its own baseline at the A end",
        light_lost_a,
        "replace_module",
    )
    assert got["rx_power_drift:link:11"] == (
        "page",
        "rx power below the module's own warning threshold (-9.0 dBm) at the A end; "
        "lane 1 rx power 8.0 dB below its own baseline at the A end",
        light_lost_a,
        "replace_module",
    )
    assert got["rx_power_drift:link:12"][:2] == (
        "page",
        "rx power below the module's own warning threshold (-9.0 dBm) at the B end",
    )


def test_a_small_drop_below_the_modules_warning_is_still_named():
    w, f, lt = fleet(1)
    f.base_rx_dbm[0, :] = -9.0
    w.rx_power_dbm[0, :] = -9.5  # 0.5 dB under its baseline, under the -9 dBm warning
    (x,) = evaluate(w, f, lt).findings
    assert x.headline == (
        "rx power below the module's own warning threshold (-9.0 dBm) at the A end; "
        "lane 1 rx power 0.5 dB below its own baseline at the A end"
    )


def test_light_lost_in_both_directions_blames_the_cable():
    w, f, lt = fleet(1)
    w.rx_power_dbm[:, 0] = -6.0
    (x,) = evaluate(w, f, lt).findings
    assert x.headline == (
        "lane 1 rx power 4.0 dB below its own baseline at the A end; "
        "lane 1 rx power 4.0 dB below its own baseline at the B end"
    )
    assert x.recommendation == BOTH_WAYS.replace("Errors in both", "Light lost in both")
    assert x.recommendation_code == "replace_cable"


def test_a_pfc_storm_reads_who_sends_who_is_paused_and_who_receives():
    w, f, lt = quiet_fleet()
    w.pfc_pause_tx[1, -5:] = 150 * 60  # port 101 (B) sends 150 pause frames/s
    w.pfc_pause_rx[0, -5:] = 150 * 60  # port 100 (A) receives them
    w.pfc_pause_us[0, -5:] = 0.3 * 60e6  # and is paused 30% of those minutes
    assert words(evaluate(w, f, lt)) == {
        "pfc_storm:port:101": (
            "notify",
            "PFC storm: the B end sends 150 pause frames/s; the A end is paused 30% of the time; "
            "the A end receives 150/s",
            "Check the host or switch at the B end, " + PFC_ADVICE,
            "check_host",
        )
    }


def test_a_storm_whose_sender_reports_nothing_never_reads_sends_zero():
    """Port 102 receives 200 pause frames/s; its recorded far end, port 103, reports nothing. The
    headline read "the B end sends 0 pause frames/s"."""
    w, f, lt = quiet_fleet()
    w.pfc_pause_rx[2, -5:] = 200 * 60
    w.seconds[3, :] = 0
    (x,) = evaluate(w, f, lt).findings
    assert (
        x.headline == "PFC storm: the B end (recorded neighbour) sends the pauses; the A end receives 200/s"
    )
    assert x.recommendation == "Check the host or switch at the B end, " + PFC_ADVICE


def test_a_port_paused_by_duration_alone_names_its_far_end_and_no_rate():
    """Pause duration only (no frame counts): 30% of the time paused; the headline gives the
    share and no "receives 0/s"."""
    w, f, lt = quiet_fleet()
    w.pfc_pause_us[0, -20:] = 0.75 * 60e6
    (x,) = evaluate(w, f, lt).findings
    assert x.key == "pfc_storm:port:101"
    assert (
        x.headline
        == "PFC storm: the B end (recorded neighbour) sends the pauses; the A end is paused 75% of the time"
    )


@pytest.mark.parametrize(("per_s", "read"), [(0.4, "0.4"), (10.4, "10")])
def test_a_pause_rate_reads_as_rates_do_below_one_frame_a_second_too(per_s, read):
    """A site that alerts from 0.1 pause frames/s (a profile's threshold): a far end sending 0.4/s
    that pauses its neighbour 75% of the time. The headline read "sends 0 pause frames/s" and
    "receives 0/s". From 10/s up a rate reads whole."""
    w, f, lt = quiet_fleet()
    w.pfc_pause_tx[1, -20:] = per_s * 60  # port 101 (B) sends this many a minute for 20 minutes
    w.pfc_pause_rx[0, -20:] = per_s * 60  # port 100 (A) receives them
    w.pfc_pause_us[0, -20:] = 0.75 * 60e6
    (x,) = evaluate(w, f, lt, [Thresholds(pfc_sustained_rate=0.1)]).findings
    assert x.headline == (
        f"PFC storm: the B end sends {read} pause frames/s; the A end is paused 75% of the time; "
        f"the A end receives {read}/s"
    )


def test_a_storm_judged_on_the_sustained_rate_alone_reads_that_rate():
    """With the burst preset switched off there is no burst rate: the headline gives the
    sustained ones (it must not fall back to "recorded neighbour" or "0/s")."""
    w, f, lt = quiet_fleet()
    w.pfc_pause_tx[0, -20:] = 15 * 60  # port 100 (A) sends 15/s for 20 minutes
    w.pfc_pause_rx[1, -20:] = 15 * 60  # port 101 (B) receives them
    (x,) = evaluate(w, f, lt, [Thresholds(pfc_burst_rate=None)]).findings
    assert x.headline == "PFC storm: the A end sends 15 pause frames/s; the B end receives 15/s"


def test_a_storm_sent_by_a_port_on_no_recorded_link_names_this_port():
    w, f, lt = quiet_fleet()
    lt.a_row[0] = -1  # port 100 is on no recorded link
    w.pfc_pause_tx[0, -5:] = 150 * 60
    (x,) = evaluate(w, f, lt).findings
    assert (x.key, x.link_id) == ("pfc_storm:port:100", None)
    assert x.headline == "PFC storm: this port sends 150 pause frames/s"
    assert x.recommendation == "Check the host or switch at this port, " + PFC_ADVICE


def test_a_storm_from_an_unrecorded_neighbour_says_so():
    w, f, lt = fleet(1)  # no far end recorded for either port
    w.pfc_pause_rx[:] = 0
    w.pfc_pause_tx[:] = 0
    w.pfc_pause_us[:] = 0
    w.pfc_pause_rx[0, -5:] = 200 * 60
    (x,) = evaluate(w, f, lt).findings
    assert x.key == "pfc_storm:toward:100"
    assert x.headline == "PFC storm: an unrecorded neighbour sends the pauses; the A end receives 200/s"
    assert x.recommendation == "Check the host or switch at the far end, " + PFC_ADVICE


def test_a_rule_without_words_reads_as_its_name():
    """A finding of a rule this module has no words for (the collectives' spike is described by
    the alert service) keeps its name as headline and no advice."""
    f = Finding(
        key="k",
        rule="tail_latency_spike",
        severity="notify",
        link_id=None,
        port_id=1,
        headline="",
        recommendation="",
        recommendation_code="",
        ends={"port": {}},
    )
    assert describe(f) == ("tail_latency_spike", "", "")


def test_a_corrected_codeword_rate_its_threshold_and_baseline_read_as_rates_per_second():
    """The default preset's codeword rule (links with no bit counts): the threshold, ten times
    the baseline, and the baseline are rates like the one measured. They read "2.5e+04/s" and
    "2.50e+03" beside "30000/s"; a quiet link's baseline reads as a decimal, not "2.00e-05"."""
    w, f, lt = fleet(2)
    w.corrected_bits[:] = np.nan
    w.line_bits[:] = np.nan
    f.base_cw_rate[:] = 2500.0
    w.corrected_cw[:] = 2500.0 * 60
    w.corrected_cw[0, -12:] = 30_000 * 60
    got = words(evaluate(w, f, lt, [PRESETS["default"]]))
    assert got["fec_degradation:link:10"][1] == (
        "corrected codewords 30000/s at the A end receiver, threshold 25000/s, baseline 2500/s"
    )
    f.base_cw_rate[:] = 0.00002
    w.corrected_cw[:] = 0.00002 * 60
    w.corrected_cw[0, -12:] = 30_000 * 60
    got = words(evaluate(w, f, lt, [PRESETS["default"]]))
    assert got["fec_degradation:link:10"][1] == (
        "corrected codewords 30000/s at the A end receiver, threshold 10000/s, baseline 0.00002/s"
    )
