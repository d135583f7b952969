"""Devices and racks through the API: a device sits inside its rack's U.

Before, ``POST /api/devices/`` took any U (``position_u`` 32767, ``height_u`` 32767 in a 48 U
rack) and the rack page then drew "U32767-65533" above "U52-32766 free" (a band per U, tens of
thousands of pixels tall); the device CSV import checked the lowest U only, and a position of
``inf`` was a 400 naming no row or field.
"""

import pytest

from inventory.core.choices import DeviceRole, FormFactor
from inventory.models import Cage, Device, Port
from tests import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def rack():
    return f.RackFactory(name="R-48", u_height=48)


def test_a_device_above_the_racks_top_is_refused_naming_position_u(engineer_api, rack):
    r = engineer_api.post(
        "/api/devices/",
        {"name": "sw-top", "role": "leaf", "rack": rack.pk, "position_u": 47, "height_u": 2},
        format="json",
    )
    assert r.status_code == 201, r.json()
    r = engineer_api.post(
        "/api/devices/",
        {"name": "sw-far", "role": "leaf", "rack": rack.pk, "position_u": 32767, "height_u": 1},
        format="json",
    )
    assert r.status_code == 400
    assert r.json()["position_u"] == ["Rack R-48 has 48 U: a device 1 U tall sits at U1 to U48, not U32767."]
    r = engineer_api.post(
        "/api/devices/",
        {"name": "sw-u0", "role": "leaf", "rack": rack.pk, "position_u": 0},
        format="json",
    )
    assert r.status_code == 400
    assert r.json()["position_u"] == ["Rack R-48 has 48 U: a device 1 U tall sits at U1 to U48, not U0."]
    assert not Device.objects.filter(name__in=["sw-far", "sw-u0"]).exists()


def test_a_taller_device_or_a_shorter_rack_that_no_longer_fits_is_refused(engineer_api, rack):
    Device.objects.create(name="sw-1", role=DeviceRole.LEAF, rack=rack, position_u=40, height_u=2)
    r = engineer_api.patch("/api/devices/sw-1/", {"height_u": 10}, format="json")
    assert r.status_code == 400
    assert r.json()["position_u"] == ["Rack R-48 has 48 U: a device 10 U tall sits at U1 to U39, not U40."]
    r = engineer_api.patch("/api/racks/R-48/", {"u_height": 40}, format="json")
    assert r.status_code == 400
    assert r.json()["u_height"] == ["sw-1: Rack R-48 has 40 U: a device 2 U tall sits at U1 to U39, not U40."]
    assert Device.objects.get(name="sw-1").height_u == 2
    rack.refresh_from_db()
    assert rack.u_height == 48
    assert engineer_api.patch("/api/racks/R-48/", {"u_height": 41}, format="json").status_code == 200


def test_the_device_csv_checks_a_devices_whole_height_and_names_an_unreadable_position(engineer_api, rack):
    Device.objects.create(name="sw-2u", role=DeviceRole.LEAF, rack=rack, position_u=10, height_u=2)
    body = "name,role,rack,position\nsw-2u,leaf,R-48,48\nsw-new,leaf,R-48,inf\n"
    r = engineer_api.generic("POST", "/api/devices/import/?dry_run=1", body, content_type="text/csv")
    assert r.status_code == 400
    errors = {row["label"]: row["errors"] for row in r.json()["rows"]}
    assert errors == {
        "sw-2u": {"position": "Rack R-48 has 48 U: a device 2 U tall sits at U1 to U47, not U48."},
        "sw-new": {"position": "Not a rack unit: 'inf'."},
    }


def test_a_port_sits_in_a_cage_of_its_own_device_on_lanes_the_cage_has(engineer_api, rack):
    """Before, a port of sw-a in sw-b's cage was taken (its page and trace then showed sw-b's
    module and cable), and so was one on lanes 4 to 30003 of an 8-lane cage (its link had no
    lane rate, so no BER rule judged it)."""
    a = Device.objects.create(name="sw-a", role=DeviceRole.LEAF, rack=rack, position_u=1)
    b = Device.objects.create(name="sw-b", role=DeviceRole.LEAF, rack=rack, position_u=2)
    cage_b = Cage.objects.create(device=b, name="OSFP1", index=1, form_factor=FormFactor.OSFP, lanes=8)
    port = {"device": a.pk, "name": "Ethernet1/1", "kind": "interface", "cage": cage_b.pk, "connector": 1}
    r = engineer_api.post("/api/ports/", port, format="json")
    assert r.status_code == 400
    assert r.json()["cage"] == ["Cage OSFP1 is on sw-b, not on sw-a."]
    wide = {**port, "device": b.pk, "lane_start": 4, "lane_count": 30000}
    r = engineer_api.post("/api/ports/", wide, format="json")
    assert r.status_code == 400
    assert r.json()["lane_count"] == ["Cage OSFP1 has lanes 0 to 7: lanes 4 to 30003 are not all in it."]
    assert not Port.objects.exists()
    r = engineer_api.post("/api/ports/", {**wide, "lane_count": 4}, format="json")
    assert r.status_code == 201, r.json()
    r = engineer_api.patch(f"/api/ports/{r.json()['id']}/", {"lane_start": 8}, format="json")
    assert r.status_code == 400
    assert r.json()["lane_start"] == ["Cage OSFP1 has lanes 0 to 7: lanes 8 to 11 are not all in it."]
