"""From a slow all-reduce to the cable, on a seeded cluster (64 GPUs: 8 nodes, 8 rail leaves).

    [gpu-0001 eth0]--C--[leaf-s01-r1]--C--[gpu-0002 eth0] ...   ring "dp-rail1" (GPU 0 of each node)
    [gpu-0001 eth3]--C--[leaf-s01-r4]--C--[gpu-0005 eth3] ...   ring "dp-rail4" (GPU 3 of each node)
                                        ^ the faulty jumper (gpu-0005 eth3 <-> leaf-s01-r4)

A job is registered through ``POST /api/jobs/`` (ranks with their pids, as a prolog knows them);
its Inspector records arrive through ``POST /api/collectives/?format=inspector`` every minute and
the rail links' telemetry through ``POST /api/telemetry/``; the rollup and the spike rule run
every minute, as beat runs them (``cluster_jobs`` generates it all).

What each test guards: the fault test, that the suspects are ranked by physical evidence among the
links the slow rings share and that the spike is judged against a baseline it did not drag up; the
congestion test, that PFC pauses are never taken for a cable; the healthy hour, that stragglers,
checkpoint pauses and a one-off host hiccup page nobody.
"""

from __future__ import annotations

import json
from datetime import date, timedelta

import pytest
from django.db.models import Q
from django.utils import timezone

from inventory.core.choices import AlertRule, AlertState, TokenKind
from inventory.models import Alert, AlertNotification, Link, LinkSegment
from inventory.services.collectives import collectives_evaluate
from inventory.services.demo.seed import demo_seed
from inventory.services.telemetry.rollup import telemetry_rollup
from tests import factories as f
from tests.inventory.collectives.cluster_jobs import Episode, Job, inspector_body
from tests.inventory.views.conftest import without_name_spans
from tests.seeded import seeded_module

pytestmark = pytest.mark.django_db

HOSTS = [f"gpu-{n:04d}" for n in range(1, 9)]


_demo = seeded_module(lambda: demo_seed(gpus=64, seed=6, as_of=date(2026, 11, 29)))


@pytest.fixture
def cluster(_demo, user_with_role):
    return f.api_token_client(user_with_role("collector"), TokenKind.INGEST)


def rail_ports() -> list[tuple[str, str, str, int]]:
    """Both ends of every node NIC's rail link: (device, port, far device, rail)."""
    out = []
    for a_dev, a_port, b_dev, b_port in Link.objects.filter(
        Q(a_port__device__name__in=HOSTS) | Q(b_port__device__name__in=HOSTS), active=True, link_class="rail"
    ).values_list("a_port__device__name", "a_port__name", "b_port__device__name", "b_port__name"):
        nic = a_port if a_dev in HOSTS else b_port
        rail = int(nic[3:]) + 1
        out += [(a_dev, a_port, b_dev, rail), (b_dev, b_port, a_dev, rail)]
    return out


def post_records(client, job: Job, objs: list[dict]) -> None:
    for k in range(0, len(objs), 5000):
        r = client.post(
            f"/api/collectives/?format=inspector&job={job.job_id}",
            data=inspector_body(objs[k : k + 5000]),
            content_type="application/json",
        )
        assert r.status_code == 200, r.content[:300]
        assert r.json()["rejected"] == 0, r.json()["errors"][:3]


def post_samples(client, samples: list[dict]) -> None:
    for k in range(0, len(samples), 5000):
        r = client.post(
            "/api/telemetry/",
            data=json.dumps({"samples": samples[k : k + 5000]}),
            content_type="application/json",
        )
        assert r.status_code == 200, r.content[:300]
        assert r.json()["rejected"] == 0, r.json()["errors"][:3]


def uplink_ports(leaves: list[str]) -> list[tuple[str, str, str, int]]:
    """Both ends of every uplink of these rail leaves: (device, port, far device, the leaf's rail)."""
    out = []
    for a_dev, a_port, b_dev, b_port in Link.objects.filter(
        Q(a_port__device__name__in=leaves) | Q(b_port__device__name__in=leaves),
        active=True,
        link_class="leaf-spine",
    ).values_list("a_port__device__name", "a_port__name", "b_port__device__name", "b_port__name"):
        rail = int((a_dev if a_dev in leaves else b_dev).rsplit("-r", 1)[1])
        out += [(a_dev, a_port, b_dev, rail), (b_dev, b_port, a_dev, rail)]
    return out


