"""PFC storms at their exact edges (pure engine, no database): the rates and the paused share
that open an alert and the ones that only keep it open, the keys held, and the evidence of both
ends as the alert page shows it.

Topology (as in ``test_rules``): links of two ports, rows 2i (A end) and 2i+1 (B end), 30
one-minute buckets, each port's recorded far end the other end of its link::

    [row 0 / port 100 / A]--link 10--[row 1 / port 101 / B]    [row 2 / port 102]--link 11--[row 3 / port 103]

Defaults: a storm opens above 100 pause frames/s over a minute or above 10/s over 10 minutes, or
at 20% of the last 5 minutes paused; an open one holds at half of each (50/s, 5/s, 10%) over the
last 15 minutes.
"""

import numpy as np
import pytest

from inventory.core.telemetry.rules.config import Thresholds
from inventory.core.telemetry.rules.engine import evaluate
from tests.inventory.core.telemetry.test_rules_hold_and_windows import quiet_fleet
from tests.inventory.core.telemetry.test_rules_words import PFC_ADVICE

BURST_ONLY = Thresholds(pfc_sustained_rate=None)


def keys(ev) -> list[str]:
    return [x.key for x in ev.findings]


def test_a_storm_shows_both_ends_evidence_to_a_tenth_of_a_frame_and_the_share_to_a_thousandth():
    """Port 101 (B) sends 123.44 pause frames/s for the last 5 minutes; port 100 (A) receives
    them and is paused a third of each of those minutes."""
    w, f, lt = quiet_fleet()
    w.pfc_pause_tx[1, -5:] = 123.44 * 60
    w.pfc_pause_rx[0, -5:] = 123.44 * 60
    w.pfc_pause_us[0, -5:] = 20e6  # 20 s of each minute
    (x,) = evaluate(w, f, lt).findings
    assert (x.key, x.severity, x.link_id, x.port_id) == ("pfc_storm:port:101", "notify", 10, 101)
    assert x.evidence == {"sender_port_id": 101}
    # 30 buckets in 12 points: nine of 3 buckets, then pairs; the storm fills the last two pairs
    # and half of the pair before.
    storm = [0.0] * 9 + [3703.2, 7406.4, 7406.4]
    quiet = [0.0] * 12
    assert x.ends == {
        "a": {
            "port_id": 100,
            "role": "receiver",
            "pause_frames_sent_per_s": 0.0,
            "pause_frames_received_per_s": 61.7,  # 5 minutes of 123.44/s over 10 minutes
            "burst_sent_per_s": 0.0,
            "burst_received_per_s": 123.4,
            "paused_share": 0.333,
            "series_pause_sent": quiet,
            "series_pause_received": storm,
        },
        "b": {
            "port_id": 101,
            "role": "sender",
            "pause_frames_sent_per_s": 61.7,
            "pause_frames_received_per_s": 0.0,
            "burst_sent_per_s": 123.4,
            "burst_received_per_s": 0.0,
            "paused_share": 0.0,
            "series_pause_sent": storm,
            "series_pause_received": quiet,
        },
    }
    assert x.headline == (
        "PFC storm: the B end sends 123 pause frames/s; the A end is paused 33% of the time; "
        "the A end receives 123/s"
    )


def test_a_storm_from_a_recorded_neighbour_that_reports_no_telemetry_names_it():
    """Port 102 receives 200 pause frames/s; its recorded far end is port 900, a host NIC no
    collector reads (it is no row of the window). The alert's summary says "sent by" port 900;
    the headline read "an unrecorded neighbour sends the pauses"."""
    w, f, lt = quiet_fleet()
    lt.b_row[1] = -1  # link 11's B end is port 900, not in the window
    f.expected_neighbor_port_id[2] = 900
    w.pfc_pause_rx[2, -5:] = 200 * 60
    (x,) = evaluate(w, f, lt).findings
    assert (x.key, x.link_id, x.port_id) == ("pfc_storm:port:900", 11, 900)
    assert x.evidence == {"sender_port_id": 900, "sender_reporting": False}
    assert list(x.ends) == ["a"]
    assert x.headline == (
        "PFC storm: the recorded far end (reporting no telemetry) sends the pauses; the A end receives 200/s"
    )
    assert x.recommendation == "Check the host or switch at the recorded far end, " + PFC_ADVICE


def test_a_storm_from_an_unrecorded_neighbour_is_keyed_and_shown_at_the_receiver():
    w, f, lt = quiet_fleet()
    f.expected_neighbor_port_id[:] = -1  # no far end recorded anywhere
    w.pfc_pause_rx[0, -5:] = 200 * 60
    ev = evaluate(w, f, lt)
    (x,) = ev.findings
    assert (x.key, x.link_id, x.port_id) == ("pfc_storm:toward:100", 10, 100)
    assert x.evidence == {"sender_port_id": None}
    assert ev.holding == {"pfc_storm:toward:100"}


@pytest.mark.parametrize(
    ("rate", "opens"),
    [(100.0, False), (101.0, True)],
)
def test_a_one_minute_burst_opens_only_above_100_pause_frames_a_second(rate, opens):
    w, f, lt = quiet_fleet()
    w.pfc_pause_tx[0, -1] = rate * 60
    ev = evaluate(w, f, lt, [BURST_ONLY])
    assert keys(ev) == (["pfc_storm:port:100"] if opens else [])


