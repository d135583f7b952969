"""The per-port rollup arithmetic (pure): each bucket's exact sums, extremes, counts and identity.

One port, one-minute buckets from T0 (a whole minute). Samples every 30 s; the one at T0-30 is
the lookback (before ``since``): it gives the first interval its predecessor and counts nowhere::

    T0-30 | T0   T0+30 | T0+60  T0+90 | (T0+120 empty minute) T0+150 |
    ------+------------+--------------+-------------------------------+
    look- | bucket T0  | bucket T0+60 | bucket T0+120                 |
"""

from datetime import UTC, datetime

import pytest

from inventory.core.telemetry.rollup import Layout, PortLine, RawSample, rollup_port, split_bins

T0 = 1_800_000_000.0  # 2027-01-15T08:00:00Z, a whole minute
W = 60
KP4 = Layout(bin_low=[0, 1, 6, 12], bin_high=[0, 5, 11, 15], limit=15)  # warn 6-11, crit 12-15


def _s(dt: float, **counters: int | None) -> RawSample:
    return RawSample(t=T0 + dt, counters=dict(counters))


def _roll(samples, **kw):
    kw.setdefault("width", W)
    kw.setdefault("since", T0)
    kw.setdefault("line", None)
    kw.setdefault("layouts", {})
    return {b.start - T0: b for b in rollup_port(samples, **kw)}


def test_each_interval_s_increase_goes_to_the_bucket_of_its_later_sample():
    samples = [
        _s(-30, fec_corrected_cw=100),
        _s(0, fec_corrected_cw=110),
        _s(30, fec_corrected_cw=130),
        _s(60, fec_corrected_cw=160),
        _s(90, fec_corrected_cw=200),
        _s(150, fec_corrected_cw=300),
    ]
    # given out of order, and ``since`` inside the first minute: it is aligned down to T0
    out = _roll(list(reversed(samples)), since=T0 + 5)
    assert sorted(out) == [0, 60, 120]  # the lookback's minute is not a bucket; an empty minute none
    assert [out[k].counters for k in (0, 60, 120)] == [
        {"fec_corrected_cw": 30.0},
        {"fec_corrected_cw": 70.0},
        {"fec_corrected_cw": 100.0},
    ]
    assert [out[k].samples for k in (0, 60, 120)] == [2, 2, 1]
    # seconds covered by the intervals ending in the bucket (T0+150's began at T0+90)
    assert [out[k].covered_s for k in (0, 60, 120)] == [60.0, 60.0, 60.0]
    assert [out[k].resets for k in (0, 60, 120)] == [0, 0, 0]
    assert out[0].start_dt == datetime(2027, 1, 15, 8, 0, tzinfo=UTC)


def test_without_a_lookback_the_first_sample_only_starts_the_count():
    out = _roll([_s(0, pfc_pause_rx=7), _s(20, pfc_pause_rx=10), _s(40, pfc_pause_rx=15)])
    assert out[0].counters == {"pfc_pause_rx": 8.0}
    assert out[0].samples == 3
    assert out[0].covered_s == 40.0


def test_a_repeated_timestamp_is_not_data_and_never_a_reset():
    samples = [
        _s(0, link_down_events=4),
        _s(30, link_down_events=6),
        _s(30, link_down_events=1),
        _s(50, link_down_events=7),
    ]
    out = _roll(samples)
    assert out[0].counters == {"link_down_events": 3.0}
    assert out[0].resets == 0
    assert out[0].samples == 3


def test_a_drop_is_a_reset_counted_from_zero_and_a_64_bit_wrap_by_default():
    top = 1 << 64
    samples = [
        _s(0, link_down_events=5, fec_uncorrectable_cw=top - 10),
        _s(20, link_down_events=2, fec_uncorrectable_cw=5),
        _s(40, link_down_events=3, fec_uncorrectable_cw=6),
    ]
    out = _roll(samples)
    assert out[0].counters == {"link_down_events": 3.0, "fec_uncorrectable_cw": 16.0}
    assert out[0].resets == 2  # the reset and the wrap
    # a counter of unknown width: the drop is a reset, the new value counted from zero
    unknown = _roll(samples, wrap_bits=None)
    assert unknown[0].counters == {"link_down_events": 3.0, "fec_uncorrectable_cw": 6.0}


def test_a_counter_missing_from_a_sample_resumes_from_its_last_value():
    samples = [
        _s(0, fec_corrected_cw=10, pfc_pause_tx=1),
        _s(20, fec_corrected_cw=None, pfc_pause_tx=3),
        _s(40, fec_corrected_cw=25, pfc_pause_tx=4),
    ]
    out = _roll(samples)
    assert out[0].counters == {"fec_corrected_cw": 15.0, "pfc_pause_tx": 3.0}


