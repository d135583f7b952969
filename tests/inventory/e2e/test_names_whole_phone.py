"""Device names read whole on a 360 px phone: never split at a hyphen ("leaf-r01-" / "a"), on the
cable page, the rack page, the alert page, the retest worklist and the home page, in real
Chromium (the phone check ``split_names`` of ``tests/inventory/phone_checks.py``). A name wider
than the phone stays on one line and scrolls inside itself; the page never scrolls sideways.

Rack R01:
[gpu-node-0012 OSFP1 eth0]--J-7 (retest overdue, an open FEC alert)--[leaf-r01-a OSFP1 Ethernet1/1]
[storage-node-hall-b-row-07-slot-12-a OSFP1]--J-8--[leaf-r01-a OSFP2 Ethernet2/1]
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.core.choices import AlertRule, AlertState, CableStatus, DeviceRole, Severity
from inventory.models import Alert
from tests import factories as f
from tests.inventory.e2e.test_phone_flow import login
from tests.inventory.phone_checks import overflow, phone_context, split_names

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LONG = "storage-node-hall-b-row-07-slot-12-a"  # wider than the phone's line


@pytest.fixture
def named_plant():
    rack = f.RackFactory(name="R01")
    _, gpu = f.twin_port_device(
        "gpu-node-0012", rack=rack, u=10, role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}"
    )
    _, leaf = f.twin_port_device("leaf-r01-a", rack=rack, u=40)
    _, store = f.twin_port_device(LONG, rack=rack, u=20, role=DeviceRole.STORAGE)
    j7 = f.jumper("J-7", gpu[0], leaf[0], status=CableStatus.IN_PRODUCTION)
    j7.retest_due = timezone.localdate() - timedelta(days=3)
    j7.save()
    f.jumper("J-8", store[0], leaf[2])
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


def test_device_names_are_never_split_at_a_hyphen_on_the_phone(browser, live_server, named_plant):
    user = f.UserFactory(username="names-tech", role="technician")
    context = phone_context(browser)
    page = context.new_page()
    page.set_default_timeout(30_000)
    login(page, live_server.url, "/", user.username)
    found = {}
    for path in ("/", "/c/J-7", "/c/J-8", "/r/R01", f"/alerts/{named_plant.pk}/", "/retests/"):
        assert page.goto(live_server.url + path).status == 200, path
        split, wide = split_names(page), overflow(page)
        if split or wide:
            found[path] = {"split at a hyphen": split, "sideways scroll": wide}
    assert not found, "\n".join(f"{path}: {problems}" for path, problems in found.items())
    # The name wider than the phone: on one line, inside the screen, scrolled within itself.
    page.goto(live_server.url + "/c/J-8")
    name = page.get_by_test_id("end-A").locator(".nm", has_text=LONG)
    box = name.bounding_box()
    line = page.evaluate("(el) => parseFloat(getComputedStyle(el).lineHeight)", name.element_handle())
    assert box["height"] < 1.5 * line, box
    assert box["x"] + box["width"] <= 360, box
    assert name.evaluate("(el) => el.scrollWidth > el.clientWidth")
    context.close()
