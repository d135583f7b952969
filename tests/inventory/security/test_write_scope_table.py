"""Every write path, every role and team relation: one table (issue 32, "one scope for every write").

site North (team "North crew": ``technician``): rack N01, [leaf-n OSFP1]--N-1--[leaf-n2 OSFP1]
site South (no team):                          rack S01, [leaf-s OSFP1]--S-1--[leaf-s2 OSFP1]
Each site also has a spare module kept there, an empty cage, an open alert on its cable's port,
a maintenance window on its rack, an open journal entry on its cable and a drain of the alert's
link whose window has ended without a restore (so the link may be drained, and restored).

The table is checked against the URLconf and the admin: a write path (an API method that is not
a read, a page, an admin of an inventory model) without a row fails ``test_the_table_covers...``.
Each row is then run for every subject below, each in a transaction that is rolled back (every
subject starts from the same plant): an allowed write answers 2xx/3xx and writes; a refused one
answers 403 and writes nothing (every inventory table compared, row by row, before and after).

Subjects: the technician of North acting on North's objects ("own site"), the same technician on
South's ("other site"), ``loner`` (a technician in no team) on North's, a viewer, a collector, and
an engineer and an admin on South's (``edit_any_site``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings
from django.contrib import admin
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.urls import URLResolver, get_resolver
from django.utils import timezone
from rest_framework.test import APIClient

from inventory.access import authz
from inventory.admin.scope import SiteScopedAdmin
from inventory.core.choices import AlertRule, FormFactor
from inventory.models import (
    Alert,
    Cable,
    Cage,
    Device,
    FieldNote,
    Link,
    LinkDrain,
    MaintenanceWindow,
    Port,
    Rack,
    RetestPolicy,
    RetestTrigger,
    RmaCase,
    Site,
    Transceiver,
)
from inventory.services import journal
from tests import factories as f

pytestmark = pytest.mark.django_db

SOR = Path(__file__).resolve().parents[2] / "data" / "sor" / "anritsu-mt1000a_1310_0001.sor"

OK, NO = "allowed", "refused"
SUBJECTS = [
    ("technician", "north"),  # own site
    ("technician", "south"),  # other site
    ("loner", "north"),  # a technician in no team
    ("viewer", "north"),
    ("collector", "north"),
    ("engineer", "south"),
    ("admin", "south"),
]
# What each kind of rule answers, subject by subject (in SUBJECTS order).
EXPECT = {
    # A technician's action on one object: decided with the object's site.
    "site": [OK, NO, NO, NO, NO, OK, OK],
    # Plant data, imports and batches: engineers and admins only (they hold ``edit_any_site``).
    "engineer": [NO, NO, NO, NO, NO, OK, OK],
    # Whole-plant, no one object (the retest sweep recomputes every due date from the tests).
    "any_technician": [OK, OK, OK, NO, NO, OK, OK],
}


@dataclass
class Site_:
    site: Site
    rack: Rack
    device: Device
    cable: Cable
    port: Port
    cage: Cage  # an empty cage
    spare: Transceiver  # kept at the site
    installed: Transceiver  # in the cable's A cage
    alert: Alert
    window: MaintenanceWindow
    note: FieldNote


@dataclass
class Scene:
    north: Site_
    south: Site_
    users: dict


def _site_objects(plant, key: str, site: Site, rack_name: str, leaf: str, label: str, engineer) -> Site_:
    rack = Rack.objects.get(name=rack_name)
    device = Device.objects.get(name=leaf)
    cable = Cable.objects.get(label=label)
    end = cable.ends.get(side="A")
    a_cage = end.cage or end.port.cage
    port = Port.objects.filter(cage=a_cage).order_by("pk").first()
    installed = Transceiver.objects.get(cage=a_cage)
    cage = Cage.objects.create(device=device, name="OSFP9", index=9, form_factor=FormFactor.OSFP)
    spare = f.module(serial=f"SPARE-{key}")
    spare.stock_site = site
    spare.save()
    now = timezone.now()
    alert = Alert.objects.create(
        rule=AlertRule.FEC_DEGRADATION,
        severity="notify",
        port=port,
        link=Link.objects.filter(active=True, a_port=port).first()
        or Link.objects.filter(b_port=port).first(),
        cable=cable,
        opened_at=now,
        updated_at=now,
        state="open",
        key=f"fec_degradation:{key}",
        summary="pre-FEC BER rising",
    )
    window = MaintenanceWindow.objects.create(
        starts_at=now, ends_at=now + timedelta(hours=4), reason="work", created_by=engineer
    )
    window.racks.add(rack)
    drained = MaintenanceWindow.objects.create(
        starts_at=now - timedelta(hours=3), ends_at=now - timedelta(hours=1), reason="drained"
    )
    drained.links.add(alert.link)
    LinkDrain.objects.create(
        alert=alert, link=alert.link, window=drained, drained_at=drained.starts_at, safe=True
    )
    note = journal.journal_add(target=cable, actor=engineer, kind="note", text="dusty")
    f.cable_test(cable, verdict="pass", tested_at=now - timedelta(days=1))
    RetestPolicy.objects.create(site=site, kind="olts", interval_days=90)
    RetestTrigger.objects.create(cable=cable, reason="alert", occurred_at=now)
    RmaCase.objects.create(transceiver=installed, opened_at=now)
    f.patch_panel(f"panel-{key}", rack=rack, u=40, positions=2)
    return Site_(site, rack, device, cable, port, cage, spare, installed, alert, window, note)


@pytest.fixture
def scene(plant, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path  # uploads (SOR files, photos, imports) land here
    users = dict(plant.users)
    users["loner"] = f.UserFactory(username="loner", role="technician")
    eng = users["engineer"]
    north = _site_objects(plant, "N", plant.north, "N01", "leaf-n", "N-1", eng)
    south = _site_objects(plant, "S", plant.south, "S01", "leaf-s", "S-1", eng)
    return Scene(north, south, users)


# --- the table ------------------------------------------------------------------------------

Do = Callable[[APIClient, Site_, Scene], object]


@dataclass
class Row:
    rule: str  # a key of EXPECT
    do: Do
    writes: bool = True  # an allowed request writes something (not a preview or a printout)
    strict: bool = True  # allowed = 2xx/3xx; else allowed = anything but 403 (a body only an
    # engineer's import could make valid: the refusal must come first, whatever the body)


def _json(method: str, url: str, body: dict | None = None) -> Do:
    return lambda c, s, sc: getattr(c, method)(url.format(s=s), body or {}, format="json")


def _form(url: str, body: Callable[[Site_], dict] | None = None) -> Do:
    return lambda c, s, sc: c.post(url.format(s=s), body(s) if body else {}, format="multipart")


def _olts_body(s: Site_) -> dict:
    return {"cable": s.cable.label, "readings": [{"fibre": 1, "wavelength_nm": 1310, "loss_db": 0.4}]}


def _sor(name="t.sor"):
    return SimpleUploadedFile(name, SOR.read_bytes())


def _tester_csv(s: Site_):
    text = f"Cable ID,Fiber,Wavelength,Loss\n{s.cable.label},1,1310,0.4\n"
    return SimpleUploadedFile("export.csv", text.encode(), content_type="text/csv")


def _swap_body(s: Site_) -> dict:
    return {"cage": s.installed.cage_id, "new_serial": s.spare.serial, "old_to": "failed"}


def _olts_form(s: Site_) -> dict:
    body = {"wavelength_nm": "1310", "direction": "AB", "reference_method": "1"}
    return body | {f"loss_{i}": "0.4" for i in range(1, 9)}


API_ROWS: dict[str, Row] = {
    # locations and devices: plant data
    "site-list POST": Row("engineer", _json("post", "/api/sites/", {"name": "West", "slug": "west"})),
    "site-detail PATCH": Row("engineer", _json("patch", "/api/sites/{s.site.pk}/", {"name": "Renamed"})),
    "site-detail PUT": Row(
        "engineer",
        lambda c, s, sc: c.put(
            f"/api/sites/{s.site.pk}/", {"name": "Renamed", "slug": s.site.slug}, format="json"
        ),
    ),
    "room-list POST": Row(
        "engineer",
        lambda c, s, sc: c.post("/api/rooms/", {"site": s.site.pk, "name": "Hall 9"}, format="json"),
    ),
    "room-detail PATCH": Row(
        "engineer",
        lambda c, s, sc: c.patch(f"/api/rooms/{s.rack.row.room_id}/", {"name": "Hall 2"}, format="json"),
    ),
    "room-detail PUT": Row(
        "engineer",
        lambda c, s, sc: c.put(
            f"/api/rooms/{s.rack.row.room_id}/", {"site": s.site.pk, "name": "Hall 2"}, format="json"
        ),
    ),
    "row-list POST": Row(
        "engineer",
        lambda c, s, sc: c.post("/api/rows/", {"room": s.rack.row.room_id, "name": "Z"}, format="json"),
    ),
    "row-detail PATCH": Row(
        "engineer", lambda c, s, sc: c.patch(f"/api/rows/{s.rack.row_id}/", {"name": "Y"}, format="json")
    ),
    "row-detail PUT": Row(
        "engineer",
        lambda c, s, sc: c.put(
            f"/api/rows/{s.rack.row_id}/", {"room": s.rack.row.room_id, "name": "Y"}, format="json"
        ),
    ),
    "rack-list POST": Row(
        "engineer",
        lambda c, s, sc: c.post("/api/racks/", {"row": s.rack.row_id, "name": "NEW-R"}, format="json"),
    ),
    "rack-detail PATCH": Row("engineer", _json("patch", "/api/racks/{s.rack.name}/", {"name": "R-RENAMED"})),
    "rack-detail PUT": Row(
        "engineer",
        lambda c, s, sc: c.put(
            f"/api/racks/{s.rack.name}/", {"row": s.rack.row_id, "name": "R-RENAMED"}, format="json"
        ),
    ),
    "vendor-list POST": Row("engineer", _json("post", "/api/vendors/", {"name": "Acme", "slug": "acme"})),
    "vendor-detail PATCH": Row(
        "engineer",
        lambda c, s, sc: c.patch(f"/api/vendors/{s.spare.model.vendor_id}/", {"name": "NV"}, format="json"),
    ),
    "vendor-detail PUT": Row(
        "engineer",
        lambda c, s, sc: c.put(
            f"/api/vendors/{s.spare.model.vendor_id}/", {"name": "NV", "slug": "nv"}, format="json"
        ),
    ),
    "device-list POST": Row(
        "engineer",
        lambda c, s, sc: c.post(
            "/api/devices/",
            {"name": "new-dev", "role": "leaf", "rack": s.rack.pk, "position_u": 30},
            format="json",
        ),
    ),
    "device-import-csv POST": Row(
        "engineer",
        lambda c, s, sc: c.generic(
            "POST",
            "/api/devices/import/?dry_run=0",
            f"name,role,manufacturer,device_type,rack,position\nnew-dev,leaf,NVIDIA,SN5600,{s.rack.name},30\n",
            content_type="text/csv",
        ),
        strict=False,
    ),
    "device-detail PATCH": Row(
        "engineer", _json("patch", "/api/devices/{s.device.name}/", {"position_u": 33})
    ),
    "device-detail PUT": Row(
        "engineer",
        lambda c, s, sc: c.put(
            f"/api/devices/{s.device.name}/",
            {"name": s.device.name, "role": "leaf", "rack": s.rack.pk, "position_u": 33},
            format="json",
        ),
        strict=False,
    ),
    "cage-list POST": Row(
        "engineer",
        lambda c, s, sc: c.post(
            "/api/cages/",
            {"device": s.device.pk, "name": "OSFP12", "index": 12, "form_factor": FormFactor.OSFP.value},
            format="json",
        ),
    ),
    "cage-detail PATCH": Row("engineer", _json("patch", "/api/cages/{s.cage.pk}/", {"name": "OSFP10"})),
    "cage-detail PUT": Row(
        "engineer",
        lambda c, s, sc: c.put(
            f"/api/cages/{s.cage.pk}/",
            {"device": s.device.pk, "name": "OSFP10", "index": 10, "form_factor": FormFactor.OSFP.value},
            format="json",
        ),
        strict=False,
    ),
    "port-list POST": Row(
        "engineer",
        lambda c, s, sc: c.post("/api/ports/", {"device": s.device.pk, "name": "mgmt0"}, format="json"),
    ),
    "port-detail PATCH": Row(
        "engineer", _json("patch", "/api/ports/{s.port.pk}/", {"description": "uplink"})
    ),
    "port-detail PUT": Row(
        "engineer",
        lambda c, s, sc: c.put(
            f"/api/ports/{s.port.pk}/", {"device": s.device.pk, "name": s.port.name}, format="json"
        ),
        strict=False,
    ),
    "port-aliases POST": Row(
        "engineer", _json("post", "/api/ports/{s.port.pk}/aliases/", {"name": "swp1", "source": "lldp"})
    ),
    "transceivermodel-list POST": Row(
        "engineer",
        lambda c, s, sc: c.post(
            "/api/transceiver-models/",
            {
                "vendor": s.spare.model.vendor_id,
                "part_number": "NEW-PN",
                "form_factor": FormFactor.OSFP.value,
            },
            format="json",
        ),
        strict=False,
    ),
    "transceivermodel-detail PATCH": Row(
        "engineer", _json("patch", "/api/transceiver-models/{s.spare.model_id}/", {"reach_m": 400})
    ),
    "transceivermodel-detail PUT": Row(
        "engineer",
        _json("put", "/api/transceiver-models/{s.spare.model_id}/", {"part_number": "X"}),
        strict=False,
    ),
    # modules: a technician's, in their sites
    "transceiver-list POST": Row(
        "engineer",
        lambda c, s, sc: c.post(
            "/api/transceivers/",
            {"model": s.spare.model_id, "serial": "API-NEW-1", "stock_site": s.site.pk},
            format="json",
        ),
    ),
    "transceiver-detail PATCH": Row(
        "site", _json("patch", "/api/transceivers/{s.installed.pk}/", {"serial": "EDITED", "firmware": "9.9"})
    ),
    "transceiver-detail PUT": Row(
        "site",
        lambda c, s, sc: c.put(
            f"/api/transceivers/{s.installed.pk}/",
            {"model": s.installed.model_id, "serial": "EDITED", "firmware": "9.9"},
            format="json",
        ),
    ),
    "transceiver-install POST": Row(
        "site", _json("post", "/api/transceivers/{s.spare.pk}/install/", None), strict=False
    ),
    "transceiver-remove POST": Row(
        "site", _json("post", "/api/transceivers/{s.installed.pk}/remove/", {"failed": True})
    ),
    # cables
    "cable-list POST": Row(
        "engineer",
        lambda c, s, sc: c.post(
            "/api/cables/",
            {
                "label": "NEW-1",
                "kind": "SMF_OS2",
                "a": {"device": s.device.name, "port_name": "Ethernet2/1"},
                "b": [{"device": s.device.name, "port_name": "Ethernet2/2"}],
            },
            format="json",
        ),
        strict=False,
    ),
    "cable-import-plan POST": Row(
        "engineer",
        lambda c, s, sc: c.generic("POST", "/api/cables/import/", "label\n", content_type="text/csv"),
        strict=False,
    ),
    "cable-detail PATCH": Row("site", _json("patch", "/api/cables/{s.cable.label}/", {"notes": "api edit"})),
    "cable-detail PUT": Row(
        "site",
        lambda c, s, sc: c.put(
            f"/api/cables/{s.cable.label}/",
            {"label": s.cable.label, "kind": s.cable.kind, "notes": "api edit"},
            format="json",
        ),
        strict=False,
    ),
    "cable-retire POST": Row(
        "site", _json("post", "/api/cables/{s.cable.label}/retire/", {"reason": "gone"})
    ),
    "cable-set-status POST": Row(
        "site", _json("post", "/api/cables/{s.cable.label}/status/", {"status": "faulty"})
    ),
    # tests and inspections
    "cabletest-list POST": Row("site", lambda c, s, sc: c.post("/api/tests/", _olts_body(s), format="json")),
    "cabletest-otdr POST": Row(
        "site",
        lambda c, s, sc: c.post(
            "/api/tests/otdr/", {"cable": s.cable.label, "fibre": 1, "files": [_sor()]}, format="multipart"
        ),
    ),
    "cabletest-otdr-batch POST": Row(
        "site",
        lambda c, s, sc: c.post(
            "/api/tests/otdr/batch/",
            {"instrument": "OTDR", "files": [_sor(f"{s.cable.label}_1.sor")]},
            format="multipart",
        ),
        strict=False,
    ),
    "cabletest-qualification POST": Row(
        "site",
        lambda c, s, sc: c.post(
            "/api/tests/qualification/",
            {"cable": s.cable.label, "link_up": True, "soak_minutes": 10},
            format="json",
        ),
        strict=False,
    ),
    "cabletest-import-export POST": Row(
        "site",
        lambda c, s, sc: c.post(
            "/api/tests/import/",
            {
                "file": _tester_csv(s),
                "instrument": "Generic",
                "apply": "true",
                "mapping": '{"cable": "Cable ID", "fibre": "Fiber", "wavelength_nm": "Wavelength", "loss_db": "Loss"}',
            },
            format="multipart",
        ),
        strict=False,
    ),
    "inspection-list POST": Row(
        "site",
        lambda c, s, sc: c.post(
            "/api/inspections/", {"cable": s.cable.label, "side": "A", "passed": True}, format="json"
        ),
    ),
    # alerts and maintenance
    "alert-acknowledge POST": Row("site", _json("post", "/api/alerts/{s.alert.pk}/acknowledge/")),
    "alert-silence POST": Row("site", _json("post", "/api/alerts/{s.alert.pk}/silence/", {"hours": 2})),
    "alert-repairs POST": Row(
        "site", _json("post", "/api/alerts/{s.alert.pk}/repairs/", {"action": "clean", "end": "A"})
    ),
    "alert-drain POST": Row("site", _json("post", "/api/alerts/{s.alert.pk}/drain/", {"hours": 2})),
    "alert-restore POST": Row("site", _json("post", "/api/alerts/{s.alert.pk}/restore/")),
    "alert-extend POST": Row("site", _json("post", "/api/alerts/{s.alert.pk}/extend/", {"hours": 2})),
    "maintenancewindow-list POST": Row(
        "site",
        lambda c, s, sc: c.post(
            "/api/maintenance-windows/",
            {
                "ends_at": (timezone.now() + timedelta(days=13)).isoformat(),
                "reason": "x",
                "racks": [s.rack.name],
            },
            format="json",
        ),
    ),
    "maintenancewindow-end POST": Row("site", _json("post", "/api/maintenance-windows/{s.window.pk}/end/")),
    # imports and reviewed steps
    "api-sync-conflicts POST": Row(
        "engineer",
        _json("post", "/api/sync/conflicts/", {"run": 0, "key": "x", "take": "ours"}),
        strict=False,
    ),
    "api-reconciliation-preview POST": Row(
        "engineer", _json("post", "/api/reconciliation/preview/", {"all": True}), writes=False, strict=False
    ),
    "api-reconciliation-apply POST": Row(
        "engineer", _json("post", "/api/reconciliation/apply/", {"token": "x"}), strict=False
    ),
    "retests-sweep-api POST": Row(
        "any_technician", _json("post", "/api/retests/sweep/"), writes=False, strict=False
    ),
}

PAGE_ROWS: dict[str, Row] = {
    "cable-test-olts": Row("site", _form("/c/{s.cable.label}/test/power-meter", _olts_form)),
    "cable-test-otdr": Row(
        "site", lambda c, s, sc: c.post(f"/c/{s.cable.label}/test/otdr", {"files": _sor(), "fibre": "1"})
    ),
    "cable-inspect": Row(
        "site",
        _form("/c/{s.cable.label}/inspect", lambda s: {f"e{s.cable.ends.get(side='A').pk}_result": "pass"}),
    ),
    "test-import": Row(
        "site",
        lambda c, s, sc: c.post(
            "/tests/import/",
            {
                "file": _tester_csv(s),
                "instrument": "Generic",
                "apply": "1",
                "map_cable": "Cable ID",
                "map_fibre": "Fiber",
                "map_wavelength_nm": "Wavelength",
                "map_loss_db": "Loss",
            },
        ),
    ),
    "alert-acknowledge": Row("site", _form("/alerts/{s.alert.pk}/acknowledge")),
    "alert-repair": Row(
        "site", _form("/alerts/{s.alert.pk}/repairs", lambda s: {"action": "clean", "end": "A"})
    ),
    "alert-silence": Row(
        "site", _form("/alerts/{s.alert.pk}/silence", lambda s: {"hours": "2", "reason": "x"})
    ),
    "alert-drain": Row("site", _form("/alerts/{s.alert.pk}/drain", lambda s: {"hours": "2"})),
    "alert-restore": Row("site", _form("/alerts/{s.alert.pk}/restore")),
    "alert-extend": Row("site", _form("/alerts/{s.alert.pk}/extend", lambda s: {"hours": "2"})),
    "maintenance": Row(
        "site", _form("/maintenance/", lambda s: {"targets": s.rack.name, "hours": "300", "reason": "x"})
    ),
    "sync-conflict-resolve": Row(
        "engineer", _form("/sync/conflicts/resolve", lambda s: {"run": "0", "key": "x"}), strict=False
    ),
    "reconciliation-preview": Row("engineer", _form("/reconciliation/preview"), writes=False, strict=False),
    "reconciliation-apply": Row("engineer", _form("/reconciliation/apply"), strict=False),
    # A technician prints the labels of one cable of their sites (a file, nothing written).
    "labels-print": Row("site", _form("/labels/print/", lambda s: {"cable": s.cable.label}), writes=False),
    "cable-fault": Row(
        "site", _form("/c/{s.cable.label}/fault", lambda s: {"seen": "dark", "status": "faulty"})
    ),
    "cable-serviced": Row("site", _form("/c/{s.cable.label}/serviced", lambda s: {"kind": "cleaned"})),
    "cable-swap": Row("site", _form("/c/{s.cable.label}/swap", _swap_body)),
    # A replacement adds a cable (``add_cable``): engineers.
    "cable-replace": Row(
        "engineer", _form("/c/{s.cable.label}/replace", lambda s: {"new_label": "RPL-1", "reason": "bent"})
    ),
    "cable-edit": Row(
        "site",
        _form(
            "/c/{s.cable.label}/edit",
            lambda s: {
                "notes": "page edit",
                "polarity": s.cable.polarity,
                "version": s.cable.updated_at.isoformat(),
            },
        ),
    ),
    "cable-set-status": Row("site", _form("/c/{s.cable.label}/status", lambda s: {"status": "degraded"})),
    "journal-add": Row(
        "site", _form("/journal/cable/{s.cable.label}/add", lambda s: {"kind": "note", "text": "x"})
    ),
    "journal-close": Row("site", _form("/journal/{s.note.pk}/close", lambda s: {"reason": "done"})),
    "cable-create": Row("engineer", _form("/cables/new"), strict=False),
    "cable-bulk-status": Row(
        "site", _form("/cables/status", lambda s: {"cable": [str(s.cable.pk)], "status": "faulty"})
    ),
    "cable-import": Row("engineer", _form("/cables/import"), strict=False),
    "transceiver-create": Row(
        "engineer",
        _form(
            "/transceivers/new",
            lambda s: {"model": str(s.spare.model_id), "serial": "PAGE-NEW", "stock_site": str(s.site.pk)},
        ),
    ),
    "transceiver-edit": Row(
        "site",
        _form(
            "/t/{s.installed.pk}/edit",
            lambda s: {"serial": "EDITED", "firmware": "9.9", "version": s.installed.updated_at.isoformat()},
        ),
    ),
    "retests-sweep": Row("any_technician", _form("/retests/sweep/"), writes=False, strict=False),
}

# Writes that are not an action on the plant, each with the test that guards it.
NOT_PLANT: dict[str, str] = {
    "login": "the login form (tests/inventory/security/test_sessions.py)",
    "logout": "the logout form (test_sessions.py)",
    "api apitoken-list POST": "a user's own tokens, never more than their role (test_tokens.py)",
    "api apitoken-revoke POST": "a user's own tokens (test_tokens.py)",
    "api telemetry-ingest POST": "telemetry ingest: the ingest permission (test_token_scope.py)",
    "api job-register POST": "a job's ranks from its launcher: the ingest permission (tests/inventory/collectives/test_api.py)",
    "api collectives-ingest POST": "collective timings: the ingest permission (tests/inventory/collectives/test_api.py)",
    "profile": "a user's own profile and tokens (test_tokens.py)",
    "token-revoke": "a user's own token (test_tokens.py)",
    "reminder-preferences": "a user's own reminder settings (tests/inventory/views/test_retest_pages.py)",
}

# Pages that only read: a POST to them by an engineer writes nothing (checked below).
READ_PAGES = {
    "healthz", "home", "search", "cable-page", "rack-page", "otdr-download", "inspection-photo",
    "commissioning-report", "commissioning-report-pdf", "alert-list", "alert-detail", "vendor-compare",
    "rack-bringup", "topology-export", "metrics", "telemetry-pipeline", "reconciliation", "sync-conflicts",
    "label-batch", "label-batch-status", "label-batch-download", "transceiver-detail", "device-page",
    "port-page", "cable-list", "transceiver-list", "retests-plan", "retests-csv", "retests-pdf", "forecast",
    "forecast-spares-csv", "rack-list", "favicon", "docs", "docs-page", "repair-report", "impact-report",
}  # fmt: skip

WRITE_METHODS = ("post", "put", "patch", "delete")


def _walk(patterns, prefix=""):
    for p in patterns:
        if isinstance(p, URLResolver):
            yield from _walk(p.url_patterns, prefix + str(p.pattern))
        else:
            yield prefix + str(p.pattern), p


def url_write_paths() -> tuple[set[str], set[str]]:
    """(API write keys ``"<name> <METHOD>"``, page names) from the URLconf, admin excluded."""
    api, pages = set(), set()
    for route, p in _walk(get_resolver().url_patterns):
        if route.startswith("admin/"):
            continue
        cb = p.callback
        cls = getattr(cb, "cls", None) or getattr(cb, "view_class", None)
        if route.startswith("api/"):
            methods = getattr(cb, "actions", None) or {m: m for m in WRITE_METHODS if hasattr(cls, m)}
            api |= {f"{p.name} {m.upper()}" for m in methods if m in WRITE_METHODS}
        else:
            pages.add(p.name)
    return api, pages


def test_the_table_covers_every_write_path_in_the_urlconf():
    api, pages = url_write_paths()
    known_api = set(API_ROWS) | {k.removeprefix("api ") for k in NOT_PLANT if k.startswith("api ")}
    assert api - known_api == set(), "an API write without a row in the table"
    assert known_api - api == set(), "a row for an API write that no longer exists"
    known_pages = set(PAGE_ROWS) | READ_PAGES | {k for k in NOT_PLANT if not k.startswith("api ")}
    assert pages - known_pages == set(), "a page without a row (a write) or a READ_PAGES entry"
    assert known_pages - pages == set(), "a row for a page that no longer exists"


# --- running the table ----------------------------------------------------------------------


def _tables() -> dict[str, str]:
    """Every inventory table, row by row (history tables included), as a digest per table."""
    out = {}
    for model in apps.get_app_config("inventory").get_models():
        rows = model._base_manager.order_by("pk").values_list()
        out[model._meta.db_table] = hashlib.sha256(repr(list(rows)).encode()).hexdigest()
    return out


def _media() -> list[str]:
    """The files under MEDIA_ROOT (uploads, SOR files, photos, import uploads)."""
    return sorted(str(p) for p in Path(settings.MEDIA_ROOT).rglob("*") if p.is_file())


def _fingerprint() -> tuple[dict[str, str], list[str]]:
    return _tables(), _media()


class _Undo(Exception):
    pass


def _client(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def _run(scene: Scene, row: Row) -> list[tuple[str, str, int, bool]]:
    """(outcome, expected, status, written) per subject, each subject's write rolled back."""
    got = []
    # Each subject's write is rolled back (and a login writes no inventory table), so the tables
    # are read once before them all. Files are not rolled back: an allowed upload stays on disk, so
    # they are listed again for each subject.
    tables = _tables()
    for (who, where), expected in zip(SUBJECTS, EXPECT[row.rule], strict=True):
        client = _client(scene.users[who])
        target = getattr(scene, where)
        media = _media()
        try:
            with transaction.atomic():
                response = row.do(client, target, scene)
                written = _media() != media or _tables() != tables
                raise _Undo
        except _Undo:
            pass
        code = response.status_code
        assert code != 500, (who, where, response.content[:300])
        if row.strict:
            outcome = OK if code < 400 and (written or not row.writes) else NO
            if code < 400 and row.writes and not written:
                outcome = f"answered {code} but wrote nothing"
        else:
            outcome = NO if code == 403 else OK
        if outcome == NO and code != 403:
            outcome = f"refused with {code}, not 403"
        if code == 403 and written:
            outcome = "refused but wrote"
        detail = b"" if outcome == expected else response.content[:300]
        got.append((f"{who}@{where}", outcome, expected, code, detail))
    return got


