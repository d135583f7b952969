"""The monthly impact report (issue 35) on a constructed October at one site of two.

    [gpu-0001 eth0]--L1--[leaf r1]   job 7001 (16 GPUs) runs over it on Oct 5, 09:00-12:00
    [gpu-0001 eth1]--L2--[leaf r2]   an FEC warning, resolved with no uncorrectable: caught
    [gpu-0001 eth2]--L3--[leaf r3]   a receive-power warning that went on to uncorrectables: not caught
    [gpu-0001 eth3]--L4--[leaf r4]   a warning resolved in November: not October's

On L1 the job's ring slowed (a tail-latency spike) and the same fault showed uncorrectable
codewords: one stall, not two. A spike of September and a warning at the other site are not this
site's October.
"""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.db.models import Q
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from inventory.core.choices import AlertState
from inventory.models import Alert, Device, Link, Site
from inventory.selectors.collectives.impact import impact_month
from inventory.services.collectives import RankSpec, job_register
from inventory.services.demo.seed import demo_seed
from tests import factories as f

pytestmark = pytest.mark.django_db


def at(day: int, hour: int = 0, month: int = 10) -> datetime:
    return datetime(2026, month, day, hour, tzinfo=UTC)


def _link(host: str, nic: str) -> Link:
    return Link.objects.get(
        Q(a_port__device__name=host, a_port__name=nic) | Q(b_port__device__name=host, b_port__name=nic),
        active=True,
    )


_n = iter(range(1, 10_000))


def alert(rule: str, link: Link | None, opened: datetime, resolved: datetime, severity="warning", **evidence):
    return Alert.objects.create(
        key=f"{rule}:test:{next(_n)}",
        rule=rule,
        severity=severity,
        state=AlertState.RESOLVED,
        link=link,
        opened_at=opened,
        updated_at=resolved,
        resolved_at=resolved,
        summary=rule,
        evidence=evidence,
    )


@pytest.fixture
def october():
    demo_seed(gpus=16, seed=3, as_of=date(2026, 11, 29))
    site = Site.objects.get(name="Demo Hall 3")
    # the other site: one GPU node's link to a leaf
    rack = f.RackFactory(name="R-OTHER")
    _, nic = f.twin_port_device("gpu-other", rack=rack, role="gpu_node", names=lambda c, k: f"eth{2 * c + k}")
    _, leaf = f.twin_port_device("leaf-other", rack=rack, u=10)
    f.jumper("J-OTHER", nic[0], leaf[0])
    assert rack.row.room.site != site
    hosts = list(
        Device.objects.filter(role="gpu_node", rack__row__room__site=site)
        .order_by("name")
        .values_list("name", flat=True)
    )[:2]
    job_register(
        job_id="7001",
        ranks=[
            RankSpec(rank=n * 8 + g, host=h, local_rank=g, gpu=g)
            for n, h in enumerate(hosts)
            for g in range(8)
        ],
        started_at=at(5, 9),
        ended_at=at(5, 12),
        now=at(5, 9),
    )
    l1, l2, l3, l4 = (_link(hosts[0], f"eth{k}") for k in range(4))
    spike = alert("tail_latency_spike", l1, at(5, 10), at(5, 11), "page", collective={"job": "7001"})
    alert("fec_uncorrectable", l1, at(5, 10), at(5, 11), "notify")  # the same fault: the same stall
    caught = alert("fec_degradation", l2, at(10), at(11), "notify")
    alert("fec_tail", l2, at(10, 12), at(10, 20))  # overlapping: the same problem
    alert("rx_power_drift", l3, at(12), at(13))
    alert("fec_uncorrectable", l3, at(12, 12), at(12, 18), "notify")  # no job on it then: no stall
    alert("fec_degradation", l4, at(28), at(2, 1, month=11), "notify")
    alert(
        "tail_latency_spike", l1, at(28, 1, month=9), at(28, 2, month=9), "page", collective={"job": "7001"}
    )
    alert("fec_degradation", _link("gpu-other", "eth0"), at(10), at(11), "notify")
    return site, spike, caught


