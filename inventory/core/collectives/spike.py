"""``tail_latency_spike``: the slowest operation of a communicator against its own recent P99,
and the suspect links of a spike. Pure: numbers in, verdicts out.

The rule, per communicator and series (collective and message size, since a 1 GiB all-reduce
is not a 1 MiB one): each operation's time is its slowest rank's (the slowest rank sets the
pace of a collective). The baseline is the ``spike_quantile`` (P99) of the operations that
ended in the ``spike_baseline_s`` before the judged ``spike_hold_s``: the minutes being judged
never count in their own baseline, and an open alert keeps the baseline it opened with, so a
spike cannot drag its own yardstick up and close itself. It fires when every minute of the
judged window that carries operations (``coverage`` of them must) has its slowest operation
above ``spike_factor`` x the baseline; it holds while any minute of the window stays above
``hold_ratio`` of that bar.

The suspects: set arithmetic first (the links every slow communicator crosses and no fast one
does; else the links of the slow ones that no fast one crosses), then the physical evidence on
each candidate in the same minutes ranks them. PFC pauses are evidence of congestion or of a
host, never of a cable.

A ring that crosses leaves also crosses the leaf-to-spine uplinks, which ECMP spreads its flows
over (``ecmp``: each slow communicator's possible uplinks, from the selector). They count among
that communicator's links, so uplinks every slow ring may take are candidates like its rail
links, ranked by the same evidence; a fast ring's possible uplinks clear none of them (its flows
may simply have hashed onto the others), only the links a fast ring certainly crosses do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np

from inventory.core.telemetry.rules.config import Thresholds
from inventory.core.words import ratio_places, shown

MINUTE = 60.0


@dataclass(frozen=True)
class Series:
    """One communicator's operations of one kind: end times (epoch s) and slowest-rank times."""

    comm_id: int
    coll: str
    msg_bytes: int
    ts: np.ndarray  # float64 epoch seconds, ascending
    exec_us: np.ndarray  # float64


@dataclass
class Verdict:
    comm_id: int
    coll: str
    msg_bytes: int
    baseline_us: float | None
    slowest_us: float
    ratio: float
    since: datetime | None
    firing: bool
    holding: bool
    ops: int


def spike_words(*, slowest_us: float, baseline_us: float) -> str:
    """The spike as the alert's summary and its page both say it: ``29.4 ms = 10.35x its P99
    2.84 ms`` (the slowest in milliseconds with one decimal; the ratio and the P99 with as many
    as make the two, as shown, multiply to it: ``words.ratio_places``)."""
    slowest, p99 = slowest_us / 1000, baseline_us / 1000
    places = ratio_places(slowest, base=p99, places=1, most=5)
    if places is None:  # no short figures multiply out to the tenth of a millisecond: "about",
        # the ratio and the P99 to three significant figures each (their product within 1 %)
        ratio = slowest / p99
        nr, nb = (max(0, 2 - math.floor(math.log10(x))) for x in (ratio, p99))
        return f"{shown(slowest, 1)} ms = about {shown(ratio, nr)}x its P99 {shown(p99, nb)} ms"
    nr, nb = places
    return f"{shown(slowest, 1)} ms = {shown(slowest / p99, nr)}x its P99 {shown(p99, nb)} ms"


def _p(values: np.ndarray, q: float) -> float:
    return float(np.quantile(values, q, method="inverted_cdf"))


def _baseline(s: Series, *, upto: float, t: Thresholds) -> float | None:
    """The ``spike_quantile`` of the operations in the ``spike_baseline_s`` ending at ``upto``."""
    mask = (s.ts > upto - t.spike_baseline_s) & (s.ts <= upto)
    if int(mask.sum()) < t.spike_baseline_min_ops:
        return None
    return _p(s.exec_us[mask], t.spike_quantile)


def _run_start(s: Series, *, bar: float, end: float) -> float | None:
    """When the current run of slow operations began: walk back from the newest slow operation
    while the gaps between slow ones stay under two minutes (None: no slow operation lately)."""
    slow = s.ts[(s.exec_us > bar) & (s.ts > end - 2 * 3600)]
    if not slow.size or end - slow[-1] > 2 * MINUTE:
        return None
    start = slow[-1]
    for v in slow[::-1]:
        if start - v > 2 * MINUTE:
            break
        start = v
    return float(start)