def _check(scene, row):
    got = _run(scene, row)
    wrong = [g for g in got if g[1] != g[2]]
    assert not wrong, wrong


@pytest.mark.parametrize("key", list(API_ROWS))
def test_every_api_write_follows_the_one_policy(scene, key):
    _check(scene, API_ROWS[key])


@pytest.mark.parametrize("key", list(PAGE_ROWS))
def test_every_page_write_follows_the_one_policy(scene, key):
    _check(scene, PAGE_ROWS[key])


@pytest.mark.parametrize("name", sorted(READ_PAGES))
def test_a_post_to_a_reading_page_writes_nothing(scene, name):
    route = next(
        r for r, p in _walk(get_resolver().url_patterns) if p.name == name and not r.startswith("api/")
    )
    url = "/" + (
        route.replace("<str:label>", "N-1")
        .replace("<str:name>", "N01")
        .replace("<path:port>", "x")
        .replace("<int:pk>", "1")
        .replace("<uuid:uid>", "00000000-0000-0000-0000-000000000000")
        .replace("<str:fmt>", "csv")
    )
    before = _fingerprint()
    response = _client(scene.users["engineer"]).post(url, {"status": "faulty", "name": "x"})
    assert response.status_code != 500
    assert _fingerprint() == before, url


# --- the admin ------------------------------------------------------------------------------

