"""Impact, both ways (issue 35), on the seeded cluster (64 GPUs: 8 nodes, 8 rail leaves).

    [gpu-0001 ethK]--C--[leaf-s01-rK+1]--C--[gpu-0002 ethK] ...   the ring of rail K+1
    [gpu-0005 ethK]--C(bent)--[leaf-s01-rK+1]                     the fault, under job 5151's rank 8*4+K

A job is registered through ``POST /api/jobs/`` (its ranks on the 8 nodes' 64 GPUs); the rail's
telemetry arrives through ``POST /api/telemetry/`` every 10 s (``cluster_jobs`` generates it, a
bent jumper from minute 5); the rollup and the physical rules run every minute, as beat runs them.
The job ends at minute 25; the impact is read at minute 30.

What each test guards: the faulty cable's impact names the job, its rank on the cable and the
GPU-hours (job GPUs x hours the job ran while an alert was open on the link, computed here by
hand), on the page, the module page and the API; a healthy cable of the same ring shows none; the
reads stay a fixed number of queries however many jobs ran.
"""

from __future__ import annotations

import json
import re
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.db.models import Q
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from inventory.core.choices import AlertState, TokenKind
from inventory.core.impact import DEGRADED_RULES
from inventory.models import Alert, Cable, CollectiveJob, Link, LinkSegment, Transceiver
from inventory.selectors.collectives.impact import cable_impact, module_impact
from inventory.services.alerts.evaluate import alerts_evaluate
from inventory.services.collectives import RankSpec, job_register
from inventory.services.demo.seed import demo_seed
from inventory.services.telemetry.rollup import telemetry_rollup
from tests import factories as f
from tests.inventory.collectives.cluster_jobs import Episode, Job
from tests.inventory.collectives.test_spike_on_the_cluster import HOSTS, post_samples
from tests.seeded import seeded_module

pytestmark = pytest.mark.django_db

FAULT_NODE = 4  # gpu-0005
MINUTES, JOB_ENDS = 30, 25


def _stall_cost(gpus: int) -> float:
    s = django_settings
    return s.CABLETRACK_FAILURE_HOURS_PER_INCIDENT * gpus * s.CABLETRACK_GPU_HOUR_COST


def _rail_links(rail: int) -> dict[str, Link]:
    """Node -> its active link on ``rail`` (NIC eth<rail-1>)."""
    out = {}
    for link in Link.objects.filter(
        Q(a_port__device__name__in=HOSTS, a_port__name=f"eth{rail - 1}")
        | Q(b_port__device__name__in=HOSTS, b_port__name=f"eth{rail - 1}"),
        active=True,
    ).select_related("a_port__device", "b_port__device"):
        node = link.a_port.device.name if link.a_port.device.name in HOSTS else link.b_port.device.name
        out[node] = link
    return out


_demo = seeded_module(lambda: demo_seed(gpus=64, seed=6, as_of=date(2026, 11, 29)))


@pytest.fixture
def faulted(_demo, user_with_role):
    """The cluster after the run: (job, faulty link, healthy link, the reading's now)."""
    # The demo's own job on these nodes ended with the demo's day: the only job running now is ours.
    CollectiveJob.objects.update(ended_at=timezone.now() - timedelta(days=5))
    client = f.api_token_client(user_with_role("collector"), TokenKind.INGEST)
    # A rail that carries no alert at all (the demo's incidents are elsewhere).
    alerted = set(Alert.objects.values_list("link_id", flat=True))
    rail = next(r for r in range(1, 9) if not {lk.pk for lk in _rail_links(r).values()} & alerted)
    start = timezone.now().replace(second=0, microsecond=0) - timedelta(minutes=MINUTES + 1)
    job = Job(
        job_id="5151",
        hosts=HOSTS,
        start=start,
        seed=11,
        episodes=[Episode("cable", rail=rail, start_s=300, node=FAULT_NODE)],
    )
    r = client.post("/api/jobs/", data=json.dumps(job.registration()), content_type="application/json")
    assert r.status_code == 201, r.content
    links = _rail_links(rail)
    ports = []
    for link in links.values():
        a, b = link.a_port, link.b_port
        ports += [(a.device.name, a.name, b.device.name, rail), (b.device.name, b.name, a.device.name, rail)]
    for minute in range(1, MINUTES + 1):
        now = start + timedelta(minutes=minute)
        post_samples(client, job.telemetry_until(minute * 60.0, ports))
        while telemetry_rollup(now=now).remaining:
            pass
        if minute >= 10:
            alerts_evaluate(now=now)
    # The job ends at minute 25 (the launcher's epilog posts the registration again with its end).
    job_register(
        job_id=job.job_id,
        ranks=[
            RankSpec(**{k: x[k] for k in ("rank", "host", "local_rank", "gpu", "pid")})
            for x in job.registration()["ranks"]
        ],
        started_at=start,
        ended_at=start + timedelta(minutes=JOB_ENDS),
        now=start + timedelta(minutes=JOB_ENDS),
    )
    bad, good = links[HOSTS[FAULT_NODE]], links[HOSTS[0]]
    return job, rail, bad, good, start + timedelta(minutes=MINUTES)


