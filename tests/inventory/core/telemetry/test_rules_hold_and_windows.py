"""Rules an operator keeps switched on (pure engine, no database): hold-open hysteresis on every
rule, PFC judged per direction naming the sending end, both PFC presets, and sliding windows of
samples whose verdict never depends on where the samples fall on the bucket grid.

Topology (as in ``test_rules``): links of two ports, rows 2i (A end) and 2i+1 (B end)::

    [row 0 / port 100 / A]--link 10--[row 1 / port 101 / B]    [row 2]--link 11--[row 3] ...
"""

import numpy as np
import pytest

from inventory.core.telemetry.rules.engine import evaluate
from inventory.core.telemetry.rules.frames import SampleSteps
from tests.inventory.core.telemetry.test_rules import fleet


def quiet_fleet(links: int = 2):
    """``test_rules.fleet`` with every counter the sliding rules read reported as zero, and the
    recorded far end of each port."""
    w, f, lt = fleet(links)
    w.pfc_pause_rx[:] = 0
    w.pfc_pause_tx[:] = 0
    w.pfc_pause_us[:] = 0
    n = w.n
    f.expected_neighbor_port_id[0::2] = w.port_id[1::2]
    f.expected_neighbor_port_id[1::2] = w.port_id[0::2]
    assert n == 2 * links
    return w, f, lt


def hovering(rule: str, level: float):
    """A window whose ``rule`` measure sits at ``level`` x its opening threshold."""
    w, f, lt = quiet_fleet()
    if rule == "fec_degradation":  # threshold max(10 x 5e-9 baseline, 1e-8) = 5e-8
        w.corrected_bits[0, :] = 5e-8 * level * w.line_bits[0, :]
    elif rule == "rx_power_drift":  # opens at 2 dB below the lane's own baseline
        w.rx_power_dbm[0, 1] = f.base_rx_dbm[0, 1] - 2.0 * level
    elif rule == "fec_tail":  # opens at 10 high-bin codewords in 3 buckets
        w.hist_crit_cw[0, -1] = 10 * level
    elif rule == "fec_uncorrectable":  # opens at 3 sample intervals with uncorrectables
        w.uncorrectable_cw[0, -1] = 1 if level >= 0.5 else 0
    elif rule == "pfc_storm":  # opens above 10 pause frames/s sustained
        w.pfc_pause_tx[0, :] = 10 * level * 60
    return evaluate(w, f, lt)


KEYS = {
    "fec_degradation": "fec_degradation:link:10",
    "rx_power_drift": "rx_power_drift:link:10",
    "fec_tail": "fec_tail:link:10",
    "fec_uncorrectable": "fec_uncorrectable:link:10",
    "pfc_storm": "pfc_storm:port:100",
}


@pytest.mark.parametrize("rule", list(KEYS))
def test_every_rule_keeps_an_alert_open_while_it_hovers_just_below_its_threshold(rule):
    ev = hovering(rule, 0.8)
    assert [x.key for x in ev.findings] == []  # below the opening bar: nothing new opens ...
    assert KEYS[rule] in ev.holding  # ... but an open alert stays open (no close-reopen-mail)


@pytest.mark.parametrize("rule", list(KEYS))
def test_every_rule_lets_an_alert_close_once_clearly_below(rule):
    ev = hovering(rule, 0.2 if rule != "rx_power_drift" else 0.4)
    assert KEYS[rule] not in ev.holding


@pytest.mark.parametrize("rule", ["fec_degradation", "rx_power_drift", "pfc_storm"])
def test_those_rules_open_once_above_their_threshold(rule):
    assert KEYS[rule] in {x.key for x in hovering(rule, 1.5).findings}


def test_a_pfc_storm_names_the_end_that_sends_the_pauses():
    w, f, lt = quiet_fleet()
    w.pfc_pause_tx[1, -5:] = 150 * 60  # link 10's B end (port 101) sends 150 pause frames/s
    w.pfc_pause_rx[0, -5:] = 150 * 60  # its A end (port 100) receives them
    w.pfc_pause_us[0, -5:] = 0.3 * 60e6  # and is paused 30% of the time
    (x,) = evaluate(w, f, lt).findings
    assert (x.rule, x.key, x.port_id) == ("pfc_storm", "pfc_storm:port:101", 101)
    assert x.ends["b"]["role"] == "sender" and x.ends["a"]["role"] == "receiver"
    assert x.ends["b"]["burst_sent_per_s"] == pytest.approx(150.0)  # the busiest sliding minute
    assert x.ends["b"]["pause_frames_sent_per_s"] == pytest.approx(75.0)  # 5 of the last 10 minutes
    assert x.headline.startswith("PFC storm: the B end sends 150 pause frames/s")
    assert "the A end is paused" in x.headline
    assert "at the B end, which sends the pause frames" in x.recommendation
    assert x.recommendation_code == "check_host"


