"""An engineer at a desk, in real Chromium: the reconciliation report, "select all", preview,
confirm. Plant: ``tests/inventory/api/test_reconciliation_api.py`` (leaf-01 OSFP1 holds a module
telemetry sees, s/n LEAF-SN-1, that nobody recorded)."""

import pytest

from inventory.models import Transceiver
from tests import factories as f
from tests.inventory.api.test_reconciliation_api import recon as recon  # noqa: F401 - fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_engineer_selects_all_previews_and_creates_the_missing_module(live_server, recon, desktop, artifacts):  # noqa: F811
    f.UserFactory(username="erin", role="engineer")
    base = live_server.url
    page = desktop
    page.goto(base + "/reconciliation/?rack=REC-1")
    page.fill("input[name=username]", "erin")
    page.fill("input[name=password]", "pw-for-tests-1")
    page.click("button[type=submit]")
    page.wait_for_url(base + "/reconciliation/?rack=REC-1")
    assert "LEAF-SN-1" in page.locator("#rack-rec-1").inner_text()
    preview_selected = page.get_by_role("button", name="Preview records for the selected")
    assert preview_selected.is_disabled()  # nothing ticked yet
    page.locator("input[data-check-all]").first.check()
    assert page.locator("[data-selected-count]").inner_text() == "1 selected"
    page.screenshot(path=str(artifacts / "reconciliation-desk.png"), full_page=True)
    preview_selected.click()
    assert "1 module record to create" in page.locator("#preview").inner_text()
    page.screenshot(path=str(artifacts / "reconciliation-preview.png"), full_page=True)
    assert not Transceiver.objects.filter(serial="LEAF-SN-1").exists()
    page.get_by_role("button", name="Create 1 module record").click()
    page.wait_for_url(base + "/reconciliation/?rack=REC-1")
    assert "1 module record(s) created" in page.locator(".messages").inner_text()
    x = Transceiver.objects.get(serial="LEAF-SN-1")
    assert x.cage.name == "OSFP1" and x.history.get().history_user.username == "erin"
    # The row is gone from the report: telemetry and the records agree now.
    assert "LEAF-SN-1" not in page.locator("main").inner_text()
