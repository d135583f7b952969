"""The alert page's repair form on a 360 x 740 phone in real Chromium: Enter in the note records
nothing (it used to press the first action button, "Re-seat", silently); the action button does.

Plant of ``views/conftest.plant``:
    [gpu-0001 eth0]--J-102--[leaf-01 Ethernet1/1]        a Page "Link flap" alert is open on it
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.models import Link, Repair
from inventory.services import alerts as svc
from tests.inventory.e2e.test_cable_page_phone import log_in
from tests.inventory.e2e.test_technician_day_phone import crew, phone740  # noqa: F401 (fixtures)
from tests.inventory.views.test_alerts_follow_replacement import _flap

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_enter_in_the_repair_note_records_nothing(crew, phone740, live_server):  # noqa: F811
    link = Link.objects.get(active=True, segments__cable__label="J-102")
    alert, _ = svc.alert_raise(finding=_flap(link), now=timezone.now() - timedelta(minutes=2))
    log_in(phone740, live_server.url, "walker")
    phone740.goto(f"{live_server.url}/alerts/{alert.pk}/#repair")
    note = phone740.locator("[data-testid=repair-form] [name=note]")
    note.fill("latch was loose")
    note.press("Enter")
    phone740.wait_for_timeout(500)
    assert not Repair.objects.exists()
    assert phone740.url.endswith(f"/alerts/{alert.pk}/#repair")

    phone740.locator("[data-testid=repair-form] button[name=action][value=reseat]").click()
    phone740.wait_for_url(f"**/alerts/{alert.pk}/")
    assert list(Repair.objects.values_list("action", "note")) == [("reseat", "latch was loose")]
    assert "Recorded: Re-seat" in phone740.content()
