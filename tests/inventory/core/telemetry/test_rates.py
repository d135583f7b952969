"""Counter maths: Prometheus rate()/increase() semantics, wraps, out-of-order, pre-FEC BER."""

import pytest

from inventory.core.telemetry.rates import (
    MAX_INCREASE,
    Increase,
    Point,
    bin_severity,
    extrapolated_increase,
    hist_increase,
    increase,
    lane_signalling_gbps,
    line_bits,
    ordered,
    pre_fec_ber,
    rate,
    step,
)


def pts(*pairs):
    return [Point(t, v) for t, v in pairs]


def test_steady_counter():
    inc = increase(pts((0, 100), (10, 150), (20, 210)))
    assert (inc.increase, inc.resets, inc.seconds) == (110, 0, 20)


def test_a_drop_is_a_reset_counted_from_zero_never_negative():
    inc = increase(pts((0, 1000), (10, 1100), (20, 30), (30, 80)))
    assert inc.increase == 100 + 30 + 50
    assert inc.resets == 1


def test_out_of_order_samples_do_not_invent_resets():
    ordered = increase(pts((0, 10), (10, 20), (20, 30), (30, 40)))
    shuffled = increase(pts((20, 30), (0, 10), (30, 40), (10, 20)))
    assert shuffled == ordered
    assert shuffled.resets == 0


def test_duplicate_timestamps_collapse():
    assert increase(pts((0, 10), (0, 10), (10, 20), (10, 20))).increase == 10


def test_64_bit_wrap_and_32_bit_wrap():
    top64 = 1 << 64
    inc = increase(pts((0, top64 - 100), (10, 50)), wrap_bits=64)
    assert inc.increase == 150 and inc.resets == 1
    inc32 = increase(pts((0, (1 << 32) - 10), (10, 5)), wrap_bits=32)
    assert inc32.increase == 15
    # a low value dropping is a reset even when a width is known
    assert increase(pts((0, 5000), (10, 7)), wrap_bits=32).increase == 7


def test_unsigned_64_bit_values_beyond_signed_range():
    big = (1 << 63) + 10
    assert increase(pts((0, big), (10, big + 400))).increase == 400


def test_prometheus_extrapolation_matches_its_rules():
    # samples every 10 s inside a 60 s window starting 5 s before the first sample
    series = pts((5, 100), (15, 110), (25, 120), (35, 130), (45, 140), (55, 150))
    inc = extrapolated_increase(series, start=0, end=60)
    # sampled 50 s at 1/s; 5 s to each edge (< 1.1 x 10 s): extrapolated to 60 s
    assert inc == pytest.approx(60.0)
    assert rate(series, start=0, end=60) == pytest.approx(1.0)
    # a counter that starts near zero is not extrapolated below zero
    young = pts((30, 2), (40, 12), (50, 22))
    assert extrapolated_increase(young, start=0, end=60) == pytest.approx(20 * (20 + 2 + 10) / 20)
    assert rate(pts((0, 1)), start=0, end=60) is None


def test_rate_across_reset_is_positive():
    r = rate(pts((0, 500), (10, 600), (20, 10), (30, 110)), start=0, end=30)
    assert r is not None and r > 0


def test_pre_fec_ber_uses_line_bits_not_payload():
    # 400G = 4 lanes x 106.25 Gb/s; 1e9 corrected bits in 10 s -> 1e9 / 4.25e12
    assert lane_signalling_gbps(speed_gbps=400, lanes=4) == 106.25
    assert lane_signalling_gbps(speed_gbps=400, lanes=8) == 53.125
    assert lane_signalling_gbps(speed_gbps=400, lanes=4, lane_rate_gbaud=53.125) == 53.125
    assert pre_fec_ber(corrected_bits=1e9, seconds=10, lanes=4, lane_gbps=106.25) == pytest.approx(
        1e9 / 4.25e12
    )


def test_histogram_increase_and_reset():
    assert hist_increase([10, 5, 1], [20, 6, 1]) == ([10.0, 1.0, 0.0], False)
    assert hist_increase([10, 5, 1], [3, 0, 0]) == ([3.0, 0.0, 0.0], True)


def test_bin_severity_kp4():
    sev = {b: bin_severity(bin_low=b, limit=15) for b in range(16)}
    assert [b for b, s in sev.items() if s == "warn"] == [6, 7, 8, 9, 10, 11]
    assert [b for b, s in sev.items() if s == "crit"] == [12, 13, 14, 15]
    assert bin_severity(bin_low=3, limit=7) == "warn" and bin_severity(bin_low=6, limit=7) == "crit"


# --- Prometheus' extrapolation, edge by edge (each found by make mutation) -----------------------


def _series(times, values):
    return [Point(t, v) for t, v in zip(times, values, strict=True)]


def test_extrapolation_reaches_each_edge_only_within_1_1_average_intervals():
    big = [1000, 1010, 1020, 1030]
    # Gaps of 3 s and 7 s (< 11 s): extrapolated to both edges, 30 counted over 30 s -> 40 over 40 s.
    assert extrapolated_increase(_series([103, 113, 123, 133], big), start=100, end=140) == pytest.approx(40)
    # A 20 s gap at the start (> 11 s): only half an average interval (5 s) is added.
    three = _series([120, 130, 140], big[:3])
    assert extrapolated_increase(three, start=100, end=140) == pytest.approx(25)
    # A gap of exactly 1.1 average intervals is "too far" too (Prometheus: strictly below).
    at_start = _series([111, 121, 131], big[:3])
    assert extrapolated_increase(at_start, start=100, end=131) == pytest.approx(25)
    at_end = _series([100, 110, 120], big[:3])
    assert extrapolated_increase(at_end, start=100, end=131) == pytest.approx(25)


