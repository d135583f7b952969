"""Names that are safe everywhere (issue 32): a rack and a device renamed through the API to names
with "/", spaces, unicode and control characters; names already stored that validation would now
refuse; and the NetBox sync meeting names it cannot take.

    rack R1: [leaf-a OSFP1]--J-1--[leaf-b OSFP1]

Every write answers 200 or a 400 that says what is wrong with the name; every page and API
endpoint that shows the rack or the device answers 200 afterwards, never 500.
"""

from __future__ import annotations

import copy
from html import escape
from urllib.parse import quote

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from inventory.core.names import from_url_segment, name_problem, url_segment
from inventory.models import Device, Rack, Room, Row, Site
from inventory.models.devices import device_url
from inventory.models.locations import name_page_urls, rack_url
from inventory.services.interop.netbox import netbox_import, netbox_sync
from tests import factories as f

pytestmark = pytest.mark.django_db

# (name, taken?) : "/" and unicode are names; control characters and edge spaces are not.
NAMES = [
    ("S01-G02/B", True),
    ("rack with spaces", True),
    ("Ünïcødé-机架", True),
    ("a/b/c", True),
    ("50%/x", True),
    ("bad\r\nname", False),
    ("nul\x00x", False),
    ("tab\tname", False),
    ("del\x7fx", False),
    ("line\u2028sep", False),
    ("..", True),
]


@pytest.fixture
def plant(db):
    site = Site.objects.create(name="Hall", slug="hall")
    row = Row.objects.create(room=Room.objects.create(site=site, name="Room 1"), name="A")
    rack = Rack.objects.create(row=row, name="R1")
    _, a = f.twin_port_device("leaf-a", rack=rack, u=1)
    _, b = f.twin_port_device("leaf-b", rack=rack, u=2)
    f.jumper("J-1", a[0], b[0])
    return rack


@pytest.fixture
def engineer():
    user = f.UserFactory(username="eng", role="engineer")
    api, page = APIClient(), Client()
    api.force_login(user)
    page.force_login(user)
    return api, page


def _api_name(name: str) -> str:
    """How an API client writes a name in a URL: percent-encoded once ("/" as %2F)."""
    return quote(name, safe="")


def _rack_urls(name: str) -> list[str]:
    return [
        reverse("rack-page", kwargs={"name": name}),
        reverse("rack-bringup", kwargs={"name": name}),
        "/c/J-1",
        "/c/J-1/swap",
        "/retests/",
        "/racks/",
        "/cables/",
        "/transceivers/",
        "/search/?q=" + quote(name),
        "/alerts/",
        "/reports/commissioning/",
        f"/api/racks/{_api_name(name)}/",
        f"/api/racks/{_api_name(name)}/bringup/",
        "/api/racks/",
        "/api/cables/J-1/",
        "/api/cables/J-1/trace/",
        "/api/cables/export/",
    ]


def _device_urls(name: str) -> list[str]:
    dev = Device.objects.get(name=name)
    port = dev.ports.order_by("pk").first()
    return [
        dev.get_absolute_url(),
        reverse("device-page", kwargs={"name": name}),
        reverse("port-page", kwargs={"name": name, "port": port.name}),
        reverse("rack-page", kwargs={"name": dev.rack.name}),
        "/c/J-1",
        "/cables/",
        "/transceivers/",
        f"/api/devices/{_api_name(name)}/",
        "/api/devices/",
        "/api/devices/export/",
        "/api/cables/J-1/trace/",
        f"/api/ports/{port.pk}/trace/",
    ]


def _all_answer_200(page: Client, urls: list[str]) -> None:
    bad = [(u, r.status_code) for u in urls if (r := page.get(u, follow=True)).status_code != 200]
    assert not bad, bad


def _rename(api: APIClient, path: str, current: str, name: str):
    return api.patch(f"/api/{path}/{_api_name(current)}/", {"name": name}, format="json")


@pytest.mark.parametrize(("name", "taken"), NAMES, ids=[repr(n) for n, _ in NAMES])
def test_a_rack_renamed_through_the_api_is_taken_or_refused_clearly_and_every_page_answers(
    plant, engineer, name, taken
):
    api, page = engineer
    response = _rename(api, "racks", "R1", name)
    if taken:
        assert response.status_code == 200, response.content
        assert Rack.objects.filter(name=name).exists()
    else:
        assert response.status_code == 400, response.content
        assert "name" in response.json(), response.json()
        assert Rack.objects.filter(name="R1").exists()
    _all_answer_200(page, _rack_urls(name if taken else "R1"))


