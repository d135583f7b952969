"""The pure rule and localisation: a baseline the spike does not drag up, the hold, the clear;
set arithmetic over slow and fast rings; what "how sure" means. No database."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from inventory.core.collectives.spike import LinkEvidence, Series, judge_series, localise, spike_words
from inventory.core.telemetry.rules.config import Thresholds

T = Thresholds()
T0 = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


def series(
    minutes: float, slow_from: float | None, slow_to: float | None = None, *, every_s: float = 10.0
) -> Series:
    """An all-reduce every 10 s for ``minutes``: 2.6 ms +-2%, 8x slower between the marks."""
    rng = np.random.default_rng(1)
    ts = np.arange(every_s, minutes * 60 + 0.1, every_s)
    x = 2600.0 * (1 + rng.normal(0, 0.02, ts.size))
    if slow_from is not None:
        hit = (ts >= slow_from * 60) & (ts < (slow_to or 1e9) * 60)
        x[hit] *= 8.0
    return Series(comm_id=1, coll="AllReduce", msg_bytes=256 << 20, ts=T0.timestamp() + ts, exec_us=x)


def at(minute: float) -> datetime:
    return T0 + timedelta(minutes=minute)


def cut(s: Series, minute: float) -> Series:
    keep = s.ts <= at(minute).timestamp()
    return Series(s.comm_id, s.coll, s.msg_bytes, s.ts[keep], s.exec_us[keep])


def test_it_fires_once_the_spike_has_lasted_the_hold_and_not_before():
    s = series(70, slow_from=60)
    assert not judge_series(cut(s, 64), now=at(64), t=T).firing
    v = judge_series(cut(s, 65.5), now=at(65.5), t=T)
    assert v.firing and 7 < v.ratio < 9 and v.since == at(60)


def test_an_open_alert_keeps_the_baseline_it_opened_with():
    """An hour into the spike its own operations fill the baseline window: judged against that,
    the spike would clear itself; against the frozen baseline it still fires."""
    s = series(130, slow_from=60)
    opened = judge_series(cut(s, 66), now=at(66), t=T)
    assert opened.firing
    later_unfrozen = judge_series(cut(s, 130), now=at(130), t=T)
    assert not later_unfrozen.firing  # the yardstick dragged up by the spike itself
    later = judge_series(cut(s, 130), now=at(130), t=T, frozen_baseline_us=opened.baseline_us)
    assert later.firing


def test_it_clears_when_the_ring_is_fast_again():
    s = series(80, slow_from=60, slow_to=70)
    opened = judge_series(cut(s, 66), now=at(66), t=T)
    v = judge_series(cut(s, 76), now=at(76), t=T, frozen_baseline_us=opened.baseline_us)
    assert not v.firing and not v.holding


def test_too_few_operations_are_not_judged():
    assert judge_series(series(4, slow_from=None), now=at(4), t=T) is None


def test_the_links_slow_rings_share_and_fast_ones_do_not_are_the_candidates():
    rail4, world, rail1 = {41, 42, 43}, {11, 12, 13, 41, 42, 43}, {11, 12, 13}
    ev = {c: LinkEvidence(reporting=True, pre_fec_ber=3e-9) for c in world}
    ev[42] = LinkEvidence(reporting=True, pre_fec_ber=3e-5, uncorrectable_cw=12)
    loc = localise(slow=[rail4, world], fast=[rail1], evidence=ev, t=T, fec_limits={})
    assert loc.candidates == [41, 42, 43] and loc.how == "shared_by_slow"
    assert loc.top.link_id == 42 and loc.sure == "high" and loc.confidence == 1.0


def test_how_sure_falls_with_a_second_suspect_and_with_silent_links():
    cands = {1, 2, 3, 4}
    ev = {c: LinkEvidence(reporting=True, pre_fec_ber=3e-9) for c in (1, 2)}
    ev[3] = LinkEvidence(reporting=True, pre_fec_ber=3e-5)
    ev[4] = LinkEvidence(reporting=True, pre_fec_ber=2e-5)
    two = localise(slow=[cands], fast=[], evidence=ev, t=T, fec_limits={})
    assert two.top.link_id == 3 and two.sure in ("medium", "low")
    del ev[1], ev[2]  # half the candidates report nothing
    silent = localise(slow=[cands], fast=[], evidence={3: ev[3]}, t=T, fec_limits={})
    assert silent.confidence == 0.25 and silent.sure == "low"


def test_pfc_alone_is_congestion_not_a_cable():
    ev = {1: LinkEvidence(reporting=True, pre_fec_ber=3e-9, pfc_pause_rate=800.0)}
    ev[2] = LinkEvidence(reporting=True, pre_fec_ber=3e-9)
    loc = localise(slow=[{1, 2}], fast=[], evidence=ev, t=T, fec_limits={})
    assert loc.top is None and loc.sure == "none"
    assert loc.ranked[0].link_id == 1 and loc.ranked[0].congestion > 0


def test_the_uplinks_of_rings_that_cross_leaves_are_candidates_that_a_fast_ring_does_not_clear():
    """Two slow rings share no rail link but may both take uplinks 91-94 (ECMP); a fast ring that
    crosses the same leaves may take them too, yet hashed its flows elsewhere: the uplinks stay
    candidates and the evidence picks the bad one. Without the uplinks, no link explains both."""
    ring_a, ring_b, fast = {11, 51}, {15, 55}, {12, 52}
    uplinks = {91, 92, 93, 94}
    ev = {c: LinkEvidence(reporting=True, pre_fec_ber=3e-9) for c in (11, 51, 15, 55, *uplinks)}
    ev[93] = LinkEvidence(reporting=True, pre_fec_ber=3e-5, uncorrectable_cw=4)
    loc = localise(
        slow=[ring_a, ring_b], fast=[fast], evidence=ev, t=T, fec_limits={}, ecmp=[uplinks, uplinks]
    )
    assert loc.candidates == [91, 92, 93, 94] and loc.how == "shared_by_slow"
    assert loc.top.link_id == 93 and loc.sure == "high"
    blind = localise(slow=[ring_a, ring_b], fast=[fast], evidence=ev, t=T, fec_limits={})
    assert 93 not in blind.candidates and blind.top is None
    # the uplinks without physical evidence name nothing
    quiet = {c: LinkEvidence(reporting=True, pre_fec_ber=3e-9) for c in uplinks}
    calm = localise(
        slow=[ring_a, ring_b], fast=[fast], evidence=quiet, t=T, fec_limits={}, ecmp=[uplinks, uplinks]
    )
    assert calm.top is None and calm.sure == "none"


@given(
    baseline_us=st.floats(min_value=50, max_value=500_000),
    factor=st.floats(min_value=3, max_value=2_000),
)
def test_the_spike_in_words_multiplies_as_shown(baseline_us, factor):
    """The demo's spike read "29.4 ms = 10.3x its P99 2.8 ms", and 10.3 x 2.8 is 28.8: the ratio
    and the P99 are shown with as many decimals as make them, as shown, multiply to the slowest."""
    words = spike_words(slowest_us=baseline_us * factor, baseline_us=baseline_us)
    m = re.fullmatch(r"([\d,.]+) ms = (about )?([\d,.]+)x its P99 ([\d,.]+) ms", words)
    assert m, words
    slowest, ratio, p99 = (Decimal(g.replace(",", "")) for g in m.group(1, 3, 4))
    if m.group(2):  # no short figures multiply out to the tenth of a millisecond: "about", to 1 %
        assert abs(ratio * p99 - slowest) <= slowest / 100, words
    else:
        assert abs(ratio * p99 - slowest) <= Decimal("0.05"), words  # within the slowest's rounding


def test_the_demos_spike_in_words():
    assert spike_words(slowest_us=29415.342, baseline_us=2843.217) == "29.4 ms = 10.35x its P99 2.84 ms"
    assert spike_words(slowest_us=26000, baseline_us=2600) == "26.0 ms = 10.0x its P99 2.6 ms"
