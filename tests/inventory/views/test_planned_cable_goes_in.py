"""A planned cable whose tests already pass goes straight to production from its page ("Mark in
production"): it was plugged in by its first test at the latest, so it goes in with that day as its
install date, said on the page, in its history and by the API. Every other way out of planned into
the plant (a fault report, the API's status change, the desk's bulk status) records a day too.

    [gpu-1 eth0]--J-1 (3 m OS2, planned; a passing power-meter test 3 days ago)--[leaf-1 Ethernet1/1]
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.core.choices import CableStatus
from inventory.core.words import human_date
from inventory.models import Cable
from inventory.services.plant import fieldwork
from tests.inventory.testing_scenes import olts, os2_jumper
from tests.inventory.views.conftest import without_name_spans

pytestmark = pytest.mark.django_db


def _main(html: str) -> str:
    return without_name_spans(html.split("<main>", 1)[1].split("</main>", 1)[0])


def _planned_and_tested(days_ago: int = 3):
    cable = os2_jumper()  # 3 m: a power-meter test is its whole gate
    assert (cable.status, cable.install_date) == (CableStatus.PLANNED, None)
    first = timezone.now() - timedelta(days=days_ago)
    olts(cable, [0.4] * 8, when=first)
    olts(cable, [0.4] * 8, when=first + timedelta(days=1))
    return cable, timezone.localdate(first)


def test_mark_in_production_on_a_planned_cable_records_its_first_test_day_as_installed(
    engineer_client, api_as
):
    _, first = _planned_and_tested()
    day = human_date(first, today=timezone.localdate())
    page = _main(engineer_client.get("/c/J-1").content.decode())
    assert "Recorded as planned, but" in page and ">Mark in production<" in page
    assert "it goes in as installed on the day of its first test" in page  # said before the tap

    r = engineer_client.post("/c/J-1/status", {"status": "in_production"}, follow=True)
    page = _main(r.content.decode())
    assert f"J-1 is now in production, installed {day}." in page
    assert f"<dt>Installed</dt><dd>{day}</dd>" in page
    history = page.split('id="history"', 1)[1]
    assert "installed on the day of its first test" in history
    cable = Cable.objects.get(label="J-1")
    assert (cable.status, cable.install_date) == (CableStatus.IN_PRODUCTION, first)
    # The API reads the same record.
    body = api_as("viewer").get("/api/cables/J-1/").json()
    assert (body["status"], body["install_date"]) == ("in_production", f"{first}")


def test_a_fault_report_on_a_planned_cable_records_the_day_it_went_in():
    cable, first = _planned_and_tested()
    fieldwork.cable_fault_report(cable=cable, seen="jacket crushed at U12", status=CableStatus.FAULTY)
    cable.refresh_from_db()
    assert (cable.status, cable.install_date) == (CableStatus.FAULTY, first)


def test_the_api_status_change_out_of_planned_records_a_day(tech_api):
    _planned_and_tested()
    r = tech_api.post("/api/cables/J-1/status/", {"status": "degraded"}, format="json")
    assert r.status_code == 200, r.json()
    first = timezone.localdate(timezone.now() - timedelta(days=3))
    assert (r.json()["status"], r.json()["install_date"]) == ("degraded", f"{first}")


def test_the_api_may_give_the_day_of_any_move_out_of_planned(tech_api):
    _, first = _planned_and_tested()
    earlier = first - timedelta(days=2)
    r = tech_api.post(
        "/api/cables/J-1/status/", {"status": "faulty", "install_date": f"{earlier}"}, format="json"
    )
    assert r.status_code == 200, r.json()
    assert (r.json()["status"], r.json()["install_date"]) == ("faulty", f"{earlier}")


def test_the_desk_bulk_status_out_of_planned_records_a_day(engineer_client):
    cable, first = _planned_and_tested()
    engineer_client.post("/cables/status", {"cable": [cable.pk], "status": "degraded"})
    cable.refresh_from_db()
    assert (cable.status, cable.install_date) == (CableStatus.DEGRADED, first)


def test_a_planned_cable_with_no_test_goes_in_today():
    cable = os2_jumper()
    fieldwork.cable_fault_report(cable=cable, seen="no light", status=CableStatus.DEGRADED)
    cable.refresh_from_db()
    assert cable.install_date == timezone.localdate()


def test_a_status_change_reason_is_kept_whole_or_refused_never_cut(tech_api):
    """A history row holds 100 characters: the API said it took 500, and PostgreSQL then
    refused the change ("a value is out of range"). A longer one is refused, saying the limit;
    one that fits is kept whole, the install date's words added only where they fit too."""
    _planned_and_tested()
    r = tech_api.post("/api/cables/J-1/status/", {"status": "faulty", "reason": "x" * 101}, format="json")
    assert r.status_code == 400
    assert r.json()["reason"] == ["Ensure this field has no more than 100 characters."]
    r = tech_api.post("/api/cables/J-1/status/", {"status": "faulty", "reason": "y" * 100}, format="json")
    assert r.status_code == 200, r.content
    cable = Cable.objects.get(label="J-1")
    assert cable.history.first().history_change_reason == "y" * 100
    assert cable.install_date == timezone.localdate(timezone.now() - timedelta(days=3))
