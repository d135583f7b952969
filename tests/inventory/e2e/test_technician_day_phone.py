"""The technician's day on a 360 x 740 phone in real Chromium (issue 31): each test does one task
and asserts what the technician must see on the first screen, not only that the page loads.

Plant of ``views/conftest.plant``:
    Rack A01: gpu-0001 (U10: OSFP1 eth0/eth1, OSFP2 eth2/eth3), panel pp-a (U40)
    Rack B01: leaf-01 (U46), panel pp-b (U40)
    [gpu-0001 eth1]--J-100--[pp-a Front 1]==T-100==[pp-b Front 1]--J-101--[leaf-01 Ethernet2/1]
    [gpu-0001 eth0]--J-102 (retest overdue 3 days)--[leaf-01 Ethernet1/1]
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.core.choices import CableStatus
from inventory.models import Cable, CableTest, Team
from inventory.services.plant import fieldwork
from tests import factories as f
from tests.inventory.e2e.test_cable_page_phone import FIRST_SCREEN, audit, bottom, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def crew(plant):
    """The plant's site is looked after by "Site crew"; "walker" (a technician) is in it."""
    site = plant["racks"][0].row.room.site
    site.name = "Demo Hall 1"
    site.team = Team.objects.create(name="Site crew")
    site.save()
    walker = f.UserFactory(username="walker", role="technician")
    site.team.members.add(walker)
    return plant


@pytest.fixture
def phone740(browser):
    context = browser.new_context(
        viewport={"width": 360, "height": FIRST_SCREEN}, device_scale_factor=2, has_touch=True, is_mobile=True
    )
    page = context.new_page()
    page.set_default_timeout(20_000)
    yield page
    context.close()


def top(page, selector: str) -> float:
    return page.locator(selector).first.evaluate("el => el.getBoundingClientRect().top + window.scrollY")


def first_bottom(page, test_id: str) -> float:
    return page.get_by_test_id(test_id).first.evaluate(
        "el => el.getBoundingClientRect().bottom + window.scrollY"
    )


def said(page, test_id: str) -> str:
    return " ".join(page.get_by_test_id(test_id).inner_text().split())


def test_the_days_retests_from_a_rack_overdue_first_on_the_first_screen(
    crew, phone740, live_server, artifacts
):
    """From rack A01's page, one tap to its retests: J-102 (3 days overdue) above J-100 (due in
    two days, same U, a label that sorts first), A01's own counts, and the shortcuts."""
    j100 = Cable.objects.get(label="J-100")
    j100.retest_due = timezone.localdate() + timedelta(days=2)
    j100.save()
    log_in(phone740, live_server.url, "walker")
    phone740.goto(live_server.url + "/r/A01")
    phone740.get_by_test_id("rack-retests").click()
    phone740.wait_for_url("**/retests/?rack=A01")
    phone740.screenshot(path=str(artifacts / "h31b-retests-rack-phone.png"))
    audit(phone740)
    rows = phone740.get_by_test_id("retest-row")
    assert rows.count() == 2
    assert "J-102" in rows.nth(0).inner_text() and "3 days overdue" in rows.nth(0).inner_text()
    assert "J-100" in rows.nth(1).inner_text()
    assert first_bottom(phone740, "retest-row") <= FIRST_SCREEN  # the first row on the first screen
    counts = said(phone740, "retest-counts")
    assert "1 overdue" in counts
    shortcuts = said(phone740, "retest-shortcuts")
    assert "Today" in shortcuts and "This rack: A01" in shortcuts
    phone740.get_by_role("link", name="Today", exact=True).click()
    phone740.wait_for_url("**/retests/?bucket=today")
    assert phone740.get_by_test_id("retest-row").count() == 1  # J-102 (overdue) only


def test_search_a_cage_as_printed_from_the_header(crew, phone740, live_server):
    log_in(phone740, live_server.url, "walker")
    phone740.fill("header input[name=q]", "GPU-0001 osfp1/2")
    phone740.press("header input[name=q]", "Enter")
    phone740.wait_for_url("**/c/J-100")
    assert "J-100" in phone740.locator("h1").inner_text()
    phone740.fill("header input[name=q]", "gpu-0001:OSFP1")
    phone740.press("header input[name=q]", "Enter")
    phone740.wait_for_url("**/search/**")
    hits = said(phone740, "cage-hits")
    assert "gpu-0001 OSFP1 J-102" in hits and "gpu-0001 OSFP1/2 J-100" in hits
    assert bottom(phone740, "cage-hits") <= FIRST_SCREEN
    audit(phone740)


