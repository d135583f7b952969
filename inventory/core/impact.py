"""Impact, both ways (issue 35): what a degraded cable or module cost the jobs that ran over it,
and per site and month, the stalls incurred against the problems caught before they stalled
anything. Pure: intervals and jobs in, figures out; the stall arithmetic is the forecast's
(``forecast.maths.failure_cost``), never a second formula.

A cable or module is *degraded* while an alert of ``DEGRADED_RULES`` at warning or worse is open
on a link through it (from ``opened_at`` to ``resolved_at``, or now). A job *ran over it* when one
of its ranks' GPUs uses a NIC port at either end of such a link (the rank -> GPU -> NIC port map of
the job's registration) while the job ran. Its overlap is the time the job ran while any of those
links was degraded (overlapping alerts counted once); every GPU of the job waits on the slowest
rank of a collective, so the GPU-hours are the job's GPUs x that overlap. Each job hit is
estimated at one stall of that job: ``failure_cost(incidents=1, cluster_gpus=job's GPUs)``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from inventory.core.choices import AlertRule
from inventory.core.decision import BLOCKING_SEVERITIES, DEGRADING_RULES
from inventory.core.forecast.maths import failure_cost

# What counts as degraded: the alerts that move the cable they name to "degraded"
# (``core.decision.alert_degrades``; its rules and severities as sets, for the database's filter),
# so the impact's "while degraded" and the cable's status follow the same alerts.
DEGRADED_RULES = DEGRADING_RULES
DEGRADED_SEVERITIES = BLOCKING_SEVERITIES
# The early warnings: physical alerts that show before a link corrupts traffic. One resolved or
# repaired with no uncorrectable codewords on its link in the meantime is a problem caught early.
EARLY_WARNING_RULES = frozenset(
    {AlertRule.FEC_DEGRADATION.value, AlertRule.FEC_TAIL.value, AlertRule.RX_POWER_DRIFT.value}
)

HOUR = 3600.0


@dataclass(frozen=True)
class StallParams:
    """The forecast's stall estimate (``CABLETRACK_FAILURE_HOURS_PER_INCIDENT``, ``_RUN_HOURS``,
    ``_GPU_HOUR_COST``, ``_CLUSTER_GPUS``): built from the settings by the selectors."""

    hours_per_incident: float
    run_hours: float
    gpu_hour_cost: float
    cluster_gpus: int

    def cost(self, *, incidents: float, gpus: int) -> float:
        """What ``incidents`` stalls of a job of ``gpus`` GPUs cost (the forecast's arithmetic)."""
        return failure_cost(
            incidents=incidents,
            hours_per_incident=self.hours_per_incident,
            run_hours=self.run_hours,
            cluster_gpus=gpus,
            gpu_hour_cost=self.gpu_hour_cost,
        ).cost


@dataclass(frozen=True)
class Degraded:
    """One alert's open interval on one link (``end`` None: still open)."""

    link_id: int
    start: datetime
    end: datetime | None


@dataclass(frozen=True)
class RankOnLink:
    rank: int
    host: str
    gpu: int
    link_id: int


@dataclass(frozen=True)
class JobRun:
    """A job as registered: when it ran, how many GPUs it holds, and its ranks on the links."""

    job_id: str
    name: str
    started_at: datetime
    ended_at: datetime | None
    gpus: int
    ranks: tuple[RankOnLink, ...]


@dataclass
class JobImpact:
    job_id: str
    name: str
    gpus: int
    ranks_on_path: list[RankOnLink]
    hours: float
    gpu_hours: float
    stall_cost: float

    def as_dict(self) -> dict:
        return {
            "job": self.job_id,
            "name": self.name,
            "gpus": self.gpus,
            "ranks_on_path": [
                {"rank": r.rank, "host": r.host, "gpu": r.gpu, "link": r.link_id} for r in self.ranks_on_path
            ],
            "hours": round(self.hours, 3),
            "gpu_hours": round(self.gpu_hours, 2),
            "stall_cost": round(self.stall_cost, 2),
        }


@dataclass
class Impact:
    """What ran over one cable or module while it was degraded, in a window."""

    degraded_hours: float = 0.0
    jobs: list[JobImpact] = field(default_factory=list)

    @property
    def ranks(self) -> int:
        """Ranks of the jobs hit (all of a job's ranks wait on its slowest)."""
        return sum(j.gpus for j in self.jobs)

    @property
    def gpu_hours(self) -> float:
        return sum(j.gpu_hours for j in self.jobs)

    @property
    def stall_cost(self) -> float:
        return sum(j.stall_cost for j in self.jobs)

    def as_dict(self) -> dict:
        return {
            "degraded_hours": round(self.degraded_hours, 3),
            "jobs_hit": len(self.jobs),
            "ranks": self.ranks,
            "gpu_hours": round(self.gpu_hours, 2),
            "stall_cost": round(self.stall_cost, 2),
            "jobs": [j.as_dict() for j in self.jobs],
        }


def merged(spans: Iterable[tuple[datetime, datetime]]) -> list[tuple[datetime, datetime]]:
    """The union of ``spans`` as disjoint spans in time order (empty spans dropped)."""
    out: list[tuple[datetime, datetime]] = []
    for s, e in sorted(x for x in spans if x[1] > x[0]):
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def _hours(spans: list[tuple[datetime, datetime]]) -> float:
    return sum((e - s).total_seconds() for s, e in spans) / HOUR


def _clip(
    spans: list[tuple[datetime, datetime]], start: datetime, end: datetime
) -> list[tuple[datetime, datetime]]:
    return [(max(s, start), min(e, end)) for s, e in spans if e > start and s < end]


def impact_of(
    *,
    degraded: list[Degraded],
    jobs: list[JobRun],
    start: datetime,
    end: datetime,
    now: datetime,
    stall: StallParams,
) -> Impact:
    """The impact over ``start``..``end`` (capped at ``now``): degraded hours (any link), and per
    job that ran over a degraded link, its ranks on those links, the overlap, GPU-hours and the
    estimated cost of one stall of that job. Jobs hit come first by GPU-hours."""
    end = min(end, now)
    per_link: dict[int, list[tuple[datetime, datetime]]] = {}
    for d in degraded:
        per_link.setdefault(d.link_id, []).append((d.start, d.end or now))
    per_link = {lid: _clip(merged(spans), start, end) for lid, spans in per_link.items()}
    out = Impact(degraded_hours=_hours(merged(s for spans in per_link.values() for s in spans)))
    for job in jobs:
        on = [r for r in job.ranks if per_link.get(r.link_id)]
        if not on:
            continue
        runs = _clip([(job.started_at, job.ended_at or now)], start, end)
        if not runs:
            continue
        spans = merged(s for lid in {r.link_id for r in on} for s in per_link[lid])
        overlap = merged(
            (max(a, b0), min(b, b1)) for a, b in spans for b0, b1 in runs if min(b, b1) > max(a, b0)
        )
        hours = _hours(overlap)
        if hours <= 0:
            continue
        out.jobs.append(
            JobImpact(
                job_id=job.job_id,
                name=job.name,
                gpus=job.gpus,
                ranks_on_path=sorted(on, key=lambda r: r.rank),
                hours=hours,
                gpu_hours=job.gpus * hours,
                stall_cost=stall.cost(incidents=1, gpus=job.gpus),
            )
        )
    out.jobs.sort(key=lambda j: (-j.gpu_hours, j.job_id))
    return out


# --- the monthly report --------------------------------------------------------------------------


@dataclass(frozen=True)
class Stall:
    """A stall incurred: a tail-latency spike of a job, or uncorrectable codewords on a link while
    a job ran over it (``alert_id`` the alert that showed it)."""

    kind: str  # "tail_latency_spike" | "fec_uncorrectable"
    alert_id: int
    job_id: str
    gpus: int
    at: datetime
    link_id: int | None = None


@dataclass(frozen=True)
class EarlyWarning:
    """An early-warning alert on a link: open from ``start`` until ``end`` (resolved, or the first
    repair recorded on it, whichever came first)."""

    alert_id: int
    link_id: int
    rule: str
    start: datetime
    end: datetime


@dataclass
class MonthReport:
    stalls: list[Stall]
    caught: list[EarlyWarning]  # one per problem (overlapping warnings on one link counted once)
    stall_cost: float
    saving: float
    stall_estimate: float  # one stall of a CABLETRACK_CLUSTER_GPUS-GPU run

    def as_dict(self) -> dict:
        return {
            "stalls_incurred": len(self.stalls),
            "stall_cost": round(self.stall_cost, 2),
            "caught_before_uncorrectable": len(self.caught),
            "stall_estimate": round(self.stall_estimate, 2),
            "estimated_saving": round(self.saving, 2),
            "stalls": [
                {
                    "kind": s.kind,
                    "alert": s.alert_id,
                    "job": s.job_id,
                    "gpus": s.gpus,
                    "at": s.at,
                    "link": s.link_id,
                }
                for s in self.stalls
            ],
            "caught": [
                {
                    "alert": w.alert_id,
                    "link": w.link_id,
                    "rule": w.rule,
                    "opened_at": w.start,
                    "ended_at": w.end,
                }
                for w in self.caught
            ],
        }


def stalls_deduplicated(spikes: list[Stall], uncorrectable: list[Stall]) -> list[Stall]:
    """Every spike, and every (uncorrectable alert, job) whose job had no spike naming that link:
    one slow job is one stall, however many alerts showed it."""
    seen = {(s.job_id, s.link_id) for s in spikes}
    out = list(spikes)
    done: set[tuple[int, str]] = set()
    for s in uncorrectable:
        if (s.job_id, s.link_id) in seen or (s.alert_id, s.job_id) in done:
            continue
        done.add((s.alert_id, s.job_id))
        out.append(s)
    return sorted(out, key=lambda s: (s.at, s.alert_id, s.job_id))


def caught_early(
    *, warnings: list[EarlyWarning], uncorrectable: dict[int, list[tuple[datetime, datetime | None]]]
) -> list[EarlyWarning]:
    """The problems caught before the first uncorrectable error: early warnings whose link had no
    ``fec_uncorrectable`` alert open at any moment from the warning's start to its end. Warnings on
    one link whose spans overlap are one problem (the first of them stands for it)."""
    out: list[EarlyWarning] = []
    last_end: dict[int, datetime] = {}
    for w in sorted(warnings, key=lambda w: (w.link_id, w.start, w.alert_id)):
        if w.link_id in last_end and w.start <= last_end[w.link_id]:
            last_end[w.link_id] = max(last_end[w.link_id], w.end)
            if out and out[-1].link_id == w.link_id and w.end > out[-1].end:
                out[-1] = EarlyWarning(out[-1].alert_id, w.link_id, out[-1].rule, out[-1].start, w.end)
            continue
        last_end[w.link_id] = w.end
        out.append(w)
    return [
        w
        for w in out
        if not any(s <= w.end and (e is None or e >= w.start) for s, e in uncorrectable.get(w.link_id, []))
    ]


def month_report(*, stalls: list[Stall], caught: list[EarlyWarning], stall: StallParams) -> MonthReport:
    """The month's figures: each stall at its job's GPUs, each problem caught early at one stall of
    a ``cluster_gpus``-GPU run (the forecast's estimate), and the saving = caught x that estimate."""
    estimate = stall.cost(incidents=1, gpus=stall.cluster_gpus)
    return MonthReport(
        stalls=stalls,
        caught=caught,
        stall_cost=sum(stall.cost(incidents=1, gpus=s.gpus) for s in stalls),
        saving=stall.cost(incidents=len(caught), gpus=stall.cluster_gpus),
        stall_estimate=estimate,
    )


def month_bounds(month: str, *, tz) -> tuple[datetime, datetime]:
    """``YYYY-MM`` as the month's first instant and the next month's, in ``tz``. ValueError when it
    is not a month."""
    if len(month) != 7 or month[4] != "-" or not (month[:4].isdigit() and month[5:].isdigit()):
        raise ValueError("A month as YYYY-MM, such as 2026-11.")
    y, m = int(month[:4]), int(month[5:])
    if not (1 <= m <= 12 and 2000 <= y <= 2100):
        raise ValueError("A month as YYYY-MM, such as 2026-11 (years 2000 to 2100).")
    start = datetime(y, m, 1, tzinfo=tz)
    end = datetime(y + (m == 12), m % 12 + 1, 1, tzinfo=tz)
    return start, end
