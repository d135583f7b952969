"""Safe to drain, on the seeded topology (16 GPUs: 2 nodes, 8 rail leaves of 32 uplinks each).

[gpu-0001 eth3]--jumper--[leaf-s01-r4]  a rail link: GPU 3 of gpu-0001 loses rail 4
[leaf-s01-r1 Ethernet17/1]--jumper--[panel]==trunk==[panel]--jumper--[spine]  an uplink
"""

from __future__ import annotations

import json
from datetime import date, timedelta

import pytest
from django.db.models import Q
from django.utils import timezone

from inventory.core.choices import CableStatus, TokenKind
from inventory.models import Alert, Cable, CollectiveJob, Link, LinkSegment
from inventory.services.collectives import RankSpec, drain_verdict, job_register
from inventory.services.demo.seed import demo_seed
from tests import factories as f
from tests.inventory.views.conftest import without_name_spans
from tests.seeded import seeded_module

pytestmark = pytest.mark.django_db


#: The 16-GPU demo, seeded once for the module (``tests/seeded.py``).
seeded = seeded_module(lambda: demo_seed(gpus=16, seed=3, as_of=date(2026, 11, 29)))


def rail_link(host: str, port: str) -> Link:
    return Link.objects.get(
        Q(a_port__device__name=host, a_port__name=port) | Q(b_port__device__name=host, b_port__name=port),
        active=True,
    )


def uplinks(leaf: str) -> list[Link]:
    return list(
        Link.objects.filter(
            Q(a_port__device__name=leaf) | Q(b_port__device__name=leaf), link_class="leaf-spine", active=True
        ).order_by("id")
    )


def take_down(links: list[Link]) -> None:
    """Their jumper at the leaf is faulty (out of service already)."""
    ids = [
        LinkSegment.objects.filter(link=lk).order_by("seq").values_list("cable_id", flat=True)[0]
        for lk in links
    ]
    for c in Cable.objects.filter(pk__in=ids):
        c.status = CableStatus.FAULTY
        c.save()


def test_a_rail_link_under_a_running_job_is_refused_with_the_reason(seeded, user_with_role):
    client = f.api_token_client(user_with_role("collector"), TokenKind.INGEST)
    r = client.post(
        "/api/jobs/",
        data=json.dumps({"job_id": "j1", "hosts": ["gpu-0001", "gpu-0002"], "tasks_per_node": 8}),
        content_type="application/json",
    )
    assert r.status_code == 201
    link = rail_link("gpu-0001", "eth3")
    v = drain_verdict(link_id=link.pk, now=timezone.now())
    assert not v.safe
    assert v.reasons == [
        "GPU 3 of gpu-0001 loses rail 4 while job j1 (rank 3) runs on it: wait for the job to end or move it first"
    ]
    assert v.jobs == [{"job": "j1", "rank": 3, "host": "gpu-0001", "gpu": 3}]
    # once the job has ended, the same drain is allowed (and says what it does)
    CollectiveJob.objects.filter(job_id="j1").update(ended_at=timezone.now() - timedelta(minutes=1))
    v = drain_verdict(link_id=link.pk, now=timezone.now())
    assert v.safe and v.notes == ["GPU 3 of gpu-0001 loses rail 4; no running job uses it"]


def test_a_leaf_uplink_is_refused_when_the_leaf_would_fall_below_its_minimum(seeded):
    ups = uplinks("leaf-s01-r1")
    assert len(ups) == 32  # minimum 24 (75%)
    take_down(ups[1:8])  # 7 already down: draining one more leaves 24
    v = drain_verdict(link_id=ups[0].pk, now=timezone.now())
    assert v.safe and v.leaves == [
        {"leaf": "leaf-s01-r1", "uplinks": 32, "down": 7, "remaining": 24, "minimum": 24}
    ]
    take_down([ups[8]])  # 8 down: one more leaves 23
    v = drain_verdict(link_id=ups[0].pk, now=timezone.now())
    assert not v.safe
    assert v.reasons[0].startswith(
        "leaf-s01-r1 would keep 23 of its 32 uplinks, below its minimum of 24 (75%): 8 already down (cable "
    )
    assert v.reasons[0].endswith("repair those first")


def test_the_page_and_the_api_say_whether_the_alerts_link_may_be_drained(seeded, client, user_with_role):
    job_register(
        job_id="j2",
        ranks=[RankSpec(rank=0, host="gpu-0002", local_rank=0, gpu=5)],
        started_at=timezone.now() - timedelta(hours=1),
        now=timezone.now(),
    )
    link = rail_link("gpu-0002", "eth5")
    now = timezone.now()
    alert = Alert.objects.create(
        key=f"fec_degradation:link:{link.pk}",
        rule="fec_degradation",
        severity="notify",
        link=link,
        opened_at=now,
        updated_at=now,
        summary="FEC degradation",
        evidence={},
    )
    client.force_login(user_with_role("engineer", "ed"))
    page = without_name_spans(client.get(f"/alerts/{alert.pk}/").content.decode())
    assert "Not safe to take this link out of service now." in page
    assert "GPU 5 of gpu-0002 loses rail 6 while job j2 (rank 0) runs on it" in page
    api = client.get(f"/api/alerts/{alert.pk}/drain/").json()
    assert api["safe"] is False and api["jobs"][0]["job"] == "j2"
