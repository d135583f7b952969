"""Receive power per bucket (pure engine, no database): a lane's drop below its own baseline, or
the power under the module's own warning, must hold for ``rx_hold_s`` (5 one-minute buckets,
80% of them reported) to open, and an open alert holds while the clear window (15 buckets) shows
the condition within ``rx_clear_db`` (1 dB) of its threshold.

Topology (as in ``test_rules``): link 10 is [row 0 / port 100 / A]--[row 1 / port 101 / B].
"""

import numpy as np

from inventory.core.telemetry.rules.config import Thresholds
from inventory.core.telemetry.rules.engine import evaluate
from tests.inventory.core.telemetry.test_rules import B, fleet

KEY = "rx_power_drift:link:10"


def per_bucket():
    """One healthy link whose lanes report their lowest power in every bucket: -2 dBm, each lane's
    own baseline; the modules warn under -9 dBm."""
    w, f, lt = fleet(1)
    w.rx_power_dbm_b = np.full((w.n, B, 8), -2.0)
    return w, f, lt


def test_a_lane_dropping_for_five_buckets_opens_with_its_evidence():
    w, f, lt = per_bucket()
    w.rx_power_dbm_b[0, -5:, 3] = -5.0  # lane 4 of the A end: 3 dB below its baseline
    w.rx_power_dbm[0, 3] = -5.004  # the latest reading, to the hundredth in the evidence
    w.rx_power_dbm[0, 7] = np.nan  # lane 8 not reported just now
    ev = evaluate(w, f, lt)
    (x,) = ev.findings
    assert (x.key, x.severity) == (KEY, "notify")
    assert x.ends == {
        "a": {
            "port_id": 100,
            "rx_power_dbm": [-2.0, -2.0, -2.0, -5.0, -2.0, -2.0, -2.0, None],
            "baseline_rx_dbm": [-2.0] * 8,
            "worst_drop_db": 3.0,
            "worst_lane": 4,
            "module_rx_low_warn_dbm": -9.0,
            "below_module_warning": False,
        }
    }
    # the A end's power is not a baseline to learn while its alert is open; the B end's is
    assert np.isnan(ev.rx_now[0]).all()
    assert (ev.rx_now[1] == -2.0).all()


def test_four_buckets_are_not_yet_an_alert_but_hold_an_open_one():
    w, f, lt = per_bucket()
    w.rx_power_dbm_b[0, -4:, 3] = -5.0
    ev = evaluate(w, f, lt)
    assert ev.findings == []
    assert ev.holding == {KEY}
    assert np.isnan(ev.rx_now[0]).all()  # held open: not a baseline to learn either


def test_one_unreported_bucket_of_five_still_opens_two_do_not():
    w, f, lt = per_bucket()
    w.rx_power_dbm_b[0, -5:, 3] = -5.0
    w.rx_power_dbm_b[0, -3, :] = np.nan  # 4 of 5 buckets reported: 80%
    assert [x.key for x in evaluate(w, f, lt).findings] == [KEY]
    w.rx_power_dbm_b[0, -2, :] = np.nan  # 3 of 5
    assert evaluate(w, f, lt).findings == []


def test_the_evidence_is_the_latest_reported_bucket():
    w, f, lt = per_bucket()
    w.rx_power_dbm_b[0, -6:-1, 3] = -5.0  # five buckets 3 dB down on lane 4 ...
    w.rx_power_dbm_b[0, -2, 3] = -5.5  # ... the last reported one 3.5 dB down
    w.rx_power_dbm_b[0, -1, :] = np.nan  # and the last minute not reported
    (x,) = evaluate(w, f, lt).findings
    assert (x.ends["a"]["worst_drop_db"], x.ends["a"]["worst_lane"]) == (3.5, 4)


def test_a_drop_of_exactly_the_threshold_or_power_at_the_warning_is_no_alert():
    w, f, lt = per_bucket()
    w.rx_power_dbm_b[0, :, 3] = -4.0  # exactly 2 dB down: the rule is "more than 2 dB"
    f.base_rx_dbm[1, :] = -9.0
    w.rx_power_dbm_b[1, :, :] = -9.0  # exactly at the module's -9 dBm warning: not under it
    assert evaluate(w, f, lt).findings == []


