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
    assert (
        tech_client.post("/maintenance/", {"targets": "A01", "hours": "2", "reason": "x"}).status_code == 403
    )