def test_pre_fec_ber_from_corrected_bits_over_the_line_bits_of_their_own_intervals():
    """Corrected bits over seconds x lanes x lane rate; the seconds are those between samples
    that carry the bit counter (a sample without it does not split the interval)."""
    line = PortLine(lanes=4, lane_gbps=106.25)
    samples = [
        _s(-30, fec_corrected_bits=0, fec_corrected_cw=0),
        _s(0, fec_corrected_bits=1000, fec_corrected_cw=1),
        _s(30, fec_corrected_bits=5000, fec_corrected_cw=2),
        _s(60, fec_corrected_bits=None, fec_corrected_cw=3),
        _s(90, fec_corrected_bits=9000, fec_corrected_cw=4),
    ]
    out = _roll(samples, line=line)
    assert out[0].bits_seconds == 60.0
    assert out[0].line_bits == 60 * 4 * 106.25e9
    assert out[0].pre_fec_ber == pytest.approx(5000 / (60 * 4 * 106.25e9), rel=1e-12)
    # the interval T0+30 -> T0+90 ends in the second bucket: 60 s for 4000 bits
    assert out[60].bits_seconds == 60.0
    assert out[60].pre_fec_ber == pytest.approx(4000 / (60 * 4 * 106.25e9), rel=1e-12)
    # half-second samples: a bucket of under a second still has a BER from its bits
    fast = _roll([_s(0, fec_corrected_bits=0), _s(0.5, fec_corrected_bits=425)], line=line)
    assert fast[0].pre_fec_ber == pytest.approx(425 / (0.5 * 4 * 106.25e9), rel=1e-12)


def test_without_a_line_rate_the_bucket_s_ber_is_the_mean_of_the_reported_gauges():
    samples = [
        RawSample(t=T0 - 30, counters={"fec_corrected_bits": 0}, pre_fec_ber=9e-3),
        RawSample(t=T0, counters={"fec_corrected_bits": 10}, pre_fec_ber=1e-8),
        RawSample(t=T0 + 30, counters={"fec_corrected_bits": 20}, pre_fec_ber=3e-8, post_fec_ber=1e-15),
        RawSample(t=T0 + 45, counters={}, pre_fec_ber=2e-8),
        RawSample(t=T0 + 50, counters={}),
    ]
    for line in (None, PortLine(lanes=4, lane_gbps=None)):
        b = _roll(samples, line=line)[0]
        assert b.pre_fec_ber == pytest.approx(2e-8, rel=1e-12)
        assert (b.pre_fec_ber_n, b.pre_fec_ber_max, b.post_fec_ber_max) == (3, 3e-8, 1e-15)
        assert b.line_bits is None
    # a bucket with neither bits nor gauges has no BER
    assert _roll([_s(0, pfc_pause_rx=1), _s(10, pfc_pause_rx=2)])[0].pre_fec_ber is None


def test_gauges_keep_the_bucket_s_worst_values():
    samples = [
        RawSample(t=T0 - 30, counters={}, temperature_c=99.0, speed_gbps=1.0, link_width=1),  # lookback
        RawSample(t=T0, counters={}, temperature_c=41.0, speed_gbps=400.0, link_width=4, post_fec_ber=2e-15),
        RawSample(t=T0 + 20, counters={}, temperature_c=47.5, speed_gbps=200.0, link_width=2),
        RawSample(
            t=T0 + 40, counters={}, temperature_c=44.0, speed_gbps=400.0, link_width=4, post_fec_ber=1e-15
        ),
        RawSample(t=T0 + 50, counters={}),
    ]
    b = _roll(samples)[0]
    assert (b.temperature_max_c, b.speed_min, b.width_min, b.post_fec_ber_max) == (47.5, 200.0, 2, 2e-15)
    assert b.pre_fec_ber_max is None and b.pre_fec_ber is None


def test_lane_power_keeps_each_lane_s_minimum_and_lanes_only_one_sample_reports():
    samples = [
        RawSample(t=T0, counters={}, rx_power_dbm=[-3.0, None, -5.0], tx_power_dbm=[1.0]),
        RawSample(t=T0 + 20, counters={}, rx_power_dbm=[-4.0, -2.0], tx_power_dbm=[0.5, 0.7]),
        RawSample(t=T0 + 40, counters={}, rx_power_dbm=None, tx_power_dbm=[None, 0.9]),
        RawSample(t=T0 + 50, counters={}, rx_power_dbm=[-3.5, -2.5, None]),
    ]
    b = _roll(samples)[0]
    assert b.rx_min == [-4.0, -2.5, -5.0]
    assert b.tx_min == [0.5, 0.7]
    assert _roll([RawSample(t=T0, counters={})])[0].rx_min is None


