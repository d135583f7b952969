"""The OTDR history on a phone (360 px, real Chromium): the overlay fits the screen, its labels
are 12 px or more (the suite's phone rule), and the cable page with its traces passes every
phone check (``tests/inventory/phone_checks.py``)."""

import pytest

from tests import factories as f
from tests.inventory.e2e.test_phone_flow import login, no_horizontal_scroll
from tests.inventory.phone_checks import MIN_TEXT_PX, assert_phone_friendly
from tests.inventory.views.test_cable_traces import shoot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("media")]


def test_the_trace_history_is_readable_at_phone_width(live_server, plant, phone, artifacts):
    f.UserFactory(username="walker", role="technician")
    cable = plant["cables"]["J-102"]
    shoot(cable, days_ago=200, connector_loss=0.1, name="install.sor")
    shoot(cable, days_ago=5, connector_loss=0.4, name="retest.sor")
    login(phone, live_server.url, "/c/J-102", "walker")
    history = phone.locator("#otdr-history")
    history.scroll_into_view_if_needed()
    box = history.locator("svg.otdr-overlay").bounding_box()
    assert box is not None and 300 <= box["width"] <= 360
    # The chart's labels (SVG text, measured as drawn after the SVG's scaling) keep the suite's
    # phone rule: 12 CSS px or more.
    smallest = phone.evaluate(
        """() => Math.min(...[...document.querySelectorAll('#otdr-history svg text')].map(t => {
            const m = t.getScreenCTM();
            return parseFloat(getComputedStyle(t).fontSize) * Math.sqrt(Math.abs(m.a * m.d - m.b * m.c));
        }))"""
    )
    assert smallest >= MIN_TEXT_PX, smallest
    assert "baseline" in history.locator(".otdr-legend").inner_text()
    assert no_horizontal_scroll(phone)
    history.screenshot(path=str(artifacts / "otdr-history-phone.png"))
    # The whole cable page with its traces, held to the same rules as every other phone page.
    assert_phone_friendly(phone)
