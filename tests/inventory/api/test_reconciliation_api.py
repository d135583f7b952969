"""Reconciliation: what telemetry sees (module EEPROMs, LLDP/IB neighbours) against the records,
and creating the missing module records in one reviewed step (preview -> apply).

    Rack REC-1
    [gpu-0001 OSFP1: module A recorded, A seen]         ok
    [gpu-0001 OSFP2: module B recorded, C seen]         swap
    [gpu-0001 OSFP3: module D recorded, none seen]      recorded, telemetry sees none
    [leaf-01  OSFP1: nothing recorded, NVIDIA MMS4X00-NM s/n LEAF-SN-1 seen]  missing record
    [leaf-01  OSFP2: nothing recorded, ACME FOO-1 seen]  missing record, no such model
    [gpu-0001 eth0]--J-1--[leaf-01 Ethernet1/1]; eth0 sees leaf-01:Ethernet1/2 -> miswire
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone
from rest_framework.test import APIClient

from inventory.core.choices import DeviceRole, TransceiverStatus
from inventory.models import Cage, Port, PortTelemetryState, Site, Team, Transceiver, TransceiverPlacement
from tests import factories as f

pytestmark = pytest.mark.django_db


def identity(port: Port, *, vendor="", part="", serial="", neighbor=""):
    ndev, _, nport = neighbor.partition(":")
    PortTelemetryState.objects.update_or_create(
        port=port,
        defaults=dict(
            last_ts=timezone.now(),
            identity_seen_at=timezone.now(),
            module_vendor=vendor,
            module_part=part,
            module_serial=serial,
            neighbor_device=ndev,
            neighbor_port=nport,
        ),
    )


@pytest.fixture
def recon():
    rack = f.RackFactory(name="REC-1")
    _, gpu = f.twin_port_device(
        "gpu-0001", rack=rack, u=10, role=DeviceRole.GPU_NODE, cages=3, names=lambda c, k: f"eth{2 * c + k}"
    )
    _, leaf = f.twin_port_device("leaf-01", rack=rack, u=40, with_modules=False)
    f.jumper("J-1", gpu[0], leaf[0])
    mods = {x.cage.name: x for x in Transceiver.objects.filter(cage__device__name="gpu-0001")}
    for p in gpu[0:2]:
        identity(p, vendor="NVIDIA", part="MMS4X00-NM", serial=mods["OSFP1"].serial)
    identity(
        gpu[0],
        vendor="NVIDIA",
        part="MMS4X00-NM",
        serial=mods["OSFP1"].serial,
        neighbor="leaf-01:Ethernet1/2",
    )
    identity(gpu[2], vendor="NVIDIA", part="MMS4X00-NM", serial="SWAPPED-IN-1")
    for p in leaf[0:2]:
        identity(
            p, vendor="Mellanox", part="mms4x00-nm ", serial="LEAF-SN-1"
        )  # EEPROM padding, other vendor name
    identity(leaf[2], vendor="ACME", part="FOO-1", serial="ACME-1")
    return {"gpu": gpu, "leaf": leaf, "mods": mods}


def _rows(body, kind="modules"):
    return {(r["device"], r.get("cage") or r.get("port")): r for r in body[kind]}


def test_the_report_lists_missing_swapped_unseen_modules_and_miswired_neighbours(recon, api_as):
    body = api_as("viewer").get("/api/reconciliation/?rack=REC-1").json()
    rows = _rows(body)
    assert rows[("leaf-01", "OSFP1")]["status"] == "missing_record"
    assert rows[("leaf-01", "OSFP1")]["creatable"] is True
    assert rows[("leaf-01", "OSFP1")]["ports"] == ["Ethernet1/1", "Ethernet1/2"]
    assert rows[("leaf-01", "OSFP1")]["model_name"] == "NVIDIA MMS4X00-NM (400GBASE-DR4)"
    assert rows[("leaf-01", "OSFP2")]["creatable"] is False
    assert "No module model ACME FOO-1" in rows[("leaf-01", "OSFP2")]["problem"]
    swap = rows[("gpu-0001", "OSFP2")]
    assert swap["status"] == "swap"
    assert (swap["seen"]["serial"], swap["recorded"]["serial"]) == (
        "SWAPPED-IN-1",
        recon["mods"]["OSFP2"].serial,
    )
    assert rows[("gpu-0001", "OSFP3")]["status"] == "not_seen"
    assert ("gpu-0001", "OSFP1") not in rows  # agrees: only with include_ok
    assert body["counts"]["module_ok"] == 1 and body["counts"]["creatable"] == 1
    n = _rows(body, "neighbours")[("gpu-0001", "eth0")]
    assert (n["status"], n["expected"], n["seen"], n["cables"]) == (
        "miswire",
        "leaf-01:Ethernet1/1",
        "leaf-01:Ethernet1/2",
        ["J-1"],
    )
    everything = api_as("technician").get("/api/reconciliation/?rack=REC-1&include_ok=true").json()
    assert _rows(everything)[("gpu-0001", "OSFP1")]["status"] == "ok"


def test_a_sealed_cable_end_is_compared_with_the_cable_serial(api_as):
    """[leaf-a OSFP1]==AOC-1 (serials AOC-A / AOC-B)==[leaf-b OSFP1]; leaf-b reports AOC-X."""
    from inventory.core.choices import CableKind
    from inventory.services.plant import cables as cable_services

    rack = f.RackFactory(name="REC-2")
    _, a = f.twin_port_device("leaf-a", rack=rack, u=1, cages=1, with_modules=False)
    _, b = f.twin_port_device("leaf-b", rack=rack, u=2, cages=1, with_modules=False)
    cable_services.cable_install(
        label="AOC-1",
        kind=CableKind.AOC,
        a=cable_services.EndSpec(port=a[0]),
        b=[cable_services.EndSpec(port=b[0])],
        serial_a="AOC-A",
        serial_b="AOC-B",
    )
    identity(a[0], vendor="NVIDIA", part="MFA7U10", serial="AOC-A")
    identity(b[0], vendor="NVIDIA", part="MFA7U10", serial="AOC-X")
    rows = _rows(api_as("viewer").get("/api/reconciliation/?rack=REC-2&include_ok=1").json())
    assert rows[("leaf-a", "OSFP1")]["status"] == "ok"
    swapped = rows[("leaf-b", "OSFP1")]
    assert swapped["status"] == "swap"
    assert swapped["recorded"] | {"transceiver": None} == {
        "kind": "cable_end",
        "vendor": "",
        "part": "",
        "serial": "AOC-B",
        "transceiver": None,
        "cable": "AOC-1",
        "cable_side": "B",
    }


def test_an_engineer_previews_then_creates_the_missing_module_with_history(recon, api_as):
    eng = api_as("engineer")
    preview = eng.post("/api/reconciliation/preview/", {"all": True, "rack": "REC-1"}, format="json")
    assert preview.status_code == 200, preview.content
    p = preview.json()
    assert [(r["device"], r["cage"], r["seen"]["serial"]) for r in p["create"]] == [
        ("leaf-01", "OSFP1", "LEAF-SN-1")
    ]
    osfp2 = Cage.objects.get(device__name="leaf-01", name="OSFP2")
    assert [r["key"] for r in p["refused"]] == [f"cage:{osfp2.pk}"]
    assert not Transceiver.objects.filter(serial="LEAF-SN-1").exists()  # a preview writes nothing

    done = eng.post("/api/reconciliation/apply/", {"token": p["token"]}, format="json")
    assert done.status_code == 201, done.content
    assert [x["serial"] for x in done.json()["created"]] == ["LEAF-SN-1"]
    x = Transceiver.objects.get(serial="LEAF-SN-1")
    assert (x.status, x.cage.device.name, x.cage.name, x.model.part_number) == (
        TransceiverStatus.INSTALLED,
        "leaf-01",
        "OSFP1",
        "MMS4X00-NM",
    )
    hist = x.history.get()
    assert hist.history_user.username == "engineer-user" and "reconciliation" in hist.history_change_reason
    placement = TransceiverPlacement.objects.get(transceiver=x)
    assert placement.installed_by.username == "engineer-user" and placement.removed_at is None
    assert placement.history.get().history_user.username == "engineer-user"
    # The report now agrees for that cage.
    rows = _rows(eng.get("/api/reconciliation/?rack=REC-1").json())
    assert ("leaf-01", "OSFP1") not in rows

    # Submitting the same reviewed step again creates nothing twice.
    again = eng.post("/api/reconciliation/apply/", {"token": p["token"]}, format="json")
    assert again.status_code == 200
    assert again.json()["created"] == [] and [x["serial"] for x in again.json()["already_recorded"]] == [
        "LEAF-SN-1"
    ]
    assert Transceiver.objects.filter(serial="LEAF-SN-1").count() == 1


def test_selected_rows_only_and_stale_rows_are_refused_with_nothing_written(recon, api_as):
    """Two cages reviewed; before confirming, telemetry reports another module in one of them."""
    rack = f.RackFactory(name="REC-1")
    _, spine = f.twin_port_device("spine-01", rack=rack, u=30, with_modules=False)
    identity(spine[0], vendor="NVIDIA", part="MMS4X00-NM", serial="SPINE-SN-1")
    identity(spine[2], vendor="NVIDIA", part="MMS4X00-NM", serial="SPINE-SN-2")
    eng = api_as("engineer")
    c1, c2 = (Cage.objects.get(device__name="spine-01", name=n).pk for n in ("OSFP1", "OSFP2"))
    p = eng.post("/api/reconciliation/preview/", {"keys": [f"cage:{c1}", f"cage:{c2}"]}, format="json").json()
    assert sorted(r["seen"]["serial"] for r in p["create"]) == ["SPINE-SN-1", "SPINE-SN-2"]
    identity(spine[2], vendor="NVIDIA", part="MMS4X00-NM", serial="SPINE-SN-9")  # re-seated another module

    stale = eng.post("/api/reconciliation/apply/", {"token": p["token"]}, format="json")
    assert stale.status_code == 409
    body = stale.json()
    assert "changed since the preview" in body["detail"]
    assert body["stale"] == [
        {
            "key": f"cage:{c2}",
            "message": "spine-01 OSFP2: telemetry now reports s/n SPINE-SN-9 (s/n SPINE-SN-2 at the preview).",
        }
    ]
    assert not Transceiver.objects.filter(serial__startswith="SPINE-SN").exists()  # all or nothing

    # Somebody records a module by hand in the other cage: that row is stale too.
    x = f.module(serial="HAND-1")
    from inventory.services.plant.transceivers import transceiver_install

    transceiver_install(transceiver=x, cage=Cage.objects.get(pk=c1))
    p2 = eng.post("/api/reconciliation/preview/", {"keys": [f"cage:{c2}"]}, format="json").json()
    again = eng.post("/api/reconciliation/apply/", {"token": p["token"]}, format="json").json()
    assert {s["key"]: s["message"] for s in again["stale"]}[f"cage:{c1}"] == (
        "spine-01 OSFP1: module s/n HAND-1 was recorded here since the preview."
    )
    # A fresh preview of what is seen now goes through.
    assert eng.post("/api/reconciliation/apply/", {"token": p2["token"]}, format="json").status_code == 201
    assert Transceiver.objects.get(serial="SPINE-SN-9").cage_id == c2


def test_a_serial_recorded_elsewhere_is_refused_at_preview(recon, api_as):
    """The module in leaf-01 OSFP1 is recorded as a spare already: it moved without a record."""
    f.module(serial="LEAF-SN-1")
    p = (
        api_as("engineer")
        .post("/api/reconciliation/preview/", {"all": True, "rack": "REC-1"}, format="json")
        .json()
    )
    assert p["create"] == []
    assert any(
        "Serial LEAF-SN-1 is already recorded for NVIDIA (spare)" in r["message"] for r in p["refused"]
    )


@pytest.mark.parametrize("role", ["viewer", "technician", "collector"])
def test_only_engineers_may_preview_or_create(recon, api_as, role):
    eng_preview = api_as("engineer").post(
        "/api/reconciliation/preview/", {"all": True, "rack": "REC-1"}, format="json"
    )
    token = eng_preview.json()["token"]
    client = api_as(role)
    assert (
        client.post("/api/reconciliation/preview/", {"all": True, "rack": "REC-1"}, format="json").status_code
        == 403
    )
    assert client.post("/api/reconciliation/apply/", {"token": token}, format="json").status_code == 403
    assert not Transceiver.objects.filter(serial="LEAF-SN-1").exists()


def test_records_from_telemetry_are_created_only_in_the_importers_sites(recon):
    """An account that may create records from telemetry (add_transceiver, import_plant) but
    not act in every site: the cage of the missing record is in a site none of its teams looks
    after, so the preview refuses the row naming the site and offers nothing to create; once in
    the site's team, the same preview creates it."""
    importer = f.UserFactory(username="importer", role="viewer")
    importer.user_permissions.add(
        *Permission.objects.filter(codename__in=["import_plant", "add_transceiver"])
    )
    client = APIClient()
    client.force_authenticate(user=importer)
    p = client.post("/api/reconciliation/preview/", {"all": True, "rack": "REC-1"}, format="json").json()
    osfp1 = Cage.objects.get(device__name="leaf-01", name="OSFP1")
    site = Site.objects.get(pk=osfp1.device.rack.row.room.site_id)
    assert p["create"] == []
    (refused,) = [r for r in p["refused"] if r["key"] == f"cage:{osfp1.pk}"]
    assert f"not in a team for {site.name}" in refused["message"]
    assert not Transceiver.objects.filter(serial="LEAF-SN-1").exists()
    site.team = Team.objects.create(name="REC crew")
    site.save()
    site.team.members.add(importer)
    importer = type(importer).objects.get(pk=importer.pk)  # its sites read anew
    client.force_authenticate(user=importer)
    p = client.post("/api/reconciliation/preview/", {"all": True, "rack": "REC-1"}, format="json").json()
    assert [r["key"] for r in p["create"]] == [f"cage:{osfp1.pk}"]
    assert client.post("/api/reconciliation/apply/", {"token": p["token"]}, format="json").status_code == 201
    assert Transceiver.objects.filter(serial="LEAF-SN-1", cage=osfp1).exists()


