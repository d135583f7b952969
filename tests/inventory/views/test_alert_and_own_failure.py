"""A cable in production whose own retest fails, and whose failure opened a notify alert (loss
increase): its page tells the technician to mark it degraded, and gives them the button to.

    [gpu-1 eth0]--J-1 (3 m OS2, in production)--[leaf-1 Ethernet1/1]
"""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from inventory.core.choices import CableStatus
from inventory.models import Alert, Cable
from tests import factories as f
from tests.inventory.testing_scenes import olts, os2_jumper

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("media")]


def _set_status(cable: Cable, status: str) -> None:
    cable = Cable.objects.get(pk=cable.pk)
    cable.status = status
    cable._change_reason = "test setup"
    cable.save()


def _next_step(html: str) -> str:
    return html.split('data-testid="next-step"', 1)[1].split("</div>", 1)[0]


def test_told_to_mark_it_degraded_the_technician_has_the_button(user_with_role):
    now = timezone.now()
    cable = os2_jumper()
    olts(cable, [0.3] * 8, when=now - timedelta(days=90))
    _set_status(cable, CableStatus.IN_PRODUCTION)
    olts(cable, [0.3] * 7 + [2.6], when=now)  # fails its 1.5 dB budget; the loss rose: an alert
    assert Alert.objects.get(rule="loss_increase").severity == "notify"

    client = Client()
    client.force_login(user_with_role("technician", "tina"))
    page = client.get("/c/J-1").content.decode()
    assert 'data-testid="cable-status">In production<' in page
    assert "Its own test fails too (below): mark it degraded until it is fixed." in page
    step = _next_step(page)
    assert 'name="status" value="degraded"' in step and ">Mark degraded<" in step
    # the alert's advice stays beside it, and the alert one tap away
    assert "At the alert" in step and "Loss increase" in page.split('data-testid="next-step"', 1)[1]
    r = client.post("/c/J-1/status", {"status": "degraded"}, follow=True)
    assert r.status_code == 200
    assert Cable.objects.get(pk=cable.pk).status == CableStatus.DEGRADED
    after = r.content.decode()
    assert 'data-testid="cable-status">Degraded<' in after and ">Mark degraded<" not in after

    # a viewer is told the same, without a button the status form would refuse
    viewer = Client()
    viewer.force_login(f.UserFactory(username="vic", role="viewer"))
    _set_status(cable, CableStatus.IN_PRODUCTION)
    step = _next_step(viewer.get("/c/J-1").content.decode())
    assert "Mark degraded" in step and 'name="status"' not in step
