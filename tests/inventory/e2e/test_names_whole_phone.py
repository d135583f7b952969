"""Names read whole on a phone and at the desk: never split at a hyphen ("leaf-r01-" / "a",
"serial T-" / "2526FT000014", "2026-12-" / "06"), in real Chromium (the check ``split_names`` of
``tests/inventory/phone_checks.py``). Device and port names on the cable page, the rack page, the
alert page, the retest worklist and the home page; module serials and part numbers on the cable
page and the swap form; the cable's ends in the power-meter and inspection forms' headers; the
OTDR table's dates; the desk cable list's end columns. Each page is read at every phone width
from 320 to 410 px (and the desk list from 760 to 1440 px), so a line's end falls somewhere in
each name. A name wider than the phone wraps inside its box, readable, and the page never
scrolls sideways. The rack's quick-jump chips keep the space between the U number and the name.

Rack R01:
[gpu-node-0012 OSFP1 eth0]--J-7 (retest overdue, an open FEC alert; Panduit MTP12-APC-B)--[leaf-r01-a OSFP1 Ethernet1/1]
   (module T-2526FT000014, a T-OS8FNT-N00-FLT, in gpu-node-0012 OSFP1)
[storage-node-hall-b-row-07-slot-12-a OSFP1]--J-8 (an OTDR trace)--[leaf-r01-a OSFP2 Ethernet2/1]
"""

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from inventory.core.choices import AlertRule, AlertState, CableStatus, DeviceRole, Severity
from inventory.models import Alert
from inventory.services import testing as testing_services
from inventory.services.plant import transceivers as xcvr_services
from tests import factories as f
from tests.inventory.e2e.test_phone_flow import login
from tests.inventory.phone_checks import DESK, PHONE, overflow, phone_context, split_names
from tests.inventory.views.test_cable_traces import shoot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("media"),
]

REAL_SOR = Path(__file__).resolve().parents[2] / "data" / "real" / "sor"
LONG = "storage-node-hall-b-row-07-slot-12-a"  # wider than the phone's line
SERIAL, PART, CABLE_PART = "T-2526FT000014", "T-OS8FNT-N00-FLT", "MTP12-APC-B"
PHONE_WIDTHS = range(320, 411, 6)  # wherever the line ends, it ends beside a name, not in it
DESK_WIDTHS = (1440, 1280, 1100, 960, 860, 760)


@pytest.fixture
def named_plant():
    rack = f.RackFactory(name="R01")
    gpu_dev, gpu = f.twin_port_device(
        "gpu-node-0012",
        rack=rack,
        u=10,
        role=DeviceRole.GPU_NODE,
        names=lambda c, k: f"eth{2 * c + k}",
        with_modules=False,
    )
    module = f.module(f.twin_dr4_model(vendor="Finisar", part=PART), serial=SERIAL)
    xcvr_services.transceiver_install(transceiver=module, cage=gpu[0].cage)
    _, leaf = f.twin_port_device("leaf-r01-a", rack=rack, u=40)
    _, store = f.twin_port_device(LONG, rack=rack, u=20, role=DeviceRole.STORAGE)
    j7 = f.jumper(
        "J-7",
        gpu[0],
        leaf[0],
        status=CableStatus.IN_PRODUCTION,
        vendor=f.VendorFactory(name="Panduit"),
        part_number=CABLE_PART,
    )
    j7.retest_due = timezone.localdate() - timedelta(days=3)
    j7.save()
    j8 = f.jumper("J-8", store[0], leaf[2])
    shoot(j8, days_ago=40, connector_loss=0.1, name="install.sor")
    sor = REAL_SOR / "exfo-max730c_1310_example2.sor"  # a real trace: its warnings name the file
    testing_services.cable_test_upload_otdr(
        cable=j8, files=[testing_services.SorUpload(sor.name, sor.read_bytes())]
    )
    now = timezone.now()
    alert = Alert.objects.create(
        key="fec_degradation:names",
        rule=AlertRule.FEC_DEGRADATION,
        severity=Severity.NOTIFY,
        state=AlertState.OPEN,
        cable=j7,
        opened_at=now - timedelta(hours=1),
        updated_at=now,
        summary=(
            "FEC degradation: leaf-r01-a:Ethernet1/1 <-> gpu-node-0012:eth0: corrected FEC errors "
            "rising on gpu-node-0012 and leaf-r01-a for 10 minutes"
        ),
        recommendation="Clean and re-seat both ends of J-7 at gpu-node-0012 and leaf-r01-a.",
    )
    return alert


