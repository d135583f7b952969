"""Role x action x path: the same answer through the API (session and every token kind), the
admin and the pages. A technician acts only in their team's site (North): edits, faults, tests
and module swaps alike (issue 32: every action is decided with the object's site)."""

import re

import pytest
from django.db import transaction
from django.test import Client
from django.urls import resolve
from rest_framework.test import APIClient

from inventory.access import authz
from inventory.models import Cable, Transceiver
from inventory.views import pages
from tests import factories as f

pytestmark = pytest.mark.django_db

OK = "ok"
NO = "denied"

# action -> role -> expected, for the cable in the technician's own site (North) and elsewhere.
MATRIX = {
    "read": {"viewer": OK, "technician": OK, "engineer": OK, "admin": OK, "collector": NO},
    "edit_own_site": {"viewer": NO, "technician": OK, "engineer": OK, "admin": OK, "collector": NO},
    "edit_other_site": {"viewer": NO, "technician": NO, "engineer": OK, "admin": OK, "collector": NO},
    "fault_other_site": {"viewer": NO, "technician": NO, "engineer": OK, "admin": OK, "collector": NO},
    "swap_module_other_site": {"viewer": NO, "technician": NO, "engineer": OK, "admin": OK, "collector": NO},
    "install_cable": {"viewer": NO, "technician": NO, "engineer": OK, "admin": OK, "collector": NO},
}
WRITES = [a for a in MATRIX if a != "read"]


def _do(client, action, plant):
    north, south = plant.north_cable.label, plant.south_cable.label
    if action == "read":
        return client.get(f"/api/cables/{south}/")
    if action == "edit_own_site":
        return client.patch(f"/api/cables/{north}/", {"notes": "cleaned"}, format="json")
    if action == "edit_other_site":
        return client.patch(f"/api/cables/{south}/", {"notes": "cleaned"}, format="json")
    if action == "fault_other_site":
        return client.post(f"/api/cables/{south}/status/", {"status": "faulty"}, format="json")
    if action == "swap_module_other_site":
        xcvr = Transceiver.objects.filter(cage__device__name="leaf-s2").order_by("pk").last()
        return client.post(f"/api/transceivers/{xcvr.pk}/remove/", {"failed": True}, format="json")
    if action == "install_cable":
        return client.post(
            "/api/cables/",
            {
                "label": "NEW-1",
                "kind": "SMF_OS2",
                "a": {"device": "leaf-s", "port_name": "Ethernet2/1"},
                "b": [{"device": "leaf-s2", "port_name": "Ethernet2/1"}],
            },
            format="json",
        )
    raise AssertionError(action)


def _outcome(response) -> str:
    assert response.status_code not in (401, 500), response.content
    return OK if response.status_code < 300 else NO


@pytest.mark.parametrize("role", list(MATRIX["read"]))
@pytest.mark.parametrize("action", list(MATRIX))
def test_api_session_matrix(plant, client_for, role, action):
    response = _do(client_for(role), action, plant)
    assert _outcome(response) == MATRIX[action][role], (role, action, response.status_code, response.content)
    if MATRIX[action][role] == NO:
        assert response.status_code == 403


@pytest.mark.parametrize("role", ["technician", "engineer", "admin"])  # a viewer gets no full token
@pytest.mark.parametrize("action", list(MATRIX))
def test_api_full_token_matches_the_role(plant, client_for, role, action):
    response = _do(client_for(role, "token"), action, plant)
    assert _outcome(response) == MATRIX[action][role]


@pytest.mark.parametrize("role", ["technician", "engineer", "admin"])
@pytest.mark.parametrize("action", list(MATRIX))
def test_api_read_only_token_reads_and_never_writes(plant, client_for, role, action):
    response = _do(client_for(role, "read_only"), action, plant)
    if action == "read":
        assert response.status_code == 200
    else:
        assert response.status_code == 403
        assert "read-only" in response.json()["detail"]