def test_samples_on_the_window_edges_are_inside_it():
    values = [1000, 1010, 1020, 1030]
    first_on_start = _series([100, 125, 130, 135], values)
    assert extrapolated_increase(first_on_start, start=100, end=135) == pytest.approx(30)
    last_on_end = _series([100, 105, 110, 135], values)
    assert extrapolated_increase(last_on_end, start=100, end=135) == pytest.approx(30)


def test_two_samples_one_second_apart_are_enough():
    two = _series([110, 120], [1000, 1010])
    assert extrapolated_increase(two, start=100, end=130) == pytest.approx(30)
    close = _series([110, 111], [1000, 1001])
    assert extrapolated_increase(close, start=110, end=111) == pytest.approx(1)


def test_a_new_counter_is_not_extrapolated_below_zero():
    # 5 at t=110 rising 1/s: it was 0 at t=105, so the start is reached at 105, not at 100.
    young = _series([110, 120, 130], [5, 15, 25])
    assert extrapolated_increase(young, start=100, end=130) == pytest.approx(25)
    from_zero = _series([110, 120, 130], [0, 10, 20])
    assert extrapolated_increase(from_zero, start=100, end=130) == pytest.approx(20)
    flat = _series([110, 120, 130], [7, 7, 7])
    assert extrapolated_increase(flat, start=100, end=130) == 0


def test_extrapolation_counts_a_wrap_of_a_32_bit_counter():
    wrapped = _series([100, 110], [2**32 - 10, 5])
    assert extrapolated_increase(wrapped, start=100, end=110, wrap_bits=32) == pytest.approx(15)


def test_a_jump_of_exactly_the_largest_plausible_increase_counts_and_one_more_does_not():
    top = MAX_INCREASE
    assert step(0, top) == (top, False)
    assert step(0, top + 1) == (0, True)  # implausible: a reset that added nothing
    assert step(top + 5, top) == (top, True)  # a drop: counted from zero
    assert step(top + 5, top + 1) == (0, True)


def test_a_wrap_is_a_drop_from_the_top_quarter_to_the_bottom_quarter_only():
    top = 1 << 32
    quarter = top >> 2
    assert step(top - quarter, 0, wrap_bits=32) == (quarter, True)  # the top quarter's first value
    assert step(top - quarter - 1, 0, wrap_bits=32) == (0, True)  # below it: a reset
    assert step(top - 1, quarter - 1, wrap_bits=32) == (quarter, True)  # the bottom quarter's last
    assert step(top - 1, quarter, wrap_bits=32) == (quarter, True)  # past it: a reset from zero
    assert step(top, 3, wrap_bits=32) == (3, True)  # not a 32-bit value: a reset
    assert step(top - 1, top >> 3, wrap_bits=32) == (1 + (top >> 3), True)


def test_a_histogram_whose_bins_change_in_number_or_drop_is_a_reset_counted_from_zero():
    assert hist_increase([5, 5], [7, 9]) == ([2.0, 4.0], False)
    assert hist_increase([5, 5], [1, 2, 3]) == ([1.0, 2.0, 3.0], True)  # a bin more: reset
    assert hist_increase([5, 5], [4, 9]) == ([4.0, 9.0], True)  # one bin dropped: reset


def test_an_increase_needs_two_samples_and_spans_first_to_last():
    assert increase([]) == Increase(0.0, 0, 0.0)
    assert increase([Point(100, 7)]) == Increase(0.0, 0, 0.0)
    shuffled = [Point(130, 30), Point(110, 10), Point(120, 20)]
    assert increase(shuffled) == Increase(20.0, 0, 20.0)  # sorted by time: no false reset


def test_rate_is_per_second_of_the_window_and_follows_a_wrap():
    steady = [Point(100, 1000), Point(110, 1010), Point(120, 1020)]
    assert rate(steady, start=100, end=120) == pytest.approx(1.0)
    wrapped = [Point(100, 2**32 - 10), Point(110, 10)]
    assert rate(wrapped, start=100, end=110, wrap_bits=32) == pytest.approx(2.0)
    assert rate(steady, start=120, end=120) is None  # an empty window


def test_line_rate_and_ber_arithmetic():
    assert line_bits(seconds=2, lanes=4, lane_gbps=53.125) == 2 * 4 * 53.125e9
    assert lane_signalling_gbps(speed_gbps=400, lanes=4) == 106.25
    assert lane_signalling_gbps(speed_gbps=200, lanes=3) is None  # 66 Gb/s lanes: no such rate
    assert lane_signalling_gbps(speed_gbps=400, lanes=None) is None
    assert lane_signalling_gbps(speed_gbps=None, lanes=4) is None
    assert pre_fec_ber(corrected_bits=425, seconds=1, lanes=8, lane_gbps=53.125) == pytest.approx(1e-9)
    assert pre_fec_ber(corrected_bits=5, seconds=0, lanes=8, lane_gbps=53.125) is None


def test_the_severity_of_a_histogram_bin_needs_a_correction_limit():
    assert bin_severity(bin_low=0, limit=0) is None
    assert bin_severity(bin_low=1, limit=1) == "crit"
    assert bin_severity(bin_low=12, limit=15) == "crit" and bin_severity(bin_low=6, limit=15) == "warn"


def test_a_repeated_timestamp_keeps_its_first_value():
    assert ordered([Point(20, 7), Point(10, 1), Point(10, 5), Point(20, 9)]) == [Point(10, 1), Point(20, 7)]


def test_a_counter_that_gained_one_from_zero_is_not_extrapolated_before_its_start():
    first = [Point(110, 0), Point(120, 1)]
    assert extrapolated_increase(first, start=100, end=120) == pytest.approx(1)
