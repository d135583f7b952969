"""Import the real NetBox 4.6.8 responses in ../shared/data/netbox, served from a local HTTP server."""

import copy
import json
import threading
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from inventory.core.interop.netbox import NetboxError, netbox_fetch
from inventory.models import Cable, Device, ExternalRef, Link, Port, Transceiver
from inventory.selectors.plant.trace import port_trace
from inventory.services.interop.netbox import netbox_import
from inventory.services.interop.netbox_export import netbox_export
from tests.paths import TEST_DATA

pytestmark = pytest.mark.django_db

DATA = TEST_DATA / "netbox"  # copied from shared/data/netbox
ROUTES = {
    "sites": "sites.json",
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


class FakeNetbox:
    """Serves the captured responses (any ``data`` folder: NetBox's, or the Nautobot-shaped
    ones); ``docs`` can be swapped for edited copies; PATCHes are recorded."""

    def __init__(self, data: Path = DATA, routes: dict[str, str] = ROUTES):
        self.docs = {k: json.loads((data / v).read_text()) for k, v in routes.items()}
        self.docs["status"] = json.loads((data / "status.json").read_text())
        self.requests: list[str] = []
        self.patches: list = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                owner.requests.append(self.path)
                if self.headers.get("Authorization", "") not in ("Token secret-token", "Bearer secret-token"):
                    return self._send(403, {"detail": "Invalid v1 token"})
                parts = self.path.split("?")[0].strip("/").split("/")
                key = parts[-1] if parts[-1] != "" else parts[-2]
                doc = owner.docs.get(key)
                return self._send(200, doc) if doc is not None else self._send(404, {"detail": "Not found."})

            def do_PATCH(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.patches.append((self.path, body))
                return self._send(200, body)

            def _send(self, code, body):
                raw = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("API-Version", "4.6")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def fetch(self, token="secret-token"):
        return netbox_fetch(url=self.url, token=token, site="gpu-hall-1")


def names(trace):
    return [s.label for s in trace.segments], (trace.far.device, trace.far.name) if trace.far else None


def netbox_trace(file):
    """NetBox's own trace: a list of [near ends, cable, far ends] hops."""
    hops = json.loads((DATA / file).read_text())
    cables = [hop[1]["label"] for hop in hops]
    far = hops[-1][2][0]
    return cables, (far["device"]["name"], far["name"])


def test_dry_run_reports_and_writes_nothing(netbox):
    plan = netbox_import(snapshot=netbox.fetch(), dry_run=True)
    summary = plan.summary()
    assert summary["device"] == {"create": 5}
    assert summary["cable"]["create"] == 8
    assert summary["module"]["create"] == 11
    assert not Device.objects.exists()
    assert not Cable.objects.exists()


def test_import_traces_the_same_paths_as_netbox(netbox):
    plan = netbox_import(snapshot=netbox.fetch(), dry_run=False)
    assert not plan.conflicts, plan.conflicts
    assert Cable.objects.count() == 8
    assert Transceiver.objects.count() == 11
    eth1 = Port.objects.get(device__name="gpu-0001", name="eth1")
    assert names(port_trace(eth1)) == netbox_trace("trace-gpu-0001-eth1.json")
    eth2 = Port.objects.get(device__name="gpu-0002", name="eth2")
    assert names(port_trace(eth2)) == netbox_trace("trace-gpu-0002-eth2.json")
    ft = Cable.objects.get(label="C-H1-0007")
    assert str(ft.length_m) == "12.19"  # 40 ft
    assert ExternalRef.objects.get(kind="cable", object_id=ft.pk).attributes["netbox"] == {
        "type": "smf",
        "status": "decommissioning",
        "length": "40",
        "length_unit": "ft",
        "profile": None,
        "tags": "gpu-fabric",
        "comments": "Replaced by structured path; remove during next maintenance window.",
    }
    assert Cable.objects.get(label="C-H1-0006").status == "planned"
    assert str(Cable.objects.get(label="C-H1-0001").install_date) == "2026-10-14"
    assert Link.objects.filter(active=True, segments__cable__label="TRK-A01-B01-1").count() == 1


def test_a_netbox_length_past_what_a_cable_holds_is_a_conflict_not_a_broken_cable(netbox, engineer_api):
    """NetBox takes lengths to 999,999.99 in any unit; cabletrack holds 99,999.99 m. Before, a
    200 km cable was stored (SQLite) and then its page, the lists and the alert rules' run broke
    (PostgreSQL: the sync stopped). Now the cable is a conflict naming its length and the rest is
    imported; on a cable already here, its length is left as it is."""
    km = {"value": "km", "label": "Kilometers"}
    cables = {c["label"]: c for c in netbox.docs["cables"]["results"]}
    cables["C-H1-0007"] |= {"length": 200, "length_unit": km}
    plan = netbox_import(snapshot=netbox.fetch(), dry_run=False)
    [conflict] = plan.conflicts
    assert (conflict.key, conflict.detail) == ("C-H1-0007", "length_m: At most 99999.99 m, not 200000.00.")
    assert Cable.objects.count() == 7 and not Cable.objects.filter(label="C-H1-0007").exists()
    assert engineer_api.get("/api/cables/").status_code == 200
    cables["C-H1-0001"] |= {"length": 500, "length_unit": km}
    plan = netbox_import(snapshot=netbox.fetch(), dry_run=False)
    assert [c.detail for c in plan.conflicts if c.key == "C-H1-0001"] == [
        "length_m: At most 99999.99 m, not 500000.00 (NetBox cable #5001); the sync left it as it is."
    ]
    assert str(Cable.objects.get(label="C-H1-0001").length_m) == "12.50"
    assert engineer_api.get("/api/cables/C-H1-0001/").status_code == 200
    cables["C-H1-0001"] |= {"length": 12.5, "length_unit": {"value": "m", "label": "Meters"}}
    cables["C-H1-0001"]["custom_fields"]["install_date"] = "0001-01-01"
    plan = netbox_import(snapshot=netbox.fetch(), dry_run=False)
    assert [c.detail for c in plan.conflicts if c.key == "C-H1-0001"] == [
        "install_date: 0001-01-01 is before the earliest install date accepted (2000-01-01) (NetBox cable "
        "#5001); the sync left it as it is."
    ]
    assert str(Cable.objects.get(label="C-H1-0001").install_date) == "2026-10-14"


def test_a_netbox_length_in_a_unit_netbox_does_not_have_is_a_conflict_not_metres(netbox):
    """NetBox's units are km, m, cm, mi, ft and in. Before, any other (a plugin's ``yd``, a
    hand-edited ``M``) was read as metres: 40 yd became a 40 m cable. Now a new cable is a
    conflict naming its unit and is not imported (the rest is); on a cable already here, its
    length is left as it is and the rest of the cable still syncs."""
    cables = {c["label"]: c for c in netbox.docs["cables"]["results"]}
    cables["C-H1-0007"] |= {"length": 40, "length_unit": {"value": "yd", "label": "Yards"}}
    plan = netbox_import(snapshot=netbox.fetch(), dry_run=False)
    [conflict] = plan.conflicts
    assert (conflict.key, conflict.detail) == (
        "C-H1-0007",
        "length_m: Unknown length unit 'yd'; one of km, m, cm, mi, ft, in.",
    )
    assert Cable.objects.count() == 7 and not Cable.objects.filter(label="C-H1-0007").exists()
    cables["C-H1-0001"] |= {"length": 41, "length_unit": "M", "color": "ff0000"}
    plan = netbox_import(snapshot=netbox.fetch(), dry_run=False)
    assert [c.detail for c in plan.conflicts if c.key == "C-H1-0001"] == [
        "length_m: Unknown length unit 'M'; one of km, m, cm, mi, ft, in (NetBox cable #5001); the sync "
        "left it as it is."
    ]
    cable = Cable.objects.get(label="C-H1-0001")
    assert (str(cable.length_m), cable.color) == ("12.50", "ff0000")


def test_every_imported_cable_is_listed_under_the_imported_site(netbox, engineer_api):
    netbox_import(snapshot=netbox.fetch(), dry_run=False)
    r = engineer_api.get("/api/cables/?site=gpu-hall-1&page_size=100")
    assert {c["label"] for c in r.json()["results"]} == set(Cable.objects.values_list("label", flat=True))
    assert len(r.json()["results"]) == 8


def test_reimport_is_idempotent(netbox):
    netbox_import(snapshot=netbox.fetch(), dry_run=False)
    again = netbox_import(snapshot=netbox.fetch(), dry_run=False)
    actions = {c.action for c in again.changes}
    assert actions <= {"unchanged", "skip"}, [
        c for c in again.changes if c.action not in ("unchanged", "skip")
    ]
    assert Cable.objects.count() == 8


def test_a_cable_moved_in_netbox_is_a_conflict_not_a_guess(netbox):
    netbox_import(snapshot=netbox.fetch(), dry_run=False)
    cables = netbox.docs["cables"]
    moved = copy.deepcopy(cables)
    c1 = next(c for c in moved["results"] if c["label"] == "C-H1-0001")
    term = c1["b_terminations"][0]
    term["object_id"] = term["object"]["id"] = 16022  # moved to leaf-01 Ethernet3/2
    term["object"]["name"] = "Ethernet3/2"
    netbox.docs["cables"] = moved
    plan = netbox_import(snapshot=netbox.fetch(), dry_run=False)
    assert [c.key for c in plan.conflicts] == ["C-H1-0001"]
    assert "ends differ" in plan.conflicts[0].detail["message"]
    # Nothing was guessed: the cable here still runs where it was recorded.
    assert port_trace(Port.objects.get(device__name="gpu-0001", name="eth0")).far.name == "Ethernet1/1"


def test_bad_token_is_a_clear_error(netbox):
    with pytest.raises(NetboxError, match="403"):
        netbox.fetch(token="wrong")


def test_export_writes_labels_status_and_retest_due_to_netbox_custom_fields(netbox):
    netbox_import(snapshot=netbox.fetch(), dry_run=False)
    cable = Cable.objects.get(label="C-H1-0001")
    cable.retest_due = date(2027, 1, 12)
    cable.save()
    assert netbox_export(url=netbox.url, token="secret-token") == 8
    ((path, body),) = netbox.patches
    assert path.startswith("/api/dcim/cables/")
    c1 = next(item for item in body if item["id"] == 5001)
    assert c1["custom_fields"] == {
        "cabletrack_label": "C-H1-0001",
        "cabletrack_status": "installed",
        "cabletrack_retest_due": "2027-01-12",
    }


def test_periodic_sync_records_runs_and_conflicts(netbox, settings):
    from inventory.models import SyncRun
    from inventory.tasks import netbox_sync_task

    settings.CABLETRACK_NETBOX_URL = netbox.url
    settings.CABLETRACK_NETBOX_TOKEN = "secret-token"
    settings.CABLETRACK_NETBOX_SITES = ["gpu-hall-1"]
    assert netbox_sync_task() == 1
    run = SyncRun.objects.get()
    assert run.summary["cable"] == {"create": 8}
    assert not run.error
    settings.CABLETRACK_NETBOX_TOKEN = "revoked"
    netbox_sync_task()
    assert "403" in SyncRun.objects.first().error