@pytest.mark.parametrize("role", ["collector", "engineer"])
@pytest.mark.parametrize("action", list(MATRIX))
def test_api_ingest_token_does_nothing_but_ingest(plant, client_for, role, action):
    response = _do(client_for(role, "ingest"), action, plant)
    assert response.status_code == 403
    assert "ingest" in response.json()["detail"]


def test_nothing_was_written_by_a_refused_request(plant, client_for):
    for role in ["viewer", "collector"]:
        for action in WRITES:
            _do(client_for(role), action, plant)
    assert not Cable.objects.filter(label="NEW-1").exists()
    assert Cable.objects.get(label="S-1").status != "faulty"
    assert Cable.objects.get(label="N-1").notes == ""


# --- admin --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("role", "cable", "expected"),
    [
        ("technician", "N-1", 302),  # saved, redirected to the list
        ("technician", "S-1", 403),
        ("engineer", "S-1", 302),
        ("viewer", "N-1", 403),
    ],
)
def test_admin_change_follows_the_same_rules(plant, role, cable, expected):
    user = plant.users[role]
    user.is_staff = True
    user.save()
    client = Client()
    client.force_login(user)
    obj = Cable.objects.get(label=cable)
    url = f"/admin/inventory/cable/{obj.pk}/change/"
    form = client.get(url)
    assert form.status_code == 200  # everybody with view permission sees it
    data = {
        "label": obj.label,
        "kind": obj.kind,
        "role": obj.role,
        "polarity": obj.polarity,
        "status": obj.status,
        "notes": "via admin",
        "ends-TOTAL_FORMS": "0",
        "ends-INITIAL_FORMS": "0",
        "ends-MIN_NUM_FORMS": "0",
        "ends-MAX_NUM_FORMS": "1000",
    }
    response = client.post(url, data)
    assert response.status_code == expected, response.content[:500]
    changed = Cable.objects.get(pk=obj.pk).notes == "via admin"
    assert changed == (expected == 302)


# --- pages --------------------------------------------------------------------------------
#
# The real cable page (``/c/<label>``) as each role: the one-tap actions it offers (the action bar
# and the next-step button), read from the rendered HTML by their URLs.

# URL (on the cable page) -> the action key of ``pages.PAGE_ACTION_RULES`` (print: ``_may_print``).
PAGE_LINKS = {
    "/c/{label}/test/power-meter": "olts",
    "/c/{label}/test/otdr": "otdr",
    "/c/{label}/inspect": "inspect",
    "/c/{label}/serviced": "serviced",
    "/c/{label}/swap": "swap",
    "/c/{label}/fault": "fault",
    "/journal/cable/{label}/add": "note",
    "/c/{label}/replace": "replace",
    "/c/{label}/edit": "edit",
    "/labels/print/": "print",
}
EVERYTHING = set(PAGE_LINKS.values())
TECHNICIAN_IN_SITE = {"olts", "otdr", "inspect", "serviced", "swap", "print", "fault", "note", "edit"}

PAGE_ACTIONS = {
    ("viewer", "N-1"): set(),
    ("viewer", "S-1"): set(),
    # in the team's site: tests, service, swaps, one cable's label, a fault and a note (they set the
    # status) and an edit; no replacement (it adds a cable: engineers). Elsewhere nothing: every
    # action is decided with the cable's site (issue 32).
    ("technician", "N-1"): TECHNICIAN_IN_SITE,
    ("technician", "S-1"): set(),
    ("engineer", "S-1"): EVERYTHING,
    ("admin", "S-1"): EVERYTHING,
    ("collector", "N-1"): set(),
}


def _offered(html: str, label: str) -> set[str]:
    """The action keys the cable page's HTML links to (``href`` or a form's ``action``), in the page
    itself: the header's menu (Labels for everyone who may open the print form) is not the cable's."""
    html = html.split("</header>", 1)[-1]
    targets = set(re.findall(r'(?:href|action)="([^"]+)"', html))
    return {key for url, key in PAGE_LINKS.items() if url.format(label=label) in targets}