def test_histogram_increase_is_split_into_warning_and_critical_codewords():
    """KP4, correction limit 15: bins from 6 are warnings, from 12 critical; the highest bin
    that gained anything (bin 0, no error, never counts) is kept."""
    samples = [
        RawSample(t=T0 - 30, counters={}, hist_layout=1, hist=[1000, 50, 3, 0]),
        RawSample(t=T0, counters={}, hist_layout=1, hist=[2000, 60, 5, 2]),
        RawSample(t=T0 + 30, counters={}, hist_layout=1, hist=[2500, 61, 8, 2]),
        RawSample(t=T0 + 60, counters={}, hist_layout=1, hist=[2600, 65, 8, 2]),
        RawSample(t=T0 + 120, counters={}, hist_layout=1, hist=[2700, 65, 8, 2]),
    ]
    out = _roll(samples, layouts={1: KP4})
    b = out[0]
    assert (b.hist_layout, b.hist_limit) == (1, 15)
    assert (b.hist_warn, b.hist_crit, b.hist_max_bin_high) == (5.0, 2.0, 15)
    assert b.resets == 0
    # only bin 1-5 gained: no warning or critical codeword, the highest bin 5
    assert (out[60].hist_warn, out[60].hist_crit, out[60].hist_max_bin_high) == (0.0, 0.0, 5)
    # only error-free codewords: no highest bin
    assert (out[120].hist_warn, out[120].hist_crit, out[120].hist_max_bin_high) == (0.0, 0.0, None)


def test_a_histogram_that_drops_or_changes_layout_is_counted_from_zero():
    other = Layout(bin_low=[0, 12], bin_high=[11, 15], limit=15)
    samples = [
        RawSample(t=T0 - 30, counters={"link_down_events": 5}, hist_layout=1, hist=[10, 10, 10, 10]),
        # bin 1 dropped: the histogram was cleared (with the port's counters)
        RawSample(t=T0, counters={"link_down_events": 2}, hist_layout=1, hist=[20, 5, 10, 4]),
        RawSample(t=T0 + 60, counters={}, hist_layout=2, hist=[7, 3]),  # another layout: as it is
    ]
    out = _roll(samples, layouts={1: KP4, 2: other})
    assert (out[0].hist_warn, out[0].hist_crit, out[0].resets) == (10.0, 4.0, 2)  # both resets
    assert (out[60].hist_layout, out[60].hist_crit, out[60].hist_warn, out[60].resets) == (2, 3.0, 0.0, 0)


def test_a_histogram_of_unknown_layout_is_not_judged_and_one_without_layout_is_ignored():
    samples = [
        RawSample(t=T0 - 30, counters={}, hist_layout=1, hist=[9, 9, 9, 9]),
        RawSample(t=T0, counters={}, hist_layout=None, hist=[50, 50, 50, 50]),  # no layout: not data
        RawSample(t=T0 + 30, counters={}, hist_layout=1, hist=[10, 10, 10, 10]),
        RawSample(t=T0 + 60, counters={}, hist_layout=3, hist=[1, 2]),
    ]
    out = _roll(samples, layouts={1: KP4})
    assert (out[0].hist_warn, out[0].hist_crit, out[0].hist_max_bin_high) == (1.0, 1.0, 15)
    assert (out[60].hist_layout, out[60].hist_warn, out[60].hist_crit) == (None, None, None)


def test_identity_is_the_last_observation_before_the_bucket_s_end():
    obs = [
        (T0 - 100, {"module_serial": "A"}),
        (T0 + 59.5, {"module_serial": "B"}),
        (T0 + 60, {"module_serial": "C"}),
        (T0 + 200, {"module_serial": "D"}),
    ]
    samples = [RawSample(t=T0 + dt, counters={}) for dt in (0, 70, 130)]
    out = _roll(samples, observations=obs)
    assert [out[k].identity for k in (0, 60, 120)] == [
        {"module_serial": "B"},
        {"module_serial": "C"},
        {"module_serial": "C"},
    ]
    # a bucket before any observation has none
    assert _roll(samples, observations=[(T0 + 61, {"module_serial": "E"})])[0].identity == {}


def test_split_bins_counts_each_bin_once_by_its_low_edge():
    assert split_bins(KP4, [100.0, 7.0, 3.0, 2.0]) == (3.0, 2.0)
    assert split_bins(Layout(bin_low=[0, 12, 14], bin_high=[11, 13, 15], limit=15), [1.0, 3.0, 4.0]) == (
        0.0,
        7.0,
    )
    # counts fewer than the layout's bins (a device that reports the low bins only): judged on
    # the bins there are, never an error that would stop the port's rollup
    assert split_bins(KP4, [5.0, 1.0, 2.0]) == (2.0, 0.0)
    assert split_bins(Layout(bin_low=[5, 6, 11, 12], bin_high=[5, 6, 11, 15], limit=15), [1, 2, 4, 8]) == (
        6.0,
        8.0,
    )


def test_a_histogram_shorter_than_its_layout_is_judged_on_the_bins_it_has():
    samples = [
        RawSample(t=T0, counters={}, hist_layout=1, hist=[10, 10, 10]),
        RawSample(t=T0 + 30, counters={}, hist_layout=1, hist=[20, 11, 13]),
    ]
    b = _roll(samples, layouts={1: KP4})[0]
    assert (b.hist_warn, b.hist_crit, b.hist_max_bin_high) == (3.0, 0.0, 11)
