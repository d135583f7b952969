"""Real OTDR files on a phone (360x740, real Chromium): the cable page a technician opens after
uploading a launch-lead trace, a trace-only file and a 1650 nm monitoring trace. Each plot fits,
the fibre-start offset and the no-event-table note are on screen, no checksum warning shows, and
the page passes the phone rules (no sideways scroll, no text under 12 px, targets 44 px)."""

import pytest

from inventory.core.choices import CableKind
from inventory.services import testing as svc
from tests import factories as f
from tests.inventory.e2e.test_phone_flow import login, no_horizontal_scroll
from tests.inventory.phone_checks import assert_phone_friendly, phone_context
from tests.paths import TEST_DATA

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("media")]
REAL = TEST_DATA / "real" / "sor"


def test_real_traces_read_on_a_phone(live_server, plant, browser, artifacts):
    f.UserFactory(username="walker", role="technician")
    cable = plant["cables"]["J-102"]
    assert cable.kind == CableKind.SMF_OS2
    for fibre, name in (
        (1, "exfo-max715b_1310_launchlead_example.sor"),
        (2, "fibercloud-fc3200_1310_traceonly_otdr7.sor"),
        (3, "exfo-ftbx735c_1650_example5.sor"),
    ):
        svc.cable_test_upload_otdr(
            cable=cable, files=[svc.SorUpload(name, (REAL / name).read_bytes(), fibre=fibre)]
        )
    context = phone_context(browser)
    phone = context.new_page()
    try:
        login(phone, live_server.url, f"/c/{cable.label}", "walker")
        history = phone.locator("#otdr-history")
        history.scroll_into_view_if_needed()
        plots = history.locator("svg.otdr-overlay")
        assert plots.count() == 3  # the trace-only file is plotted too
        for i in range(3):
            box = plots.nth(i).bounding_box()
            assert box is not None and 300 <= box["width"] <= 360, box
        text = history.inner_text()
        assert "the instrument is 1,002.3 m before it (launch lead)" in text
        assert "The instrument stored no event table" in text
        assert "checksum mismatch" not in phone.content().lower()
        assert no_horizontal_scroll(phone)
        history.screenshot(path=str(artifacts / "otdr-real-sor-phone.png"))
        phone.screenshot(path=str(artifacts / "otdr-real-sor-phone-page.png"), full_page=True)
        assert_phone_friendly(phone)
        # The upload page itself, as the technician opens it next to the instrument.
        phone.goto(f"{live_server.url}/c/{cable.label}/test/otdr")
        phone.screenshot(path=str(artifacts / "otdr-upload-phone.png"), full_page=True)
        assert no_horizontal_scroll(phone)
        assert_phone_friendly(phone)
    finally:
        context.close()
