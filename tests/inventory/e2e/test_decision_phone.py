"""The one decision and the alert page on a 360 x 740 phone in real Chromium.

    [gpu-0001 eth0]--J-102--[leaf-01 Ethernet1/1]      the link flaps at the leaf end

A technician scans J-102: the first screen says the alert is open, offers "Open the alert" (never
"Mark in production"), with both ends. The alert page's first screen says which end flaps and
where it is (rack, U, device, cage), and the rack link opens that rack.
"""

import pytest
from django.utils import timezone

from inventory.core.telemetry.rules.frames import Finding
from inventory.models import Link
from inventory.services import alerts as svc
from tests import factories as f
from tests.inventory.e2e.test_cable_page_phone import FIRST_SCREEN, audit, bottom, log_in, phone740  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_flapping_link_from_the_cable_to_the_end_that_flaps(live_server, plant, phone740, artifacts):  # noqa: F811 (the fixture)
    f.UserFactory(username="walker", role="technician")
    link = Link.objects.get(active=True, segments__cable__label="J-102")
    leaf = "a" if link.a_port.device.name == "leaf-01" else "b"
    gpu = "b" if leaf == "a" else "a"
    alert, _ = svc.alert_raise(
        finding=Finding(
            key=f"link_flap:link:{link.pk}",
            rule="link_flap",
            severity="page",
            link_id=link.pk,
            port_id=link.a_port_id,
            headline="7 link-down events",
            recommendation="Take the link out of service and swap the module at the flapping end.",
            recommendation_code="swap_module",
            ends={
                leaf: {"port_id": 0, "link_down": 7.0, "error_recovery": 0.0},
                gpu: {"port_id": 0, "link_down": 0.0, "error_recovery": 0.0},
            },
        ),
        now=timezone.now(),
    )
    log_in(phone740, live_server.url, "walker")
    phone740.goto(live_server.url + "/c/J-102")
    phone740.screenshot(path=str(artifacts / "h31a-cable-alert-phone.png"))
    audit(phone740)
    for test_id in ("next-step", "end-A", "end-B", "cable-status"):
        assert bottom(phone740, test_id) <= FIRST_SCREEN, test_id
    step = phone740.get_by_test_id("next-step").inner_text()
    assert "Open the alert" in step and "swap the module at the flapping end" in step
    assert "Mark in production" not in phone740.inner_text("main")

    phone740.get_by_role("link", name="Open the alert").click()
    phone740.wait_for_url(f"{live_server.url}/alerts/{alert.pk}/")
    phone740.screenshot(path=str(artifacts / "h31a-alert-phone.png"))
    phone740.screenshot(path=str(artifacts / "h31a-alert-phone-full.png"), full_page=True)
    audit(phone740)
    assert bottom(phone740, "worst-end") <= FIRST_SCREEN
    first = phone740.get_by_test_id("worst-end").inner_text()
    # B: the leaf, as on J-102's page
    assert first.startswith("Look first at End B of J-102, the end that flaps")
    assert "rack B01" in first and "U46" in first and "leaf-01" in first and "Ethernet1/1" in first
    phone740.get_by_test_id("worst-end").get_by_role("link", name="rack B01").click()
    phone740.wait_for_url(f"{live_server.url}/r/B01")
