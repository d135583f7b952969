"""``link_degraded`` end to end: a link that trains down pages, through the real endpoint,
rollup and rule task.

Collectors report the link as trained (``speed_gbps``, ``link_width``: lanes in use) with
their counters. The rule compares the newest report with what the link is recorded at, so a
400G x4 link that comes back from a flap on two lanes alerts exactly its cable, and the
healthy neighbour that keeps all four lanes stays quiet. Topology as in
``test_alerts_replay``::

    [gpu-r eth0]--J-R0--[leaf-r Ethernet1/1]     link 0 (stays at 400G x4)
    [gpu-r eth1]--J-R1--[leaf-r Ethernet1/2]     link 1 (trains down to 200G x2)
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.core.choices import CableStatus, TokenKind
from inventory.models import Alert, Cable, Link, TelemetrySample
from inventory.services import alerts as svc
from inventory.services.telemetry.rollup import telemetry_rollup
from tests import factories as f

pytestmark = pytest.mark.django_db

STEP_S = 10
PORTS = [("gpu-r", "eth0"), ("gpu-r", "eth1"), ("leaf-r", "Ethernet1/1"), ("leaf-r", "Ethernet1/2")]
DEGRADED = {("gpu-r", "eth1"), ("leaf-r", "Ethernet1/2")}


@pytest.fixture
def scene(user_with_role):
    f.production_jumper_pair()
    for link in Link.objects.filter(active=True):  # what the plant records for these links
        link.speed_gbps, link.lanes = 400, 4
        link.save()
    client = f.api_token_client(user_with_role("collector"), TokenKind.INGEST)
    end = timezone.now().replace(second=0, microsecond=0)
    return {"client": client, "end": end, "start": end - timedelta(minutes=20)}


def series(device, port, start, end, *, train_down_at=None):
    """Healthy counters every 10 s and the link as trained; from ``train_down_at`` seconds on,
    the link runs at 200G on two lanes (after one link-down event)."""
    out = []
    t = 0
    while start + timedelta(seconds=t) < end:
        down = train_down_at is not None and t >= train_down_at
        out.append(
            f.telemetry_sample(
                device,
                port,
                start + timedelta(seconds=t),
                fec_corrected_codewords=4000 * t,
                fec_corrected_bits=4800 * t,
                fec_uncorrectable_codewords=0,
                link_down_events=3 + (1 if down else 0),
                speed_gbps=200 if down else 400,
                link_width=2 if down else 4,
            )
        )
        t += STEP_S
    return out


def post(client, samples):
    r = client.post("/api/telemetry/", data=json.dumps({"samples": samples}), content_type="application/json")
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["rejected"] == 0, body["errors"][:3]
    return body


def roll(now):
    while telemetry_rollup(now=now).remaining:
        pass


def test_a_link_that_trains_down_pages_exactly_its_cable_and_the_healthy_one_stays_quiet(scene):
    start, end, client = scene["start"], scene["end"], scene["client"]
    half = start + timedelta(minutes=10)
    # Ten healthy minutes on both links: nothing to say.
    post(client, [s for d, p in PORTS for s in series(d, p, start, half)])
    roll(half)
    svc.alerts_evaluate(now=half)
    assert not Alert.objects.exists()
    stored = TelemetrySample.objects.filter(port__name="eth1").order_by("ts").last()
    assert (stored.speed_gbps, stored.link_width) == (400, 4)  # kept with the sample

    # Link 1 flaps and comes back on two lanes at 200G; link 0 keeps running at 400G x4.
    later = []
    for d, p in PORTS:
        rows = series(d, p, start, end, train_down_at=10 * 60 + 30 if (d, p) in DEGRADED else None)
        later += [s for s in rows if s["ts"] >= half.isoformat()]
    post(client, later)
    roll(end)
    svc.alerts_evaluate(now=end)

    degraded = Alert.objects.get(rule="link_degraded")
    assert degraded.severity == "page"
    assert list(degraded.cables.values_list("label", flat=True)) == ["J-R1"]
    assert "gpu-r:eth1" in degraded.summary and "leaf-r:Ethernet1/2" in degraded.summary
    assert "running at 200G, expected 400G" in degraded.summary
    assert "2 of 4 lanes up" in degraded.summary
    assert not Alert.objects.filter(cables__label="J-R0").exists()
    assert Cable.objects.get(label="J-R1").status == CableStatus.DEGRADED
    assert Cable.objects.get(label="J-R0").status == CableStatus.IN_PRODUCTION

    # A re-run of the rule task while the link is still down updates, never duplicates.
    svc.alerts_evaluate(now=end)
    assert Alert.objects.filter(rule="link_degraded").count() == 1
