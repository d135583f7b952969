"""The alert page's "Act" (acknowledge, silence) is offered only to whom may do it there: a
technician outside the site's team was offered both, then told "Not allowed" (the silence reason
typed lost).

    Rack R-PAGES: [gpu-p eth1]--J-P1--[leaf-p Ethernet1/2]   pre-FEC BER 1e-4: fec_degradation open
"""

import pytest
from django.test import Client

from tests import factories as f
from tests.inventory.views.test_alert_pages import scene as scene  # noqa: F401 - fixture
from tests.inventory.views.test_alert_pages import tech_client as tech_client  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db


def test_acknowledge_and_silence_are_offered_only_where_they_are_allowed(scene, tech_client):  # noqa: F811
    url = f"/alerts/{scene['alert'].pk}/"
    html = tech_client.get(url).content.decode()
    assert ">Acknowledge</button>" in html and ">Silence (maintenance)</button>" in html

    teamless = Client()
    teamless.force_login(f.UserFactory(username="visitor", role="technician"))
    assert teamless.post(f"{url}acknowledge").status_code == 403
    html = teamless.get(url).content.decode()
    assert ">Acknowledge</button>" not in html and ">Silence (maintenance)</button>" not in html
    assert "<h2>Act</h2>" not in html
    # what they may not do is said once, in the policy's words
    assert "You are not in a team for" in html