def test_bad_input_is_refused_clearly(recon, api_as):
    eng = api_as("engineer")
    r = eng.get("/api/reconciliation/?rack=NOPE&site=nowhere")
    assert r.status_code == 400
    assert r.json() == {"site": ["No site 'nowhere' (give its slug or name)."], "rack": ["No rack 'NOPE'."]}
    r = eng.post("/api/reconciliation/preview/", {"all": True, "rack": "NOPE"}, format="json")
    assert r.status_code == 400 and r.json() == {"rack": ["No rack 'NOPE'."]}
    r = eng.post("/api/reconciliation/preview/", {"keys": ["port:1"]}, format="json")
    assert r.status_code == 400 and "Not a module row" in str(r.json())
    r = eng.post("/api/reconciliation/preview/", {"all": True}, format="json")
    assert r.status_code == 400 and "site or rack" in str(r.json())
    r = eng.post("/api/reconciliation/apply/", {"token": "forged"}, format="json")
    assert r.status_code == 400 and "not a preview token" in str(r.json())
    # A token previewed by another engineer is refused too.
    other = api_as("admin").post(
        "/api/reconciliation/preview/", {"all": True, "rack": "REC-1"}, format="json"
    )
    r = eng.post("/api/reconciliation/apply/", {"token": other.json()["token"]}, format="json")
    assert r.status_code == 400 and "someone else" in str(r.json())