def test_an_unreported_lane_is_no_drop_and_hides_none():
    w, f, lt = per_bucket()
    w.rx_power_dbm_b[0, :, 5] = np.nan
    w.rx_power_dbm[0, 5] = np.nan
    assert evaluate(w, f, lt).findings == []
    w.rx_power_dbm_b[0, -5:, 2] = -5.0  # lane 3 drops 3 dB beside the unreported lane 6
    (x,) = evaluate(w, f, lt).findings
    assert (x.ends["a"]["worst_drop_db"], x.ends["a"]["worst_lane"]) == (3.0, 3)


def test_a_module_under_its_warning_with_no_baseline_yet_names_no_lane():
    w, f, lt = per_bucket()
    f.base_rx_dbm[0, :] = np.nan  # a new link: nothing learnt yet
    w.rx_power_dbm_b[0, :, :] = -10.0
    (x,) = evaluate(w, f, lt).findings
    assert (x.severity, x.ends["a"]["worst_drop_db"], x.ends["a"]["worst_lane"]) == ("page", None, None)
    assert x.headline == "rx power below the module's own warning threshold (-9.0 dBm) at the A end"


def test_each_link_is_judged_by_its_own_profile():
    """Link 10 takes the second profile (a 1 dB drift threshold); the first has no link."""
    w, f, lt = per_bucket()
    lt.profile[0] = 1
    w.rx_power_dbm_b[0, -5:, 3] = -3.5  # 1.5 dB down
    profiles = [Thresholds(), Thresholds(rx_drift_db=1.0)]
    assert [x.key for x in evaluate(w, f, lt, profiles).findings] == [KEY]
    assert evaluate(w, f, lt).findings == []  # under the default's 2 dB: nothing


def test_an_open_drift_holds_above_one_db_and_closes_at_it():
    """The threshold is 2 dB; an open alert holds while any bucket of the last 15 is more than
    1 dB down, and closes once every one is at most 1 dB down."""
    w, f, lt = per_bucket()
    w.rx_power_dbm_b[0, :, 3] = -3.1  # 1.1 dB down all along
    assert evaluate(w, f, lt).holding == {KEY}
    w.rx_power_dbm_b[0, :, 3] = -3.0  # exactly 1 dB
    assert evaluate(w, f, lt).holding == set()


def test_power_under_the_modules_warning_for_five_buckets_pages():
    w, f, lt = per_bucket()
    f.base_rx_dbm[0, :] = -9.5  # a weak link from the start: no drop, only the warning
    w.rx_power_dbm_b[0, -5:, :] = -9.5
    w.rx_power_dbm_b[0, :-5, :] = -9.5 + 0.2
    (x,) = evaluate(w, f, lt).findings
    assert (x.key, x.severity, x.ends["a"]["below_module_warning"]) == (KEY, "page", True)
    w.rx_power_dbm_b[0, -1, :] = -8.9  # the last bucket back over the warning: not five
    assert evaluate(w, f, lt).findings == []


def test_an_open_low_power_alert_holds_within_one_db_of_the_warning():
    w, f, lt = fleet(2)  # link 11 healthy beside it: held or not on its own
    w.rx_power_dbm_b = np.full((w.n, B, 8), -2.0)
    f.base_rx_dbm[0, :] = -8.0
    w.rx_power_dbm_b[0, :, :] = -8.1  # 0.9 dB over the -9 dBm warning, everywhere
    assert evaluate(w, f, lt).holding == {KEY}
    w.rx_power_dbm_b[0, :, :] = -8.0  # 1 dB over it
    assert evaluate(w, f, lt).holding == set()


def test_a_module_with_fewer_lanes_than_its_baseline_is_judged_on_the_lanes_it_has():
    w, f, lt = fleet(1)
    w.rx_power_dbm = np.full((w.n, 4), -2.0)  # a 4-lane module where 8 baselines are recorded
    w.rx_power_dbm_b = None
    w.rx_power_dbm[1, 2] = -6.0  # B end, lane 3: 4 dB down
    (x,) = evaluate(w, f, lt).findings
    assert x.headline == "lane 3 rx power 4.0 dB below its own baseline at the B end"


