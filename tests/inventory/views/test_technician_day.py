"""The technician's day (issue 31): the worklist opened from a rack, search by cage name, the racks
page and menu, friendly 404s and the favicon, refusals in a sentence, and the demo users.

Uses the small plant of ``conftest.plant``:
    Rack A01: gpu-0001 (U10: OSFP1 eth0/eth1, OSFP2 eth2/eth3), panel pp-a (U40)
    Rack B01: leaf-01 (U46), panel pp-b (U40)
    [gpu-0001 eth1]--J-100--[pp-a Front 1]==T-100==[pp-b Front 1]--J-101--[leaf-01 Ethernet2/1]
    [gpu-0001 eth0]--J-102 (retest overdue 3 days)--[leaf-01 Ethernet1/1]
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.utils import timezone

from inventory.models import Cable, Team
from tests import factories as f

pytestmark = pytest.mark.django_db


def _text(response) -> str:
    body = response.content.decode()
    main = body.split("<main>", 1)[-1]
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", main))


def _rows(response) -> list[str]:
    """The cable labels of the worklist rows, in the order shown."""
    return re.findall(
        r'data-testid="retest-row">\s*<a class="label" href="[^"]+">([^<]+)</a>', response.content.decode()
    )


@pytest.fixture
def due_here(plant):
    """J-100 (A01 U10, the same U as J-102) and J-200 (A01 U2, below both) due in two days;
    J-102 (A01 U10) overdue three days; J-101 (B01) overdue ten days."""
    today = timezone.localdate()
    _, low = f.twin_port_device("gpu-0002", rack=plant["racks"][0], u=2, role="gpu_node", cages=1)
    f.jumper("J-200", low[0], plant["leaf"][3], status="in_production")
    for label, days in (("J-100", 2), ("J-200", 2), ("J-101", -10)):
        cable = Cable.objects.get(label=label)
        cable.retest_due = today + timedelta(days=days)
        cable.save()
    return plant


def test_worklist_from_a_rack_is_that_racks_work_overdue_first_with_its_counts(due_here, tech_client):
    """Opened from rack A01: only A01's cables, the overdue one above the merely due ones (one of
    them lower in the rack, one at the same U with a label that sorts first), and counts that are
    A01's, not the site's."""
    rack_page = tech_client.get("/r/A01")
    assert 'href="/retests/?rack=A01"' in rack_page.content.decode()  # the rack's own worklist, one tap
    response = tech_client.get("/retests/?rack=A01")
    assert _rows(response) == ["J-102", "J-200", "J-100"]
    text = _text(response)
    assert "3 days overdue" in text and "Retests in rack A01" in text
    assert "1 overdue" in text  # A01's one, not the site's two (J-101 in B01 is overdue too)
    # The shortcut of the rack last opened, and "Today" (overdue and due today) for it.
    assert "This rack: A01" in text
    today_rows = _rows(tech_client.get("/retests/?rack=A01&bucket=today"))
    assert today_rows == ["J-102"]


def test_worklist_this_rack_shortcut_follows_the_rack_last_opened(due_here, tech_client):
    assert "This rack" not in _text(tech_client.get("/retests/"))
    tech_client.get("/r/B01")
    text = _text(tech_client.get("/retests/"))
    assert "This rack: B01" in text
    everything = _rows(tech_client.get("/retests/"))
    assert everything.index("J-102") < everything.index("J-200")  # within A01, overdue first


@pytest.mark.parametrize(
    "q", ["gpu-0001:OSFP1", "gpu-0001 OSFP1", "GPU-0001 osfp1", "gpu-0001 : OSFP 1", "gpu-0001/osfp-1"]
)
def test_search_finds_a_cage_as_read_off_a_faceplate_or_label(plant, tech_client, q):
    """gpu-0001 OSFP1 holds J-102 (eth0, its first connector) and J-100 (eth1, the second): the
    cage lists both, the second as ``OSFP1/2`` as the pages print it."""
    response = tech_client.get("/search/", {"q": q})
    text = _text(response)
    assert response.status_code == 200
    assert "gpu-0001 OSFP1 J-102" in text and "gpu-0001 OSFP1/2 J-100" in text


@pytest.mark.parametrize(
    "q", ["gpu-0001 OSFP1/2", "gpu-0001:osfp1/2", "GPU-0001 OSFP 1 / 2", "gpu-0001 OSFP1/2 eth1"]
)
def test_search_for_a_cage_connector_opens_its_cable(plant, tech_client, q):
    response = tech_client.get("/search/", {"q": q})
    assert response.status_code == 302 and response["Location"] == "/c/J-100"


def test_racks_page_and_menu(plant, tech_client):
    response = tech_client.get("/racks/")
    text = _text(response)
    assert response.status_code == 200
    assert "A01" in text and "B01" in text and "2 racks" in text
    body = response.content.decode()
    for name, url in (
        ("Alerts", "/alerts/"),
        ("Racks", "/racks/"),
        ("Forecast", "/forecast/"),
        ("Labels", "/labels/print/"),
    ):
        assert f'<a href="{url}">{name}</a>' in body, name


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("/r/R-NOPE", "No rack R-NOPE"),
        ("/d/no-such-host", "No device no-such-host"),
        ("/d/gpu-0001/p/eth99", "No port eth99 on gpu-0001"),
        ("/c/C999999", "No cable C999999"),
        ("/t/999999", "No module #999999"),
        ("/c/C999999/fault", "No cable C999999"),
    ],
)
def test_unknown_objects_get_the_friendly_404_even_with_debug_on(plant, tech_client, settings, url, says):
    settings.DEBUG = True
    response = tech_client.get(url)
    body = response.content.decode()
    assert response.status_code == 404
    assert says in _text(response)
    assert "URLconf" not in body and "Django" not in body  # never the technical page with the URL patterns
    assert 'name="q"' in body  # a search box to find it


def test_favicon_needs_no_login_and_is_an_icon(db, settings):
    settings.DEBUG = True
    response = Client().get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("/cabletrack/favicon.ico")


def test_a_technician_in_no_team_is_told_why_in_a_sentence(plant, user_with_role):
    """Rack A01's site has a team; a technician who is in no team of that site sees the
    sentence on the cable page instead of a missing "Report a fault", and a 403 page saying it."""
    site = plant["racks"][0].row.room.site
    site.name = "Demo Hall 1"
    site.team = Team.objects.create(name="Site crew")
    site.save()
    client = Client()
    client.force_login(user_with_role("technician", "visitor"))
    page = _text(client.get("/c/J-102"))
    assert "You are not in a team for Demo Hall 1" in page and "ask an admin" in page
    refused = client.get("/c/J-102/fault")
    assert refused.status_code == 403
    assert "You are not in a team for Demo Hall 1, so you may not report a fault here" in _text(refused)
    # A member of the site's team is offered the action and not told off.
    member = user_with_role("technician", "crew")
    site.team.members.add(member)
    client.force_login(member)
    page = client.get("/c/J-102").content.decode()
    assert "/c/J-102/fault" in page and "not in a team" not in page


def test_a_role_without_the_permission_is_told_which_role_it_has(plant, viewer_client):
    refused = viewer_client.get("/c/J-102/fault")
    assert refused.status_code == 403
    assert "Your role (viewer) does not allow you to report a fault: ask an admin." in _text(refused)


def test_ensure_user_puts_a_demo_user_in_a_team(db):
    team = Team.objects.create(name="Fabric ops")
    f.RackFactory(name="X01")  # roles exist after migrate; a rack is not needed, only the groups
    call_command(
        "ensure_user", "tech", "--password", "tech-cabletrack", "--role", "technician", "--team", "Fabric ops"
    )
    assert team.members.filter(username="tech", groups__name="technician").exists()
    with pytest.raises(CommandError, match="No team 'Nobody'"):
        call_command("ensure_user", "x", "--password", "pw-for-tests-1", "--team", "Nobody")
