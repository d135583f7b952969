"""The demo shows a slow all-reduce from the job to the cable (issue 35): its training job has a
``tail_latency_spike`` alert whose top suspect is the one cable the telemetry shows failing, and
the pages show the chain: the job, the slow ring, the cable with both ends and modules, its FEC
evidence and whether the link is safe to drain.

    [gpu-000n ethK]--C--[leaf-s01-rK+1]   ring "dp-railK+1" (GPU K of each of the job's 8 nodes)
    one of its 8 jumpers bent: its receivers' pre-FEC BER climbs, the ring slows
"""

import re
from datetime import date, timedelta

import pytest
from django.db.models import Q

from inventory.core.choices import AlertRule, AlertState, CableStatus
from inventory.models import Alert, Cable, CollectiveJob, JobRank, Link, LinkSegment, PortRollup
from inventory.selectors.alerts.queries import cable_alerts_context
from inventory.services.demo.builder import seed_now
from inventory.services.demo.seed import demo_seed
from tests.inventory.views.conftest import without_name_spans
from tests.seeded import seeded_module

pytestmark = pytest.mark.django_db

AS_OF = date(2026, 11, 29)


#: The 64-GPU demo, seeded once for the module (``tests/seeded.py``).
hall = seeded_module(lambda: demo_seed(gpus=64, seed=5, as_of=AS_OF))


def failing_cable():
    """The cable of the job's rail link whose receivers report a pre-FEC BER above 1e-5."""
    job_ports = set(JobRank.objects.values_list("port_id", flat=True))
    link_of = {}
    for lid, a, b in Link.objects.filter(
        Q(a_port_id__in=job_ports) | Q(b_port_id__in=job_ports), active=True
    ).values_list("id", "a_port_id", "b_port_id"):
        link_of[a] = link_of[b] = lid
    high = PortRollup.objects.filter(port_id__in=list(link_of), pre_fec_ber__gt=1e-5)
    failing = {link_of[p] for p in high.values_list("port_id", flat=True)}
    assert len(failing) == 1, failing
    return LinkSegment.objects.get(link_id=failing.pop()).cable


def test_the_demo_job_has_a_spike_whose_top_suspect_is_the_failing_cable(hall):
    assert hall.counts["jobs"] == 1 and hall.counts["collective_records"] > 0
    job = CollectiveJob.objects.get()
    assert job.world_size == 64 and job.ended_at is None
    spike = Alert.objects.get(rule=AlertRule.TAIL_LATENCY_SPIKE)
    cable = failing_cable()
    assert spike.state == AlertState.OPEN and spike.severity == "page"
    assert spike.cable == cable
    assert spike.evidence["suspects"][0]["cable"] == cable.label
    c = spike.evidence["collective"]
    assert c["job"] == job.job_id and c["sure"] == "high"
    assert len(c["slow_communicators"]) == 1 and c["fast_communicators"] == 7
    assert c["candidates"] == c["candidates_reporting"] == 8  # the slow ring's links, all reporting
    assert spike.recommendation.endswith("drain the link first if the job allows.")  # whole, not cut


def test_the_pages_show_the_chain_from_the_job_to_a_safe_repair(hall, client, user_with_role):
    spike = Alert.objects.get(rule=AlertRule.TAIL_LATENCY_SPIKE)
    top = spike.evidence["suspects"][0]
    ring = spike.evidence["collective"]["communicator"]
    client.force_login(user_with_role("viewer", "eve"))
    page = without_name_spans(client.get(f"/alerts/{spike.pk}/").content.decode())
    for text in (
        f"{spike.evidence['collective']['job']} llama-pretrain: 64 ranks on 8 hosts",  # the job
        f"{ring} (7 fast in the same job)",  # the slow ring
        "its P99",
        "AllReduce, 256 MiB<",  # the size as the headline and NCCL say it (not "256.0 MB")
        top["cable"],  # the suspect with both ends and modules
        top["a_cage"],
        top["b_cage"],
        top["modules"]["a"]["serial"],
        top["modules"]["b"]["serial"],
        "pre-FEC BER",  # its evidence
        "uncorrectable codewords",
        "Not safe to take this link out of service now.",  # the repair, when it is safe
        "wait for the job to end or move it first",
    ):
        assert text in page, text
    # the cable page: the alert, and the FEC climb in its link health
    cable_page = without_name_spans(client.get(f"/c/{top['cable']}").content.decode())
    assert "Tail latency spike" in cable_page
    health = cable_alerts_context(spike.cable, now=seed_now(AS_OF) + timedelta(minutes=1))
    assert health["fec_health"]["label"] == "margin shrinking" and not health["fec_spark"]["empty"]


def test_the_suspect_cable_is_degraded_wherever_it_is_shown(hall, client, user_with_role):
    """The spike names the bent jumper with physical evidence: the seed raises it through the
    services, so the jumper is degraded as under any alert that names a cable, and its badge, its
    row in the alert's path table and the rack drawing agree with its first screen (not "In
    production" above "Not ready for production")."""
    spike = Alert.objects.get(rule=AlertRule.TAIL_LATENCY_SPIKE)
    cable = Cable.objects.get(pk=spike.cable_id)
    assert cable.status == CableStatus.DEGRADED
    assert cable.history.latest().history_change_reason.startswith(f"alert tail_latency_spike #{spike.pk}")
    client.force_login(user_with_role("technician", "tina"))
    page = without_name_spans(client.get(f"/c/{cable.label}").content.decode())
    assert 'data-testid="cable-status">Degraded<' in page
    assert "Not ready for production until it resolves." in page
    why = re.sub(r"<[^>]+>", "", page.split('data-testid="status-why">', 1)[1].split("</p>", 1)[0])
    # The alert that degraded it is the one its first screen shows: the why line points at it
    # instead of saying its summary a second time (the phone's first screen has no room for it).
    assert f"the alert above (#{spike.pk})" in why and "Tail latency spike" not in why
    alert_page = without_name_spans(client.get(f"/alerts/{spike.pk}/").content.decode())
    path = alert_page.split("<h2>Path</h2>", 1)[1]
    row = next(r for r in path.split('data-testid="path-row"')[1:] if f">{cable.label}<" in r)
    assert '<td data-state="alert">Degraded<' in row
    rack = spike.link.a_port.device.rack.name
    rack_page = without_name_spans(client.get(f"/r/{rack}").content.decode())
    rows = [r for r in rack_page.split('class="row-item"')[1:] if f">{cable.label}<" in r]
    assert rows and all('<span class="status s-degraded">Degraded</span>' in r for r in rows)