# Every inventory model the admin edits: "site" (its admin is a SiteScopedAdmin and the one
# policy decides with the object's site) or why the role alone decides.
ADMIN_ROWS: dict[str, str] = {
    "site": "site",
    "room": "site",
    "row": "site",
    "rack": "site",
    "device": "site",
    "port": "site",
    "portmapping": "site",
    "transceiver": "site",
    "rmacase": "site",
    "cable": "site",
    "link": "site",
    "cabletest": "site",
    "alert": "site",
    "maintenancewindow": "site",
    "retestpolicy": "site",
    "retesttrigger": "site",
    "team": "no site: teams are assigned to sites by engineers",
    "vendor": "no site: catalogue data",
    "transceivermodel": "no site: catalogue data",
    "gpunicmap": "no site: catalogue data (a server model's GPU-to-NIC map)",
    "apitoken": "a user's tokens (test_tokens.py)",
    "syncrun": "read-only record of a sync",
    "instrumentmapping": "no site: a tester's column mapping",
    "reminderdigest": "a mail of many sites, read-only",
    "retestsweeprun": "read-only record of a sweep",
    "userprofile": "a user's own settings",
}


def _admin_models() -> dict[str, admin.ModelAdmin]:
    return {
        m._meta.model_name: a for m, a in admin.site._registry.items() if m._meta.app_label == "inventory"
    }


