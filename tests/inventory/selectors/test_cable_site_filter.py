"""The cable lists' site filter (``?site=``, desk and API alike) after every write that moves a cable.

A cable is listed under the site of its first placed end: its A end's, else its first B leg's
in a rack; none while no end is placed. The filter reads ``Cable.site``, which the writers keep
(``inventory.services.plant.cable_sites``); each test writes through one of them and asks the
lists, as a user would.

    Hall 1: rack H1-R1  [gpu-1 eth0..7]   [leaf-1 Ethernet1/1..4/2]
    Hall 2: rack H2-R1  [gpu-2 eth0..7]   [leaf-2 Ethernet1/1..4/2]
"""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import timezone

from inventory.core.choices import CableKind, DeviceRole
from inventory.models import Cable, Device, Port, Rack, Room, Row, Site, SyncRun
from inventory.services.plant import cables as cable_services
from tests import factories as f

pytestmark = pytest.mark.django_db

GPU_PORTS = lambda c, k: f"eth{2 * c + k}"  # noqa: E731 - the factories' naming hook


def _hall(n: int) -> Rack:
    site = Site.objects.create(name=f"Hall {n}", slug=f"hall-{n}")
    row = Row.objects.create(room=Room.objects.create(site=site, name="Main"), name="A")
    return Rack.objects.create(row=row, name=f"H{n}-R1")


@pytest.fixture
def halls():
    racks = [_hall(1), _hall(2)]
    for n, rack in enumerate(racks, start=1):
        f.twin_port_device(f"gpu-{n}", rack=rack, role=DeviceRole.GPU_NODE, names=GPU_PORTS, cages=4)
        f.twin_port_device(f"leaf-{n}", rack=rack, u=20, cages=4)
    return racks


@pytest.fixture
def desk(user_with_role):
    client = Client()
    client.force_login(user_with_role("engineer", "desk-engineer"))
    return client


def listed(api, site: str) -> set[str]:
    """Labels the API list gives for ``?site=`` (the desk list uses the same FilterSet)."""
    r = api.get(f"/api/cables/?site={site}&page_size=500")
    assert r.status_code == 200, r.content
    return {c["label"] for c in r.json()["results"]}


def desk_listed(desk, site: str) -> set[str]:
    r = desk.get(f"/cables/?site={site}&per_page=500")
    assert r.status_code == 200
    return {c.label for c in r.context["page"].object_list}


def end(device: str, port: str) -> dict:
    return {"device": device, "port_name": port, "connector_type": "MPO", "fibre_count": 12, "polish": "APC"}


def api_cable(api, label: str, a: tuple[str, str], b: tuple[str, str]) -> None:
    body = {"label": label, "kind": "SMF_OS2", "polarity": "B", "a": end(*a), "b": [end(*b)]}
    r = api.post("/api/cables/", body, format="json")
    assert r.status_code == 201, r.json()


def test_a_cable_created_through_the_api_or_the_form_is_listed_under_its_a_ends_site(
    halls, engineer_api, desk
):
    api_cable(engineer_api, "IN-1", ("gpu-1", "eth0"), ("leaf-1", "Ethernet1/1"))
    # Between the halls: listed under its A end's site only (the README's rule).
    api_cable(engineer_api, "CROSS", ("gpu-2", "eth0"), ("leaf-1", "Ethernet1/2"))
    form = {
        "label": "FORM-1",
        "kind": CableKind.SMF_OS2,
        "polarity": "B",
        "length_m": "3",
        **{f"a_{k}": v for k, v in {"device": "gpu-1", "port": "eth1", "pinned": "false"}.items()},
        **{f"b_{k}": v for k, v in {"device": "leaf-1", "port": "Ethernet2/1", "pinned": "false"}.items()},
        **{f"{s}_{k}": v for s in "ab" for k, v in {"connector_type": "MPO", "fibre_count": "12"}.items()},
        **{f"{s}_polish": "APC" for s in "ab"},
    }
    assert desk.post("/cables/new", form).status_code == 302
    assert listed(engineer_api, "hall-1") == {"IN-1", "FORM-1"}
    assert listed(engineer_api, "hall-2") == {"CROSS"}
    assert desk_listed(desk, "hall-1") == {"IN-1", "FORM-1"}
    assert desk_listed(desk, "Hall 2") == {"CROSS"}  # by name as well as slug
    assert listed(engineer_api, "hall-9") == set()


def test_a_cable_whose_a_end_is_in_no_rack_is_listed_under_its_b_ends_site(halls, engineer_api):
    loose = Device.objects.create(name="bench-scope", role=DeviceRole.OTHER, rack=None)
    f.port(loose, "p1")
    api_cable(engineer_api, "LOOSE-A", ("bench-scope", "p1"), ("leaf-2", "Ethernet1/1"))
    assert listed(engineer_api, "hall-2") == {"LOOSE-A"}
    assert listed(engineer_api, "hall-1") == set()


def test_a_cable_plan_import_lists_each_cable_under_its_site(halls, engineer_api):
    plan = (
        "label,kind,a_device,a_port,b_device,b_port,polarity\n"
        "P-1,SMF_OS2,gpu-1,eth0,leaf-1,Ethernet1/1,B\n"
        "P-2,SMF_OS2,gpu-2,eth0,leaf-2,Ethernet1/1,B\n"
        "P-3,SMF_OS2,gpu-2,eth1,leaf-1,Ethernet1/2,B\n"
    )
    r = engineer_api.generic("POST", "/api/cables/import/?dry_run=0", plan, content_type="text/csv")
    assert r.status_code == 201, r.json()
    assert listed(engineer_api, "hall-1") == {"P-1"}
    assert listed(engineer_api, "hall-2") == {"P-2", "P-3"}


