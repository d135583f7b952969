"""``core.impact``: the degraded spans, the jobs hit and their GPU-hours, the month's stalls and
problems caught early, by hand on small cases."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from inventory.core import impact as core

T0 = datetime(2026, 10, 5, 8, tzinfo=UTC)
P = core.StallParams(hours_per_incident=3.5, run_hours=720, gpu_hour_cost=2.0, cluster_gpus=1000)


def h(x: float) -> datetime:
    return T0 + timedelta(hours=x)


def job(job_id: str, start: float, end: float | None, gpus: int, links: list[int]) -> core.JobRun:
    return core.JobRun(
        job_id=job_id,
        name="",
        started_at=h(start),
        ended_at=h(end) if end is not None else None,
        gpus=gpus,
        ranks=tuple(core.RankOnLink(rank=k, host="gpu-1", gpu=k, link_id=lid) for k, lid in enumerate(links)),
    )


def test_two_jobs_over_two_overlapping_alerts_count_each_hour_once():
    """Link 1 degraded 1h-3h and (a second alert) 2h-4h; link 2 from 3.5h, still open at 6h.
    Job A (8 GPUs, 0h-2.5h) crosses link 1: 1.5 h. Job B (64 GPUs, from 3h, running) crosses both:
    3h-4h on link 1 and 3.5h-6h on link 2 = 3 h. Job C (on a healthy link) is not hit."""
    degraded = [core.Degraded(1, h(1), h(3)), core.Degraded(1, h(2), h(4)), core.Degraded(2, h(3.5), None)]
    jobs = [job("A", 0, 2.5, 8, [1]), job("B", 3, None, 64, [1, 2]), job("C", 0, None, 16, [3])]
    out = core.impact_of(degraded=degraded, jobs=jobs, start=h(0), end=h(10), now=h(6), stall=P)
    assert [j.job_id for j in out.jobs] == ["B", "A"]  # by GPU-hours
    b, a = out.jobs
    assert a.hours == pytest.approx(1.5) and a.gpu_hours == pytest.approx(12)
    assert b.hours == pytest.approx(3) and b.gpu_hours == pytest.approx(192)
    assert [r.link_id for r in b.ranks_on_path] == [1, 2]
    assert out.ranks == 72 and out.gpu_hours == pytest.approx(204)
    assert out.degraded_hours == pytest.approx(5)  # 1h-6h
    assert out.stall_cost == pytest.approx(3.5 * 2.0 * (8 + 64))  # one stall of each job


def test_the_window_clips_and_a_job_outside_it_is_not_hit():
    degraded = [core.Degraded(1, h(1), h(5))]
    out = core.impact_of(
        degraded=degraded,
        jobs=[job("A", 0, 10, 4, [1]), job("B", 6, 9, 4, [1])],
        start=h(2),
        end=h(3),
        now=h(9),
        stall=P,
    )
    assert [j.job_id for j in out.jobs] == ["A"] and out.jobs[0].hours == pytest.approx(1)
    none = core.impact_of(
        degraded=[], jobs=[job("A", 0, 10, 4, [1])], start=h(0), end=h(9), now=h(9), stall=P
    )
    assert none.jobs == [] and none.degraded_hours == 0


def test_a_spike_and_the_uncorrectables_of_the_same_fault_are_one_stall():
    spike = core.Stall("tail_latency_spike", 1, "J", 64, h(1), 7)
    same = core.Stall("fec_uncorrectable", 2, "J", 64, h(1), 7)
    other_job = core.Stall("fec_uncorrectable", 2, "K", 8, h(1), 7)
    stalls = core.stalls_deduplicated([spike], [same, other_job, other_job])
    assert [(s.alert_id, s.job_id) for s in stalls] == [(1, "J"), (2, "K")]
    r = core.month_report(stalls=stalls, caught=[], stall=P)
    assert r.stall_cost == pytest.approx(3.5 * 2.0 * 72) and r.saving == 0


def test_caught_early_means_no_uncorrectable_on_the_link_until_it_ended():
    w = [
        core.EarlyWarning(1, 10, "fec_degradation", h(0), h(5)),
        core.EarlyWarning(2, 10, "fec_tail", h(4), h(6)),  # overlaps: the same problem
        core.EarlyWarning(3, 11, "rx_power_drift", h(0), h(5)),  # went on to uncorrectables
        core.EarlyWarning(4, 12, "fec_degradation", h(0), h(1)),  # uncorrectables only later
    ]
    seen = {11: [(h(4), None)], 12: [(h(2), h(3))]}
    caught = core.caught_early(warnings=w, uncorrectable=seen)
    assert [(c.alert_id, c.end) for c in caught] == [(1, h(6)), (4, h(1))]
    r = core.month_report(stalls=[], caught=caught, stall=P)
    assert r.stall_estimate == pytest.approx(3.5 * 1000 * 2.0)
    assert r.saving == pytest.approx(2 * 3.5 * 1000 * 2.0)


@pytest.mark.parametrize("month", ["2026-13", "2026-1", "26-10", "October", "1999-01", ""])
def test_a_month_that_is_not_one_is_refused(month):
    with pytest.raises(ValueError, match="YYYY-MM"):
        core.month_bounds(month, tz=UTC)


def test_december_ends_in_january():
    assert core.month_bounds("2026-12", tz=UTC) == (
        datetime(2026, 12, 1, tzinfo=UTC),
        datetime(2027, 1, 1, tzinfo=UTC),
    )
