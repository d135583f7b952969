"""The rack page offers a technician only what the one policy lets them start there.

Plant of ``conftest.plant``: rack A01 (gpu-0001, panel pp-a) in the plant's site.
"""

import pytest

pytestmark = pytest.mark.django_db


def test_silence_this_rack_is_offered_only_where_the_technician_may_start_it(
    plant, site_tech_client, tech_client
):
    # In the site's team: offered, and the maintenance form it opens takes it.
    html = site_tech_client.get("/r/A01").content.decode()
    assert "Maintenance: silence this rack" in html
    resp = site_tech_client.post(
        "/maintenance/", {"targets": "A01", "hours": "2", "reason": "swapping optics"}
    )
    assert resp.status_code in (200, 302) and resp.status_code != 403

    # In no team: not offered (it was, and the form then answered "Not allowed", losing the
    # reason typed); the bring-up report, a read, stays.
    html = tech_client.get("/r/A01").content.decode()
    assert "Maintenance: silence this rack" not in html
    assert "/r/A01/bringup" in html


def test_maintenance_outside_ones_team_is_refused_beside_the_targets_keeping_what_was_typed(
    plant, site_tech_client, tech_client
):
    """A technician typing a rack of a site they are not in the team of was answered with a bare
    "Not allowed" page, the reason typed lost. Still a 403 that writes nothing, now with the form."""
    from inventory.models import MaintenanceWindow

    resp = tech_client.post("/maintenance/", {"targets": "A01", "hours": "2", "reason": "swapping optics"})
    assert resp.status_code == 403 and not MaintenanceWindow.objects.exists()
    html = resp.content.decode()
    targets = html.split('name="targets"', 1)[1].split("</label>", 2)[1]
    assert "You are not in a team for" in targets and "ask an admin to add you to its team" in targets
    assert 'value="swapping optics"' in html and ">\nA01</textarea>" in html
    # a viewer's role may not silence at all: still the 403 that says so
    from django.test import Client

    from tests import factories as f

    viewer = Client()
    viewer.force_login(f.UserFactory(username="vic", role="viewer"))
    assert viewer.post("/maintenance/", {"targets": "A01", "hours": "2", "reason": "x"}).status_code == 403