def _cable(link: Link):
    return LinkSegment.objects.get(link=link).cable


def _window(now):
    return {"start": now - timedelta(days=90), "end": now, "now": now}


def test_a_fault_under_a_running_job_gives_its_cable_the_job_its_rank_and_gpu_hours(
    faulted, client, user_with_role
):
    job, rail, bad, good, now = faulted
    alerts = list(Alert.objects.filter(link=bad, rule__in=DEGRADED_RULES))
    assert alerts and all(a.state == AlertState.OPEN for a in alerts), alerts
    assert {"fec_degradation", "fec_uncorrectable"} <= {a.rule for a in alerts}
    # By hand: degraded since the first alert opened, the job ran until minute 25, 64 GPUs.
    first = min(a.opened_at for a in alerts)
    ended = job.start + timedelta(minutes=JOB_ENDS)
    assert first < ended
    hours = (ended - first).total_seconds() / 3600
    gpu_hours = 64 * hours

    impact = cable_impact(cable=_cable(bad), **_window(now))
    assert [j.job_id for j in impact.jobs] == ["5151"]
    hit = impact.jobs[0]
    rank = FAULT_NODE * 8 + (rail - 1)
    assert [(r.rank, r.host, r.gpu) for r in hit.ranks_on_path] == [(rank, HOSTS[FAULT_NODE], rail - 1)]
    assert impact.ranks == 64
    assert hit.hours == pytest.approx(hours)
    assert impact.gpu_hours == pytest.approx(gpu_hours)
    assert impact.stall_cost == pytest.approx(_stall_cost(64))
    assert impact.degraded_hours == pytest.approx((now - first).total_seconds() / 3600)

    # The healthy cable of the same ring, under the same job: no impact.
    healthy = cable_impact(cable=_cable(good), **_window(now))
    assert healthy.jobs == [] and healthy.degraded_hours == 0

    # The module in the faulty link's NIC cage sat there all along: the same job and GPU-hours.
    nic_port = bad.a_port if bad.a_port.device.name in HOSTS else bad.b_port
    xcvr = Transceiver.objects.get(cage_id=nic_port.cage_id)
    m = module_impact(transceiver=xcvr, **_window(now))
    assert [j.job_id for j in m.jobs] == ["5151"] and m.gpu_hours == pytest.approx(gpu_hours)

    # The page, the module page and the API say it (read at the wall clock: the job has ended,
    # so the figures are the same).
    client.force_login(user_with_role("viewer", "eve"))
    page = client.get(f"/c/{_cable(bad).label}").content.decode()
    shown = f"{gpu_hours:,.1f}".removesuffix(".0")
    assert "Impact" in page and f"1 job, 64 ranks, {shown} GPU-hours</strong> over this cable" in page, page
    assert f"rank {rank} on {HOSTS[FAULT_NODE]} GPU {rail - 1}" in page
    # The job's line multiplies as it reads: the GPUs times the hours shown are the GPU-hours shown.
    gpus, shown_hours, shown_product = re.search(
        r"(\d+) GPUs for ([\d.,]+) h = ([\d.,]+) GPU-hours", page
    ).groups()
    product = (int(gpus) * Decimal(shown_hours)).quantize(Decimal("0.1"), ROUND_HALF_UP)
    assert product == Decimal(shown_product.replace(",", "")), (gpus, shown_hours, shown_product)
    assert 'data-testid="impact"' not in client.get(f"/c/{_cable(good).label}").content.decode()
    assert "1 job, 64 ranks" in client.get(f"/t/{xcvr.pk}").content.decode()
    api = f.api_token_client(user_with_role("viewer", "vic"))
    body = api.get(f"/api/cables/{_cable(bad).label}/impact/").json()
    assert body["jobs_hit"] == 1 and body["ranks"] == 64 and body["days"] == 90
    assert body["gpu_hours"] == pytest.approx(gpu_hours, abs=0.01)
    assert body["stall_cost"] == pytest.approx(_stall_cost(64))
    assert body["jobs"][0]["ranks_on_path"] == [
        {"rank": rank, "host": HOSTS[FAULT_NODE], "gpu": rail - 1, "link": bad.pk}
    ]
    assert api.get(f"/api/cables/{_cable(good).label}/impact/").json()["jobs_hit"] == 0
    assert api.get(f"/api/transceivers/{xcvr.pk}/impact/").json()["jobs_hit"] == 1
    assert api.get(f"/api/cables/{_cable(bad).label}/impact/?days=0").status_code == 400
    assert api.get(f"/api/cables/{_cable(bad).label}/impact/?days=x").status_code == 400