def _cable_page(user, label: str) -> str:
    """The cable page's HTML; a role that may not see the plant (a collector) is refused it."""
    response = _page_client(user).get(f"/c/{label}")
    if user.username == "collector":
        assert response.status_code == 403
        return ""
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.parametrize(("role", "label"), list(PAGE_ACTIONS))
def test_pages_show_only_the_actions_the_user_may_take(plant, role, label):
    """The real cable page, as ``role``, offers exactly the actions of the matrix above."""
    assert _offered(_cable_page(plant.users[role], label), label) == PAGE_ACTIONS[(role, label)]


@pytest.mark.parametrize(("role", "label"), list(PAGE_ACTIONS))
def test_server_check_agrees_with_what_the_page_shows(plant, role, label):
    """Every action the page offers passes ``authz.check`` for that user and cable; every action it
    does not offer is refused by it (the page and the policy cannot drift apart)."""
    user = plant.users[role]
    cable = Cable.objects.get(label=label)
    shown = _offered(_cable_page(user, label), label)
    for key in EVERYTHING - {"print"}:
        action = pages.PAGE_ACTION_RULES[key]
        if key in shown:
            authz.check(user, action, cable)
        else:
            with pytest.raises(authz.PermissionDenied):
                authz.check(user, action, cable)


def test_a_viewer_cannot_post_to_any_page(plant):
    client = Client()
    client.force_login(plant.users["viewer"])
    for url in ["/", "/search/", f"/c/{plant.north_cable.label}", "/r/N01"]:
        assert client.post(url, {"x": "1"}).status_code == 403, url


# --- page writes ask the API's policy -------------------------------------------------------
#
# Every page write goes through ``authz.requires_action`` (and ``authz.check_each`` for the bulk
# status): the same permission and site scope the API applies. ``loner`` is a technician in no
# team: the API refuses them every edit, so the pages must too, and a refused page write is a 403
# that changes nothing.

PAGE_WRITES = ["edit", "status", "replace"]


@pytest.fixture
def loner(plant):
    return f.UserFactory(username="loner", role="technician")


def _page_write(client, write: str, label: str):
    cable = Cable.objects.get(label=label)
    if write == "edit":
        version = cable.updated_at.isoformat()
        return client.post(
            f"/c/{label}/edit", {"notes": "page edit", "polarity": cable.polarity, "version": version}
        )
    if write == "status":
        return client.post("/cables/status", {"cable": [cable.pk], "status": "faulty"})
    if write == "replace":
        return client.post(f"/c/{label}/replace", {"new_label": f"{label}-NEW", "reason": "bent"})
    raise AssertionError(write)


def _api_write(client, write: str, label: str):
    if write == "edit":
        return client.patch(f"/api/cables/{label}/", {"notes": "api edit"}, format="json")
    if write == "status":
        return client.post(f"/api/cables/{label}/status/", {"status": "faulty"}, format="json")
    raise AssertionError(write)


def _written(write: str, label: str) -> bool:
    cable = Cable.objects.get(label=label)
    if write == "edit":
        return cable.notes == "page edit"
    if write == "status":
        return cable.status == "faulty"
    return Cable.objects.filter(label=f"{label}-NEW").exists()


class _Undo(Exception):
    pass


def _undone(write) -> int:
    """The status code of ``write``, whose changes are then rolled back (each side starts alike)."""
    try:
        with transaction.atomic():
            code = write().status_code
            raise _Undo
    except _Undo:
        return code


def _page_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize("write", PAGE_WRITES)
def test_a_technician_in_no_team_is_refused_every_page_write_and_nothing_changes(plant, loner, write):
    response = _page_write(_page_client(loner), write, "N-1")
    assert response.status_code == 403
    assert not _written(write, "N-1")
    assert Cable.objects.get(label="N-1").status != "retired"


@pytest.mark.parametrize("write", ["edit", "status"])  # a replacement adds a cable: engineers
def test_a_technician_of_the_sites_team_makes_every_page_write(plant, write):
    response = _page_write(_page_client(plant.users["technician"]), write, "N-1")
    assert response.status_code == 302, response.content[:500]
    assert _written(write, "N-1")