def test_a_device_moved_to_a_rack_of_another_site_takes_its_cables_with_it(halls, engineer_api):
    """Through the API (PATCH of the device's rack) and NetBox's device CSV alike."""
    api_cable(engineer_api, "G1", ("gpu-1", "eth0"), ("leaf-1", "Ethernet1/1"))
    api_cable(engineer_api, "G2", ("gpu-1", "eth1"), ("leaf-1", "Ethernet1/2"))
    api_cable(engineer_api, "L1", ("leaf-1", "Ethernet2/1"), ("leaf-2", "Ethernet2/1"))
    r = engineer_api.patch("/api/devices/gpu-1/", {"rack": halls[1].pk, "position_u": 5}, format="json")
    assert r.status_code == 200, r.json()
    assert listed(engineer_api, "hall-1") == {"L1"}
    assert listed(engineer_api, "hall-2") == {"G1", "G2"}

    csv = (
        "name,role,manufacturer,device_type,status,site,rack,position,face,serial,asset_tag\r\n"
        "leaf-1,leaf-switch,,,active,hall-2,H2-R1,30,front,,\r\n"
    )
    r = engineer_api.generic("POST", "/api/devices/import/?dry_run=0", csv, content_type="text/csv")
    assert r.status_code == 201, r.json()
    assert listed(engineer_api, "hall-1") == set()
    assert listed(engineer_api, "hall-2") == {"G1", "G2", "L1"}


def test_a_rack_moved_to_a_row_of_another_site_takes_its_cables_with_it(halls, engineer_api):
    api_cable(engineer_api, "R1", ("gpu-1", "eth0"), ("leaf-1", "Ethernet1/1"))
    row_2 = Row.objects.get(room__site__slug="hall-2")
    r = engineer_api.patch("/api/racks/H1-R1/", {"row": row_2.pk}, format="json")
    assert r.status_code == 200, r.json()
    assert listed(engineer_api, "hall-2") == {"R1"}
    assert listed(engineer_api, "hall-1") == set()


def test_a_retired_cable_stays_listed_where_it_was(halls, engineer_api):
    api_cable(engineer_api, "OLD", ("gpu-1", "eth0"), ("leaf-1", "Ethernet1/1"))
    cable_services.cable_retire(cable=Cable.objects.get(label="OLD"), reason="test")
    assert listed(engineer_api, "hall-1") == {"OLD"}


def test_an_end_moved_by_taking_netboxs_ends_moves_the_cable_to_that_sites_list(halls, engineer_api):
    """A sync conflict resolved by taking the source's ends re-terminates the cable in place:
    here its A end moves from gpu-1 (hall 1) to gpu-2 (hall 2)."""
    api_cable(engineer_api, "SWAP", ("gpu-1", "eth0"), ("leaf-1", "Ethernet1/1"))
    assert listed(engineer_api, "hall-1") == {"SWAP"}
    target = {
        side: [Port.objects.get(device__name=dev, name=name).pk]
        for side, (dev, name) in {"A": ("gpu-2", "eth0"), "B": ("leaf-1", "Ethernet1/1")}.items()
    }
    detail = {"resolutions": ["take_source", "keep_ours"], "source_ports": target, "external_id": 7}
    run = SyncRun.objects.create(
        source="netbox:https://netbox.example",
        site="hall-1",
        started_at=timezone.now(),
        conflicts=[{"kind": "cable", "key": "SWAP", "detail": detail}],
    )
    r = engineer_api.post(
        "/api/sync/conflicts/", {"run": run.pk, "cable": "SWAP", "take": "take_source"}, format="json"
    )
    assert r.status_code == 200, r.json()
    assert listed(engineer_api, "hall-2") == {"SWAP"}
    assert listed(engineer_api, "hall-1") == set()


def listed_in_rack(api, rack: str) -> set[str]:
    r = api.get(f"/api/cables/?rack={rack}&page_size=500")
    assert r.status_code == 200, r.content
    return {c["label"] for c in r.json()["results"]}


def test_the_rack_filter_lists_every_cable_with_an_end_in_the_rack(halls, engineer_api):
    """Ends on a module's cage and on a panel's port alike; a cable between racks in both."""
    f.patch_panel("pp-2", rack=halls[1])
    api_cable(engineer_api, "RK-CAGE", ("gpu-1", "eth0"), ("leaf-1", "Ethernet1/1"))
    api_cable(engineer_api, "RK-X", ("gpu-1", "eth1"), ("leaf-2", "Ethernet1/1"))
    api_cable(engineer_api, "RK-PANEL", ("leaf-2", "Ethernet2/1"), ("pp-2", "Front 1"))
    assert listed_in_rack(engineer_api, "H1-R1") == {"RK-CAGE", "RK-X"}
    assert listed_in_rack(engineer_api, "H2-R1") == {"RK-X", "RK-PANEL"}
    assert listed_in_rack(engineer_api, "H9-R9") == set()


def test_a_device_moved_in_the_admin_takes_its_cables_with_it(halls, engineer_api, user_with_role):
    api_cable(engineer_api, "ADM", ("gpu-1", "eth0"), ("leaf-1", "Ethernet1/1"))
    admin = user_with_role("engineer", "admin-engineer")
    admin.is_staff = True
    admin.save()
    client = Client()
    client.force_login(admin)
    url = f"/admin/inventory/device/{Device.objects.get(name='gpu-1').pk}/change/"
    data = f.admin_post_data(client.get(url))
    data.update(rack=str(halls[1].pk), position_u="7")
    response = client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert listed(engineer_api, "hall-2") == {"ADM"}
    assert listed(engineer_api, "hall-1") == set()