def test_the_evidence_is_each_rows_own_latest_bucket():
    """The A end reports every bucket; the B end's drop shows 3.5 dB in its last reported bucket,
    and its last minute is not reported: its evidence is its own latest bucket, not the A end's."""
    w, f, lt = per_bucket()
    w.rx_power_dbm_b[1, -6:-1, 3] = -5.0
    w.rx_power_dbm_b[1, -2, 3] = -5.5
    w.rx_power_dbm_b[1, -1, :] = np.nan
    (x,) = evaluate(w, f, lt).findings
    assert set(x.ends) == {"b"}
    assert (x.ends["b"]["worst_drop_db"], x.ends["b"]["worst_lane"]) == (3.5, 4)


def test_the_evidence_skips_two_unreported_buckets():
    """A profile asking 60% of the hold reported: 3 of the last 5 buckets are, all 3 dB down or
    more; the latest reported bucket (third from the end, 3.5 dB down) is the evidence."""
    w, f, lt = per_bucket()
    w.rx_power_dbm_b[0, -5:, 3] = -5.0
    w.rx_power_dbm_b[0, -3, 3] = -5.5
    w.rx_power_dbm_b[0, -2:, :] = np.nan
    (x,) = evaluate(w, f, lt, [Thresholds(coverage=0.6)]).findings
    assert (x.ends["a"]["worst_drop_db"], x.ends["a"]["worst_lane"]) == (3.5, 4)


def test_a_two_bucket_hold_needs_both_buckets_reported():
    """``rx_hold_s`` of 2 minutes: 80% of two buckets is both of them."""
    w, f, lt = per_bucket()
    profiles = [Thresholds(rx_hold_s=120.0)]
    w.rx_power_dbm_b[0, -2:, 3] = -5.0
    assert [x.key for x in evaluate(w, f, lt, profiles).findings] == [KEY]
    w.rx_power_dbm_b[0, -2, :] = np.nan  # one of the two not reported
    assert evaluate(w, f, lt, profiles).findings == []


def test_a_two_bucket_hold_at_half_coverage_opens_on_one_reported_bucket():
    w, f, lt = per_bucket()
    w.rx_power_dbm_b[0, -1, 3] = -5.0
    w.rx_power_dbm_b[0, -2, :] = np.nan
    (x,) = evaluate(w, f, lt, [Thresholds(rx_hold_s=120.0, coverage=0.5)]).findings
    assert (x.key, x.ends["a"]["worst_drop_db"]) == (KEY, 3.0)


def test_a_profile_covering_a_single_port_judges_its_receive_power():
    """Link 11 takes profile 1 and its B end is on no recorded link (port 103, the default
    profile's): profile 1 covers the A end, port 102, alone."""
    w, f, lt = fleet(2)
    w.rx_power_dbm_b = np.full((w.n, B, 8), -2.0)
    lt.b_row[1] = -1
    lt.profile[:] = [0, 1]
    w.rx_power_dbm_b[2, -5:, 3] = -5.0
    (x,) = evaluate(w, f, lt, [Thresholds(), Thresholds()]).findings
    assert x.key == "rx_power_drift:link:11"
    assert (x.ends["a"]["port_id"], x.ends["a"]["worst_drop_db"]) == (102, 3.0)


def test_a_ten_minute_clear_window_holds_on_its_own_ten_buckets():
    """``clear_s`` of 10 minutes: power within 1 dB of the warning 11 to 20 minutes ago, and
    clear of it in the last 10, holds nothing; within it 10 minutes ago, it holds."""
    w, f, lt = per_bucket()
    profiles = [Thresholds(clear_s=600.0)]
    w.rx_power_dbm_b[0, -20:-10, :] = -8.5
    assert evaluate(w, f, lt, profiles).holding == set()
    w.rx_power_dbm_b[0, -10, :] = -8.5
    assert evaluate(w, f, lt, profiles).holding == {KEY}
