"""An engineer at a desk (1440x900), in real Chromium: the commissioning report lays out as the
other desk pages do, full width, a PMD and a link's ends each on one line. Plant: three jumper
links, one ready, one with a fault reported, one with a page alert
(``tests/inventory/views/test_commissioning_ready.py``)."""

import pytest

from tests import factories as f
from tests.inventory.views.test_commissioning_ready import hall as hall  # noqa: F401 - fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# How many lines a cell's text takes, as drawn: one rectangle per line box of its text.
LINES = """cell => { const r = document.createRange(); r.selectNodeContents(cell);
  return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size; }"""


def test_the_report_is_laid_out_for_the_desk(live_server, hall, browser, artifacts):  # noqa: F811
    f.UserFactory(username="erin", role="engineer")
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20_000)
    base = live_server.url
    page.goto(base + "/reports/commissioning/")
    page.fill("input[name=username]", "erin")
    page.fill("input[name=password]", "pw-for-tests-1")
    page.click("button[type=submit]")
    page.wait_for_url(base + "/reports/commissioning/")
    page.screenshot(path=str(artifacts / "commissioning-desk.png"), full_page=True)
    assert page.locator("main").bounding_box()["width"] > 1400  # not a 72rem column
    rows = page.locator("table.report tbody tr")
    assert rows.count() == 3
    for i in range(3):
        row = rows.nth(i)
        assert row.locator("td").nth(1).inner_text() == "400GBASE-DR4"
        assert row.locator("td").nth(1).evaluate(LINES) == 1, "the PMD wraps"
        assert row.locator("td").nth(0).evaluate(LINES) == 1, "the link's ends wrap"
    assert "Fault reported: jacket crushed at U12" in rows.nth(1).inner_text()
    header = page.locator("main > p").first.inner_text()
    assert header.startswith("everything · today ") and " UTC" in header
    context.close()
