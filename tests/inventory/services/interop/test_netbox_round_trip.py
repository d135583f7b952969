"""NetBox -> cabletrack -> NetBox loses nothing, and a sync of an unchanged site writes nothing.

The real NetBox 4.6.8 responses (tests/data/netbox) are served by ``FakeNetbox``. The round
trip: import them, export NetBox's cable CSV, let "NetBox" take that CSV back (each row updates
the cable of its label, as NetBox's bulk import does with ``id``), and import again.
"""

from __future__ import annotations

import copy
import csv
import io
from decimal import Decimal

import pytest
from django.apps import apps

from inventory.core.interop.nautobot import nautobot_fetch
from inventory.core.interop.netbox_vocab import module_to_netbox
from inventory.models import Cable, ExternalRef, Transceiver
from inventory.services.interop.netbox import netbox_import
from inventory.services.plans.files import netbox_csv_export
from tests.inventory.services.interop.test_nautobot_import import DATA as NAUTOBOT_DATA
from tests.inventory.services.interop.test_nautobot_import import ROUTES as NAUTOBOT_ROUTES
from tests.inventory.services.interop.test_netbox_import import FakeNetbox

pytestmark = pytest.mark.django_db


def history_rows() -> dict[str, int]:
    """Rows in every history table (django-simple-history's ``Historical*`` models)."""
    return {
        m.__name__: m.objects.count()
        for m in apps.get_app_config("inventory").get_models()
        if m.__name__.startswith("Historical")
    }


def netbox_values(cable: dict) -> dict:
    """A NetBox cable's values that cabletrack maps: as NetBox writes them in its CSV."""

    def value(v):
        return (v or {}).get("value") if isinstance(v, dict) else v

    length = cable.get("length")
    return {
        "type": cable["type"],
        "status": value(cable["status"]),
        "profile": value(cable.get("profile")) or "",
        "length": Decimal(str(length)) if length is not None else None,
        "length_unit": value(cable.get("length_unit")) or "",
        "color": cable["color"],
    }


def csv_values(row: dict) -> dict:
    return {
        "type": row["type"],
        "status": row["status"],
        "profile": row["profile"],
        "length": Decimal(row["length"]) if row["length"] else None,
        "length_unit": row["length_unit"],
        "color": row["color"],
    }


def test_fetch_asks_only_for_what_the_site_needs(netbox):
    netbox.fetch()
    by_endpoint = {}
    for path in netbox.requests:
        by_endpoint.setdefault(path.split("?")[0].rstrip("/").split("/")[-1], []).append(path)
    assert all("slug=gpu-hall-1" in p and "site=" not in p for p in by_endpoint["sites"])
    # Manufacturers and module types by the ids the site's devices and modules reference.
    assert by_endpoint["manufacturers"] and all("id=" in p for p in by_endpoint["manufacturers"])
    assert "id=6" in by_endpoint["manufacturers"][0] and "id=7" in by_endpoint["manufacturers"][0]
    assert by_endpoint["module-types"] and all("id=" in p for p in by_endpoint["module-types"])
    for endpoint in ("racks", "devices", "modules", "interfaces", "front-ports", "rear-ports", "cables"):
        assert all("site=gpu-hall-1" in p for p in by_endpoint[endpoint]), endpoint


def test_reimport_of_an_unchanged_site_writes_no_history_rows(netbox):
    netbox_import(snapshot=netbox.fetch(), dry_run=False)
    before = history_rows()
    assert before["HistoricalPortMapping"] == 24
    for _ in range(3):
        again = netbox_import(snapshot=netbox.fetch(), dry_run=False)
        assert {c.action for c in again.changes} <= {"unchanged", "skip"}
    assert history_rows() == before
    # A real change is still written, once.
    docs = copy.deepcopy(netbox.docs["front-ports"])
    front = next(p for p in docs["results"] if p["device"]["name"] == "pp-a01" and p["name"] == "Front 2")
    front["rear_ports"][0]["rear_port_position"] = 9
    netbox.docs["front-ports"] = docs
    plan = netbox_import(snapshot=netbox.fetch(), dry_run=False)
    assert [(c.kind, c.key, c.action) for c in plan.changes if c.action != "unchanged"] == [
        ("port_mapping", "pp-a01:Front 2", "change")
    ]
    assert history_rows()["HistoricalPortMapping"] == 25


