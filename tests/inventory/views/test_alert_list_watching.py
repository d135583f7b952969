"""The alert list says an alert is on watch after a repair, as the cable page, the rack page
and home say it ("re-seated at End B of J-102, watching"): a technician opening Menu > Alerts
after the repair does not read it as untouched.

Plant of ``conftest.plant``: [gpu-0001 eth0]--J-102--[leaf-01 Ethernet1/1] flaps at the leaf.
"""

import re

import pytest

from inventory.models import Link
from tests.inventory.views.conftest import without_name_spans
from tests.inventory.views.test_alert_page_where import _flap

pytestmark = pytest.mark.django_db


def _text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", without_name_spans(html)).split())


def test_the_alert_list_says_watching_after_a_repair_as_the_cable_page_does(plant, site_tech_client):
    alert, _ = _flap(Link.objects.get(active=True, segments__cable__label="J-102"))
    assert "watching" not in _text(site_tech_client.get("/alerts/").content.decode())
    site_tech_client.post(f"/alerts/{alert.pk}/repairs", {"end": "B", "action": "reseat"})

    alert.refresh_from_db()
    words = alert.watching
    assert words.endswith("watching")
    assert words in _text(site_tech_client.get("/c/J-102").content.decode())
    row = _text(site_tech_client.get("/alerts/").content.decode().split(f'href="/alerts/{alert.pk}/"', 1)[1])
    assert row.split("opened", 1)[0].count(words) == 1
