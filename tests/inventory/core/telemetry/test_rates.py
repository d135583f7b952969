"""Counter maths: Prometheus rate()/increase() semantics, wraps, out-of-order, pre-FEC BER."""

import pytest

from inventory.core.telemetry.rates import (
    Point,
    bin_severity,
    extrapolated_increase,
    hist_increase,
    increase,
    lane_signalling_gbps,
    pre_fec_ber,
    rate,
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
