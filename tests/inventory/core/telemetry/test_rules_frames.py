"""The engine's inputs as the selector builds them (pure engine, no database): a window starting
at a real time with its default ids, raw samples per port, a module that reports no warning
threshold, and the longest sliding window a profile may ask for.

Topology (as in ``test_rules``): links of two ports, rows 2i (A end) and 2i+1 (B end)::

    [row 0 / A]--link 10--[row 1 / B]    [row 2 / A]--link 11--[row 3 / B] ...
"""

import numpy as np
import pytest

from inventory.core.telemetry.rules.config import Thresholds
from inventory.core.telemetry.rules.engine import evaluate
from inventory.core.telemetry.rules.frames import LinkTable, PortFacts, PortWindow, SampleSteps
from tests.inventory.core.telemetry.test_rules import fleet
from tests.inventory.core.telemetry.test_rules_hold_and_windows import quiet_fleet

T = 1_800_000_000.0  # a minute boundary (epoch seconds)


def counter_steps(rows, t, *, uncorrectable=None, pause_tx=None) -> SampleSteps:
    """Raw 10-s samples of the step counters of ``rows`` at times ``t`` (zeros unless given)."""
    row = np.repeat(np.asarray(rows, dtype=np.int64), t.size)
    tt = np.tile(t, len(rows))
    e = tt.size
    return SampleSteps(
        row=row,
        t=tt,
        dt=np.full(e, 10.0),
        uncorrectable_cw=np.zeros(e) if uncorrectable is None else uncorrectable(row, tt),
        pfc_pause_rx=np.zeros(e),
        pfc_pause_tx=np.zeros(e) if pause_tx is None else pause_tx(row, tt),
    )


def test_a_window_from_a_real_start_time_judges_the_samples_of_its_last_ten_minutes():
    """30 one-minute buckets from ``T`` (the selector's call, default ids 0 and 1): the window
    ends at T + 1800 s, so uncorrectables 590 s, 300 s and 10 s before it are three in the last
    ten minutes; one 600 s before it is not."""
    w = PortWindow.empty(2, 30, t_start=T)
    w.seconds[:] = 60.0
    f = PortFacts.empty(2)
    lt = LinkTable.empty(1)
    lt.a_row[:] = 0
    lt.b_row[:] = 1
    end = T + 1800
    hits = {end - 590.0: 2.0, end - 300.0: 1.0, end - 10.0: 4.0}

    def uncorrectable(row, t):
        return np.array([hits.get(float(x), 0.0) if r == 0 else 0.0 for r, x in zip(row, t, strict=True)])

    w.steps = counter_steps([0, 1], np.arange(end - 890, end + 1e-9, 10.0), uncorrectable=uncorrectable)
    (x,) = evaluate(w, f, lt).findings
    assert (x.key, x.ends["a"]["port_id"], x.ends["a"]["uncorrectable_cw"]) == (
        "fec_uncorrectable:link:0",
        0,
        7.0,
    )
    del hits[end - 590.0]
    hits[end - 600.0] = 2.0
    w.steps = counter_steps([0, 1], np.arange(end - 890, end + 1e-9, 10.0), uncorrectable=uncorrectable)
    assert evaluate(w, f, lt).findings == []


def test_uncorrectables_in_a_bucket_covering_one_second_still_count():
    """A port that came back a second before a bucket ended: that bucket's one second of data is
    still a sample (no raw samples given: the buckets' own steps)."""
    w, f, lt = fleet(1)
    w.uncorrectable_cw[0, [-8, -6, -4]] = 3
    w.seconds[0, -4] = 1.0
    w.line_bits[0, -4] /= 60
    w.corrected_bits[0, -4] /= 60
    w.corrected_cw[0, -4] /= 60
    (x,) = evaluate(w, f, lt).findings
    assert (x.key, x.ends["a"]["samples_with_uncorrectable"]) == ("fec_uncorrectable:link:10", 3)


def test_a_module_reporting_no_warning_threshold_is_judged_on_its_baseline_alone():
    """The selector leaves the module's warning threshold unknown when the module does not report
    one: a 3 dB drop below the lane's baseline still alerts (notify, no warning named)."""
    w = PortWindow.empty(2, 30)
    w.seconds[:] = 60.0
    w.rx_power_dbm[:, :4] = -2.0
    w.rx_power_dbm[0, 1] = -5.0
    f = PortFacts.empty(2)
    f.base_rx_dbm[:, :4] = -2.0
    lt = LinkTable.empty(1)
    lt.a_row[:] = 0
    lt.b_row[:] = 1
    (x,) = evaluate(w, f, lt).findings
    assert (x.key, x.severity) == ("rx_power_drift:link:0", "notify")
    assert x.ends["a"]["worst_drop_db"] == 3.0
    assert x.ends["a"]["module_rx_low_warn_dbm"] is None
    assert x.ends["a"]["below_module_warning"] is False