def test_the_admin_table_covers_every_inventory_admin():
    registered = _admin_models()
    assert set(registered) == set(ADMIN_ROWS)
    for name, model_admin in registered.items():
        scoped = ADMIN_ROWS[name] == "site"
        assert (name in authz.SITE_SCOPED_MODELS) == scoped, name
        if scoped:  # (an unscoped model's admin may share the mixin: the policy lets it through)
            assert isinstance(model_admin, SiteScopedAdmin), name


def _admin_object(model, site: Site):
    """An object of ``model`` whose only site is ``site``."""
    for obj in model._base_manager.order_by("pk"):
        if authz.site_ids_of(obj) == {site.pk}:
            return model._base_manager.get(pk=obj.pk)  # without the cached sites
    raise AssertionError(f"the scene has no {model._meta.model_name} in {site}")


# What a staff technician may change in the admin: the models their role changes, in their site.
TECHNICIAN_CHANGES = {"cable", "transceiver", "alert"}


@pytest.mark.parametrize("name", sorted(k for k, v in ADMIN_ROWS.items() if v == "site"))
def test_every_site_scoped_admin_follows_the_one_policy(scene, name):
    model = next(
        m for m in admin.site._registry if m._meta.model_name == name and m._meta.app_label == "inventory"
    )
    rule = "site" if name in TECHNICIAN_CHANGES else "engineer"
    wrong = []
    before = _fingerprint()  # (each subject's post is rolled back; staff flags are not inventory)
    for (who, where), expected in zip(SUBJECTS, EXPECT[rule], strict=True):
        if who == "collector":
            continue  # no view permission: the admin shows them nothing
        user = scene.users[who]
        user.is_staff = True
        user.save()
        obj = _admin_object(model, getattr(scene, where).site)
        client = _client(user)
        url = f"/admin/inventory/{name}/{obj.pk}/change/"
        form = client.get(url)
        assert form.status_code == 200, (who, name)
        data = f.admin_post_data(form)
        try:
            with transaction.atomic():
                response = client.post(url, data)
                written = _fingerprint() != before
                raise _Undo
        except _Undo:
            pass
        # Posting the form back as rendered: saved (302), or shown again (200) where a model's
        # admin form wants more than it rendered; refused is a 403 that wrote nothing.
        outcome = NO if response.status_code == 403 else OK
        if response.status_code == 403 and written:
            outcome = "refused but wrote"
        if outcome != expected:
            wrong.append((who, where, outcome, expected))
    assert not wrong, wrong


