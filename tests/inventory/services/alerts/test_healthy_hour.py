"""A healthy fleet raises no alert: an hour of generated healthy 400G telemetry (per-lane DOM
offsets within the modules' +-3 dB accuracy, reading noise, counter resets, retries, late
samples, healthy tail codewords, occasional pause frames; ``healthy_telemetry``) replayed over
every link of a seeded demo cluster through ``POST /api/telemetry/``, the rollup and the rule
task. 16 GPUs here (the SQLite ingest and rollup make a larger seed too slow for a test)."""

from __future__ import annotations

import json
from datetime import date, timedelta

import pytest
from django.db.models import Q
from django.utils import timezone

from inventory.core.choices import CableKind, DeviceRole, TokenKind
from inventory.models import Alert, AlertNotification, Cable, Link, LinkSegment, PortBaseline, Transceiver
from inventory.services import alerts as svc
from inventory.services.demo.seed import demo_seed
from inventory.services.telemetry.rollup import telemetry_rollup
from tests import factories as f
from tests.inventory.services.alerts.healthy_telemetry import HealthyFleet, PortSpec

pytestmark = pytest.mark.django_db

GPUS = 16
# The collectors post and the rollup and the rule task run every CADENCE minutes: every rule's
# window is at least 5 minutes long, so nothing a one-minute cadence would open is missed, at a
# fifth of the (SQLite) ingest and rollup cost.
CADENCE = 3


def fleet_ports() -> list[PortSpec]:
    """Both ends of every active link, with what their collectors would report."""
    links = list(
        Link.objects.filter(active=True).values_list(
            "id",
            "a_port__device__name",
            "a_port__name",
            "a_port__cage_id",
            "a_port__device__role",
            "b_port__device__name",
            "b_port__name",
            "b_port__cage_id",
            "b_port__device__role",
        )
    )
    serial = dict(Transceiver.objects.filter(cage__isnull=False).values_list("cage_id", "serial"))
    dac = set(
        LinkSegment.objects.filter(link__active=True, cable__kind__in=CableKind.sealed()).values_list(
            "link_id", flat=True
        )
    )
    out = []
    for lid, ad, ap, ac, ar, bd, bp, bc, br in links:
        for dev, port, cage, role, far in ((ad, ap, ac, ar, (bd, bp)), (bd, bp, bc, br, (ad, ap))):
            out.append(
                PortSpec(
                    device=dev,
                    port=port,
                    serial=serial.get(cage),
                    neighbor=far,
                    optical=lid not in dac,
                    gpu=role == DeviceRole.GPU_NODE,
                )
            )
    return out


def post(client, samples) -> dict:
    totals = {"stored": 0, "duplicates": 0}
    for k in range(0, len(samples), 5000):
        r = client.post(
            "/api/telemetry/",
            data=json.dumps({"samples": samples[k : k + 5000]}),
            content_type="application/json",
        )
        assert r.status_code == 200, r.content[:500]
        body = r.json()
        assert not body.get("unknown"), body.get("unknown")[:3]
        for key in totals:
            totals[key] += body.get(key, 0)
    return totals


def roll(now) -> None:
    while telemetry_rollup(now=now).remaining:
        pass


def test_an_hour_of_healthy_telemetry_with_dom_noise_raises_no_alert(user_with_role):
    demo_seed(gpus=GPUS, seed=4, as_of=date(2026, 11, 29))
    alerts_before = set(Alert.objects.values_list("pk", flat=True))  # the demo's own open incidents
    mail_before = set(AlertNotification.objects.values_list("pk", flat=True))
    status_before = dict(Cable.objects.values_list("pk", "status"))
    ports = fleet_ports()
    assert len(ports) > 100
    client = f.api_token_client(user_with_role("collector"), TokenKind.INGEST)
    start = timezone.now().replace(second=0, microsecond=0) - timedelta(minutes=61)
    gen = HealthyFleet(ports, start=start, seed=11)

    totals = {"stored": 0, "duplicates": 0}
    opened = []
    for minute in range(CADENCE, 61, CADENCE):
        now = start + timedelta(minutes=minute)
        got = post(client, gen.samples_until(minute * 60.0))
        totals = {k: totals[k] + got[k] for k in totals}
        roll(now)
        report = svc.alerts_evaluate(now=now)
        opened += report.opened
    got = post(client, gen.flush())
    roll(start + timedelta(minutes=61))
    opened += svc.alerts_evaluate(now=start + timedelta(minutes=61)).opened

    assert totals["duplicates"] > 0 and totals["stored"] > 300 * len(ports)  # retries were sent
    assert opened == []
    assert set(Alert.objects.values_list("pk", flat=True)) == alerts_before
    assert set(AlertNotification.objects.values_list("pk", flat=True)) == mail_before  # no mail
    assert dict(Cable.objects.values_list("pk", "status")) == status_before
    # The receive-power rule was in play: tested, healthy links learnt their lanes' baselines.
    assert PortBaseline.objects.filter(~Q(rx_power_dbm=None)).count() > len(ports) // 2
