"""The cable page's OTDR history: every trace of a fibre over time, the baseline overlaid on the
latest, in one query whatever the history.

    [gpu-0001 eth0]--J-102--[leaf-01 Ethernet1/1]   (the page tests' plant)
"""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from inventory.services import testing as svc
from tests import factories as f
from tests.sor_builder import build_v1

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("media")]


def shoot(cable, *, days_ago: int, connector_loss: float, name: str, wl: int = 1310):
    when = timezone.now() - timedelta(days=days_ago)
    data = build_v1(
        events=[
            (0.0, 0.0, -60.0, "1F9999LS"),
            (2.0, connector_loss, -50.0, "1F9999LS"),
            (3.0, 0.0, -20.0, "1E9999LS"),
        ],
        wavelength_nm=wl,
        total_loss_db=0.2 + connector_loss,
        when=when,
    )
    return svc.cable_test_upload_otdr(cable=cable, files=[svc.SorUpload(name, data)], now=when)


def test_the_cable_page_shows_every_trace_with_the_baseline_overlaid(plant, client):
    client.force_login(f.UserFactory(username="walker", role="technician"))
    cable = plant["cables"]["J-102"]
    shoot(cable, days_ago=200, connector_loss=0.1, name="install.sor")
    shoot(cable, days_ago=100, connector_loss=0.15, name="retest-1.sor")
    shoot(cable, days_ago=5, connector_loss=0.4, name="retest-2.sor")
    html = client.get("/c/J-102").content.decode()
    section = html[html.index('id="otdr-history"') :]
    assert "Fibre 1 at 1310 nm" in section and "3 traces" in section
    assert section.index("retest-2.sor") < section.index("retest-1.sor") < section.index("install.sor")
    assert "· baseline" in section and "· latest" in section
    svg = section[section.index("<svg") : section.index("</svg>")]
    assert svg.count('class="trace-baseline"') == 1 and svg.count('class="trace-latest"') == 1
    assert svg.count('class="trace-earlier"') == 1


def test_the_history_costs_one_query_whatever_its_length(plant, client):
    client.force_login(f.UserFactory(username="walker", role="technician"))
    cable = plant["cables"]["J-102"]
    shoot(cable, days_ago=300, connector_loss=0.1, name="install.sor")
    counts, shot = [], 0
    for more in (1, 5):  # 2 traces on the page, then 7
        for _ in range(more):
            shot += 1
            shoot(cable, days_ago=200 - shot, connector_loss=0.1, name=f"retest-{shot}.sor", wl=1550)
        with CaptureQueriesContext(connection) as q:
            assert client.get("/c/J-102").status_code == 200
        counts.append(len(q.captured_queries))
    assert counts[0] == counts[1], counts