def test_the_endpoints_are_in_the_openapi_schema(api_as):
    schema = api_as("viewer").get("/api/schema/", HTTP_ACCEPT="application/json").json()
    paths = schema["paths"]
    assert {"/api/reconciliation/", "/api/reconciliation/preview/", "/api/reconciliation/apply/"} <= set(
        paths
    )
    assert "409" in paths["/api/reconciliation/apply/"]["post"]["responses"]
    assert "ReconPreview" in str(paths["/api/reconciliation/preview/"]) or "Preview" in str(
        paths["/api/reconciliation/preview/"]
    )


def test_the_report_reads_with_a_fixed_number_of_queries(recon, api_as, django_assert_max_num_queries):
    client = api_as("viewer")
    client.get("/api/reconciliation/")  # warm the session/permission caches
    with django_assert_max_num_queries(14):
        small = client.get("/api/reconciliation/").json()
    for i in range(6):
        _, ports = f.twin_port_device(
            f"leaf-x{i}", rack=f.RackFactory(name="REC-1"), u=20 + i, with_modules=False
        )
        for p in ports:
            identity(p, vendor="NVIDIA", part="MMS4X00-NM", serial=f"X{i}-{p.name}")
    with django_assert_max_num_queries(14):
        big = client.get("/api/reconciliation/").json()
    assert big["counts"]["module_missing_record"] > small["counts"]["module_missing_record"]


