"""The load test's plan (``bench/load.py``): its technicians may do what it makes them do.

Every test upload of the 131,072-GPU load run came back 403 ("You are not in a team for Demo
Hall 1"): the plan's technicians had the role but were in no team of the site. A load test whose
writes are all refused measures the refusal, not the write.
"""

from decimal import Decimal

import pytest
from rest_framework.test import APIClient

from bench.load import _plan
from inventory.core.choices import DeviceRole, Polarity
from inventory.models import CableTest, Site
from tests import factories as f

pytestmark = pytest.mark.django_db


def test_the_plans_technicians_record_tests_on_the_plans_fibres():
    _, gpu = f.twin_port_device("gpu-1", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    _, leaf = f.twin_port_device("leaf-1", u=20)
    f.jumper("J-1", gpu[0], leaf[0], polarity=Polarity.B, length_m=Decimal("3"))
    team = f.team("Fabric ops")  # the demo seed's site is looked after by a team
    for site in Site.objects.all():
        site.team = team
        site.save()

    plan = _plan(technicians=2, collectors=1, batch=2)

    label, wavelength = plan["fibres"][0]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plan['tech_tokens'][0]}")
    body = {"cable": label, "readings": [{"fibre": 1, "wavelength_nm": wavelength, "loss_db": 0.3}]}
    resp = client.post("/api/tests/", body, format="json")
    assert resp.status_code == 201, resp.json()
    assert CableTest.objects.filter(cable__label="J-1").count() == 1