@pytest.mark.parametrize(("name", "taken"), NAMES, ids=[repr(n) for n, _ in NAMES])
def test_a_device_renamed_through_the_api_is_taken_or_refused_clearly_and_every_page_answers(
    plant, engineer, name, taken
):
    api, page = engineer
    response = _rename(api, "devices", "leaf-a", name)
    assert response.status_code == (200 if taken else 400), response.content
    if not taken:
        assert "name" in response.json(), response.json()
    _all_answer_200(page, _device_urls(name if taken else "leaf-a"))


@pytest.mark.parametrize("name", [n for n, taken in NAMES if not taken and "\x00" not in n])
def test_names_already_stored_that_are_refused_now_still_show_on_every_page(plant, engineer, name):
    """Data written before the rule (a migration, an old sync): the pages survive it."""
    _, page = engineer
    plant.name = name
    plant.save()  # as an older release stored it, without the validator
    dev = Device.objects.get(name="leaf-a")
    dev.name = name + "-dev"
    dev.save()
    _all_answer_200(page, _rack_urls(name) + _device_urls(name + "-dev"))


def test_the_url_of_a_name_without_slash_or_percent_is_unchanged():
    """The URLs printed on labels do not change: only "%" and "/" are escaped."""
    for name in ["R1", "S01-G02", "Ünïcødé", "a b", "x:y@z"]:
        assert url_segment(name) == name
        assert reverse("rack-page", kwargs={"name": name}) == "/r/" + quote(name, safe="!$&'()*+,;=~:@")
    assert reverse("rack-page", kwargs={"name": "S01-G02/B"}) == "/r/S01-G02%252FB"
    assert reverse("rack-page", kwargs={"name": ".."}) == "/r/%252E%252E"  # not rewritten away
    for name in ["a/b", "50%", "%2F", "a%25/b", "%", ".", "..", "%2E"]:
        assert from_url_segment(url_segment(name)) == name


@pytest.mark.parametrize("name", [n for n, _ in NAMES] + ["R1", "x:y@z", "%2F", "a%25/b", "."])
def test_pages_linked_without_reverse_have_the_url_reverse_gives(name):
    """The racks page, the rack and path drawings link racks and devices through
    ``name_page_urls`` (no ``reverse`` per row): the same URL, for every name stored."""
    assert rack_url(name) == reverse("rack-page", kwargs={"name": name})
    assert device_url(name) == reverse("device-page", kwargs={"name": name})
    assert name_page_urls("rack-page", [name, "R2"]) == [rack_url(name), "/r/R2"]


def test_the_racks_page_links_each_rack_to_its_own_page(plant, engineer):
    _, page = engineer
    for name in ("S01-G02/B", "50%/x", "rack with spaces", ".."):
        Rack.objects.create(row=plant.row, name=name)
    html = page.get("/racks/").content.decode()
    for rack in Rack.objects.all():
        link = f'href="{escape(reverse("rack-page", kwargs={"name": rack.name}))}">{escape(rack.name)}</a>'
        assert link in html, rack.name
        assert page.get(reverse("rack-page", kwargs={"name": rack.name})).status_code == 200


def test_the_rule_says_what_is_wrong():
    assert name_problem("ok/name") is None
    assert "control characters" in name_problem("a\nb")
    assert "U+0000" in name_problem("a\x00b")
    assert "empty" in name_problem("   ")
    assert "space" in name_problem(" leading")  # (the API trims it first: "leading" is taken)


# --- the sync ---------------------------------------------------------------------------------


def _named(doc: dict, ext_id: int, name) -> dict:
    doc = copy.deepcopy(doc)
    for item in doc["results"]:
        if item["id"] == ext_id:
            item["name"] = name
    return doc


def test_the_sync_reports_names_it_cannot_take_as_conflicts_and_imports_the_rest(netbox, engineer):
    """NetBox's rack B01 renamed to a name with a line break, device gpu-0002 to one with a NUL
    byte, and rack A01 to a name with "/": the run finishes; the two it cannot take are
    conflicts that name the object (kind, NetBox id, name) and are stored nowhere; the "/" name
    is imported and its pages answer."""
    netbox.docs["racks"] = _named(netbox.docs["racks"], 66, "B01\r\nX")
    netbox.docs["racks"] = _named(netbox.docs["racks"], 65, "A01/B")
    netbox.docs["devices"] = _named(netbox.docs["devices"], 2002, "gpu\x000002")
    (run,) = netbox_sync(url=netbox.url, token="secret-token", sites=["gpu-hall-1"])
    assert not run.error, run.error  # the run finished
    conflicts = {(c["kind"], c["key"]): c["detail"] for c in run.conflicts}
    assert ("rack", repr("B01\r\nX")) in conflicts
    assert "#66" in conflicts[("rack", repr("B01\r\nX"))]
    assert ("device", repr("gpu\x000002")) in conflicts
    assert "#2002" in conflicts[("device", repr("gpu\x000002"))]
    assert not [n for n in Rack.objects.values_list("name", flat=True) if "\n" in n]
    assert not [n for n in Device.objects.values_list("name", flat=True) if "\x00" in n]
    assert Rack.objects.filter(name="A01/B").exists()
    assert Device.objects.filter(name="gpu-0001", rack__name="A01/B").exists()
    # The rest of the site came over: leaf-01 (in the refused rack) is recorded, without a rack.
    assert Device.objects.get(name="leaf-01").rack is None
    _, page = engineer
    _all_answer_200(page, [reverse("rack-page", kwargs={"name": "A01/B"}), "/sync/conflicts/", "/cables/"])
    assert "gpu\\x000002" in page.get("/sync/conflicts/").content.decode()


