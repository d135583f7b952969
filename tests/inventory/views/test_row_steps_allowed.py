"""A row's next step (the retest worklist, a device's page) is a link only where it leads to a
page the user may use: not a form that answers "Not allowed", not a POST-only URL that answers
405 ("Mark installed" and "Mark in production" are the cable page's buttons).

Plant of ``conftest.plant``:
    [gpu-0001 eth0]--J-102 (in production, retest overdue 3 days)--[leaf-01 Ethernet1/1]
    [gpu-0001 eth1]--J-100--[pp-a]==T-100==[pp-b]--J-101 (planned)--[leaf-01 Ethernet2/1]
"""

import pytest
from django.test import Client

from tests import factories as f

pytestmark = pytest.mark.django_db

OLTS_FORM = 'href="/c/J-102/test/power-meter"'


def _row(html: str, label: str) -> str:
    return html.split(f'href="/c/{label}"', 1)[1].split("</li>", 1)[0]


def test_the_worklist_links_the_test_form_only_for_a_technician_who_may_record_it(plant, site_tech_client):
    row = _row(site_tech_client.get("/retests/").content.decode(), "J-102")
    assert OLTS_FORM in row
    assert site_tech_client.get("/c/J-102/test/power-meter").status_code == 200

    teamless = Client()
    teamless.force_login(f.UserFactory(username="teamless", role="technician"))
    assert teamless.get("/c/J-102/test/power-meter").status_code == 403
    row = _row(teamless.get("/retests/").content.decode(), "J-102")
    assert "Record the power-meter test" in row  # still said, as the cable page says it
    assert OLTS_FORM not in row


def test_a_device_page_row_never_links_a_status_button_and_links_tests_only_where_allowed(
    plant, site_tech_client
):
    html = site_tech_client.get("/d/leaf-01").content.decode()
    row = _row(html, "J-101")
    assert "Mark installed" in row
    assert 'href="/c/J-101/status"' not in row  # a GET there is a 405
    assert site_tech_client.get("/c/J-101/status").status_code == 405
    assert OLTS_FORM in _row(html, "J-102")

    teamless = Client()
    teamless.force_login(f.UserFactory(username="teamless", role="technician"))
    row = _row(teamless.get("/d/leaf-01").content.decode(), "J-102")
    assert "Record the power-meter test" in row and OLTS_FORM not in row
