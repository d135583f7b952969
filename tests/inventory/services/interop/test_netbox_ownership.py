"""The sync is honest about who owns a field (issue 32): a cable re-measured here (15 m) is not
set back to NetBox's length at the next sync; it is a conflict naming both values, and stays one
until a person settles it. The real NetBox 4.6.8 responses are served by ``FakeNetbox``."""

from __future__ import annotations

import copy
from decimal import Decimal
from pathlib import Path

import pytest

from inventory.core.choices import PlacementEnd
from inventory.core.interop.ownership import cable_field_owners, ownership_table_markdown
from inventory.models import Cable, Transceiver
from inventory.services.interop.netbox import netbox_import, netbox_sync
from inventory.services.plant.transceivers import transceiver_remove

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[4]


def _remeasure(label: str, metres: str) -> Cable:
    cable = Cable.objects.get(label=label)
    cable.length_m = Decimal(metres)
    cable._change_reason = "re-measured"
    cable.save()
    return cable


def _conflicts(plan, label):
    return [c.detail for c in plan.changes if c.key == label and c.action == "conflict"]


def test_a_local_edit_of_a_netbox_owned_field_is_a_conflict_naming_both_values(netbox):
    netbox_import(snapshot=netbox.fetch(), dry_run=False)
    theirs = str(Cable.objects.get(label="C-H1-0001").length_m)
    _remeasure("C-H1-0001", "15")
    for _ in range(2):  # the next hourly sync, and the one after: still a conflict, never a change
        plan = netbox_import(snapshot=netbox.fetch(), dry_run=False)
        (conflict,) = _conflicts(plan, "C-H1-0001")
        assert conflict["field"] == "length_m" and conflict["owner"] == "netbox"
        assert "15.00 here" in conflict["message"] and f"{theirs} in NetBox" in conflict["message"]
        assert str(Cable.objects.get(label="C-H1-0001").length_m) == "15.00"


def test_a_field_owned_here_is_never_written_and_a_field_not_edited_is_taken(netbox, settings):
    netbox_import(snapshot=netbox.fetch(), dry_run=False)
    settings.CABLETRACK_NETBOX_FIELD_OWNERS = {"length_m": "cabletrack"}
    _remeasure("C-H1-0001", "15")
    plan = netbox_import(snapshot=netbox.fetch(), dry_run=False)
    assert not _conflicts(plan, "C-H1-0001")
    assert str(Cable.objects.get(label="C-H1-0001").length_m) == "15.00"
    # NetBox's own change to a cable nobody edited here is taken (NetBox owns length by default).
    settings.CABLETRACK_NETBOX_FIELD_OWNERS = {}
    docs = copy.deepcopy(netbox.docs["cables"])
    other = next(c for c in docs["results"] if c["label"] == "C-H1-0002")
    other["length"], other["length_unit"] = 7, {"value": "m", "label": "Meters"}
    netbox.docs["cables"] = docs
    plan = netbox_import(snapshot=netbox.fetch(), dry_run=False)
    assert not _conflicts(plan, "C-H1-0002")
    assert str(Cable.objects.get(label="C-H1-0002").length_m) == "7.00"


def test_a_field_owned_by_both_keeps_a_local_edit_until_netbox_changes_it_too(netbox, settings):
    settings.CABLETRACK_NETBOX_FIELD_OWNERS = {"length_m": "both"}
    netbox_import(snapshot=netbox.fetch(), dry_run=False)
    _remeasure("C-H1-0001", "15")
    plan = netbox_import(snapshot=netbox.fetch(), dry_run=False)
    assert not _conflicts(plan, "C-H1-0001")
    assert str(Cable.objects.get(label="C-H1-0001").length_m) == "15.00"
    docs = copy.deepcopy(netbox.docs["cables"])
    mine = next(c for c in docs["results"] if c["label"] == "C-H1-0001")
    mine["length"], mine["length_unit"] = 9, {"value": "m", "label": "Meters"}
    netbox.docs["cables"] = docs
    (conflict,) = _conflicts(netbox_import(snapshot=netbox.fetch(), dry_run=False), "C-H1-0001")
    assert "15.00 here" in conflict["message"] and "9.00 in NetBox" in conflict["message"]


def test_a_bad_ownership_setting_is_refused_in_words():
    with pytest.raises(ValueError, match="unknown field 'colour'"):
        cable_field_owners({"colour": "netbox"})
    with pytest.raises(ValueError, match="owner 'us'"):
        cable_field_owners({"length_m": "us"})


def test_the_documented_ownership_table_is_the_codes_table():
    """The NetBox page of the documentation shows the table the code decides with: generated from
    it at every build (tools/docs.py) and included where the page explains ownership."""
    from tools.docs import netbox_ownership

    page = (ROOT / "docs" / "engineer" / "netbox.md").read_text()
    assert '--8<-- "docs/_generated/netbox-ownership.md"' in page
    assert ownership_table_markdown(cable_field_owners({})).strip() in netbox_ownership()


def test_the_sync_writes_nothing_back_to_netbox_not_even_a_failed_modules_status(netbox):
    """What docs/engineer/netbox.md says: the sync only reads NetBox (GET); a module that failed
    here keeps its NetBox status until someone changes it there (or exports it)."""
    (first,) = netbox_sync(url=netbox.url, token="secret-token", sites=["gpu-hall-1"])
    assert not first.error, first.error
    module = Transceiver.objects.get(serial="MT2431FT00101")
    transceiver_remove(transceiver=module, reason=PlacementEnd.FAILED)
    assert Transceiver.objects.get(pk=module.pk).status == "failed"
    netbox.requests.clear()
    (run,) = netbox_sync(url=netbox.url, token="secret-token", sites=["gpu-hall-1"])
    assert not run.error, run.error
    assert "/api/dcim/modules/" in " ".join(netbox.requests)  # it read the modules again ...
    assert netbox.patches == []  # ... and wrote nothing there (the fake answers no other write)
    assert Transceiver.objects.get(pk=module.pk).status == "failed"  # nor took NetBox's back