def test_round_trip_of_the_fixtures_keeps_every_netbox_value(netbox):
    original = {c["label"]: c for c in copy.deepcopy(netbox.docs["cables"])["results"]}
    netbox_import(snapshot=netbox.fetch(), dry_run=False)
    text, not_exported = netbox_csv_export()
    rows = {r["label"]: r for r in csv.DictReader(io.StringIO(text))}
    assert [n["label"] for n in not_exported] == ["C-H1-0008"]  # the 2x2 harness: reported
    assert set(rows) | {"C-H1-0008"} == set(original)
    for label, row in rows.items():
        assert csv_values(row) == netbox_values(original[label]), label
    # The values the issue names, spelled out: nothing became its nearest equal.
    assert (rows["C-H1-0001"]["type"], rows["C-H1-0003"]["type"]) == ("smf", "smf-os2")
    assert rows["C-H1-0007"]["status"] == "decommissioning"
    assert (rows["C-H1-0007"]["length"], rows["C-H1-0007"]["length_unit"]) == ("40", "ft")
    assert rows["TRK-A01-B01-1"]["profile"] == "single-1c12p"
    assert rows["C-H1-0006"]["status"] == "planned"
    # Tags, comments and the site that qualifies each device name are written too (issue 32).
    for label, row in rows.items():
        assert row["tags"] == ",".join(sorted(t["slug"] for t in original[label]["tags"])), label
        assert row["comments"] == original[label]["comments"], label
        for side in ("a", "b"):
            term = original[label][f"{side}_terminations"][0]["object"]
            assert row[f"side_{side}_site"] == _site_of(term["device"]["name"]), label
    assert rows["C-H1-0007"]["comments"].startswith("Replaced by structured path")

    # NetBox takes the CSV back (each row updates the cable of its label) ...
    docs = copy.deepcopy(netbox.docs["cables"])
    for cable in docs["results"]:
        row = rows.get(cable["label"])
        if row:
            cable["type"] = row["type"]
            cable["status"] = {"value": row["status"], "label": row["status"].title()}
            cable["profile"] = {"value": row["profile"]} if row["profile"] else None
            cable["length"] = float(row["length"])
            cable["length_unit"] = {"value": row["length_unit"]}
    netbox.docs["cables"] = docs
    before = history_rows()
    # ... and the next import finds nothing changed, anywhere.
    again = netbox_import(snapshot=netbox.fetch(), dry_run=False)
    assert {c.action for c in again.changes} <= {"unchanged", "skip"}
    assert history_rows() == before
    text_again, _ = netbox_csv_export()
    assert text_again == text
    # A failed module stays failed (a module in a cage is installed here; NetBox's status is kept).
    failed = Transceiver.objects.get(serial="MT2431FT00104")
    ref = ExternalRef.objects.get(kind="module", object_id=failed.pk)
    assert module_to_netbox(status=failed.status, kept=ref.attributes) == "failed"


def _site_of(device: str) -> str:
    from inventory.models import Device

    return Device.objects.select_related("rack__row__room__site").get(name=device).rack.row.room.site.name


def test_a_value_changed_here_is_exported_as_ours(netbox):
    netbox_import(snapshot=netbox.fetch(), dry_run=False)
    cable = Cable.objects.get(label="C-H1-0007")
    cable.length_m = Decimal("15.00")
    cable.save()
    text, _ = netbox_csv_export()
    row = next(r for r in csv.DictReader(io.StringIO(text)) if r["label"] == "C-H1-0007")
    assert (row["length"], row["length_unit"], row["type"], row["status"]) == (
        "15",
        "m",
        "smf",
        "decommissioning",
    )


def test_the_harness_is_listed_as_not_exported_through_the_api(netbox, engineer_api):
    netbox_import(snapshot=netbox.fetch(), dry_run=False)
    r = engineer_api.get("/api/cables/export/?as=netbox")
    assert r.status_code == 200
    assert r["X-Not-Exported-Count"] == "1"
    assert r["X-Not-Exported"] == "C-H1-0008"
    assert "C-H1-0008" not in r.content.decode()
    report = engineer_api.get("/api/cables/export/?as=netbox&report=1").json()
    (missing,) = report["not_exported"]
    assert missing["label"] == "C-H1-0008"
    assert "2 terminations on side A and 2 on side B" in missing["reason"]
    assert report["csv"].count("\r\n") == 8  # the header and the 7 one-to-one cables


def test_nautobot_values_come_back_unchanged_too():
    """Nautobot's shapes (tests/data/nautobot): 12.5 m is 1250 cm there, and stays so."""
    fake = FakeNetbox(NAUTOBOT_DATA, NAUTOBOT_ROUTES)
    try:
        netbox_import(
            snapshot=nautobot_fetch(url=fake.url, token="secret-token", site="gpu-hall-1"), dry_run=False
        )
        before = history_rows()
        netbox_import(
            snapshot=nautobot_fetch(url=fake.url, token="secret-token", site="gpu-hall-1"), dry_run=False
        )
        assert history_rows() == before
        for endpoint in ("manufacturers", "module-types"):
            asked = [r for r in fake.requests if f"/{endpoint}/" in r]
            assert asked and all("id=" in r for r in asked), endpoint  # never the whole catalogue
    finally:
        fake.server.shutdown()
    rows = {r["label"]: r for r in csv.DictReader(io.StringIO(netbox_csv_export()[0]))}
    assert str(Cable.objects.get(label="C-H1-0001").length_m) == "12.50"
    assert [rows["C-H1-0001"][k] for k in ("type", "length", "length_unit")] == ["smf", "1250", "cm"]
    assert [rows["C-H1-0007"][k] for k in ("status", "length", "length_unit")] == [
        "decommissioning",
        "40",
        "ft",
    ]
    failed = Transceiver.objects.get(serial="MT2431FT00104")
    ref = ExternalRef.objects.get(kind="module", object_id=failed.pk)
    assert module_to_netbox(status=failed.status, kept=ref.attributes) == "failed"