def test_the_month_counts_one_stall_and_one_problem_caught_and_what_that_saved(
    october, user_with_role, client
):
    site, spike, caught = october
    s = django_settings
    estimate = (
        s.CABLETRACK_FAILURE_HOURS_PER_INCIDENT * s.CABLETRACK_CLUSTER_GPUS * s.CABLETRACK_GPU_HOUR_COST
    )
    api = f.api_token_client(user_with_role("viewer", "vic"))
    body = api.get("/api/reports/impact/", {"site": site.name, "month": "2026-10"}).json()
    assert body["stalls_incurred"] == 1
    assert [(x["kind"], x["alert"], x["job"], x["gpus"]) for x in body["stalls"]] == [
        ("tail_latency_spike", spike.pk, "7001", 16)
    ]
    assert body["stall_cost"] == pytest.approx(
        s.CABLETRACK_FAILURE_HOURS_PER_INCIDENT * 16 * s.CABLETRACK_GPU_HOUR_COST
    )
    assert body["caught_before_uncorrectable"] == 1 and [c["alert"] for c in body["caught"]] == [caught.pk]
    assert body["stall_estimate"] == pytest.approx(estimate)
    assert body["estimated_saving"] == pytest.approx(estimate)
    assert len(body["assumptions"]) == 3
    # November holds the warning resolved then, September the older spike.
    nov = api.get("/api/reports/impact/", {"site": site.slug, "month": "2026-11"}).json()
    assert nov["caught_before_uncorrectable"] == 1 and nov["stalls_incurred"] == 0
    assert (
        api.get("/api/reports/impact/", {"site": site.name, "month": "2026-09"}).json()["stalls_incurred"]
        == 1
    )
    # Bad input: a clear 400 naming the field.
    assert api.get("/api/reports/impact/", {"site": site.name, "month": "2026-13"}).json().keys() == {"month"}
    assert api.get("/api/reports/impact/", {"site": "nowhere", "month": "2026-10"}).status_code == 400
    assert "site" in api.get("/api/reports/impact/", {"month": "2026-10"}).json()
    # The engineers' page shows the same figures and its assumptions.
    client.force_login(user_with_role("engineer", "erin"))
    page = client.get("/reports/impact/", {"site": site.name, "month": "2026-10"}).content.decode()
    assert 'data-testid="stalls">1<' in page and 'data-testid="caught">1<' in page
    assert f"= <strong>{estimate:,.0f} USD</strong>" in page
    assert "Assumptions" in page and "caught early" in page
    assert client.get("/reports/impact/", {"month": "October"}).status_code == 400


def test_the_month_report_reads_a_fixed_number_of_queries(october):
    site, _spike, _caught = october
    start, end = at(1), at(1, month=11)

    def count():
        with CaptureQueriesContext(connection) as ctx:
            out = impact_month(site_id=site.pk, start=start, end=end, now=timezone.now())
        return len(ctx.captured_queries), out

    before, r1 = count()
    # five more jobs, each slowed by a spike of its own, and five more warnings caught
    hosts = list(Device.objects.filter(role="gpu_node", rack__row__room__site=site).order_by("name")[:2])
    for k in range(5):
        job_register(
            job_id=f"72{k}",
            ranks=[
                RankSpec(rank=n * 8 + g, host=h.name, local_rank=g, gpu=g)
                for n, h in enumerate(hosts)
                for g in range(8)
            ],
            started_at=at(20 + k),
            ended_at=at(20 + k, 5),
            now=at(20 + k),
        )
        alert("tail_latency_spike", None, at(20 + k, 1), at(20 + k, 2), "page", collective={"job": f"72{k}"})
        alert("fec_degradation", _link(hosts[1].name, f"eth{k}"), at(20 + k), at(20 + k, 3), "notify")
    after, r2 = count()
    assert (len(r1.stalls), len(r1.caught)) == (1, 1) and (len(r2.stalls), len(r2.caught)) == (6, 6)
    assert before == after == 6
