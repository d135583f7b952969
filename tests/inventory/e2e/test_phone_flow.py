"""A technician at the rack, on a phone, end to end in real Chromium."""

import re

import pytest

from inventory.models import CableTest, Transceiver
from tests import factories as f

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def no_horizontal_scroll(page) -> bool:
    # After a click the URL changes when the navigation commits, before the new document exists:
    # wait for it to load before measuring it.
    page.wait_for_load_state()
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def login(page, base: str, path: str, username: str) -> None:
    page.goto(base + path)
    assert "/login/" in page.url and "next=" in page.url  # the scan sends you to log in...
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", "pw-for-tests-1")
    page.click("button[type=submit]")
    page.wait_for_url(base + path)  # ...and back to the cable you scanned


def test_technician_scans_a_cable_records_a_test_swaps_a_module_and_sees_the_history(
    live_server, plant, phone, artifacts
):
    f.field_crew(f.UserFactory(username="walker", role="technician"))  # tests and swaps: their sites
    cage = plant["gpu"][0].cage
    old = cage.transceiver
    f.module(serial="SPARE-777")
    base = live_server.url

    login(phone, base, "/c/J-102", "walker")
    assert phone.locator("h1.label").inner_text() == "J-102"
    assert phone.get_by_test_id("cable-status").inner_text() == "In production"
    assert "overdue" in phone.get_by_test_id("retest").inner_text()
    assert "OSFP1" in phone.get_by_test_id("end-A").inner_text()  # the cage on the faceplate
    assert old.serial in phone.get_by_test_id("module-A").inner_text()
    assert no_horizontal_scroll(phone)
    phone.screenshot(path=str(artifacts / "cable-page-phone.png"), full_page=True)

    # Record a power-meter test from the cable page.
    record_power_meter_test(phone, base)
    assert CableTest.objects.filter(cable__label="J-102", kind="olts").count() == 2

    # Swap the module at end A: the old one failed.
    phone.get_by_role("link", name="Swap a module").click()
    phone.wait_for_url(re.compile(r"/c/J-102/swap"))
    assert no_horizontal_scroll(phone)
    phone.locator("label.choice", has_text="A: gpu-0001 OSFP1").click()
    phone.fill("input[name=new_serial]", "spare-777")
    phone.locator("label.choice", has_text="Failed (keep for RMA)").click()
    phone.get_by_role("button", name="Swap module").click()
    phone.wait_for_url(base + "/c/J-102")
    assert "Module SPARE-777 installed" in phone.locator(".messages").inner_text()
    assert "SPARE-777" in phone.get_by_test_id("module-A").inner_text()
    old.refresh_from_db()
    assert old.status == "failed" and old.cage_id is None
    assert Transceiver.objects.get(serial="SPARE-777").cage_id == cage.pk

    # The history shows the swap, and the cage's module history shows both modules.
    # The history's two newest entries are the swap, by the technician who made it.
    newest = [phone.locator("#history li").nth(i).inner_text() for i in range(2)]
    assert "walker installed module SPARE-777 in gpu-0001 OSFP1" in newest[0], newest
    assert f"walker removed module (failed) {old.serial} from gpu-0001 OSFP1" in newest[1], newest
    phone.get_by_test_id("module-A").locator("summary", has_text="Modules in this cage").click()
    placements = phone.get_by_test_id("module-A").inner_text()
    assert old.serial in placements and "SPARE-777" in placements and "failed" in placements
    assert no_horizontal_scroll(phone)
    phone.screenshot(path=str(artifacts / "cable-page-phone-after-swap.png"), full_page=True)

    # A rack page, walked top down.
    phone.goto(base + "/r/A01")
    assert no_horizontal_scroll(phone)
    phone.screenshot(path=str(artifacts / "rack-page-phone.png"), full_page=True)


def record_power_meter_test(page, base: str) -> None:
    page.get_by_role("link", name="Record the power-meter test").click()  # the next step: the retest is due
    page.wait_for_url(base + "/c/J-102/test/power-meter")
    assert no_horizontal_scroll(page)
    page.locator("input[name=wavelength_nm][value='1310']").check()  # big choices now, 1310 nm first
    losses = page.locator("input[name^=loss_]")
    assert losses.count() >= 1
    for i in range(losses.count()):
        losses.nth(i).fill(f"{1.0 + i / 20:.2f}")
    page.get_by_role("button", name="Save test").click()
    page.wait_for_url(base + "/c/J-102")
    assert "Power-meter test recorded" in page.locator(".messages").inner_text()
    assert "Power meter" in page.locator("#tests").inner_text()


def test_fault_report_from_the_phone_shows_errors_next_to_the_field(live_server, plant, phone):
    walker = f.UserFactory(username="walker", role="technician")
    # A fault changes the cable's status: a technician reports it in their team's sites.
    site = plant["racks"][0].row.room.site
    site.team = f.team("Hall crew", members=[walker])
    site.save()
    base = live_server.url
    login(phone, base, "/c/J-100", "walker")
    phone.get_by_role("link", name="Report a fault").click()
    phone.get_by_role("button", name="Report fault").click()
    assert "Say what you saw (a light off" in phone.locator(".field.has-error").inner_text()
    phone.fill("textarea[name=seen]", "no light on the far end")
    phone.locator("label.choice", has_text="Faulty: does not work").click()
    phone.get_by_role("button", name="Report fault").click()
    phone.wait_for_url(base + "/c/J-100")
    assert phone.get_by_test_id("cable-status").inner_text() == "Faulty"


def test_cable_list_on_the_desk(live_server, plant, desktop, artifacts):
    f.UserFactory(username="desk", role="engineer")
    base = live_server.url
    login(desktop, base, "/cables/", "desk")
    rows = desktop.locator("table.list tbody tr")
    assert rows.count() == 4
    # bulk status change on two ticked rows
    desktop.locator("input[name=cable]").nth(0).check()
    desktop.locator("input[name=cable]").nth(1).check()
    assert desktop.locator("[data-selected-count]").inner_text() == "2 selected"
    # only the states a person sets are offered (tested/in production come from the test gate)
    offered = desktop.locator(".bulkbar select[name=status] option").evaluate_all(
        "os => os.map(o => o.value)"
    )
    assert "tested" not in offered and "in_production" not in offered
    desktop.locator(".bulkbar select[name=status]").select_option("degraded")
    desktop.get_by_role("button", name="Set status").click()
    desktop.wait_for_url(re.compile(r"/cables/"))
    assert "2 cable(s) set to degraded" in desktop.locator(".messages").inner_text()
    desktop.screenshot(path=str(artifacts / "cable-list-desktop.png"), full_page=True)
