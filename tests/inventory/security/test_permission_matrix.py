"""Role x action x path: the same answer through the API (session and every token kind), the
admin and the pages. A technician edits cables only in their team's site (North); records
faults and swaps modules anywhere."""

import pytest
from django.template import Context, Template
from django.test import Client, RequestFactory

from inventory.access import authz
from inventory.models import Cable, Transceiver

pytestmark = pytest.mark.django_db

OK = "ok"
NO = "denied"

# action -> role -> expected, for the cable in the technician's own site (North) and elsewhere.
MATRIX = {
    "read": {"viewer": OK, "technician": OK, "engineer": OK, "admin": OK, "collector": NO},
    "edit_own_site": {"viewer": NO, "technician": OK, "engineer": OK, "admin": OK, "collector": NO},
    "edit_other_site": {"viewer": NO, "technician": NO, "engineer": OK, "admin": OK, "collector": NO},
    "fault_other_site": {"viewer": NO, "technician": NO, "engineer": OK, "admin": OK, "collector": NO},
    "swap_module_other_site": {"viewer": NO, "technician": OK, "engineer": OK, "admin": OK, "collector": NO},
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


@pytest.mark.parametrize("role", ["viewer", "technician", "engineer", "admin"])
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

TEMPLATE = Template(
    '{% load authz %}{% can "record_test" cable as t %}{% can "edit_cable" cable as e %}'
    '{% can "report_fault" cable as f %}{% can "swap_module" cable as s %}'
    "{% if t %}[test]{% endif %}{% if e %}[edit]{% endif %}{% if f %}[fault]{% endif %}{% if s %}[swap]{% endif %}"
    '{% if request.user|may:"print_labels" %}[labels]{% endif %}'
)

PAGE_ACTIONS = {
    ("viewer", "N-1"): "",
    ("viewer", "S-1"): "",
    ("technician", "N-1"): "[test][edit][fault][swap]",
    ("technician", "S-1"): "[test][fault][swap]",
    ("engineer", "S-1"): "[test][edit][fault][swap][labels]",
    ("admin", "S-1"): "[test][edit][fault][swap][labels]",
    ("collector", "N-1"): "",
}


@pytest.mark.parametrize(("role", "label"), list(PAGE_ACTIONS))
def test_pages_show_only_the_actions_the_user_may_take(plant, role, label):
    request = RequestFactory().get("/")
    request.user = plant.users[role]
    html = TEMPLATE.render(Context({"request": request, "cable": Cable.objects.get(label=label)}))
    assert html == PAGE_ACTIONS[(role, label)]


@pytest.mark.parametrize(("role", "label"), list(PAGE_ACTIONS))
def test_server_check_agrees_with_what_the_page_shows(plant, role, label):
    cable = Cable.objects.get(label=label)
    shown = TEMPLATE.render(
        Context({"request": type("R", (), {"user": plant.users[role]})(), "cable": cable})
    )
    for action, mark in [("record_test", "[test]"), ("edit_cable", "[edit]"), ("report_fault", "[fault]")]:
        if mark in shown:
            authz.check(plant.users[role], action, cable)
        else:
            with pytest.raises(authz.PermissionDenied):
                authz.check(plant.users[role], action, cable)


def test_a_viewer_cannot_post_to_any_page(plant):
    client = Client()
    client.force_login(plant.users["viewer"])
    for url in ["/", "/search/", f"/c/{plant.north_cable.label}", "/r/N01"]:
        assert client.post(url, {"x": "1"}).status_code == 403, url


def test_a_decorated_view_enforces_its_action_for_every_role(plant, rf):
    @authz.requires_action("edit_cable", obj=lambda request, label: Cable.objects.get(label=label))
    def edit(request, label):
        from django.http import HttpResponse

        return HttpResponse("saved")

    for role, label, allowed in [
        ("technician", "N-1", True),
        ("technician", "S-1", False),
        ("engineer", "S-1", True),
        ("viewer", "N-1", False),
    ]:
        request = rf.post("/")
        request.user = plant.users[role]
        if allowed:
            assert edit(request, label=label).content == b"saved"
        else:
            with pytest.raises(authz.PermissionDenied):
                edit(request, label=label)
