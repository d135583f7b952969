"""NetBox's device bulk-import CSV, both ways: GET /api/devices/export/, POST /api/devices/import/."""

import csv
import io

import pytest

from inventory.core.choices import DeviceRole
from inventory.models import Device, Vendor
from tests import factories as f

pytestmark = pytest.mark.django_db

NEW = (
    "name,role,manufacturer,device_type,status,site,rack,position,face,serial,asset_tag\r\n"
    "gpu-0101,gpu-node,NVIDIA,HGX H100 8-GPU,active,hall-1,R-A01,10,front,SN-101,AT-101\r\n"
    "leaf-11,leaf-switch,Arista Networks,7060DX5-64S,active,hall-1,R-A01,40,front,SN-L11,\r\n"
)


@pytest.fixture
def rack():
    return f.RackFactory(name="R-A01")


def post(client, body, dry_run=True):
    return client.generic(
        "POST", f"/api/devices/import/?dry_run={int(dry_run)}", body, content_type="text/csv"
    )


def test_netbox_device_csv_dry_run_then_apply_with_history(engineer_api, rack):
    dry = post(engineer_api, NEW)
    assert dry.status_code == 200, dry.json()
    assert dry.json()["summary"] == {"create": 2, "change": 0, "unchanged": 0, "error": 0}
    assert not Device.objects.filter(name="gpu-0101").exists()

    applied = post(engineer_api, NEW, dry_run=False)
    assert applied.status_code == 201, applied.json()
    gpu = Device.objects.get(name="gpu-0101")
    assert (gpu.role, gpu.rack, gpu.position_u, gpu.model, gpu.serial, gpu.asset_tag) == (
        DeviceRole.GPU_NODE,
        rack,
        10,
        "HGX H100 8-GPU",
        "SN-101",
        "AT-101",
    )
    assert gpu.vendor.name == "NVIDIA" and Vendor.objects.filter(name="Arista Networks").exists()
    assert Device.objects.get(name="leaf-11").asset_tag is None
    assert gpu.history.get().history_user.username == "engineer-user"


def test_export_reads_back_unchanged_and_in_netbox_columns(engineer_api, rack):
    post(engineer_api, NEW, dry_run=False)
    exported = engineer_api.get("/api/devices/export/").content.decode()
    rows = list(csv.DictReader(io.StringIO(exported)))
    gpu = next(r for r in rows if r["name"] == "gpu-0101")
    assert (gpu["role"], gpu["manufacturer"], gpu["rack"], gpu["position"], gpu["status"]) == (
        "gpu-node",
        "NVIDIA",
        "R-A01",
        "10",
        "active",
    )
    again = post(engineer_api, exported)
    assert again.json()["summary"] == {"create": 0, "change": 0, "unchanged": 2, "error": 0}
    moved = exported.replace("R-A01,10,front", "R-A01,12,front")
    change = post(engineer_api, moved, dry_run=False)
    assert change.status_code == 201
    row = next(r for r in change.json()["rows"] if r["label"] == "gpu-0101")
    assert row["action"] == "change" and row["changes"]["position_u"] == {"old": 10, "new": 12}
    moved_dev = Device.objects.get(name="gpu-0101")
    assert moved_dev.position_u == 12
    last = moved_dev.history.first()  # newest first: the move, by whom, with the old U before it
    assert (last.position_u, last.history_user.username, last.prev_record.position_u) == (
        12,
        "engineer-user",
        10,
    )


def test_bad_rows_are_reported_by_row_and_nothing_is_written(engineer_api, rack):
    f.twin_port_device("gpu-0001", rack=rack, u=20)
    bad = (
        "name,role,manufacturer,device_type,rack,position\r\n"
        "ok-1,gpu-node,NVIDIA,HGX,R-A01,30\r\n"
        "x-1,router-thing,NVIDIA,HGX,R-A01,31\r\n"
        "x-2,gpu-node,NVIDIA,HGX,NO-SUCH-RACK,1\r\n"
        "x-3,gpu-node,NVIDIA,HGX,R-A01,20\r\n"
        "x-4,gpu-node,NVIDIA,HGX,R-A01,99\r\n"
        "ok-1,gpu-node,NVIDIA,HGX,R-A01,32\r\n"
    )
    r = post(engineer_api, bad, dry_run=False)
    assert r.status_code == 400
    errors = {row["row"]: row["errors"] for row in r.json()["rows"] if row["errors"]}
    assert "Unknown role" in errors[2]["role"]
    assert "No rack 'NO-SUCH-RACK'" in errors[3]["rack"]
    assert "U20 holds gpu-0001" in errors[4]["position"]
    assert "48 U" in errors[5]["position"]
    assert "repeated (row 1)" in errors[6]["name"]
    assert not Device.objects.filter(name__in=["ok-1", "x-1", "x-2", "x-3", "x-4"]).exists()


def test_wrong_type_and_roles(api_as, rack):
    engineer = api_as("engineer")
    assert post(engineer, "not,a,device,csv\r\n1,2,3,4\r\n").status_code == 400
    wrong = engineer.generic("POST", "/api/devices/import/", "{}", content_type="application/json")
    assert wrong.status_code == 415
    viewer = api_as("viewer")
    assert post(viewer, NEW, dry_run=False).status_code == 403
    assert viewer.get("/api/devices/export/").status_code == 200
    assert not Device.objects.filter(name="gpu-0101").exists()