def test_an_admin_change_that_moves_a_cable_into_another_site_is_refused_and_writes_nothing(scene):
    """A staff technician moves their own cable's B end onto another site's cage through the
    cable's inline: the object is checked again once saved (its sites changed), so it is a 403,
    and nothing is written."""
    tech = scene.users["technician"]
    tech.is_staff = True
    tech.save()
    client = _client(tech)
    cable = scene.north.cable
    url = f"/admin/inventory/cable/{cable.pk}/change/"
    data = f.admin_post_data(client.get(url))
    end_b = cable.ends.get(side="B")
    prefix = next(k for k, v in data.items() if k.endswith("-id") and v == str(end_b.pk)).removesuffix("-id")
    south_cage = Cage.objects.get(device__name="leaf-s2", name="OSFP2")  # free: S-1 ends on OSFP1
    data[f"{prefix}-cage"] = str(south_cage.pk)
    before = _fingerprint()
    response = client.post(url, data)
    assert response.status_code == 403, (
        [fs.errors for fs in response.context["inline_admin_formsets"][0].formset.forms]
        if response.context
        else ""
    )
    assert _fingerprint() == before
    assert cable.ends.get(side="B").cage_id == end_b.cage_id


def test_imports_and_plant_writes_are_only_for_roles_that_act_in_every_site():
    """Whole-plant imports (cable plans, device CSV, NetBox resolution, reconciliation) and new
    plant objects are decided by the role alone: every role that holds one holds ``edit_any_site``
    too, so the site scope never needs to be asked of them row by row."""
    from inventory.access.roles import role_permissions

    for role, perms in role_permissions().items():
        plant_writes = {
            "import_plant",
            "add_cable",
            "add_device",
            "add_rack",
            "add_transceiver",
            "print_labels",
        }
        if perms & plant_writes:
            assert "edit_any_site" in perms, role