@pytest.mark.parametrize(
    ("rate", "held"),
    [(50.0, False), (60.0, True)],
)
def test_an_open_burst_alert_holds_above_50_pause_frames_a_second(rate, held):
    """An 80/s minute 30 minutes ago (outside every judged window) makes the row one whose
    samples are read; the last minute sends exactly ``rate``/s: no new alert either way."""
    w, f, lt = quiet_fleet()
    w.pfc_pause_tx[0, 0] = 80 * 60
    w.pfc_pause_tx[0, -1] = rate * 60
    ev = evaluate(w, f, lt, [BURST_ONLY])
    assert keys(ev) == []
    assert ev.holding == ({"pfc_storm:port:100"} if held else set())


def test_ten_pause_frames_a_second_sustained_holds_but_does_not_open():
    w, f, lt = quiet_fleet()
    w.pfc_pause_tx[0, -20:] = 10 * 60  # exactly the sustained bar, for 20 minutes
    ev = evaluate(w, f, lt)
    assert keys(ev) == []
    assert ev.holding == {"pfc_storm:port:100"}


@pytest.mark.parametrize(
    ("rate", "held"),
    [(5.0, False), (6.0, True)],
)
def test_an_open_sustained_alert_holds_above_5_pause_frames_a_second(rate, held):
    """The last 25 minutes send exactly ``rate``/s (every 10-minute window judged in the last
    15 minutes averages that); an 8/s minute before them makes the row one whose samples are read."""
    w, f, lt = quiet_fleet()
    w.pfc_pause_tx[0, 0] = 8 * 60
    w.pfc_pause_tx[0, -25:] = rate * 60
    ev = evaluate(w, f, lt)
    assert keys(ev) == []
    assert ev.holding == ({"pfc_storm:port:100"} if held else set())


def test_a_port_receiving_pauses_below_the_bar_holds_its_far_ends_storm_open():
    """Port 100 receives 8 pause frames/s for 30 minutes (under the 10/s bar, above the 5/s
    hold): the storm its far end, port 101, sends stays open, keyed by the sender."""
    w, f, lt = quiet_fleet()
    w.pfc_pause_rx[0, :] = 8 * 60
    ev = evaluate(w, f, lt)
    assert keys(ev) == []
    assert ev.holding == {"pfc_storm:port:101"}


def test_a_port_receiving_pauses_from_an_unrecorded_neighbour_holds_the_storm_toward_it():
    w, f, lt = quiet_fleet()
    f.expected_neighbor_port_id[:] = -1
    w.pfc_pause_rx[0, :] = 8 * 60
    ev = evaluate(w, f, lt)
    assert keys(ev) == []
    assert ev.holding == {"pfc_storm:toward:100"}


def test_paused_exactly_a_fifth_of_the_minutes_that_report_it_opens():
    """Port 100 is paused exactly 12 s of four of the last five minutes; the fifth reports no
    pause duration and counts neither way (not as unpaused time)."""
    w, f, lt = quiet_fleet()
    w.pfc_pause_us[0, -5:] = 12e6
    w.pfc_pause_us[0, -3] = np.nan
    (x,) = evaluate(w, f, lt).findings
    assert x.key == "pfc_storm:port:101"
    assert x.ends["a"]["paused_share"] == 0.2
    assert x.headline == (
        "PFC storm: the B end (recorded neighbour) sends the pauses; the A end is paused 20% of the time"
    )


@pytest.mark.parametrize(
    ("paused_s", "held"),
    [(6.0, True), (5.4, False)],
)
def test_an_open_paused_share_alert_holds_at_a_tenth_of_the_time(paused_s, held):
    """Paused ``paused_s`` of each of the last 5 minutes: 10% holds (half the 20% bar), 9% lets
    the alert close."""
    w, f, lt = quiet_fleet()
    w.pfc_pause_us[0, -5:] = paused_s * 1e6
    ev = evaluate(w, f, lt)
    assert keys(ev) == []
    assert ev.holding == ({"pfc_storm:port:101"} if held else set())


def test_rates_judge_only_ports_without_a_pause_duration_when_not_always():
    """``pfc_rates_always=False``: port 100 receives 150 pause frames/s but reports being paused
    only 5% of the time (the duration decides: no storm); port 102 receives as many and reports
    no duration (its rate decides: a storm from port 103)."""
    w, f, lt = quiet_fleet()
    w.pfc_pause_rx[0, -5:] = 150 * 60
    w.pfc_pause_us[0, -5:] = 3e6
    w.pfc_pause_rx[2, -5:] = 150 * 60
    w.pfc_pause_us[2, :] = np.nan
    ev = evaluate(w, f, lt, [Thresholds(pfc_rates_always=False)])
    assert keys(ev) == ["pfc_storm:port:103"]


def test_a_share_one_microsecond_under_20_percent_beside_an_unreported_minute_stays_closed():
    """Four of the last five minutes report 48 s paused less one microsecond in all (a share
    just under 20%); the fifth reports no pause duration and adds nothing to the paused time."""
    w, f, lt = quiet_fleet()
    w.pfc_pause_us[0, -5:] = 12e6
    w.pfc_pause_us[0, -1] = 12e6 - 1
    w.pfc_pause_us[0, -3] = np.nan
    ev = evaluate(w, f, lt)
    assert ev.findings == []
    assert ev.holding == {"pfc_storm:port:101"}  # 10% or more holds an open one