def test_a_collector_that_reports_no_modules_says_nothing_about_them(recon, api_as):
    """gpu-0002's collector sends neighbours only: its recorded modules are neither 'not seen'
    nor 'agree'."""
    rack = f.RackFactory(name="REC-1")
    _, gpu2 = f.twin_port_device(
        "gpu-0002", rack=rack, u=12, role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}"
    )
    identity(gpu2[0], neighbor="leaf-01:Ethernet2/1")
    body = api_as("viewer").get("/api/reconciliation/?rack=REC-1&include_ok=1").json()
    assert not [r for r in body["modules"] if r["device"] == "gpu-0002"]
    assert body["counts"]["module_ok"] == 1 and body["counts"]["module_not_seen"] == 1
    (n,) = [r for r in body["neighbours"] if r["device"] == "gpu-0002"]
    assert (n["status"], n["seen"], n["expected"]) == ("unrecorded", "leaf-01:Ethernet2/1", None)


def test_a_module_seen_in_a_port_without_a_recorded_cage_is_listed_and_refused(recon, api_as):
    from inventory.models import Device

    p = f.port(Device.objects.get(name="leaf-01"), "Ethernet9/1")  # imported without its module bay
    identity(p, vendor="NVIDIA", part="MMS4X00-NM", serial="NOCAGE-1")
    body = api_as("viewer").get("/api/reconciliation/?rack=REC-1").json()
    (row,) = [r for r in body["modules"] if r["seen"]["serial"] == "NOCAGE-1"]
    assert (row["key"], row["status"], row["creatable"]) == (f"port:{p.pk}", "missing_record", False)
    assert row["problem"] == "No cage is recorded for port Ethernet9/1: record the device's cages first."
    preview = api_as("engineer").post(
        "/api/reconciliation/preview/", {"all": True, "rack": "REC-1"}, format="json"
    )
    refused = {r["key"]: r["message"] for r in preview.json()["refused"]}
    assert "No cage is recorded for port Ethernet9/1" in refused[f"port:{p.pk}"]
    assert [r["seen"]["serial"] for r in preview.json()["create"]] == ["LEAF-SN-1"]


def test_token_kinds_read_only_reads_ingest_only_posts_telemetry(recon, user_with_role):
    eng = user_with_role("engineer")
    ro = f.api_token_client(eng, kind="read_only")
    assert ro.get("/api/reconciliation/?rack=REC-1").status_code == 200
    r = ro.post("/api/reconciliation/preview/", {"all": True, "rack": "REC-1"}, format="json")
    assert r.status_code == 403 and r.json()["detail"] == "This token is read-only."
    ingest = f.api_token_client(eng, kind="ingest")
    assert ingest.get("/api/reconciliation/?rack=REC-1").status_code == 403
    full = f.api_token_client(eng, kind="full")
    p = full.post("/api/reconciliation/preview/", {"all": True, "rack": "REC-1"}, format="json").json()
    assert full.post("/api/reconciliation/apply/", {"token": p["token"]}, format="json").status_code == 201
    # The history names the token the script used, as every API write does.
    from inventory.selectors.plant.history import history_for

    entry = history_for(Transceiver.objects.get(serial="LEAF-SN-1"))[0]
    assert entry["who"] == "engineer-user" and entry["token"]
