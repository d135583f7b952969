"""Alerts API: list and filter, acknowledge, silence, maintenance windows, vendor comparison,
bring-up report and topology export.

Topology::

    [gpu-q eth0]--J-Q0--[leaf-q Ethernet1/1]     healthy
    [gpu-q eth1]--J-Q1--[leaf-q Ethernet1/2]     uncorrectable codewords (alert open)
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.core.choices import DeviceRole
from inventory.models import Alert, MaintenanceWindow
from inventory.services import alerts as svc
from tests import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def scene():
    now = timezone.now().replace(second=0, microsecond=0)
    rack = f.RackFactory(name="R-API")
    _, gpu = f.twin_port_device(
        "gpu-q", rack=rack, role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}"
    )
    _, leaf = f.twin_port_device("leaf-q", rack=rack, u=30)
    f.jumper("J-Q0", gpu[0], leaf[0])
    f.jumper("J-Q1", gpu[1], leaf[1])
    for p in (gpu[0], gpu[1], leaf[0]):
        f.rollups(p, now - timedelta(minutes=12), 12)
    f.rollups(leaf[1], now - timedelta(minutes=12), 12, fec_uncorrectable_cw=4)
    svc.alerts_evaluate(now=now)
    return {"now": now, "alert": Alert.objects.get(), "gpu": gpu, "leaf": leaf}


def test_list_filters_and_shows_the_path(scene, api_as, django_assert_max_num_queries):
    api = api_as("viewer")
    with django_assert_max_num_queries(8):
        r = api.get("/api/alerts/")
    assert r.status_code == 200
    (row,) = r.json()["results"]
    assert row["rule"] == "fec_uncorrectable" and row["cables"] == ["J-Q1"]
    assert api.get("/api/alerts/?rule=pfc_storm").json()["results"] == []
    assert len(api.get("/api/alerts/?cable=J-Q1").json()["results"]) == 1
    assert len(api.get("/api/alerts/?rack=R-API&severity=notify").json()["results"]) == 1
    assert api.get("/api/alerts/?severity=loud").status_code == 400


def test_acknowledge_and_silence(scene, api_as):
    pk = scene["alert"].pk
    assert api_as("viewer").post(f"/api/alerts/{pk}/acknowledge/").status_code == 403
    tech = api_as("technician")
    r = tech.post(f"/api/alerts/{pk}/acknowledge/")
    assert r.status_code == 200 and r.json()["acknowledged_by"] == "technician-user"
    r = tech.post(f"/api/alerts/{pk}/silence/", {"hours": 1000}, format="json")
    assert r.status_code == 400 and "hours" in r.json()
    assert not MaintenanceWindow.objects.exists()
    r = tech.post(f"/api/alerts/{pk}/silence/", {"hours": 2, "reason": "swap optic"}, format="json")
    assert r.status_code == 200 and r.json()["silenced"] is True
    assert MaintenanceWindow.objects.get().reason == "swap optic"


def test_maintenance_windows_api(scene, api_as):
    tech = api_as("technician")
    now = scene["now"]
    bad = tech.post(
        "/api/maintenance-windows/",
        {"ends_at": (now - timedelta(hours=1)).isoformat(), "reason": "", "racks": ["nope"]},
        format="json",
    )
    assert bad.status_code == 400 and "racks" in bad.json()
    ok = tech.post(
        "/api/maintenance-windows/",
        {"ends_at": (now + timedelta(hours=2)).isoformat(), "reason": "re-cable", "devices": ["gpu-q"]},
        format="json",
    )
    assert ok.status_code == 201, ok.json()
    assert ok.json()["devices"] == ["gpu-q"]
    assert len(tech.get("/api/maintenance-windows/?active=true").json()["results"]) == 1
    end = tech.post(f"/api/maintenance-windows/{ok.json()['id']}/end/")
    assert end.status_code == 200
    assert tech.get("/api/maintenance-windows/?active=true").json()["results"] == []
    assert api_as("viewer").post("/api/maintenance-windows/", {}, format="json").status_code == 403


def test_vendor_comparison_bringup_and_topology(scene, api_as):
    api = api_as("viewer")
    r = api.get("/api/vendor-comparison/?days=1")
    assert r.status_code == 200
    (model,) = r.json()["by_model"]
    # The one alert (J-Q1) counts at both its ends, which report: 2 of the 4 reporting ports.
    assert (model["ports"], model["ports_reporting"], model["alerts"]) == (8, 4, 2)
    assert model["alerts_per_100_ports"] == 50.0 and model["median_cw_rate"] > 1000
    assert api.get("/api/vendor-comparison/?days=0").status_code == 400
    f.seen(scene["gpu"][0], scene["now"], neighbor=scene["leaf"][0])
    rep = api.get("/api/racks/R-API/bringup/").json()
    assert rep["miswired"] == []
    assert {"port": "gpu-q:eth1", "expected": "leaf-q:Ethernet1/2"} in rep["no_neighbour"]
    txt = api.get("/api/topology/txt/")
    assert txt.status_code == 200 and b"leaf-q Ethernet1/2 gpu-q eth1 J-Q1" in txt.content
    assert api.get("/api/topology/csv/").status_code == 400