@pytest.mark.parametrize("write", PAGE_WRITES)
def test_a_technician_is_refused_page_writes_outside_their_teams_sites(plant, write):
    response = _page_write(_page_client(plant.users["technician"]), write, "S-1")
    assert response.status_code == 403
    assert not _written(write, "S-1")


@pytest.mark.parametrize("write", ["edit", "status"])
@pytest.mark.parametrize(
    ("who", "label"),
    [("loner", "N-1"), ("technician", "N-1"), ("technician", "S-1"), ("engineer", "S-1"), ("viewer", "N-1")],
)
def test_the_page_and_the_api_give_the_same_answer(plant, loner, who, label, write):
    user = loner if who == "loner" else plant.users[who]
    api = APIClient()
    api.force_login(user)
    page_ok = _undone(lambda: _page_write(_page_client(user), write, label)) < 400
    api_ok = _undone(lambda: _api_write(api, write, label)) < 400
    assert page_ok == api_ok == authz.can(user, "edit_cable", Cable.objects.get(label=label)), (who, label)


def test_the_bulk_status_is_all_or_nothing_across_sites(plant):
    cables = [plant.north_cable.pk, plant.south_cable.pk]
    response = _page_client(plant.users["technician"]).post(
        "/cables/status", {"cable": cables, "status": "faulty"}
    )
    assert response.status_code == 403
    assert not Cable.objects.filter(pk__in=cables, status="faulty").exists()
    response = _page_client(plant.users["engineer"]).post(
        "/cables/status", {"cable": cables, "status": "faulty"}
    )
    assert response.status_code == 302
    assert Cable.objects.filter(pk__in=cables, status="faulty").count() == 2


@pytest.mark.parametrize("status", ["tested", "in_production"])
def test_the_bulk_status_refuses_the_states_only_the_test_gate_sets_as_the_api_does(
    plant, client_for, status
):
    before = Cable.objects.get(label="N-1").status
    assert (
        client_for("engineer").post("/api/cables/N-1/status/", {"status": status}, format="json").status_code
        == 400
    )
    response = _page_client(plant.users["engineer"]).post(
        "/cables/status", {"cable": [plant.north_cable.pk], "status": status}, follow=True
    )
    assert "msg-error" in response.content.decode()
    assert Cable.objects.get(label="N-1").status == before


@pytest.mark.parametrize(
    ("url", "action"),
    [
        ("/c/{label}/edit", "edit_cable"),
        ("/c/{label}/replace", "replace_cable"),
        ("/c/{label}/fault", "report_fault"),
        ("/c/{label}/serviced", "service_cable"),
        ("/c/{label}/swap", "swap_module"),
        ("/c/{label}/test/power-meter", "record_test"),
        ("/c/{label}/inspect", "inspect"),
        ("/cables/status", "edit_cable"),
        ("/cables/new", "install_cable"),
        ("/cables/import", "install_cable"),
        ("/transceivers/new", "add_module"),
    ],
)
def test_every_page_write_declares_the_action_the_policy_knows(url, action):
    """Each page write is a view decorated with ``requires_action`` (the write guard knows it),
    naming an action of the one table."""
    view = resolve(url.format(label="N-1")).func
    assert view.required_action == action
    assert action in authz.ACTIONS


@pytest.mark.parametrize(("role", "label"), list(PAGE_ACTIONS))
def test_what_the_cable_page_offers_is_what_the_page_views_allow(plant, role, label):
    """Each action the real cable page offers opens (200) for that user, and each it does not offer
    is refused (403) by its view: the buttons and the page views answer alike, site scope included."""
    user = plant.users[role]
    shown = _offered(_cable_page(user, label), label)
    client = _page_client(user)
    for url, key in PAGE_LINKS.items():
        if key == "print":  # a POST: one cable's label as a PDF
            response = client.post(url, {"cable": label, "format": "pdf"})
        else:
            response = client.get(url.format(label=label))
        assert response.status_code == (200 if key in shown else 403), (key, response.status_code)