def _split_at_widths(page, widths, height) -> dict:
    """{width: what is split or sticks out} over ``widths``: empty when every name reads whole."""
    found = {}
    for width in widths:
        page.set_viewport_size({"width": width, "height": height})
        split, wide = split_names(page), overflow(page)
        if split or wide:
            found[width] = {"split": split, "sideways scroll": wide}
    return found


def test_names_are_never_split_at_a_hyphen_on_the_phone_or_the_desk(browser, live_server, named_plant):
    user = f.UserFactory(username="names-tech", role="technician")
    f.field_crew(user)  # the forms: a technician acts in their team's sites
    context = phone_context(browser)
    page = context.new_page()
    page.set_default_timeout(30_000)
    login(page, live_server.url, "/", user.username)
    found = {}
    for path in (
        "/",
        "/c/J-7",  # the module's serial and part number, the cable's part number
        "/c/J-8",  # the OTDR table's date
        "/r/R01",
        f"/alerts/{named_plant.pk}/",
        "/retests/",
        "/c/J-7/test/power-meter",  # "A at R01 U10 gpu-node-0012 OSFP1" above the form
        "/c/J-7/inspect",
        "/c/J-7/swap",  # the module to swap, by serial and part number
    ):
        assert page.goto(live_server.url + path).status == 200, path
        if problems := _split_at_widths(page, PHONE_WIDTHS, PHONE["height"]):
            found[path] = problems
    assert not found, "\n".join(f"{path}: {problems}" for path, problems in found.items())
    page.set_viewport_size(PHONE)

    # What the page shows, where the reviews saw it split: each of these is on its page.
    page.goto(live_server.url + "/c/J-7")
    assert SERIAL in page.get_by_test_id("module-A").inner_text()
    assert f"Panduit · {CABLE_PART}" in page.locator("main").inner_text()
    page.goto(live_server.url + "/c/J-8")
    traces = page.locator("#otdr-history table.trace-list").inner_text()  # when, in words
    assert re.search(r"(today|yesterday|\d{1,2} [A-Z][a-z]{2}( \d{4})?) \d{2}:\d{2}", traces), traces
    assert not re.search(r"\d{4}-\d{2}-\d{2}", traces), traces

    # The name wider than the phone: inside the screen, wrapped inside its box, none of it hidden.
    name = page.get_by_test_id("end-A").locator(".nm", has_text=LONG)
    box = name.bounding_box()
    assert box["x"] + box["width"] <= PHONE["width"], box
    assert name.evaluate("(el) => el.scrollWidth <= el.clientWidth && el.scrollHeight <= el.clientHeight")
    assert name.inner_text().replace("\n", "") == LONG

    # The rack's quick-jump chips: "U10 gpu-node-0012", a space between the U and the name.
    page.goto(live_server.url + "/r/R01")
    chip = page.locator("nav.jump a.chip", has_text="gpu-node-0012")
    gap = chip.evaluate(
        """(chip) => {
            const walker = document.createTreeWalker(chip, NodeFilter.SHOW_TEXT);
            let node = walker.nextNode();
            while (node && !/U\\d+/.test(node.textContent)) node = walker.nextNode();
            const u = document.createRange();
            const at = node.textContent.indexOf('U');
            u.setStart(node, at);
            u.setEnd(node, at + node.textContent.slice(at).match(/U\\d+/)[0].length);
            return chip.querySelector('.nm').getBoundingClientRect().left - u.getBoundingClientRect().right;
        }"""
    )
    assert gap >= 2, f"'U10' and 'gpu-node-0012' {gap:.1f} px apart on the chip"
    context.close()

    # The desk cable list: the A and B end columns keep each name on one line.
    desk = browser.new_context(viewport=DESK)
    page = desk.new_page()
    login(page, live_server.url, "/cables/", user.username)
    split = {}
    for width in DESK_WIDTHS:
        page.set_viewport_size({"width": width, "height": DESK["height"]})
        if names := split_names(page):
            split[width] = [s["word"] for s in names]
    assert not split, split
    desk.close()