# --- imports: the role decides who imports at all, the one policy each imported row's site ------

# ``importer``: a technician of North's team whose account also holds the import permissions (a
# role an admin could build) but not ``edit_any_site``. The import paths are then decided row by
# row with the sites the rows touch: in North the import writes; in South each row is an error
# naming the site and nothing is written (a 400 with the rows, or the page's dry run showing the
# error and no apply). The engineer and admin (``edit_any_site``) import anywhere.
IMPORT_SUBJECTS = [("importer", "north", OK), ("importer", "south", NO), ("engineer", "south", OK)]


def _plan_csv(s: Site_) -> str:
    device = s.device.name
    return (
        "label,kind,a_device,a_port,b_device,b_port\n"
        f"IMP-{s.site.slug},SMF_OS2,{device},Ethernet2/1,{device}2,Ethernet2/1\n"
    )


def _plan_page(c, s, sc):
    """The desk import: the dry run, then (when it found no error) its apply."""
    upload = SimpleUploadedFile("plan.csv", _plan_csv(s).encode(), content_type="text/csv")
    dry = c.post("/cables/import", {"file": upload})
    token = dry.context.get("token") if dry.context else None
    if not token:
        return dry
    return c.post("/cables/import", {"apply": "1", "token": token, "sha256": dry.context["sha256"]})


