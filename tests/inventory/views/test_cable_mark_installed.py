"""A planned cable, just pulled and plugged in, is marked installed from its page (the page its QR
label opens) or the API: the one decision offers "Mark installed" to whoever may edit the cable,
the day it went in is recorded (today unless the technician says otherwise), the history names
who did it, and the page then says installed, the day, and the next step (its tests).

Plant (``conftest.plant``)::

    [gpu-0001 eth1]--J-100--[pp-a Front 1]==T-100==[pp-b Front 1]--J-101 (planned)--[leaf-01 Ethernet2/1]
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.core.choices import CableKind, CableStatus, ConnectorType, DeviceRole
from inventory.models import Cable, Device
from inventory.services.plant import cables as cable_services
from tests import factories as f

pytestmark = pytest.mark.django_db

MARK_INSTALLED = 'name="status" value="installed"'


def _main(html: str) -> str:
    return html.split("<main>", 1)[1].split("</main>", 1)[0]


def _next_step(html: str) -> str:
    return html.split('data-testid="next-step"', 1)[1].split("</div>", 1)[0]


def test_a_technician_marks_a_planned_cable_installed_and_sees_the_day_and_the_next_step(plant, tech_client):
    page = _main(tech_client.get("/c/J-101").content.decode())
    assert 'data-testid="cable-status">Planned<' in page
    step = _next_step(page)
    assert MARK_INSTALLED in step and ">Mark installed<" in step
    assert f'value="{timezone.localdate():%Y-%m-%d}"' in step  # the day defaults to today
    assert "once it is pulled and plugged in, mark it installed" in step
    assert "Record the power-meter test" not in step  # a test comes once it is in

    r = tech_client.post("/c/J-101/status", {"status": "installed"}, follow=True)
    assert r.status_code == 200
    page = _main(r.content.decode())
    assert "J-101 is now installed (today)." in page
    assert 'data-testid="cable-status">Installed<' in page
    assert "<dt>Installed</dt><dd>today</dd>" in page
    step = _next_step(page)
    assert ">Record the power-meter test<" in step and MARK_INSTALLED not in step
    history = page.split('id="history"', 1)[1]
    assert "tech" in history and "marked installed by tech" in history
    assert "Status: Planned → Installed" in history
    assert Cable.objects.get(label="J-101").install_date == timezone.localdate()


def test_the_technician_may_give_the_day_it_went_in_but_not_one_still_ahead(plant, tech_client):
    today = timezone.localdate()
    ahead = tech_client.post(
        "/c/J-101/status",
        {"status": "installed", "install_date": f"{today + timedelta(days=2)}"},
        follow=True,
    )
    assert "is still ahead: mark a cable installed once it is in." in ahead.content.decode()
    assert Cable.objects.get(label="J-101").status == CableStatus.PLANNED

    yesterday = today - timedelta(days=1)
    tech_client.post("/c/J-101/status", {"status": "installed", "install_date": f"{yesterday}"})
    cable = Cable.objects.get(label="J-101")
    assert (cable.status, cable.install_date) == (CableStatus.INSTALLED, yesterday)
    page = _main(tech_client.get("/c/J-101").content.decode())
    assert "<dt>Installed</dt><dd>yesterday</dd>" in page
    # Installed already: the step is gone, and posting it again changes nothing.
    again = tech_client.post("/c/J-101/status", {"status": "installed"}, follow=True)
    assert "J-101 is installed, not planned." in again.content.decode()
    assert Cable.objects.get(label="J-101").install_date == yesterday


def test_a_viewer_is_not_offered_it_and_is_refused(plant, viewer_client):
    page = _main(viewer_client.get("/c/J-101").content.decode())
    assert MARK_INSTALLED not in page and 'name="install_date"' not in page
    assert viewer_client.post("/c/J-101/status", {"status": "installed"}).status_code == 403
    assert Cable.objects.get(label="J-101").status == CableStatus.PLANNED


def test_the_api_offers_the_same_step_and_takes_the_same_move(plant, tech_api, api_as):
    step = tech_api.get("/api/cables/J-101/").json()["next_step"]["step"]
    assert (step["key"], step["label"], step["status"]) == ("status", "Mark installed", "installed")

    assert api_as("viewer").post("/api/cables/J-101/status/", {"status": "installed"}).status_code == 403
    r = tech_api.post("/api/cables/J-101/status/", {"status": "installed"}, format="json")
    assert r.status_code == 200, r.json()
    body = r.json()
    assert (body["status"], body["install_date"]) == ("installed", f"{timezone.localdate()}")
    assert body["next_step"]["step"]["key"] == "olts"

    # a day given for a cable that is no longer planned is refused, not silently dropped
    r = tech_api.post(
        "/api/cables/J-101/status/", {"status": "installed", "install_date": "2026-01-05"}, format="json"
    )
    assert r.status_code == 400 and "install_date" in r.json()


def test_the_desk_bulk_status_records_the_day_too(plant, engineer_client):
    cable = plant["cables"]["J-101"]
    engineer_client.post("/cables/status", {"cable": [cable.pk], "status": "installed"})
    cable.refresh_from_db()
    assert (cable.status, cable.install_date) == (CableStatus.INSTALLED, timezone.localdate())


def test_planned_copper_with_no_test_gate_is_offered_it_too(tech_client):
    """[mgmt-1 Gi1]--M-1 (Cat6A, planned)--[mgmt-1 Gi2]: nothing to test, but it must go in first."""
    mgmt = Device.objects.create(
        name="mgmt-1", role=DeviceRole.MGMT_SWITCH, rack=f.RackFactory(), position_u=5
    )
    gi = [f.port(mgmt, f"Gi{i}", connector_type=ConnectorType.RJ45) for i in (1, 2)]
    cable_services.cable_install(
        label="M-1",
        kind=CableKind.CAT6A,
        a=cable_services.EndSpec(port=gi[0]),
        b=[cable_services.EndSpec(port=gi[1])],
    )
    planned = _main(tech_client.get("/c/M-1").content.decode())
    step = _next_step(planned)
    assert MARK_INSTALLED in step and ">Mark installed<" in step
    assert "Recorded as planned; Cat6A copper has no test gate: mark it installed" in planned
    # and its step does not then ask for a test there is none of
    assert "mark it installed." in step and "test it" not in step
    tech_client.post("/c/M-1/status", {"status": "installed"})
    page = _main(tech_client.get("/c/M-1").content.decode())
    assert ">Mark in production<" in _next_step(page)  # Cat6A has no test gate: ready once in


def test_a_planned_cable_already_tested_offers_its_first_test_day_and_no_later_one(plant, tech_client):
    """J-101 was tested three days ago (the test not judged: it still needs one): it was in by
    then, so "Mark installed" offers that day, and a later day is refused, saying why."""
    j101 = Cable.objects.get(label="J-101")
    tested = timezone.localdate() - timedelta(days=3)
    f.record_test(j101, at=timezone.now() - timedelta(days=3), verdict="unknown")
    step = _next_step(_main(tech_client.get("/c/J-101").content.decode()))
    assert MARK_INSTALLED in step
    assert f'value="{tested:%Y-%m-%d}" max="{tested:%Y-%m-%d}"' in step

    later = tech_client.post(
        "/c/J-101/status",
        {"status": "installed", "install_date": f"{tested + timedelta(days=1)}"},
        follow=True,
    )
    assert "J-101 was first tested on " in later.content.decode()
    assert "it was in by then. Give that day or an earlier one." in later.content.decode()
    assert Cable.objects.get(label="J-101").status == CableStatus.PLANNED

    tech_client.post("/c/J-101/status", {"status": "installed", "install_date": f"{tested}"})
    assert Cable.objects.get(label="J-101").install_date == tested
