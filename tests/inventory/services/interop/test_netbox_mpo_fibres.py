"""The NetBox sync never records an MPO cable end without its fibre count: it takes the count from
what NetBox says (the module's connector, "2x MPO-12/APC"; a rear port's positions; the other end
of a one-to-one cable) and says where it came from, or reports the cable as not imported, with the
reason, as it reports other objects it leaves out. Real NetBox 4.6.8 responses (tests/data/netbox).

    [gpu-0001 eth1]--C-H1-0003--[pp-a01 Front 1]  [pp-a01 Rear 1]==TRK-A01-B01-1==[pp-b01 Rear 1]
    [pp-b01 Front 1]--C-H1-0005--[leaf-01 Ethernet2/1]
"""

import copy

import pytest

from inventory.core.choices import ConnectorType
from inventory.models import Cable, CableEnd
from inventory.services.interop.netbox import netbox_import

pytestmark = pytest.mark.django_db


def _counts(label: str) -> list[tuple[str, str, int | None]]:
    ends = CableEnd.objects.filter(cable__label=label).order_by("side", "leg")
    return [(e.side, e.connector_type, e.fibre_count) for e in ends]


def test_every_mpo_end_of_the_real_site_is_recorded_with_its_fibre_count(netbox):
    plan = netbox_import(snapshot=netbox.fetch(), dry_run=False)
    assert not CableEnd.objects.filter(connector_type=ConnectorType.MPO, fibre_count__isnull=True).exists()
    # The module's "2x MPO-12/APC" at one end; the panel's front port takes the same plug.
    assert _counts("C-H1-0003") == [("A", "MPO", 12), ("B", "MPO", 12)]
    assert _counts("C-H1-0005") == [("A", "MPO", 12), ("B", "MPO", 12)]
    # The trunk between the panels' rear ports of 12 positions.
    assert _counts("TRK-A01-B01-1") == [("A", "MPO", 12), ("B", "MPO", 12)]
    said = {c.key: c.detail for c in plan.changes if c.kind == "cable"}
    assert "fibre count 12 from pp-a01 Rear 1's 12 positions" in said["TRK-A01-B01-1"]
    assert "fibre count 12 at End B as at End A" in said["C-H1-0003"]


def test_an_mpo_end_netbox_gives_no_count_for_is_reported_not_imported(netbox):
    """Rear ports of 6 positions (6 duplex pairs of an MPO-12, or 6 fibres of nothing MPO is
    made in): NetBox does not say the trunk's fibre count, so it is not guessed."""
    rears = copy.deepcopy(netbox.docs["rear-ports"])
    for rp in rears["results"]:
        rp["positions"] = 6
    netbox.docs["rear-ports"] = rears
    plan = netbox_import(snapshot=netbox.fetch(), dry_run=False)
    [trunk] = [c for c in plan.changes if c.kind == "cable" and c.key == "TRK-A01-B01-1"]
    assert trunk.action == "skip"
    assert trunk.detail == (
        "not imported: End A pp-a01 Rear 1 is MPO and NetBox gives no fibre count for it "
        "(no module, 6 positions); End B pp-b01 Rear 1 is MPO and NetBox gives no fibre count for it "
        "(no module, 6 positions). MPO needs a fibre count: 8, 12, 16, 24 or 32: record it on "
        "the port here, or add the cable by hand with it."
    )
    assert not Cable.objects.filter(label="TRK-A01-B01-1").exists()
    assert Cable.objects.count() == 7  # the rest of the site is imported
    assert not CableEnd.objects.filter(connector_type=ConnectorType.MPO, fibre_count__isnull=True).exists()