def test_a_storm_seen_only_by_the_receiving_end_names_its_recorded_far_end():
    w, f, lt = quiet_fleet()
    w.pfc_pause_rx[2, -5:] = 200 * 60  # port 102 receives pauses; port 103 reports nothing
    w.seconds[3, :] = 0
    (x,) = evaluate(w, f, lt).findings
    assert (x.key, x.port_id) == ("pfc_storm:port:103", 103)
    assert x.evidence["sender_port_id"] == 103


def test_a_sustained_low_rate_storm_is_flagged():
    """15 pause frames/s for 20 minutes: under the 100/s burst preset, over the 10/s sustained."""
    w, f, lt = quiet_fleet()
    w.pfc_pause_tx[0, -20:] = 15 * 60
    (x,) = evaluate(w, f, lt).findings
    assert x.key == "pfc_storm:port:100"
    assert x.ends["a"]["pause_frames_sent_per_s"] == pytest.approx(15.0)
    w.pfc_pause_tx[0, -20:] = 8 * 60  # 8/s is under both presets
    assert evaluate(w, f, lt).findings == []


def steps_for(row: int, t_end: float, events: dict[float, tuple[float, float, float]], *, phase: float):
    """10-s sample steps of one row over the 20 minutes before ``t_end``, sampled at ``phase``
    seconds past each 10-s mark; ``events`` maps a time (s before ``t_end``) to (uncorrectable,
    pause rx, pause tx) counts landing in the interval that contains it."""
    t = np.arange(t_end - 1200 + phase, t_end + 1e-9, 10.0)
    vals = np.zeros((t.size, 3))
    for before, v in events.items():
        at = t_end - before
        i = int(np.searchsorted(t, at, side="left"))  # the sample that closes the interval
        vals[min(i, t.size - 1)] += v
    return SampleSteps(
        row=np.full(t.size, row, dtype=np.int64),
        t=t,
        dt=np.full(t.size, 10.0),
        uncorrectable_cw=vals[:, 0],
        pfc_pause_rx=vals[:, 1],
        pfc_pause_tx=vals[:, 2],
    )


@pytest.mark.parametrize("phase", [0.0, 2.5, 5.0, 9.9])
@pytest.mark.parametrize("shift", [0, 20, 40])
def test_four_uncorrectable_bursts_in_five_minutes_are_caught_at_every_sample_phase(phase, shift):
    """Two pairs of bursts 20 s apart: on a one-minute grid a pair often shares a bucket (two or
    three buckets in all, depending on the phase); counted per sample they are always four."""
    w, f, lt = quiet_fleet()
    end = w.t_start + w.buckets * w.bucket_s
    bursts = {
        290.0 - shift: (5, 0, 0),
        270.0 - shift: (5, 0, 0),
        130.0 - shift: (5, 0, 0),
        110.0 - shift: (5, 0, 0),
    }
    w.steps = steps_for(0, end, bursts, phase=phase)
    keys = [x.key for x in evaluate(w, f, lt).findings]
    assert keys == ["fec_uncorrectable:link:10"]


@pytest.mark.parametrize("phase", [0.0, 3.0, 7.0])
@pytest.mark.parametrize("start_in_minute", [0, 30])
def test_a_one_minute_pfc_burst_is_caught_wherever_it_falls_on_the_bucket_grid(phase, start_in_minute):
    """150 pause frames/s for 70 s: split across two one-minute buckets it averages under 100/s
    in each; a sliding minute of samples sees it whole."""
    w, f, lt = quiet_fleet()
    end = w.t_start + w.buckets * w.bucket_s
    first = 240.0 - start_in_minute
    burst = {first - k: (0, 0, 1500) for k in range(0, 70, 10)}  # 150/s in 10-s samples
    w.steps = steps_for(0, end, burst, phase=phase)
    assert [x.key for x in evaluate(w, f, lt).findings] == ["pfc_storm:port:100"]