def test_a_burst_at_the_end_of_one_ports_samples_is_not_counted_for_the_next_port():
    """Raw samples of two ports over the last five minutes: port 100 sends 200 pause frames/s in
    its last minute, port 101 none. Only port 100 is the sender."""
    w, f, lt = quiet_fleet(1)
    end = w.end

    def pause_tx(row, t):
        return np.where((row == 0) & (t > end - 60), 2000.0, 0.0)

    w.steps = counter_steps([0, 1], np.arange(end - 290, end + 1e-9, 10.0), pause_tx=pause_tx)
    ev = evaluate(w, f, lt)
    assert [x.key for x in ev.findings] == ["pfc_storm:port:100"]


def test_a_sliding_window_of_a_million_seconds_is_refused():
    """Sliding windows are found on one key per (port, time) with ports 1e6 s apart: a profile
    asking for a window that long is refused by name; one second shorter is judged."""
    w, f, lt = quiet_fleet(1)
    w.pfc_pause_tx[0, -1] = 60 * 60.0  # a port that sends pauses: its samples are read
    with pytest.raises(ValueError, match=r"^a sliding window of 1000000.0 s is longer than 1000000 s$"):
        evaluate(w, f, lt, [Thresholds(pfc_sustained_s=1e6)])
    assert [x.key for x in evaluate(w, f, lt, [Thresholds(pfc_sustained_s=999_999.0)]).findings] == []


def test_a_link_whose_far_end_is_not_in_the_window_is_judged_on_the_end_that_reports():
    """Two links with one end each in the window (the other end's row left unset: not
    reporting): link 0's A end and link 1's B end degrade; each finding names its own end and
    says the other does not report.

        [row 0 / port 100 / A]--link 0--[not in the window]
        [not in the window]--link 1--[row 1 / port 101 / B]
    """
    w, f, _ = fleet(1)
    lt = LinkTable.empty(2)
    lt.a_row[0] = 0
    lt.b_row[1] = 1
    w.corrected_bits[:, -12:] *= 300
    got = {x.key: (sorted(x.ends), x.evidence["reporting"]) for x in evaluate(w, f, lt).findings}
    assert got == {
        "fec_degradation:link:0": (["a"], {"a": True, "b": False}),
        "fec_degradation:link:1": (["b"], {"a": False, "b": True}),
    }


def test_ports_without_raw_samples_are_judged_on_their_own_bucket_steps_alone():
    """The selector reads raw samples only for some ports and joins the bucket steps of the
    others (``from_buckets`` of those rows) to them, or to no raw samples at all: each port's
    uncorrectable samples are counted once. Port 100 has buckets only; port 102 raw samples
    (three of them with uncorrectables, in three buckets)."""
    w, f, lt = fleet(2)
    w.uncorrectable_cw[0, [-8, -6, -4]] = 1.0
    end = w.end
    raw = {end - 470.0: 2.0, end - 290.0: 1.0, end - 50.0: 4.0}

    def uncorrectable(row, t):
        return np.array([raw.get(float(x), 0.0) for x in t])

    samples = counter_steps([2], np.arange(end - 890, end + 1e-9, 10.0), uncorrectable=uncorrectable)
    for t, v in raw.items():
        w.uncorrectable_cw[2, int((t - w.t_start) // 60)] = v
    expected = {
        "fec_uncorrectable:link:10": (3.0, 3),
        "fec_uncorrectable:link:11": (7.0, 3),
    }
    for steps in (
        samples.concat(SampleSteps.from_buckets(w, np.array([0]))),
        SampleSteps.empty().concat(SampleSteps.from_buckets(w, np.array([0, 2]))),
    ):
        w.steps = steps
        got = {
            x.key: (x.ends["a"]["uncorrectable_cw"], x.ends["a"]["samples_with_uncorrectable"])
            for x in evaluate(w, f, lt).findings
        }
        assert got == expected


def test_two_steps_given_newest_first_are_judged_in_time_order():
    """The sliding windows search each step's start by time; the selector hands raw samples
    ordered, but two of one port handed newest first (one late sample) are put in order with
    their values, not left as they came (only one step, or steps already in order, are kept)."""
    zeros = np.zeros(2)
    steps = SampleSteps(
        row=np.array([0, 0]),
        t=np.array([20.0, 10.0]),
        dt=np.array([10.0, 10.0]),
        uncorrectable_cw=np.array([5.0, 7.0]),
        pfc_pause_rx=zeros,
        pfc_pause_tx=zeros,
    ).ordered()
    assert (steps.t.tolist(), steps.uncorrectable_cw.tolist()) == ([10.0, 20.0], [7.0, 5.0])
    assert steps.window_start(10.0).tolist() == [0, 1]  # each 10-s window holds its own step only
