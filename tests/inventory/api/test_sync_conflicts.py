"""A cable moved in NetBox is a conflict that names the ports on both sides; a person takes
NetBox's ends or keeps ours, through the API or the page.

    here:    [gpu-0001 eth0]--C-H1-0001--[leaf-01 Ethernet1/1]
    NetBox:  [gpu-0001 eth0]--C-H1-0001--[leaf-01 Ethernet3/2]
"""

from __future__ import annotations

import copy
import io

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management import call_command
from django.test import Client
from rest_framework.test import APIClient

from inventory.models import Port, Site, SyncRun, Team
from inventory.selectors.plant.trace import port_trace
from inventory.services.interop.netbox import netbox_sync

pytestmark = pytest.mark.django_db


def sync(netbox) -> SyncRun:
    (run,) = netbox_sync(url=netbox.url, token="secret-token", sites=["gpu-hall-1"])
    assert not run.error, run.error
    return run


def interface_id(netbox, device: str, name: str) -> int:
    return next(
        i["id"]
        for i in netbox.docs["interfaces"]["results"]
        if i["device"]["name"] == device and i["name"] == name
    )


def move_in_netbox(netbox, label: str, side: str, device: str, name: str) -> None:
    docs = copy.deepcopy(netbox.docs["cables"])
    term = next(c for c in docs["results"] if c["label"] == label)[f"{side}_terminations"][0]
    term["object_id"] = term["object"]["id"] = interface_id(netbox, device, name)
    term["object"]["name"] = name
    netbox.docs["cables"] = docs


@pytest.fixture
def moved(netbox) -> SyncRun:
    sync(netbox)
    move_in_netbox(netbox, "C-H1-0001", "b", "leaf-01", "Ethernet3/2")
    run = sync(netbox)
    assert [c["key"] for c in run.conflicts] == ["C-H1-0001"]
    return run


def far_end(device: str, port: str) -> str:
    return port_trace(Port.objects.get(device__name=device, name=port)).far.name


def test_a_conflict_names_the_ports_on_both_sides_and_its_two_resolutions(engineer_api, moved):
    (conflict,) = engineer_api.get("/api/sync/conflicts/").json()["results"]
    assert conflict["run"] == moved.pk and conflict["key"] == "C-H1-0001"
    assert conflict["here"] == {"A": ["gpu-0001 eth0"], "B": ["leaf-01 Ethernet1/1"]}
    assert conflict["theirs"] == {"A": ["gpu-0001 eth0"], "B": ["leaf-01 Ethernet3/2"]}
    assert conflict["resolutions"] == ["take_source", "keep_ours"]
    assert "leaf-01 Ethernet1/1" in conflict["message"] and "leaf-01 Ethernet3/2" in conflict["message"]


def test_taking_netboxs_ends_through_the_api_recables_here_and_the_next_sync_agrees(
    engineer_api, netbox, moved
):
    r = engineer_api.post(
        "/api/sync/conflicts/", {"run": moved.pk, "cable": "C-H1-0001", "take": "take_source"}, format="json"
    )
    assert r.status_code == 200, r.json()
    assert r.json()["detail"]["resolved"]["take"] == "take_source"
    assert far_end("gpu-0001", "eth0") == "Ethernet3/2"
    assert sync(netbox).conflicts == []
    assert engineer_api.get("/api/sync/conflicts/").json()["results"] == []


def test_keeping_ours_through_the_api_holds_until_netbox_moves_it_again(engineer_api, netbox, moved):
    r = engineer_api.post(
        "/api/sync/conflicts/", {"run": moved.pk, "cable": "C-H1-0001", "take": "keep_ours"}, format="json"
    )
    assert r.status_code == 200, r.json()
    assert far_end("gpu-0001", "eth0") == "Ethernet1/1"
    assert sync(netbox).conflicts == []
    # NetBox moves it somewhere else: a new decision is needed.
    move_in_netbox(netbox, "C-H1-0001", "a", "gpu-0001", "eth3")
    (again,) = sync(netbox).conflicts
    assert again["detail"]["source"] == {"A": ["gpu-0001 eth3"], "B": ["leaf-01 Ethernet3/2"]}