def test_menu_racks_page_and_a_friendly_404(crew, phone740, live_server, artifacts):
    log_in(phone740, live_server.url, "walker")
    phone740.locator("header details.menu > summary").click()
    nav = phone740.locator("nav.nav").inner_text()
    for name in ("Retests", "Alerts", "Racks", "Forecast", "Labels"):
        assert name in nav
    phone740.locator("nav.nav").get_by_role("link", name="Racks").click()
    phone740.wait_for_url("**/racks/")
    audit(phone740)
    phone740.get_by_role("link", name="B01").click()
    phone740.wait_for_url("**/r/B01")
    phone740.goto(live_server.url + "/r/NO-SUCH")
    phone740.screenshot(path=str(artifacts / "h31b-404-phone.png"))
    text = audit(phone740)["text"]
    assert "No rack NO-SUCH" in text and "URLconf" not in text
    assert bottom(phone740, "not-found") <= FIRST_SCREEN  # the search box and Racks, all at once
    assert phone740.locator("#nf-q").input_value() == "NO-SUCH"


def test_a_technician_in_no_team_is_told_why_on_the_cable_page(crew, phone740, live_server):
    f.UserFactory(username="visitor", role="technician")
    log_in(phone740, live_server.url, "visitor")
    phone740.goto(live_server.url + "/c/J-102")
    said = phone740.get_by_test_id("refused").inner_text()
    assert "You are not in a team for Demo Hall 1" in said and "ask an admin" in said
    phone740.goto(live_server.url + "/c/J-102/fault")
    assert "You are not in a team for Demo Hall 1" in phone740.get_by_test_id("refusal").inner_text()
    audit(phone740)


def test_inspect_both_ends_with_big_choices_in_one_go(crew, phone740, live_server, artifacts):
    log_in(phone740, live_server.url, "walker")
    phone740.goto(live_server.url + "/c/J-102/inspect")
    phone740.screenshot(path=str(artifacts / "h31b-inspect-phone.png"))
    audit(phone740)
    for end in ("A", "B"):
        box = phone740.get_by_test_id(f"inspect-end-{end}").locator("label.choice48").first.bounding_box()
        assert box["height"] >= 48 and box["width"] >= 48
    assert bottom(phone740, "inspect-end-A") <= FIRST_SCREEN
    phone740.get_by_test_id("inspect-end-A").get_by_text("Fail", exact=True).click()
    phone740.get_by_test_id("inspect-end-B").get_by_text("Pass", exact=True).click()
    phone740.get_by_role("button", name="Save inspection").click()
    phone740.wait_for_url("**/c/J-102")
    assert "A fail, B pass" in " ".join(phone740.locator(".messages").inner_text().split())
    phone740.goto(live_server.url + "/c/J-102/inspect")
    assert "fail" in phone740.get_by_test_id("inspect-last-A").inner_text()
    assert "pass" in phone740.get_by_test_id("inspect-last-B").inner_text()


def test_power_meter_fibres_and_budget_on_the_first_screen(crew, phone740, live_server, artifacts):
    log_in(phone740, live_server.url, "walker")
    phone740.goto(live_server.url + "/c/J-102/test/power-meter")
    phone740.screenshot(path=str(artifacts / "h31b-olts-phone.png"))
    audit(phone740)
    assert top(phone740, "input[name=loss_1]") < FIRST_SCREEN - 48
    assert bottom(phone740, "olts-budget") <= FIRST_SCREEN
    assert "dB" in phone740.get_by_test_id("olts-budget").inner_text()
    assert phone740.locator("input[name=launch_condition]").count() == 0  # OS2: no launch condition
    assert not phone740.get_by_test_id("olts-meta").evaluate("el => el.open")  # folded
    for i in range(1, 9):
        phone740.fill(f"input[name=loss_{i}]", "0.4")
    phone740.get_by_role("button", name="Save test").click()
    phone740.wait_for_url("**/c/J-102")
    assert CableTest.objects.filter(cable__label="J-102", kind="olts", technician__username="walker").exists()


def test_a_faulty_cable_says_why_and_a_patched_one_where_its_link_ends(crew, phone740, live_server):
    fieldwork.cable_fault_report(
        cable=Cable.objects.get(label="J-101"), seen="latch broken at the panel", status=CableStatus.FAULTY
    )
    log_in(phone740, live_server.url, "walker")
    phone740.goto(live_server.url + "/c/J-101")
    audit(phone740)
    # What was seen is the headline; the why line beneath it says who and when, not it again.
    assert "latch broken at the panel" in said(phone740, "evidence-conflict")
    why = said(phone740, "status-why")
    assert "Why faulty" in why and "the fault reported above" in why and "latch broken" not in why
    assert bottom(phone740, "status-why") <= FIRST_SCREEN
    ends = said(phone740, "link-ends")
    assert "gpu-0001 OSFP1/2 eth1" in ends and "leaf-01 OSFP2 Ethernet2/1" in ends
    assert bottom(phone740, "link-ends") <= FIRST_SCREEN
