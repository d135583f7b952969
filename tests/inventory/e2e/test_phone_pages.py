"""Every page a technician or engineer opens (but the cable pages and the 404, which the cable
page's own tests check), logged in as a technician and as an engineer (neither a superuser), on a
360x740 phone in real Chromium: no sideways scroll, no text
under 12 px, 44 px touch targets, no raw codes or ISO timestamps
(``tests/inventory/phone_checks.py``). And the pictures do what they are for: the rack
drawing opens a device, a device opens a port, the port shows its path through the panels.

Plant: ``tests/inventory/views/conftest.py``
[gpu-0001 eth1]--J-100--[pp-a Front 1]==T-100==[pp-b Front 1]--J-101--[leaf-01 Ethernet2/1]
[gpu-0001 eth0]--J-102--[leaf-01 Ethernet1/1]; an open page alert on J-102.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.core.choices import AlertRule, AlertState, Severity
from inventory.models import Alert
from tests import factories as f
from tests.inventory.phone_checks import phone_context, phone_problems

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def alert(plant):
    now = timezone.now()
    return Alert.objects.create(
        key="link_flap:demo",
        rule=AlertRule.LINK_FLAP,
        severity=Severity.PAGE,
        state=AlertState.OPEN,
        cable=plant["cables"]["J-102"],
        opened_at=now - timedelta(hours=2),
        updated_at=now,
        summary="Link went down and up 7 times in the last hour",
        recommendation="Swap the module at the flapping end.",
        evidence={
            "ends": {"a": {"port_id": 1, "link_down": 7, "error_recovery": 2, "bucket_s": 60}},
            "link": {
                "id": 1,
                "pmd": "400GBASE-DR4",
                "fec": "RS544",
                "class": "leaf-spine",
                "speed_gbps": 400,
            },
            "recommendation_code": "reseat",
        },
    )


@pytest.fixture
def phone_as(browser, live_server):
    """``phone_as(role)``: a phone (360x740) logged in as a new user of that role (not a superuser)."""
    contexts = []

    def login(role: str):
        user = f.UserFactory(username=f"{role}-on-phone", role=role)
        assert not user.is_superuser
        context = phone_context(browser)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.goto(live_server.url + "/login/")
        page.fill("input[name=username]", user.username)
        page.fill("input[name=password]", "pw-for-tests-1")
        page.click("button[type=submit]")
        page.wait_for_url(live_server.url + "/")
        return page

    yield login
    for context in contexts:
        context.close()


@pytest.fixture
def phone_as_technician(phone_as):
    return phone_as("technician")


PAGES = [
    "/",
    "/r/A01",
    "/r/B01",
    "/d/gpu-0001",
    "/d/pp-a",
    "/d/gpu-0001/p/eth1",
    "/search/?q=eth",
    "/cables/",
    "/transceivers/",
    "/retests/",
    "/alerts/",
    "/forecast/",
    "/reconciliation/",
    "/cables/import",
    "/labels/print/",
    "/reports/impact/",
]


# Pages a technician may not open (importing cables is an engineer's action): refused, not shown.
ENGINEER_ONLY = {"/cables/import"}


@pytest.mark.parametrize("role", ["technician", "engineer"])
def test_every_page_reads_on_a_phone(live_server, plant, alert, phone_as, artifacts, role):
    page = phone_as(role)
    found = {}
    # What the browser says in its console: a header it does not understand, a script or style
    # the Content-Security-Policy blocked, an exception. None is expected on any page but the
    # refused one's own "403" line.
    said: list[str] = []
    path = "/"
    page.on(
        "console",
        lambda m: said.append(f"{path}: {m.type}: {m.text}") if m.type in ("warning", "error") else None,
    )
    page.on("pageerror", lambda e: said.append(f"{path}: exception: {e}"))
    for path in [*PAGES, f"/alerts/{alert.pk}/"]:
        response = page.goto(live_server.url + path)
        refused = role == "technician" and path in ENGINEER_ONLY
        assert response.status == (403 if refused else 200), (role, path, response.status)
        problems = phone_problems(page)
        if problems:
            found[path] = problems
            page.screenshot(path=str(artifacts / f"phone-{role}{path.replace('/', '_')}.png"), full_page=True)
    assert not found, "\n".join(f"{path}: {problems}" for path, problems in found.items())
    refused = {path for path in ENGINEER_ONLY if role == "technician"}
    said = [line for line in said if not (line.split(":")[0] in refused and "status of 403" in line)]
    assert not said, "\n".join(said)


def test_the_rack_drawing_opens_the_device_and_the_port_shows_the_path_through_both_panels(
    live_server, plant, phone_as_technician
):
    page = phone_as_technician
    page.goto(live_server.url + "/r/A01")
    drawing = page.locator("svg.elevation")
    # The first screen shows the picture of the rack (the rack's buttons come after it) under a
    # one-row header whose links fold into a Menu that still opens them.
    header = page.locator("header.top").bounding_box()
    assert header["height"] <= 96, header
    assert drawing.bounding_box()["y"] < 740 - 120, drawing.bounding_box()
    assert not page.get_by_role("link", name="Cables", exact=True).is_visible()
    page.locator("header.top summary", has_text="Menu").click()
    assert page.get_by_role("link", name="Cables", exact=True).is_visible()
    page.locator("header.top summary", has_text="Menu").click()
    assert drawing.locator("text", has_text="gpu-0001").count() == 1
    # gpu-0001's two cages hold cables; the panel's Front 1 holds J-100 (in the drawing's colours).
    assert drawing.locator("a[aria-label*='gpu-0001'] rect.el-sk:not(.sk-empty)").count() >= 2
    drawing.locator("a[aria-label*='gpu-0001']").click()
    page.wait_for_url(live_server.url + "/d/gpu-0001")
    assert "J-100" in page.locator("#plugged-h + ul").inner_text()
    page.locator("#plugged-h + ul").get_by_role("link", name="eth1", exact=True).click()
    page.wait_for_url(live_server.url + "/d/gpu-0001/p/eth1")
    path = page.locator("ol.pathdiagram").inner_text()
    # Both ends, both panels with the port the path enters by and the one it leaves by.
    for expected in ("gpu-0001", "pp-a", "Front 1", "Rear 1", "T-100", "pp-b", "leaf-01", "Ethernet2/1"):
        assert expected in path, expected
    assert path.index("pp-a") < path.index("T-100") < path.index("pp-b") < path.index("leaf-01")


def test_searching_a_device_name_opens_its_device_page(live_server, plant, phone_as_technician):
    page = phone_as_technician
    page.goto(live_server.url + "/search/?q=gpu-0001")
    assert page.url == live_server.url + "/d/gpu-0001"
    assert page.locator("h1").inner_text() == "gpu-0001"


def test_an_alerts_evidence_reads_in_words_on_the_phone(live_server, plant, alert, phone_as_technician):
    page = phone_as_technician
    page.goto(live_server.url + f"/alerts/{alert.pk}/")
    text = page.locator("main").inner_text()
    for shown in ("PMD", "400GBASE-DR4", "400 Gb/s", "Link-down events", "Sample interval", "60 s"):
        assert shown in text, shown
    for naive in ("Recommendation code", "Pmd", "Speed gbps", "Bucket s", "reseat"):
        assert naive not in text, naive


def test_the_alert_list_shows_the_first_alert_on_the_first_screen(
    live_server, plant, alert, phone_as_technician
):
    """The filters fold away (named in words, not "Exclude acknowledged at is null")."""
    page = phone_as_technician
    page.goto(live_server.url + "/alerts/")
    first = page.locator("ul.alerts li.alert").first
    assert first.bounding_box()["y"] + 44 < 740, first.bounding_box()
    page.locator("details.filters > summary").click()
    form = page.locator("form.filterform").inner_text()
    assert "Acknowledged" in form and "Severity" in form and "Link flap" in form
    for raw in ("is null", "greater than", "Exclude"):
        assert raw not in form, raw
    page.get_by_label("Page", exact=True).check()
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url("**/alerts/?*severity=page*")
    assert page.locator("ul.alerts li.alert").count() == 1
