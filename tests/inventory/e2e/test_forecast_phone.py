"""The forecast on a 360 x 740 phone in real Chromium (issue 31: it was 18 screens with a spares
table scrolling sideways). A technician opening it sees the expected failures on the first screen,
the spares to order as cards a screen or so down, and the long parts folded."""

from datetime import date

import pytest

from inventory.services.demo.seed import demo_seed
from tests import factories as f
from tests.inventory.e2e.test_cable_page_phone import FIRST_SCREEN, audit, bottom, log_in
from tests.inventory.e2e.test_technician_day_phone import phone740  # noqa: F401 (the fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_forecast_answers_first_and_folds_the_rest(phone740, live_server, artifacts):  # noqa: F811
    demo_seed(gpus=64, seed=1, as_of=date(2026, 11, 29))
    f.UserFactory(username="walker", role="technician")
    log_in(phone740, live_server.url, "walker")
    phone740.goto(live_server.url + "/forecast/")
    phone740.screenshot(path=str(artifacts / "h31-forecast-phone.png"), full_page=True)
    audit(phone740)

    # The answer first: the expected failures table, whole, on the first screen; the settings
    # form folded above it.
    assert (
        phone740.locator("#fleet-expected").evaluate("el => el.getBoundingClientRect().bottom")
        <= FIRST_SCREEN
    )
    assert not phone740.get_by_test_id("forecast-settings").evaluate("el => el.open")

    # The spares as one card per part, nothing scrolling sideways inside the list.
    spares = phone740.locator("#spares")
    rows = spares.locator("tbody tr")
    assert rows.count() >= 1
    assert spares.evaluate("el => el.scrollWidth <= el.parentElement.clientWidth")
    # Each cell on its own line, named (the desk lists' card pattern: a ::before label).
    named = rows.first.locator("td").evaluate_all(
        "tds => tds.map(td => [getComputedStyle(td).display, getComputedStyle(td, '::before').content])"
    )
    assert all(display == "block" for display, _ in named)
    assert (
        spares.locator("thead tr").evaluate("el => getComputedStyle(el).display") == "none"
    )  # no empty card
    assert '"To order: "' in [label for _, label in named]
    assert spares.evaluate("el => el.getBoundingClientRect().top + window.scrollY") < 3 * FIRST_SCREEN

    # The risk list shows the five most likely links; the rest are folded.
    assert phone740.locator("#risk > li").count() == 5
    assert not phone740.get_by_test_id("risk-more").evaluate("el => el.open")
    height = phone740.evaluate("document.documentElement.scrollHeight")
    assert height <= 8 * FIRST_SCREEN, f"the forecast is {height / FIRST_SCREEN:.1f} phone screens"
    assert bottom(phone740, "risk-more") <= height