def test_the_impact_reads_do_not_grow_with_the_jobs(faulted):
    """Two queries for a cable, three for a module, whether one job or eleven ran over it."""
    job, _rail, bad, _good, now = faulted
    cable = _cable(bad)
    nic_port = bad.a_port if bad.a_port.device.name in HOSTS else bad.b_port
    xcvr = Transceiver.objects.get(cage_id=nic_port.cage_id)

    def count(fn):
        with CaptureQueriesContext(connection) as ctx:
            out = fn()
        return len(ctx.captured_queries), out

    one_c, before = count(lambda: cable_impact(cable=cable, **_window(now)))
    one_m, _ = count(lambda: module_impact(transceiver=xcvr, **_window(now)))
    ranks = [
        RankSpec(**{k: x[k] for k in ("rank", "host", "local_rank", "gpu", "pid")})
        for x in job.registration()["ranks"]
    ]
    for k in range(10):  # ten more jobs on the same GPUs, one after another while it was degraded
        t0 = job.start + timedelta(minutes=10 + k)
        job_register(
            job_id=f"6{k:03d}", ranks=ranks, started_at=t0, ended_at=t0 + timedelta(minutes=1), now=t0
        )
    many_c, after = count(lambda: cable_impact(cable=cable, **_window(now)))
    many_m, _ = count(lambda: module_impact(transceiver=xcvr, **_window(now)))
    assert len(before.jobs) == 1 and len(after.jobs) > 1
    assert (one_c, one_m) == (many_c, many_m) == (2, 3)


def test_a_replacement_cable_does_not_inherit_the_jobs_its_predecessor_carried(faulted):
    """The alert moves to the new cable at the replacement (minute 30, after the job ended at 25):
    the job is the old cable's impact, not the new one's, although the moved alert opened before."""
    from inventory.services.plant.cables import cable_replace

    _job, _rail, bad, _good, now = faulted
    old = _cable(bad)
    new = cable_replace(old=old, new_label="R-5151", reason="bent", now=now)
    assert Alert.objects.filter(cable=new, moved_from=old, rule__in=DEGRADED_RULES).exists()

    later = now + timedelta(hours=1)
    fresh = cable_impact(cable=new, **_window(later))
    assert fresh.jobs == [] and fresh.gpu_hours == 0
    assert fresh.degraded_hours == pytest.approx(1.0)  # from the replacement on, not from the opening
    kept = cable_impact(cable=Cable.objects.get(pk=old.pk), **_window(later))
    assert [j.job_id for j in kept.jobs] == ["5151"]