def test_a_rename_in_netbox_of_a_rack_already_here_to_a_bad_name_keeps_ours(netbox):
    netbox_import(snapshot=netbox.fetch(), dry_run=False)
    placed = dict(Device.objects.filter(rack__name="B01").values_list("name", "position_u"))
    netbox.docs["racks"] = _named(netbox.docs["racks"], 66, "B01\nrenamed")
    plan = netbox_import(snapshot=netbox.fetch(), dry_run=False)
    assert [c.kind for c in plan.conflicts if c.kind == "rack"] == ["rack"]
    assert dict(Device.objects.filter(rack__name="B01").values_list("name", "position_u")) == placed


def test_the_device_csv_import_refuses_a_name_the_rule_refuses_and_takes_a_slash(plant, engineer):
    """NetBox's device CSV: a bulk write that runs no model validator asks the same rule."""
    api, page = engineer
    text = "name,role,rack,position\nbad\x07bell,leaf,R1,30\n"
    response = api.generic("POST", "/api/devices/import/?dry_run=0", text, content_type="text/csv")
    assert response.status_code == 400
    assert "control characters" in str(response.json())
    assert not Device.objects.filter(position_u=30).exists()
    text = "name,role,rack,position\nleaf/c,leaf,R1,30\n"
    response = api.generic("POST", "/api/devices/import/?dry_run=0", text, content_type="text/csv")
    assert response.status_code == 201, response.json()
    dev = Device.objects.get(name="leaf/c")  # no ports yet (a plan adds them)
    _all_answer_200(
        page, [dev.get_absolute_url(), "/r/R1", f"/api/devices/{_api_name('leaf/c')}/", "/api/devices/"]
    )


# A rack and a device named in NetBox with "/", spaces and unicode come over as they are; renamed
# in NetBox to a name with a control character after they came over, they are a conflict naming
# the object, and ours is kept. (The sync finds an object it knows by its NetBox id and does not
# take a new name for it: only a first sync brings a name over.)
SYNC_NAMES = [
    ("before", "A01/B 机架", "gpu 0001/ü"),
    ("after", "A01\r\nX", "gpu\t0001"),
]


@pytest.mark.parametrize(("when", "rack", "device"), SYNC_NAMES, ids=["slash-space-unicode", "control"])
def test_a_rack_and_a_device_named_in_netbox_show_on_every_page(netbox, engineer, when, rack, device):
    if when == "after":
        (first,) = netbox_sync(url=netbox.url, token="secret-token", sites=["gpu-hall-1"])
        assert not first.error, first.error
    netbox.docs["racks"] = _named(netbox.docs["racks"], 65, rack)
    netbox.docs["devices"] = _named(netbox.docs["devices"], 2001, device)
    (run,) = netbox_sync(url=netbox.url, token="secret-token", sites=["gpu-hall-1"])
    assert not run.error, run.error
    taken = when == "before"
    rack_name, device_name = (rack, device) if taken else ("A01", "gpu-0001")
    assert Device.objects.get(name=device_name).rack.name == rack_name
    conflicts = {(c["kind"], c["key"]) for c in run.conflicts}
    assert (("rack", repr(rack)) in conflicts) is not taken
    assert (("device", repr(device)) in conflicts) is not taken
    port = Device.objects.get(name=device_name).ports.get(name="eth0")
    _, page = engineer
    _all_answer_200(
        page,
        [
            reverse("rack-page", kwargs={"name": rack_name}),
            reverse("rack-bringup", kwargs={"name": rack_name}),
            reverse("device-page", kwargs={"name": device_name}),
            reverse("port-page", kwargs={"name": device_name, "port": "eth0"}),
            "/c/C-H1-0001",
            "/cables/",
            "/transceivers/",
            "/sync/conflicts/",
            "/search/?q=" + quote(device_name),
            f"/api/racks/{_api_name(rack_name)}/",
            f"/api/devices/{_api_name(device_name)}/",
            "/api/devices/export/",
            "/api/cables/export/",
            "/api/cables/C-H1-0001/trace/",
            f"/api/ports/{port.pk}/trace/",
        ],
    )