def run(client, job: Job, *, minutes: int, telemetry_from: int, extra_ports=()) -> dict[int, list[int]]:
    """Deliver the job minute by minute; roll up and evaluate every minute. Returns the spike
    alerts opened at each minute. Telemetry: every rail link of the job, and ``extra_ports``."""
    r = client.post("/api/jobs/", data=json.dumps(job.registration()), content_type="application/json")
    assert r.status_code == 201, r.content
    assert r.json()["ranks_without_nic"] == 0
    ports = rail_ports()
    assert len(ports) == 2 * 8 * len(HOSTS)
    ports += list(extra_ports)
    job._tel_t = telemetry_from * 60.0
    opened = {}
    for minute in range(1, minutes + 1):
        now = job.start + timedelta(minutes=minute)
        post_records(client, job, job.records_until(minute * 60.0))
        if minute > telemetry_from:
            post_samples(client, job.telemetry_until(minute * 60.0, ports))
            while telemetry_rollup(now=now).remaining:
                pass
        if minute >= 20:
            opened[minute] = collectives_evaluate(now=now).alerts.opened
    return opened


def cable_of(host: str, port: str):
    link = Link.objects.get(
        Q(a_port__device__name=host, a_port__name=port) | Q(b_port__device__name=host, b_port__name=port),
        active=True,
    )
    return link, LinkSegment.objects.get(link=link).cable


def test_a_fault_on_one_cable_raises_a_spike_whose_top_suspect_is_that_cable(cluster, client, user_with_role):
    start = timezone.now().replace(second=0, microsecond=0) - timedelta(minutes=53)
    job = Job(
        job_id="4242",
        hosts=HOSTS,
        start=start,
        seed=7,
        episodes=[Episode("cable", rail=4, start_s=2400, node=4)],
    )
    opened = run(cluster, job, minutes=52, telemetry_from=30)

    link, cable = cable_of("gpu-0005", "eth3")
    spikes = Alert.objects.filter(rule=AlertRule.TAIL_LATENCY_SPIKE, evidence__collective__job=job.job_id)
    assert spikes.exists()
    # nothing before the fault had lasted the rule's five minutes
    first = min(m for m, ids in opened.items() if ids)
    assert first >= 45, opened
    rail4 = spikes.get(evidence__collective__communicator="dp-rail4")
    assert rail4.state == AlertState.OPEN and rail4.severity == "page"
    assert rail4.cable == cable and rail4.link == link
    assert cable.label in rail4.summary and "gpu-0005 OSFP2" in rail4.summary
    assert "leaf-s01-r4" in rail4.summary and "sure: high" in rail4.summary
    top = rail4.evidence["suspects"][0]
    assert top["cable"] == cable.label and top["modules"]["a"]["serial"] and top["modules"]["b"]["serial"]
    assert top["modules"]["a"]["serial"] in rail4.recommendation
    assert rail4.evidence["collective"]["candidates"] == 8  # the ring's 8 links, not the job's 64
    assert rail4.evidence["collective"]["confidence"] >= 0.75
    # every spike this fault raised (the world communicator's too) names that cable
    assert {a.cable_id for a in spikes} == {cable.pk}
    assert AlertNotification.objects.filter(alert=rail4, kind="opened").exists()  # mail
    # the alert page and the API say it to a person
    client.force_login(user_with_role("viewer", "eve"))
    page = without_name_spans(client.get(f"/alerts/{rail4.pk}/").content.decode())
    for text in ("Suspects", cable.label, "gpu-0005 OSFP2", "leaf-s01-r4", "dp-rail4", "How sure", "high ("):
        assert text in page, text
    api = client.get("/api/alerts/", {"rule": "tail_latency_spike"}).json()
    rows = api["results"] if isinstance(api, dict) else api
    assert {r["cable"] for r in rows} >= {cable.label}


# Nodes 5-8 run the job's local rank k on GPU (k + 4) mod 8: "dp-rail1" rings through rail leaves
# r1 (nodes 1-4) and r5 (nodes 5-8), "dp-rail5" the other way round; both cross the spines.
SHIFTED = frozenset({4, 5, 6, 7})


def an_uplink_of(leaf: str, n: int):
    link = (
        Link.objects.filter(
            Q(a_port__device__name=leaf) | Q(b_port__device__name=leaf), active=True, link_class="leaf-spine"
        )
        .select_related("a_port__device", "b_port__device")
        .order_by("pk")[n]
    )
    return link, ((link.a_port.device.name, link.a_port.name), (link.b_port.device.name, link.b_port.name))


