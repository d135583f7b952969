"""One permission policy for the pages and the API (issue 14).

site North: [leaf-n OSFP1]--N-1--[leaf-n2 OSFP1]      site South: [leaf-s]--S-1--[leaf-s2]

``loner`` is a technician in no team: the API refuses them every change of a cable, so every page
that changes one (edit, bulk status, fault, replace) refuses them alike, with the same 403, and
changes nothing. A replacement creates a cable, so it needs ``add_cable`` as ``POST /api/cables/``
does. Every page and every API read needs the read permission: an ingest-only collector account
and a user with no role read nothing, exports, files and the API views without a queryset included.
"""

import pytest
from django.test import Client
from rest_framework.test import APIClient

from inventory.models import Cable, FieldNote
from tests import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def loner(plant):
    return f.UserFactory(username="loner", role="technician")


def _page(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _api(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


PAGE_CHANGES = {
    "edit": lambda c, cable: c.post(
        f"/c/{cable.label}/edit",
        {"notes": "page edit", "polarity": cable.polarity, "version": cable.updated_at.isoformat()},
    ),
    "status": lambda c, cable: c.post("/cables/status", {"cable": [cable.pk], "status": "faulty"}),
    # The fault form's own fields (``FaultForm``: what was seen, and the status it leaves).
    "fault": lambda c, cable: c.post(f"/c/{cable.label}/fault", {"seen": "dark", "status": "faulty"}),
    "replace": lambda c, cable: c.post(
        f"/c/{cable.label}/replace", {"new_label": "N-1-NEW", "reason": "bent"}
    ),
}


def _changed(change: str) -> bool:
    """Whether ``change`` (as posted by ``PAGE_CHANGES``) is in the database for N-1."""
    cable = Cable.objects.get(label="N-1")
    return {
        "edit": cable.notes == "page edit",
        "status": cable.status == "faulty",
        "fault": cable.status == "faulty" and FieldNote.objects.filter(cable=cable, text="dark").exists(),
        "replace": Cable.objects.filter(label="N-1-NEW").exists(),
    }[change]


@pytest.mark.parametrize("change", list(PAGE_CHANGES))
def test_each_page_change_as_posted_here_writes_for_an_engineer(plant, change):
    """The bodies posted below are the forms' real fields: an engineer's post makes the change
    (so a refused one that changes nothing means the refusal, not a form that ignored the post)."""
    assert not _changed(change)
    response = PAGE_CHANGES[change](_page(plant.users["engineer"]), Cable.objects.get(label="N-1"))
    assert response.status_code == 302, response.content[:300]
    assert _changed(change)


@pytest.mark.parametrize("change", list(PAGE_CHANGES))
def test_a_technician_in_no_team_gets_the_apis_403_on_every_page_that_changes_a_cable(plant, loner, change):
    cable = Cable.objects.get(label="N-1")
    api = _api(loner).patch("/api/cables/N-1/", {"notes": "api edit"}, format="json")
    assert api.status_code == 403
    page = PAGE_CHANGES[change](_page(loner), cable)
    assert page.status_code == 403, page.content[:300]
    after = Cable.objects.get(label="N-1")
    assert (after.status, after.notes, after.updated_at) == (cable.status, cable.notes, cable.updated_at)
    assert not _changed(change)
    assert not FieldNote.objects.filter(cable=cable).exists()


def test_a_fault_page_answers_like_the_api_status_in_another_site(plant):
    tech = plant.users["technician"]  # team North
    south = Cable.objects.get(label="S-1")
    assert _api(tech).post("/api/cables/S-1/status/", {"status": "faulty"}, format="json").status_code == 403
    assert _page(tech).get("/c/S-1/fault").status_code == 403
    assert PAGE_CHANGES["fault"](_page(tech), south).status_code == 403
    assert Cable.objects.get(label="S-1").status == south.status
    assert not FieldNote.objects.filter(cable=south).exists()
    # The same post in the technician's own site records the fault.
    assert PAGE_CHANGES["fault"](_page(tech), Cable.objects.get(label="N-1")).status_code == 302
    assert _changed("fault")


def test_replacing_a_cable_needs_add_cable_as_the_api_does(plant):
    tech, engineer = plant.users["technician"], plant.users["engineer"]
    cable = Cable.objects.get(label="N-1")
    body = {"label": "X-1", "kind": "SMF_OS2", "a": {"device": "leaf-n", "port_name": "Ethernet2/1"}}
    assert _api(tech).post("/api/cables/", body, format="json").status_code == 403
    assert PAGE_CHANGES["replace"](_page(tech), cable).status_code == 403
    assert not Cable.objects.filter(label="N-1-NEW").exists()
    assert PAGE_CHANGES["replace"](_page(engineer), cable).status_code == 302
    assert Cable.objects.get(label="N-1-NEW").status != "retired"


def test_the_cable_page_offers_no_replace_to_a_technician(plant):
    html = _page(plant.users["technician"]).get("/c/N-1").content.decode()
    assert "/c/N-1/replace" not in html
    assert "/c/N-1/replace" in _page(plant.users["engineer"]).get("/c/N-1").content.decode()


# --- reading --------------------------------------------------------------------------------

PAGES = [
    "/",
    "/search/?q=leaf",
    "/c/N-1",
    "/r/N01",
    "/cables/",
    "/cables/?format=csv",
    "/transceivers/",
    "/alerts/",
    "/retests/",
    "/retests/worklist.csv",
    "/forecast/",
    "/forecast/spares.csv",
    "/reports/commissioning/",
    "/reports/commissioning.pdf",
    "/topology/export.txt",
    "/reconciliation/",
]
API_READS = [
    "/api/cables/",
    "/api/retests/worklist/",
    "/api/forecast/",
    "/api/forecast/spares/",
    "/api/forecast/snapshots/",
    "/api/reports/commissioning/",
    "/api/topology/txt/",
]


@pytest.fixture
def nobody(plant):
    return f.UserFactory(username="nobody")  # an account with no role


@pytest.mark.parametrize("url", PAGES)
def test_a_page_is_read_by_a_viewer_and_by_nobody_without_the_read_permission(plant, nobody, url):
    assert _page(plant.users["viewer"]).get(url).status_code == 200, url
    for user in (plant.users["collector"], nobody):
        response = _page(user).get(url)
        assert response.status_code == 403, (user.username, url, response.status_code)
        assert b"N-1" not in response.content


def test_original_files_are_refused_without_the_read_permission(plant, nobody):
    for user in (plant.users["collector"], nobody):
        for url in ("/files/otdr/1", "/files/inspection/1"):
            assert _page(user).get(url).status_code == 403, url


@pytest.mark.parametrize("url", API_READS)
def test_an_api_read_is_refused_without_the_read_permission_even_without_a_queryset(plant, nobody, url):
    assert _api(plant.users["viewer"]).get(url).status_code == 200, url
    for user in (plant.users["collector"], nobody):
        assert _api(user).get(url).status_code == 403, (user.username, url)


def test_an_account_without_the_read_permission_still_reaches_its_own_profile(plant):
    client = _page(plant.users["collector"])
    assert client.get("/profile/").status_code == 200
    assert client.post("/logout/").status_code == 302
