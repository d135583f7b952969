"""Scenarios replayed through the real ingest endpoint, the real rollup and the rule task.

Collectors post cumulative counters every 10 s to ``POST /api/telemetry/``; the rollup turns
them into per-minute increases (resets, duplicates and order handled there); the rules judge
the rollups. Topology::

    [gpu-r eth0]--J-R0--[leaf-r Ethernet1/1]     link 0
    [gpu-r eth1]--J-R1--[leaf-r Ethernet1/2]     link 1
"""

from __future__ import annotations

import json
import random
from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.core.choices import CableStatus, TokenKind
from inventory.models import Alert, Cable
from inventory.services import alerts as svc
from inventory.services.telemetry.rollup import telemetry_rollup
from tests import factories as f

pytestmark = pytest.mark.django_db

LINE_PER_S = 4 * 106.25e9
U63 = 1 << 63
STEP_S = 10


@pytest.fixture
def scene(user_with_role):
    f.production_jumper_pair()
    client = f.api_token_client(user_with_role("collector"), TokenKind.INGEST)
    end = timezone.now().replace(second=0, microsecond=0)
    return {"client": client, "end": end, "start": end - timedelta(minutes=30)}


PORTS = [("gpu-r", "eth0"), ("gpu-r", "eth1"), ("leaf-r", "Ethernet1/1"), ("leaf-r", "Ethernet1/2")]


def series(device, port, start, end, *, ber=lambda t: 5e-9, base=0, reset_at=None, tail_at=None):
    """Cumulative counters for one port every 10 s. ``ber(t)`` is the pre-FEC BER at ``t`` s."""
    out = []
    bits = cw = 0.0
    rx = base
    t = 0
    hist = [0] * 16
    while start + timedelta(seconds=t) < end:
        if reset_at is not None and t == reset_at:
            bits = cw = 0.0
            rx = 0
            hist = [0] * 16
        inc = ber(t) * LINE_PER_S * STEP_S
        bits += inc
        cw += inc / 1.2
        rx += int(50e9 * STEP_S)
        hist[0] += 10**9
        hist[1] += int(inc / 1.2)
        if tail_at is not None and t == tail_at:
            hist[14] += 1  # one codeword with 14 symbol errors: rare, but healthy links have them
        out.append(
            f.telemetry_sample(
                device,
                port,
                start + timedelta(seconds=t),
                fec_corrected_codewords=int(cw) + base,
                fec_corrected_bits=int(bits) + base,
                fec_uncorrectable_codewords=base,
                rx_bits=rx,
                fec_hist=hist.copy(),
                rx_power_dbm=[-2.0, -2.1, -1.9, -2.0],
                tx_power_dbm=[1.0, 1.1, 0.9, 1.0],
                link_down_events=3,  # lifetime total: old, not a flap now
            )
        )
        t += STEP_S
    return out


def post(client, samples):
    r = client.post("/api/telemetry/", data=json.dumps({"samples": samples}), content_type="application/json")
    assert r.status_code == 200, r.content
    return r.json()


def roll(now):
    while telemetry_rollup(now=now).remaining:
        pass


def test_a_healthy_cluster_through_resets_duplicates_disorder_u64_and_a_tail_codeword_stays_quiet(scene):
    start, end, client = scene["start"], scene["end"], scene["client"]
    samples = []
    samples += series("gpu-r", "eth0", start, end, base=U63 + 12_345)  # u64 counters past 2**63
    samples += series("gpu-r", "eth1", start, end, reset_at=900)  # the NIC rebooted mid-window
    samples += series("leaf-r", "Ethernet1/1", start, end, tail_at=1500)  # one high-bin codeword
    samples += series("leaf-r", "Ethernet1/2", start, end)
    rng = random.Random(5)
    rng.shuffle(samples)  # out of order
    first = post(client, samples[: len(samples) // 2])
    post(client, samples[len(samples) // 2 :])
    again = post(client, samples[: len(samples) // 2])  # a collector retry: duplicates
    assert first["stored"] == again["duplicates"] and again["stored"] == 0
    roll(end)
    report = svc.alerts_evaluate(now=end)
    assert report.ports == 4
    assert list(Alert.objects.values_list("rule", "key")) == []
    assert not Cable.objects.filter(status=CableStatus.DEGRADED).exists()


def test_a_link_whose_corrected_rate_climbs_for_ten_minutes_alerts_exactly_that_cable(scene):
    start, end, client = scene["start"], scene["end"], scene["client"]
    climb_from = 30 * 60 - 12 * 60  # the last 12 minutes

    def climbing(t):
        return 5e-9 if t < climb_from else 2e-6 * (1 + (t - climb_from) / 720)  # 400x and rising

    baseline_end = start + timedelta(seconds=climb_from)
    # First the healthy part, evaluated (the rule task learns each receiver's baseline) ...
    samples = [s for d, p in PORTS for s in series(d, p, start, end)]
    samples = [s for s in samples if s["ts"] < baseline_end.isoformat()]
    post(client, samples)
    roll(baseline_end)
    svc.alerts_evaluate(now=baseline_end)
    assert not Alert.objects.exists()
    # ... then the climb on the leaf's receiver of link 1.
    later = []
    for d, p in PORTS:
        rows = series(
            d, p, start, end, ber=climbing if (d, p) == ("leaf-r", "Ethernet1/2") else (lambda t: 5e-9)
        )
        later += [s for s in rows if s["ts"] >= baseline_end.isoformat()]
    post(client, later)
    roll(end)
    svc.alerts_evaluate(now=end)

    alert = Alert.objects.get()
    assert alert.rule == "fec_degradation"
    assert list(alert.cables.values_list("label", flat=True)) == ["J-R1"]
    assert "gpu-r:eth1" in alert.summary and "leaf-r:Ethernet1/2" in alert.summary
    modules = alert.evidence["modules"]
    assert modules["a"]["serial"] and modules["b"]["serial"]
    (end_ev,) = alert.evidence["ends"].values()
    assert end_ev["value"] > 100 * end_ev["baseline"]
    assert Cable.objects.get(label="J-R1").status == CableStatus.DEGRADED
    assert Cable.objects.get(label="J-R0").status == CableStatus.IN_PRODUCTION
