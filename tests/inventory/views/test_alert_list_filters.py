"""The alert list: the page (``/alerts/``) and the API (``/api/alerts/``) answer the same query
with the same alerts, through one FilterSet. A rack filter matches any rack on the alert's path.

Topology::

    rack R-F-A            rack R-F-PANEL                              rack R-F-B
    [gpu-f eth0]--J-F0--[pp-f1 F1]==T-F==[pp-f2 F1]--J-F1--[leaf-f Ethernet1/1]  uncorrectable (open)
    [gpu-f eth1]--J-F2------------------------------------[leaf-f Ethernet1/2]  pre-FEC BER 1e-4 (open)
"""

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from inventory.core.choices import AlertRule, AlertState, DeviceRole
from inventory.models import Alert, Link
from inventory.services import alerts as svc
from tests import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def scene():
    now = timezone.now().replace(second=0, microsecond=0)
    rack_a, rack_b = f.RackFactory(name="R-F-A"), f.RackFactory(name="R-F-B")
    panels = f.RackFactory(name="R-F-PANEL")
    _, gpu = f.twin_port_device(
        "gpu-f", rack=rack_a, role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}"
    )
    _, leaf = f.twin_port_device("leaf-f", rack=rack_b, u=30)
    pp1, _, fronts1 = f.patch_panel("pp-f1", rack=panels, u=40)
    pp2, _, fronts2 = f.patch_panel("pp-f2", rack=panels, u=38)
    f.jumper("J-F0", gpu[0], fronts1[0], polarity="A")
    f.trunk("T-F", pp1.ports.get(name="Rear 1"), pp2.ports.get(name="Rear 1"))
    f.jumper("J-F1", fronts2[0], leaf[0])
    f.jumper("J-F2", gpu[1], leaf[1])
    for p in (gpu[0], gpu[1]):
        f.rollups(p, now - timedelta(minutes=20), 20)
    f.rollups(leaf[0], now - timedelta(minutes=20), 20, fec_uncorrectable_cw=4)
    f.rollups(leaf[1], now - timedelta(minutes=20), 20, ber=1e-4)
    svc.alerts_evaluate(now=now)
    panel_link = Link.objects.get(active=True, segments__cable__label="T-F")
    return {
        "through_panels": Alert.objects.get(link=panel_link, rule=AlertRule.FEC_UNCORRECTABLE),
        "direct": Alert.objects.get(link__segments__cable__label="J-F2"),
    }


@pytest.fixture
def viewer(user_with_role):
    return user_with_role("viewer")


@pytest.fixture
def page(viewer):
    client = Client()
    client.force_login(viewer)
    return client


@pytest.fixture
def api(viewer):
    client = APIClient()
    client.force_authenticate(user=viewer)
    return client


def resolve(alert) -> None:
    Alert.objects.filter(pk=alert.pk).update(state=AlertState.RESOLVED, resolved_at=timezone.now())


def page_ids(page, query: str) -> set[int]:
    r = page.get(f"/alerts/?{query}")
    assert r.status_code == 200
    return {int(pk) for pk in re.findall(r'href="/alerts/(\d+)/"', r.content.decode())}


def api_ids(api, query: str) -> set[int]:
    r = api.get(f"/api/alerts/?{query}")
    assert r.status_code == 200, r.content
    return {row["id"] for row in r.json()["results"]}


def test_the_page_and_the_api_list_the_same_alerts_for_the_same_query(scene, page, api):
    panel, direct = scene["through_panels"].pk, scene["direct"].pk
    expected = {
        "": {panel, direct},
        "rack=R-F-PANEL": {panel},  # only a segment of the path is there
        "rack=R-F-A": {panel, direct},
        "rack=R-F-B&rule=fec_uncorrectable": {panel},
        f"rule=fec_uncorrectable&rule={scene['direct'].rule}": {panel, direct},
        "cable=T-F": {panel},
        "cable=J-F2": {direct},
        "state=resolved": set(),
        "rack=NOPE": set(),
    }
    for query, ids in expected.items():
        assert api_ids(api, query) == ids, query
        assert page_ids(page, query) == ids, query


def test_open_by_default_and_every_state_when_state_is_given_empty(scene, page, api):
    resolve(scene["direct"])
    panel, direct = scene["through_panels"].pk, scene["direct"].pk
    for query, ids in {"": {panel}, "state=": {panel, direct}, "state=resolved": {direct}}.items():
        assert api_ids(api, query) == ids, query
        assert page_ids(page, query) == ids, query


def test_bad_input_is_refused_by_both(scene, page, api):
    assert api.get("/api/alerts/?rule=nope").status_code == 400
    r = page.get("/alerts/?rule=nope")
    assert "nope is not one of the available choices" in r.content.decode()
    assert page_ids(page, "rule=nope") == set()
    assert api.get("/api/alerts/?silenced=maybe").status_code == 400
    assert page_ids(page, "silenced=maybe") == set()


def test_an_alert_is_found_by_its_own_url_whatever_the_list_filters_say(scene, api):
    alert = scene["direct"]
    resolve(alert)
    assert api.get(f"/api/alerts/{alert.pk}/").status_code == 200
