"""``collectives_evaluate``: the ``tail_latency_spike`` rule over the communicators that reported
lately, the suspect links of every spike, and the alerts through ``alerts_apply`` (the same
alert rows, pages, API, maintenance silencing and mail as every other rule)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from inventory.core.choices import AlertRule, AlertState, Severity
from inventory.core.collectives.spike import Localisation, Verdict, judge_communicator, localise, spike_words
from inventory.core.telemetry import rules as engine
from inventory.core.words import message_size
from inventory.models import Alert, JobRank
from inventory.selectors.collectives import communicator_links, link_evidence, spike_series
from inventory.services.alerts.evaluate import rule_config
from inventory.services.alerts.lifecycle import EvaluateReport, alerts_apply

RULE = AlertRule.TAIL_LATENCY_SPIKE
SUSPECTS_KEPT = 5
EVIDENCE_LEAD_S = 300.0  # physical evidence is read from this long before the spike began


def spike_key(comm_id: int) -> str:
    return f"{RULE}:comm:{comm_id}"


@dataclass
class SpikeReport:
    communicators: int = 0
    firing: list[int] = field(default_factory=list)
    alerts: EvaluateReport = field(default_factory=EvaluateReport)


def _frozen_baselines() -> dict[int, dict[tuple[str, int], float]]:
    """The baselines the open spike alerts opened with: a spike never judges itself against a
    yardstick it dragged up."""
    out: dict[int, dict[tuple[str, int], float]] = {}
    for key, ev in Alert.objects.filter(rule=RULE, state=AlertState.OPEN).values_list("key", "evidence"):
        c = (ev or {}).get("collective") or {}
        if c.get("baseline_us"):
            out[int(key.rsplit(":", 1)[1])] = {(c["coll"], int(c["msg_bytes"])): float(c["baseline_us"])}
    return out


def _words(v: Verdict, loc: Localisation, comm, n_slow: int) -> tuple[str, str, str]:
    """Headline, recommendation and its code."""
    what = (
        f"job {comm.job.job_id} {comm.name or comm.comm_id} ({v.coll} {message_size(v.msg_bytes)}): slowest "
        + spike_words(slowest_us=v.slowest_us, baseline_us=v.baseline_us)
        + (f" since {v.since:%H:%M} UTC" if v.since else "")
    )
    n = len(loc.candidates)
    rings = "ring" if n_slow == 1 else f"{n_slow} slow rings"
    if loc.top is None:
        congested = [s for s in loc.ranked if s.congestion > 0]
        extra = (
            f"; PFC pauses on {len(congested)} of them point at congestion or a sending host"
            if congested
            else ""
        )
        text = (
            f"No physical-layer anomaly on the {n} links of the slow {rings}{extra}: "
            "look at congestion or the host."
        )
        return f"{what}; no physical-layer anomaly on the {n} links of the slow {rings}", text, "check_host"
    # The naming step (``naming._spike_describe``) puts the cable, both ends and modules first.
    return (
        what,
        (
            f"({'; '.join(loc.top.reasons)}); sure: {loc.sure} ({loc.confidence:.0%}) among the {n} links "
            f"of the slow {rings}. Clean and re-seat both ends, then replace the cable or the module the "
            "FEC evidence points at; drain the link first if the job allows."
        ),
        "clean_reseat",
    )


def collectives_evaluate(*, now: datetime, config: engine.RuleConfig | None = None) -> SpikeReport:
    """Judge every communicator that reported in the last hold window; open, update or resolve
    its ``tail_latency_spike`` alert, with the ranked suspects of the physical path."""
    t = (config or rule_config()).default
    report = SpikeReport()
    series = spike_series(now=now, lookback_s=t.spike_hold_s + t.spike_baseline_s, active_s=t.spike_hold_s)
    by_comm: dict[int, list] = defaultdict(list)
    for s in series:
        by_comm[s.comm_id].append(s)
    frozen = _frozen_baselines()
    verdicts = {
        c: v
        for c, ss in by_comm.items()
        if (v := judge_communicator(ss, now=now, t=t, frozen=frozen.get(c))) is not None
    }
    report.communicators = len(by_comm)
    links, comms, ecmp = communicator_links(comm_ids=set(by_comm))
    firing = [c for c, v in verdicts.items() if v.firing]
    holding = {spike_key(c) for c, v in verdicts.items() if v.holding and not v.firing}
    report.firing = firing

    # Per job: slow communicators (firing or holding) against the fast ones of the same job.
    by_job: dict[int, list[int]] = defaultdict(list)
    for c in by_comm:
        if c in comms:
            by_job[comms[c].job_id].append(c)
    findings = []
    hosts_of = _job_hosts({comms[c].job_id for c in firing})
    for job_id, members in by_job.items():
        # Slow: firing, or holding an alert already open. A ring with a blip (holding, no alert)
        # is neither slow nor fast: it neither adds candidates nor clears any.
        slow = [
            c
            for c in members
            if c in verdicts and (verdicts[c].firing or (verdicts[c].holding and c in frozen))
        ]
        if not any(verdicts[c].firing for c in slow):
            continue
        # Fast: judged, and neither slow nor holding. A communicator the rule could not judge (too
        # few operations in the window: a world all-reduce every 30 s) proves nothing fast: it
        # clears no link (it had cleared the faulty cable of a 512-node ring in the bench).
        fast = [c for c in members if c in verdicts and c not in slow and not verdicts[c].holding]
        start = min(verdicts[c].since or now for c in slow) - timedelta(seconds=EVIDENCE_LEAD_S)
        cands_links = set().union(*(links.get(c, set()) | ecmp.get(c, set()) for c in slow))
        evidence, limits, _pairs = link_evidence(link_ids=sorted(cands_links), start=start, end=now)
        loc = localise(
            slow=[links.get(c, set()) for c in slow],
            fast=[links.get(c, set()) for c in fast],
            evidence=evidence,
            t=t,
            fec_limits=limits,
            ecmp=[ecmp.get(c, set()) for c in slow],
        )
        for c in slow:
            v = verdicts[c]
            if not v.firing:
                continue
            headline, text, code = _words(v, loc, comms[c], len(slow))
            top = loc.top.link_id if loc.top is not None else None
            findings.append(
                engine.Finding(
                    key=spike_key(c),
                    rule=RULE,
                    severity=Severity.PAGE,
                    link_id=top,
                    port_id=None,
                    headline=headline,
                    recommendation=text,
                    recommendation_code=code,
                    evidence={
                        "collective": {
                            "job": comms[c].job.job_id,
                            "communicator": comms[c].name or comms[c].comm_id,
                            "comm_id": comms[c].comm_id,
                            "coll": v.coll,
                            "msg_bytes": v.msg_bytes,
                            "baseline_us": round(v.baseline_us, 3),
                            "slowest_us": round(v.slowest_us, 3),
                            "ratio": round(v.ratio, 2),
                            "since": v.since.isoformat() if v.since else None,
                            "slow_communicators": [comms[s].name or comms[s].comm_id for s in slow],
                            "fast_communicators": len(fast),
                            "candidates": len(loc.candidates),
                            "candidates_reporting": loc.reporting,
                            "how": loc.how,
                            "sure": loc.sure,
                            "confidence": loc.confidence,
                            "physical_evidence": loc.top is not None,
                        },
                        "suspects": [
                            {
                                "link_id": s.link_id,
                                "score": round(s.score, 2),
                                "physical": round(s.physical, 2),
                                "congestion": round(s.congestion, 2),
                                "reasons": s.reasons,
                            }
                            for s in loc.ranked[:SUSPECTS_KEPT]
                            if s.physical > 0 or s.congestion > 0
                        ],
                        "host_ids": hosts_of.get(job_id, [])[:20],
                    },
                )
            )
    report.alerts = alerts_apply(
        findings=findings,
        holding=holding,
        reporting_port_ids=set(),
        now=now,
        rules_evaluated={RULE},
        reporting_keys={spike_key(c) for c in verdicts},
    )
    return report


def _job_hosts(job_ids: set[int]) -> dict[int, list[int]]:
    out: dict[int, list[int]] = defaultdict(list)
    for job_id, host_id in (
        JobRank.objects.filter(job_id__in=job_ids)
        .values_list("job_id", "host_id")
        .distinct()
        .order_by("host_id")
    ):
        out[job_id].append(host_id)
    return out
