"""Import a Nautobot 2.x location: the gpu-hall-1 dataset in Nautobot's API shapes, served locally.

The responses in tests/data/nautobot are the NetBox fixtures' objects written as Nautobot 2.3
answers them with ``depth=1`` (see that folder's MANIFEST.md): UUID ids, locations for sites,
one termination per cable end, integer lengths, a module's interfaces owned by the module.
The import must give the same plant, and trace the same paths, as the NetBox import.
"""

import copy
import json

import pytest

from inventory.core.interop.nautobot import nautobot_fetch
from inventory.core.interop.netbox import NetboxError, source_fetch
from inventory.models import Cable, Device, ExternalRef, Port, Transceiver
from inventory.selectors.plant.trace import port_trace
from inventory.services.interop.netbox import netbox_import
from inventory.services.interop.netbox_export import netbox_export
from tests.inventory.services.interop.test_netbox_import import FakeNetbox, names, netbox_trace
from tests.paths import TEST_DATA

pytestmark = pytest.mark.django_db

DATA = TEST_DATA / "nautobot"
ROUTES = {
    "locations": "locations.json",
    "racks": "racks.json",
    "devices": "devices.json",
    "manufacturers": "manufacturers.json",
    "module-bays": "module-bays.json",
    "module-types": "module-types.json",
    "modules": "modules.json",
    "interfaces": "interfaces.json",
    "front-ports": "front-ports.json",
    "rear-ports": "rear-ports.json",
    "cables": "cables.json",
}


@pytest.fixture
def nautobot():
    fake = FakeNetbox(DATA, ROUTES)
    fake.fetch = lambda token="secret-token": nautobot_fetch(url=fake.url, token=token, site="gpu-hall-1")
    yield fake
    fake.server.shutdown()


def test_dry_run_reports_what_a_nautobot_location_would_create_and_writes_nothing(nautobot):
    plan = netbox_import(snapshot=nautobot.fetch(), dry_run=True)
    summary = plan.summary()
    assert summary["device"] == {"create": 5}
    assert summary["cable"] == {"create": 7}  # Nautobot has no 2-to-2 cable (NetBox's 5008)
    assert summary["module"]["create"] == 11
    assert not Device.objects.exists() and not Cable.objects.exists()
    assert any("/api/dcim/locations/" in r and "name=gpu-hall-1" in r for r in nautobot.requests)
    assert all("depth=1" in r for r in nautobot.requests)


def test_nautobot_import_traces_the_same_paths_as_netbox(nautobot):
    plan = netbox_import(snapshot=nautobot.fetch(), dry_run=False)
    assert not plan.conflicts, plan.conflicts
    assert Transceiver.objects.count() == 11
    eth1 = Port.objects.get(device__name="gpu-0001", name="eth1")
    assert names(port_trace(eth1)) == netbox_trace("trace-gpu-0001-eth1.json")
    # The leaf's ports belong to its modules in Nautobot; they land on the leaf's cages here.
    leaf_port = Port.objects.get(device__name="leaf-01", name="Ethernet2/1")
    assert leaf_port.cage.name == "OSFP2" and leaf_port.connector == 1
    c1 = Cable.objects.get(label="C-H1-0001")
    assert str(c1.length_m) == "12.50"  # 1250 cm
    assert str(c1.install_date) == "2026-10-14"
    assert Cable.objects.get(label="C-H1-0006").status == "planned"
    c7 = Cable.objects.get(label="C-H1-0007")
    assert ExternalRef.objects.get(kind="cable", object_id=c7.pk).attributes["netbox"]["status"] == (
        "decommissioning"
    )
    failed = Transceiver.objects.get(serial="MT2431FT00104")
    assert "failed in Nautobot" in failed.placements.get().notes
    ref = ExternalRef.objects.get(kind="cable", object_id=c1.pk)
    assert ref.source == f"nautobot:{nautobot.url}" and len(ref.external_id) == 36  # a UUID


def test_nautobot_reimport_is_idempotent_and_a_moved_cable_is_a_conflict(nautobot):
    netbox_import(snapshot=nautobot.fetch(), dry_run=False)
    again = netbox_import(snapshot=nautobot.fetch(), dry_run=False)
    assert {c.action for c in again.changes} <= {"unchanged", "skip"}, [
        c for c in again.changes if c.action not in ("unchanged", "skip")
    ]
    moved = copy.deepcopy(nautobot.docs["cables"])
    other = next(i["id"] for i in nautobot.docs["interfaces"]["results"] if i["name"] == "Ethernet3/2")
    next(c for c in moved["results"] if c["label"] == "C-H1-0001")["termination_b_id"] = other
    nautobot.docs["cables"] = moved
    plan = netbox_import(snapshot=nautobot.fetch(), dry_run=False)
    assert [(c.key, c.action) for c in plan.conflicts] == [("C-H1-0001", "conflict")]
    assert "in Nautobot" in plan.conflicts[0].detail["message"]
    assert port_trace(Port.objects.get(device__name="gpu-0001", name="eth0")).far.name == "Ethernet1/1"


def test_an_unknown_location_or_a_bad_token_is_a_clear_error(nautobot):
    nautobot.docs["locations"] = {"count": 0, "next": None, "previous": None, "results": []}
    with pytest.raises(NetboxError, match="no location 'gpu-hall-1'"):
        source_fetch(url=nautobot.url, token="secret-token", site="gpu-hall-1", flavor="nautobot")
    with pytest.raises(NetboxError, match="403"):
        nautobot.fetch(token="wrong")
    with pytest.raises(NetboxError, match="Unknown source 'racktables'"):
        source_fetch(url=nautobot.url, token="secret-token", site="x", flavor="racktables")


def test_export_writes_custom_fields_to_nautobot_cables_by_uuid(nautobot):
    netbox_import(snapshot=nautobot.fetch(), dry_run=False)
    assert netbox_export(url=nautobot.url, token="secret-token", flavor="nautobot") == 7
    ((path, body),) = nautobot.patches
    assert path.startswith("/api/dcim/cables/")
    c1_uuid = next(c["id"] for c in nautobot.docs["cables"]["results"] if c["label"] == "C-H1-0001")
    c1 = next(item for item in body if item["id"] == c1_uuid)
    assert c1["custom_fields"]["cabletrack_label"] == "C-H1-0001"
    assert c1["custom_fields"]["cabletrack_status"] == "installed"


def test_periodic_sync_reads_nautobot_when_so_configured(nautobot, settings):
    from inventory.models import SyncRun
    from inventory.tasks import netbox_sync_task

    settings.CABLETRACK_NETBOX_URL = nautobot.url
    settings.CABLETRACK_NETBOX_TOKEN = "secret-token"
    settings.CABLETRACK_NETBOX_SITES = ["gpu-hall-1"]
    settings.CABLETRACK_NETBOX_FLAVOR = "nautobot"
    assert netbox_sync_task() == 1
    run = SyncRun.objects.get()
    assert run.source == f"nautobot:{nautobot.url}"
    assert run.summary["cable"] == {"create": 7} and not run.error
    assert json.dumps(run.conflicts) == "[]"
