"""The rack page (``/r/<rack>``, opened from the rack's QR label) shows the rack's open alerts,
each with a sparkline of its link's FEC rate over the last day.

    Rack R-PAGES: [gpu-p eth0]--J-P0--[leaf-p Ethernet1/1]   healthy
                  [gpu-p eth1]--J-P1--[leaf-p Ethernet1/2]   pre-FEC BER 1e-4: fec_degradation open
"""

import pytest

from tests import factories as f
from tests.inventory.views.test_alert_pages import scene as scene  # noqa: F401 - fixture
from tests.inventory.views.test_alert_pages import tech_client as tech_client  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db


def test_the_rack_page_lists_its_open_alerts_with_a_fec_sparkline(
    scene, tech_client, django_assert_max_num_queries
):  # noqa: F811
    with django_assert_max_num_queries(30):
        r = tech_client.get("/r/R-PAGES")
    html = r.content.decode()
    assert r.status_code == 200
    block = html.split('id="rack-alerts-h"', 1)[1].split("</section>", 1)[0]
    assert "FEC degradation" in block and "J-P1" in block and "J-P0" not in block
    assert f"/alerts/{scene['alert'].pk}/" in block
    assert "<polyline" in block and "pre-FEC BER, last 24 h" in block
    points = block.split('points="', 1)[1].split('"', 1)[0].split()
    assert len(points) >= 1


def test_a_rack_without_open_alerts_shows_no_alert_block(scene, tech_client):  # noqa: F811
    f.twin_port_device("leaf-quiet", rack=f.RackFactory(name="R-QUIET"), u=5)
    html = tech_client.get("/r/R-QUIET").content.decode()
    assert 'id="rack-alerts-h"' not in html


def test_a_technician_silences_the_rack_from_its_phone_page(scene, tech_client):  # noqa: F811
    from inventory.models import MaintenanceWindow

    html = tech_client.get("/r/R-PAGES").content.decode()
    assert 'href="/maintenance/?targets=R-PAGES"' in html
    form = tech_client.get("/maintenance/?targets=R-PAGES").content.decode()
    assert "R-PAGES</textarea>" in form
    r = tech_client.post("/maintenance/", {"targets": "R-PAGES", "hours": "2", "reason": "re-cabling"})
    assert r.status_code == 302
    mw = MaintenanceWindow.objects.get()
    assert [x.name for x in mw.racks.all()] == ["R-PAGES"] and mw.reason == "re-cabling"


def test_a_viewer_gets_no_maintenance_button(scene, user_with_role):  # noqa: F811
    from django.test import Client

    c = Client()
    c.force_login(user_with_role("viewer"))
    assert "/maintenance/?targets=" not in c.get("/r/R-PAGES").content.decode()
