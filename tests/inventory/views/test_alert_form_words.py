"""The alert page's forms in words a technician reads: hours written one way in every field
("4", never "4.0" beside "4"), and the "Where" choice that names no end said in words, not
"n.a.".

    [gpu-0001 eth0]--J-102--[leaf-01 Ethernet1/1]   (the page tests' plant)
"""

from __future__ import annotations

import re

import pytest

from inventory.models import Link
from tests.inventory.views.test_alert_page_where import _alert

pytestmark = pytest.mark.django_db


def test_the_alert_pages_hours_are_written_one_way_and_where_says_no_particular_end(
    plant, engineer_client, settings
):
    settings.CABLETRACK_DRAIN_HOURS = 4.0  # a float setting, as the deployment gives it
    link = Link.objects.get(active=True, segments__cable__label="J-102")
    alert = _alert(link, ends={"a": {"port_id": 1, "link_down": 7.0, "error_recovery": 0.0}})
    html = engineer_client.get(f"/alerts/{alert.pk}/").content.decode()
    drain = re.search(r'Out of service for \(hours\) <input[^>]*value="([^"]*)"', html)
    silence = re.search(r'Silence for \(hours\) <input[^>]*value="([^"]*)"', html)
    assert drain and silence, "both hour fields are on the page"
    assert (drain.group(1), silence.group(1)) == ("4", "4")
    where = html[html.index("<legend>Where</legend>") :].split("</fieldset>", 1)[0]
    assert "n.a." not in where
    assert "<span>No particular end</span>" in where