def test_a_fault_on_a_spine_uplink_under_rings_that_cross_leaves_names_that_uplink(cluster):
    """[gpu-0001..4 eth0]--[leaf-s01-r1]==uplinks (ECMP)==[spines]==uplinks==[leaf-s01-r5]--[gpu-0005..8 eth4]
    The faulty cable is on one of leaf-s01-r1's 32 uplinks."""
    start = timezone.now().replace(second=0, microsecond=0) - timedelta(minutes=53)
    uplink, ends = an_uplink_of("leaf-s01-r1", 5)
    job = Job(
        job_id="4545",
        hosts=HOSTS,
        start=start,
        seed=10,
        shifted_nodes=SHIFTED,
        episodes=[Episode("uplink", rail=1, start_s=2400, ports=ends)],
    )
    run(
        cluster,
        job,
        minutes=52,
        telemetry_from=30,
        extra_ports=uplink_ports(["leaf-s01-r1", "leaf-s01-r5"]),
    )
    spikes = Alert.objects.filter(rule=AlertRule.TAIL_LATENCY_SPIKE, evidence__collective__job=job.job_id)
    slow = {a.evidence["collective"]["communicator"] for a in spikes}
    assert slow == {"dp-rail1", "dp-rail5"}, slow  # the two rings that cross r1's uplinks, no other
    for a in spikes:
        top = a.evidence["suspects"][0]
        assert a.link == uplink and top["link_id"] == uplink.pk
        assert a.cable is not None and top["cable"] in {s.cable.label for s in uplink.segments.all()}
        assert a.evidence["collective"]["how"] == "shared_by_slow"
        # no rail link is shared by the two rings: the candidates are the uplinks of r1 and r5
        assert a.evidence["collective"]["candidates"] == 64
        assert a.evidence["collective"]["sure"] == "high"
        assert "leaf-s01-r1" in a.summary and "spine-" in a.summary


def test_congestion_on_rings_that_cross_leaves_names_no_uplink(cluster):
    """PFC pauses on rail 1 and its uplinks, nothing physical: the uplinks are candidates, none
    is named."""
    start = timezone.now().replace(second=0, microsecond=0) - timedelta(minutes=53)
    job = Job(
        job_id="4646",
        hosts=HOSTS,
        start=start,
        seed=11,
        shifted_nodes=SHIFTED,
        episodes=[Episode("congestion", rail=1, start_s=2400)],
    )
    run(cluster, job, minutes=52, telemetry_from=30, extra_ports=uplink_ports(["leaf-s01-r1", "leaf-s01-r5"]))
    spikes = Alert.objects.filter(rule=AlertRule.TAIL_LATENCY_SPIKE, evidence__collective__job=job.job_id)
    assert spikes.exists()
    for a in spikes:
        assert a.cable is None and a.link is None, a.summary
        assert "no physical-layer anomaly on the" in a.summary
        assert a.recommendation.endswith("look at congestion or the host.")


def test_congestion_without_a_physical_fault_names_no_cable_and_says_so(cluster):
    start = timezone.now().replace(second=0, microsecond=0) - timedelta(minutes=53)
    job = Job(
        job_id="4343",
        hosts=HOSTS,
        start=start,
        seed=8,
        episodes=[Episode("congestion", rail=2, start_s=2400)],
    )
    run(cluster, job, minutes=52, telemetry_from=30)

    spikes = Alert.objects.filter(rule=AlertRule.TAIL_LATENCY_SPIKE, evidence__collective__job=job.job_id)
    rail2 = spikes.get(evidence__collective__communicator="dp-rail2")
    assert rail2.cable is None and rail2.link is None
    assert "no physical-layer anomaly on the 8 links of the slow" in rail2.summary
    assert rail2.recommendation.startswith("No physical-layer anomaly on the 8 links of the slow"), (
        rail2.recommendation
    )
    assert rail2.recommendation.endswith("look at congestion or the host.")
    assert "PFC pauses" in rail2.recommendation  # the congestion it did see
    assert not spikes.filter(cable__isnull=False).exists()


def test_a_healthy_hour_of_training_raises_nothing(cluster):
    """Stragglers, a checkpoint pause every 20 minutes and per-rank jitter, no fault."""
    start = timezone.now().replace(second=0, microsecond=0) - timedelta(minutes=81)
    job = Job(job_id="4444", hosts=HOSTS, start=start, seed=9)
    opened = run(cluster, job, minutes=80, telemetry_from=79)
    assert all(ids == [] for ids in opened.values())
    assert not Alert.objects.filter(
        rule=AlertRule.TAIL_LATENCY_SPIKE, evidence__collective__job=job.job_id
    ).exists()
