"""``/metrics`` carries what Grafana needs to watch optics and PFC: each lane's receive power at
each link end (and the lane's learnt baseline), and pause frames sent and received per second.

    [gpu-r eth0]--J-R0--[leaf-r Ethernet1/1]     gpu-r eth0 sends 15 pause frames/s
    [gpu-r eth1]--J-R1--[leaf-r Ethernet1/2]
"""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from inventory.models import Link, Port, PortBaseline
from tests import factories as f

pytestmark = pytest.mark.django_db


def _scrape(settings) -> list[str]:
    settings.CABLETRACK_METRICS_TOKEN = "optics-secret"
    r = Client().get("/metrics", HTTP_AUTHORIZATION="Bearer optics-secret")
    assert r.status_code == 200
    return r.content.decode().splitlines()


def test_receive_power_per_lane_and_pfc_rates_per_direction_are_exported(settings):
    f.production_jumper_pair()
    now = timezone.now().replace(second=0, microsecond=0)
    gpu0 = Port.objects.get(device__name="gpu-r", name="eth0")
    leaf0 = Port.objects.get(device__name="leaf-r", name="Ethernet1/1")
    f.rollups(
        gpu0, now - timedelta(minutes=5), 5, pfc_pause_tx=15 * 60, rx_power_min_dbm=[-2.5, -3.0, -1.75, -2.0]
    )
    f.rollups(leaf0, now - timedelta(minutes=5), 5, pfc_pause_rx=15 * 60)
    PortBaseline.objects.create(
        port=gpu0, rx_power_dbm=[-2.4, -2.9, -1.8, -2.0], first_at=now, updated_at=now
    )
    link = Link.objects.get(active=True, a_port=gpu0) if Link.objects.filter(a_port=gpu0).exists() else None
    link = link or Link.objects.get(active=True, b_port=gpu0)
    end = "a" if link.a_port_id == gpu0.pk else "b"
    far = "b" if end == "a" else "a"
    lines = _scrape(settings)

    def value(prefix: str) -> float:
        (line,) = [x for x in lines if x.startswith(prefix)]
        return float(line.rsplit(" ", 1)[1])

    assert value(f'cabletrack_link_rx_power_dbm{{end="{end}",lane="2",link="{link.pk}"}}') == -3.0
    assert value(f'cabletrack_link_rx_power_dbm{{end="{end}",lane="3",link="{link.pk}"}}') == -1.75
    assert value(f'cabletrack_link_rx_power_baseline_dbm{{end="{end}",lane="2",link="{link.pk}"}}') == -2.9
    assert value(f'cabletrack_link_pfc_pause_sent_rate{{end="{end}",link="{link.pk}"}}') == pytest.approx(
        15.0
    )
    assert value(f'cabletrack_link_pfc_pause_received_rate{{end="{far}",link="{link.pk}"}}') == pytest.approx(
        15.0
    )
    assert value(f'cabletrack_link_pfc_pause_sent_rate{{end="{far}",link="{link.pk}"}}') == 0.0
