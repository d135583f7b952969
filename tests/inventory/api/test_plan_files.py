import pytest
import yaml

from inventory.core.choices import DeviceRole
from inventory.models import Cable, Device
from inventory.services.plans import files as plan_files
from tests import factories as f

pytestmark = pytest.mark.django_db

PLAN = """
cables:
  - label: Y-1
    kind: SMF_OS2
    polarity: B
    length_m: "12.50"
    install_date: "2026-10-14"
    a: {device: gpu-1, port: eth0, connector: MPO, fibres: 12, pinned: "no", polish: APC}
    b: {device: leaf-1, port: Ethernet1/1, connector: MPO, fibres: 12, pinned: "no", polish: APC}
  - label: Y-2
    kind: SMF_OS2
    a: {device: gpu-1, port: eth1}
    b: {device: leaf-1, port: Ethernet1/2}
"""


@pytest.fixture
def plant():
    f.twin_port_device("gpu-1", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    f.twin_port_device("leaf-1", u=20)


def test_yaml_plan_imports_and_round_trips_losslessly(engineer_api, plant):
    r = engineer_api.generic("POST", "/api/cables/import/?dry_run=0", PLAN, content_type="application/yaml")
    assert r.status_code == 201, r.json()
    assert Cable.objects.get(label="Y-1").ends.get(side="A").polish == "APC"
    exported = engineer_api.get("/api/cables/export/?as=yaml").content.decode()
    again = engineer_api.generic(
        "POST", "/api/cables/import/?dry_run=1", exported, content_type="application/yaml"
    )
    assert again.json()["summary"] == {"create": 0, "change": 0, "unchanged": 2, "error": 0}
    # The file describes exactly what was planned, and re-exports byte for byte.
    assert plan_files.plan_rows_from_yaml(exported) == plan_files.plan_rows_from_yaml(
        plan_files.plan_export(fmt="yaml")
    )
    y1 = yaml.safe_load(exported)["cables"][0]
    assert (y1["label"], y1["a_device"], y1["a_port"], y1["b_port"], y1["length_m"]) == (
        "Y-1",
        "gpu-1",
        "eth0",
        "Ethernet1/1",
        "12.50",
    )
    csv_text = engineer_api.get("/api/cables/export/?as=csv").content.decode()
    assert plan_files.plan_rows_from_csv(csv_text) == [
        {k: v for k, v in row.items()}
        for row in plan_files.plan_rows_from_csv(plan_files.plan_export(fmt="csv"))
    ]


def test_netbox_csv_both_ways(engineer_api, plant):
    netbox_csv = (
        "side_a_device,side_a_type,side_a_name,side_b_device,side_b_type,side_b_name,type,status,label,color,"
        "length,length_unit,description,cf_install_date\r\n"
        "gpu-1,dcim.interface,eth2,leaf-1,dcim.interface,Ethernet2/1,smf,connected,N-1,ffeb3b,40,ft,direct,2026-11-20\r\n"
    )
    r = engineer_api.generic(
        "POST", "/api/cables/import/?dry_run=0&dialect=netbox", netbox_csv, content_type="text/csv"
    )
    assert r.status_code == 201, r.json()
    cable = Cable.objects.get(label="N-1")
    assert str(cable.length_m) == "12.19"
    out = engineer_api.get("/api/cables/export/?as=netbox").content.decode()
    site = Device.objects.get(name="gpu-1").rack.row.room.site.name  # the device's site qualifies it
    assert (
        f"{site},gpu-1,dcim.interface,eth2,{site},leaf-1,dcim.interface,Ethernet2/1,smf-os2,connected,,N-1"
        in out
    )
    back = plan_files.plan_rows_from_netbox_csv(out)
    assert back[0]["length_m"] == "12.19"
    assert back[0]["install_date"] == "2026-11-20"


def test_a_yaml_date_that_is_none_is_its_rows_error(engineer_api, plant):
    """YAML reads an unquoted 2026-02-30 as a date, and its reader raised: a 500 for the whole
    plan. The date is now kept as written and the row names it; a real one still reads as before."""
    plan = PLAN.replace('install_date: "2026-10-14"', "install_date: 2026-02-30").replace(
        "    a: {device: gpu-1, port: eth1}",
        "    install_date: 2026-10-14 25:99:00\n    a: {device: gpu-1, port: eth1}",
    )
    r = engineer_api.generic("POST", "/api/cables/import/?dry_run=0", plan, content_type="application/yaml")
    assert r.status_code == 400
    errors = {row["label"]: row["errors"] for row in r.json()["rows"]}
    assert errors == {
        "Y-1": {"install_date": "Not a date (YYYY-MM-DD): '2026-02-30'."},
        "Y-2": {"install_date": "Not a date (YYYY-MM-DD): '2026-10-14 25:99:00'."},
    }
    assert not Cable.objects.exists()
    good = PLAN.replace('install_date: "2026-10-14"', "install_date: 2026-10-14")
    r = engineer_api.generic("POST", "/api/cables/import/?dry_run=0", good, content_type="application/yaml")
    assert r.status_code == 201, r.json()
    assert str(Cable.objects.get(label="Y-1").install_date) == "2026-10-14"


def test_bad_yaml_is_a_clear_400(engineer_api, plant):
    r = engineer_api.generic("POST", "/api/cables/import/", "cables: [a, b", content_type="application/yaml")
    assert r.status_code == 400
    assert "YAML" in r.json()["detail"]


def test_expected_topology_export_reads_back_in(engineer_api, plant):
    """GET /api/topology/txt/ and POST it back: unchanged here; on a bare plant it builds the cables."""
    assert (
        engineer_api.generic(
            "POST", "/api/cables/import/?dry_run=0", PLAN, content_type="application/yaml"
        ).status_code
        == 201
    )
    topo = engineer_api.get("/api/topology/txt/").content.decode()
    assert "leaf-1 Ethernet1/1 gpu-1 eth0 Y-1" in topo
    again = engineer_api.generic("POST", "/api/cables/import/?dry_run=1", topo, content_type="text/plain")
    assert again.status_code == 200, again.json()
    assert again.json()["summary"] == {"create": 0, "change": 0, "unchanged": 2, "error": 0}

    # A new cluster's plant: the same devices, no cables. The topology list plans them.
    f.twin_port_device("gpu-2", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    f.twin_port_device("leaf-2", u=22)
    text = "# from the fabric design\nleaf-2 Ethernet1/1 gpu-2 eth0 Z-1\nleaf-2 Ethernet1/2 gpu-2 eth1 Z-2\n"
    no_kind = engineer_api.generic("POST", "/api/cables/import/?dry_run=1", text, content_type="text/plain")
    assert no_kind.status_code == 400
    assert "?kind=" in no_kind.json()["rows"][0]["errors"]["row"]
    made = engineer_api.generic(
        "POST", "/api/cables/import/?dry_run=0&kind=MMF_OM4", text, content_type="text/plain"
    )
    assert made.status_code == 201, made.json()
    assert Cable.objects.get(label="Z-2").kind == "MMF_OM4"
    out = engineer_api.get("/api/topology/txt/").content.decode()
    assert "leaf-2 Ethernet1/1 gpu-2 eth0 Z-1" in out and "leaf-2 Ethernet1/2 gpu-2 eth1 Z-2" in out


def test_topology_line_through_panels_is_refused_unless_recorded(engineer_api, plant):
    text = "leaf-1 Ethernet1/1 gpu-1 eth0 P-1,TRUNK-1,P-2\n"
    r = engineer_api.generic(
        "POST", "/api/cables/import/?dry_run=1&kind=SMF_OS2", text, content_type="text/plain"
    )
    assert r.status_code == 400
    assert "patch panels" in r.json()["rows"][0]["errors"]["row"]
    bad = engineer_api.generic(
        "POST", "/api/cables/import/", "leaf-1 Ethernet1/1 gpu-1\n", content_type="text/plain"
    )
    assert (
        bad.status_code == 400 and "expected 'a_device a_port b_device b_port cables'" in bad.json()["detail"]
    )


def test_a_plan_csv_whose_header_lacks_the_plan_columns_is_one_clear_400(engineer_api):
    r = engineer_api.generic("POST", "/api/cables/import/", b"0\n0", content_type="text/csv")
    assert r.status_code == 400
    detail = r.json()["detail"]
    assert "The header lacks the columns label, a_device, a_port, b_device, b_port" in detail
    assert not Cable.objects.exists()