IMPORT_ROWS: dict[str, Do] = {
    "cable-import-plan POST": lambda c, s, sc: c.generic(
        "POST", "/api/cables/import/?dry_run=0", _plan_csv(s), content_type="text/csv"
    ),
    "cable-import": _plan_page,
    "device-import-csv POST": lambda c, s, sc: c.generic(
        "POST",
        "/api/devices/import/?dry_run=0",
        f"name,role,manufacturer,device_type,rack,position\nimp-{s.site.slug},leaf,NVIDIA,SN5600,{s.rack.name},30\n",
        content_type="text/csv",
    ),
}


@pytest.fixture
def importer(scene):
    from django.contrib.auth.models import Permission

    user = f.UserFactory(username="importer", role="technician")
    user.user_permissions.add(
        *Permission.objects.filter(
            content_type__app_label="inventory", codename__in=["import_plant", "add_cable", "add_device"]
        )
    )
    scene.north.site.team.members.add(user)
    scene.users["importer"] = user
    return user


@pytest.mark.parametrize("key", list(IMPORT_ROWS))
def test_an_import_is_decided_with_the_sites_its_rows_touch(scene, importer, key):
    assert key in API_ROWS or key in PAGE_ROWS  # a row of the table above, run here row by row
    wrong = []
    for who, where, expected in IMPORT_SUBJECTS:
        target = getattr(scene, where)
        before = _fingerprint()
        try:
            with transaction.atomic():
                response = IMPORT_ROWS[key](_client(scene.users[who]), target, scene)
                written = _fingerprint() != before
                raise _Undo
        except _Undo:
            pass
        body = response.content.decode()
        if written:
            outcome = OK if response.status_code < 400 else "refused but wrote"
        elif response.status_code == 403 or (target.site.name in body and "not in a team for" in body):
            outcome = NO  # refused, naming the site, nothing written
        else:
            outcome = f"{response.status_code}, nothing written: {body[:300]}"
        if outcome != expected:
            wrong.append((who, where, outcome, expected))
    assert not wrong, wrong