def judge_series(
    s: Series, *, now: datetime, t: Thresholds, frozen_baseline_us: float | None = None
) -> Verdict | None:
    """The verdict on one series at ``now`` (None: too few operations to judge)."""
    if t.spike_factor is None:
        return None
    end = now.timestamp()
    hold = float(t.spike_hold_s)
    judged = s.ts > end - hold
    if not judged.any():
        return None
    baseline = frozen_baseline_us
    if baseline is None:
        # A slow run that began before the judged window must not count in its own baseline:
        # find where it began against the baseline of the hour before a guard band of one hold
        # (which it cannot have reached unnoticed), and end the baseline there.
        guard = _baseline(s, upto=end - 2 * hold, t=t)
        start = _run_start(s, bar=t.spike_factor * guard, end=end) if guard is not None else None
        baseline = _baseline(s, upto=min(end - hold, start - 1e-6) if start is not None else end - hold, t=t)
        if baseline is None:
            return None
    if baseline <= 0:
        return None
    bar = t.spike_factor * baseline
    minutes = np.floor((s.ts[judged] - (end - hold)) / MINUTE).astype(int)
    n_min = max(1, int(math.ceil(hold / MINUTE)))
    worst = np.full(n_min, np.nan)
    for m, v in zip(minutes, s.exec_us[judged], strict=True):  # a few hundred ops at most
        m = min(max(m, 0), n_min - 1)
        worst[m] = v if math.isnan(worst[m]) else max(worst[m], v)
    seen = ~np.isnan(worst)
    firing = bool(seen.sum() >= t.coverage * n_min and (worst[seen] > bar).all())
    holding = bool((worst[seen] > t.hold_ratio * bar).any())
    slowest = float(np.nanmax(worst))
    since = None
    if firing or holding:
        start = _run_start(s, bar=bar if firing else t.hold_ratio * bar, end=end) or end
        since = now - timedelta(seconds=end - start)
        # "for 5 minutes" means the slow run has lasted that long, not that a quiet minute (a
        # checkpoint, no operations) let four slow ones fill the window
        firing = firing and end - start >= hold - MINUTE / 2
    return Verdict(
        comm_id=s.comm_id,
        coll=s.coll,
        msg_bytes=s.msg_bytes,
        baseline_us=baseline,
        slowest_us=slowest,
        ratio=slowest / baseline,
        since=since,
        firing=firing,
        holding=holding,
        ops=int(judged.sum()),
    )


def judge_communicator(
    series: list[Series], *, now: datetime, t: Thresholds, frozen: dict[tuple[str, int], float] | None = None
) -> Verdict | None:
    """The worst verdict among a communicator's series (firing before holding before calm)."""
    out = None
    for s in series:
        v = judge_series(s, now=now, t=t, frozen_baseline_us=(frozen or {}).get((s.coll, s.msg_bytes)))
        if v is None:
            continue
        if out is None or (v.firing, v.holding, v.ratio) > (out.firing, out.holding, out.ratio):
            out = v
    return out


# --- suspects ---------------------------------------------------------------------------------


@dataclass
class LinkEvidence:
    """What the ports of one link reported in the spike's minutes (both ends, worst of them)."""

    reporting: bool = False
    pre_fec_ber: float | None = None
    ber_reference: float | None = None  # the port's learnt baseline, else the candidates' lower quartile
    uncorrectable_cw: int = 0
    rx_drop_db: float | None = None  # below the lane's own learnt baseline
    flaps: int = 0
    pfc_pause_rate: float | None = None  # frames/s, sent or received, worst end


@dataclass
class Suspect:
    link_id: int
    score: float
    physical: float
    congestion: float
    reasons: list[str] = field(default_factory=list)


@dataclass
class Localisation:
    candidates: list[int]
    how: str  # "shared_by_slow" | "slow_not_fast" | "all_slow"
    ranked: list[Suspect]
    top: Suspect | None  # the most likely link with physical evidence (None: no physical evidence)
    confidence: float  # 0..1
    sure: str  # "high" | "medium" | "low" | "none"
    reporting: int  # candidates with telemetry in the window


