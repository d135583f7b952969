"""Task 3 of the technician's day (issue 31) on a 360 x 740 phone in real Chromium: a technician
reports a fault on a flapping cable, the engineer on call replaces it from the phone, and the
alert follows the physical truth. Each step asserts what must be on the first screen.

Plant of ``views/conftest.plant``:
    [gpu-0001 eth0]--J-102--[leaf-01 Ethernet1/1]        the link that flaps (rack A01 / B01)
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.core.choices import CableStatus
from inventory.models import Cable, FieldNote, Link
from inventory.services import alerts as svc
from tests import factories as f
from tests.inventory.e2e.test_cable_page_phone import FIRST_SCREEN, audit, bottom, log_in
from tests.inventory.e2e.test_technician_day_phone import crew, phone740  # noqa: F401 (fixtures)
from tests.inventory.views.test_alerts_follow_replacement import _flap

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _summary(page) -> str:
    return " ".join(page.get_by_label("Status").first.inner_text().split())


def test_report_a_fault_then_replace_the_cable_and_the_alert_follows(crew, phone740, live_server, artifacts):  # noqa: F811
    link = Link.objects.get(active=True, segments__cable__label="J-102")
    alert, _ = svc.alert_raise(finding=_flap(link), now=timezone.now() - timedelta(minutes=2))
    engineer = f.UserFactory(username="oncall", role="engineer")
    crew["racks"][0].row.room.site.team.members.add(engineer)

    # The technician scans J-102: the alert is the first thing said, with the way to it.
    log_in(phone740, live_server.url, "walker")
    phone740.goto(live_server.url + "/c/J-102")
    audit(phone740)
    assert phone740.get_by_label("Status").first.get_attribute("data-state") == "alert"
    assert "Mark in production" not in _summary(phone740)
    assert bottom(phone740, "next-step") <= FIRST_SCREEN

    # Reports the fault from the phone: the form's fields are on the first screen.
    phone740.get_by_role("link", name="Report a fault").first.click()
    phone740.wait_for_url("**/c/J-102/fault")
    audit(phone740)
    assert (
        phone740.locator("textarea[name=seen]").evaluate("el => el.getBoundingClientRect().top")
        < FIRST_SCREEN
    )
    phone740.fill("textarea[name=seen]", "link light blinks, latch loose at the leaf")
    phone740.locator("input[name=status][value=faulty]").check()
    phone740.get_by_role("button", name="Report fault").click()
    phone740.wait_for_url("**/c/J-102")
    audit(phone740)
    assert FieldNote.objects.filter(cable__label="J-102", text__contains="latch loose").exists()
    why = " ".join(phone740.get_by_test_id("status-why").inner_text().split())
    assert "Why faulty" in why and "latch loose at the leaf" in why
    phone740.screenshot(path=str(artifacts / "h31-fault-reported-phone.png"))

    # The engineer on call replaces it from the phone; the new cable opens with the alert on it.
    phone740.context.clear_cookies()
    log_in(phone740, live_server.url, "oncall")
    phone740.goto(live_server.url + "/c/J-102")
    phone740.get_by_role("link", name="Replace the cable").first.click()
    phone740.wait_for_url("**/c/J-102/replace")
    audit(phone740)
    phone740.fill("input[name=new_label]", "R-102")
    phone740.get_by_role("button", name="Replace cable").click()
    phone740.wait_for_url("**/c/R-102")
    audit(phone740)
    phone740.screenshot(path=str(artifacts / "h31-replaced-phone.png"))
    assert Cable.objects.get(label="J-102").status == CableStatus.RETIRED
    summary = _summary(phone740)
    assert phone740.get_by_label("Status").first.get_attribute("data-state") == "alert"
    assert "watching" in summary.lower() and "Mark in production" not in summary
    to_alert = phone740.locator(f'a[href="/alerts/{alert.pk}/"]').first
    assert to_alert.evaluate("el => el.getBoundingClientRect().bottom + window.scrollY") <= FIRST_SCREEN

    # The retired cable says where its alert went, on its first screen.
    phone740.goto(live_server.url + "/c/J-102")
    moved = phone740.get_by_test_id("moved-alerts")
    assert "R-102" in moved.inner_text() and f"#{alert.pk}" in moved.inner_text()
    assert bottom(phone740, "moved-alerts") <= FIRST_SCREEN

    # The rack lists the alert on the new cable, not as an orphan naming the retired one.
    phone740.goto(live_server.url + "/r/A01")
    row = phone740.locator("li", has=phone740.locator(f'a[href="/alerts/{alert.pk}/"]')).first.inner_text()
    assert "R-102" in row and "J-102" not in row