def test_resolving_needs_an_import_role_and_a_real_choice(api_as, engineer_api, moved):
    body = {"run": moved.pk, "cable": "C-H1-0001", "take": "take_source"}
    for role in ("viewer", "technician"):
        assert api_as(role).post("/api/sync/conflicts/", body, format="json").status_code == 403
    bad = engineer_api.post("/api/sync/conflicts/", {**body, "take": "guess"}, format="json")
    assert bad.status_code == 400 and "take" in bad.json()
    gone = engineer_api.post("/api/sync/conflicts/", {**body, "run": moved.pk + 1000}, format="json")
    assert gone.status_code == 400 and "run" in gone.json()
    other = engineer_api.post("/api/sync/conflicts/", {**body, "cable": "C-H1-0002"}, format="json")
    assert other.status_code == 400 and "has an open conflict" in other.json()["cable"][0]
    assert far_end("gpu-0001", "eth0") == "Ethernet1/1"  # nothing was written


def test_resolving_is_decided_with_the_cables_site(user_with_role, moved):
    """An account that may import (``import_plant``) but not act in every site resolves a
    conflict only in its team's sites: elsewhere a 403 that writes nothing, as every write."""

    importer = user_with_role("viewer", "importer")
    importer.user_permissions.add(Permission.objects.get(codename="import_plant"))
    client = APIClient()
    client.force_authenticate(user=importer)
    body = {"run": moved.pk, "cable": "C-H1-0001", "take": "keep_ours"}
    refused = client.post("/api/sync/conflicts/", body, format="json")
    assert refused.status_code == 403 and "not in a team for" in refused.json()["detail"]
    assert SyncRun.objects.get(pk=moved.pk).conflicts == moved.conflicts  # nothing resolved
    site = Site.objects.get(slug="gpu-hall-1")
    site.team = Team.objects.create(name="Hall 1 crew")
    site.save()
    site.team.members.add(importer)
    client.force_authenticate(user=get_user_model().objects.get(pk=importer.pk))  # sites read anew
    assert client.post("/api/sync/conflicts/", body, format="json").status_code == 200


def test_the_page_shows_both_sides_and_takes_netboxs_ends(user_with_role, moved):
    engineer = Client()
    engineer.force_login(user_with_role("engineer", "eng"))
    page = engineer.get("/sync/conflicts/").content.decode()
    assert "C-H1-0001" in page
    assert "leaf-01 Ethernet1/1" in page and "leaf-01 Ethernet3/2" in page
    assert 'value="take_source"' in page and 'value="keep_ours"' in page
    viewer = Client()
    viewer.force_login(user_with_role("viewer", "view"))
    refused = viewer.post(
        "/sync/conflicts/resolve", {"run": moved.pk, "cable": "C-H1-0001", "take": "take_source"}
    )
    assert refused.status_code == 403
    assert 'value="take_source"' not in viewer.get("/sync/conflicts/").content.decode()
    done = engineer.post(
        "/sync/conflicts/resolve", {"run": moved.pk, "cable": "C-H1-0001", "take": "take_source"}, follow=True
    )
    assert "C-H1-0001: took the source&#x27;s ends." in done.content.decode()
    assert "No open conflicts." in done.content.decode()
    assert far_end("gpu-0001", "eth0") == "Ethernet3/2"


def test_an_applied_command_line_import_lists_its_conflicts_for_resolution(engineer_api, netbox):
    out = io.StringIO()
    args = {"url": netbox.url, "token": "secret-token", "site": "gpu-hall-1", "apply": True, "stdout": out}
    call_command("netbox_import", **args)
    move_in_netbox(netbox, "C-H1-0001", "b", "leaf-01", "Ethernet3/2")
    call_command("netbox_import", **{**args, "stdout": out})
    assert "CONFLICT cable C-H1-0001: its ends differ here (A gpu-0001 eth0; B leaf-01 Ethernet1/1)" in (
        out.getvalue()
    )
    assert "/sync/conflicts/" in out.getvalue()
    (conflict,) = engineer_api.get("/api/sync/conflicts/").json()["results"]
    assert conflict["theirs"]["B"] == ["leaf-01 Ethernet3/2"]