def candidates(
    slow: list[set[int]], fast: list[set[int]], ecmp: list[set[int]] | None = None
) -> tuple[list[int], str]:
    """The links that can explain the slow communicators and not the fast ones (``ecmp``: the
    uplinks each slow one may take, in the order of ``slow``)."""
    if ecmp:
        slow = [s | e for s, e in zip(slow, ecmp, strict=True)]
    if not slow:
        return [], "all_slow"
    fast_links = set().union(*fast) if fast else set()
    shared = set.intersection(*slow) - fast_links
    if shared:
        return sorted(shared), "shared_by_slow"
    either = set().union(*slow) - fast_links
    if either:
        return sorted(either), "slow_not_fast"
    return sorted(set().union(*slow)), "all_slow"


def evidence_score(e: LinkEvidence, *, t: Thresholds, fec_limit: float) -> Suspect:
    """Physical evidence (FEC against its reference and the FEC limit, uncorrectables, receive
    power below its baseline, flaps) and congestion evidence (PFC) of one link."""
    s = Suspect(link_id=0, score=0.0, physical=0.0, congestion=0.0)
    if e.pre_fec_ber is not None and e.pre_fec_ber > 0:
        ref = max(e.ber_reference or 0.0, t.fec_ber_floor)
        ratio = e.pre_fec_ber / ref
        factor = t.fec_ber_factor or 10.0
        if ratio >= factor:
            s.physical += min(math.log10(ratio), 6.0)
            s.reasons.append(f"pre-FEC BER {e.pre_fec_ber:.1e}, {ratio:,.0f}x its reference {ref:.1e}")
        if t.fec_limit_fraction is not None and e.pre_fec_ber >= t.fec_limit_fraction * fec_limit:
            s.physical += 2.0
            s.reasons.append(f"pre-FEC BER at {e.pre_fec_ber / fec_limit:.0%} of the FEC limit")
    if e.uncorrectable_cw > 0:
        s.physical += 1.0 + math.log10(e.uncorrectable_cw)
        s.reasons.append(f"{e.uncorrectable_cw} uncorrectable codewords")
    if e.rx_drop_db is not None and t.rx_drift_db is not None and e.rx_drop_db >= t.rx_drift_db:
        s.physical += e.rx_drop_db / t.rx_drift_db
        s.reasons.append(f"receive power {e.rx_drop_db:.1f} dB below its baseline")
    if e.flaps > 0:
        s.physical += 3.0
        s.reasons.append(f"{e.flaps} link-down events or error recoveries")
    if e.pfc_pause_rate is not None and t.pfc_sustained_rate and e.pfc_pause_rate > t.pfc_sustained_rate:
        s.congestion = math.log10(e.pfc_pause_rate / t.pfc_sustained_rate) + 1.0
        s.reasons.append(f"PFC pauses {e.pfc_pause_rate:,.0f}/s (congestion or a host, not a cable)")
    s.score = s.physical + 0.1 * s.congestion
    return s


def localise(
    *,
    slow: list[set[int]],
    fast: list[set[int]],
    evidence: dict[int, LinkEvidence],
    t: Thresholds,
    fec_limits: dict[int, float],
    ecmp: list[set[int]] | None = None,
) -> Localisation:
    """Rank the candidate links of a spike; say how sure the top one is."""
    cands, how = candidates(slow, fast, ecmp)
    # A link with no learnt baseline is judged against its peers: the lower quartile of the
    # candidates' BER (robust while fewer than three in four of them are bad).
    peers = [evidence[c].pre_fec_ber for c in cands if c in evidence and evidence[c].pre_fec_ber]
    peer_ref = float(np.percentile(peers, 25)) if peers else None
    ranked = []
    for c in cands:
        e = evidence.get(c) or LinkEvidence()
        if e.ber_reference is None:
            e.ber_reference = peer_ref
        s = evidence_score(e, t=t, fec_limit=fec_limits.get(c, 2.4e-4))
        s.link_id = c
        ranked.append(s)
    ranked.sort(key=lambda s: (-s.physical, -s.congestion, s.link_id))
    reporting = sum(1 for c in cands if c in evidence and evidence[c].reporting)
    physical = [s for s in ranked if s.physical > 0]
    if not physical:
        return Localisation(cands, how, ranked, None, 0.0, "none", reporting)
    top = physical[0]
    share = top.physical / sum(s.physical for s in physical)
    coverage = reporting / len(cands) if cands else 0.0
    confidence = round(share * coverage, 2)
    sure = "high" if confidence >= 0.75 else "medium" if confidence >= 0.4 else "low"
    return Localisation(cands, how, ranked, top, confidence, sure, reporting)
