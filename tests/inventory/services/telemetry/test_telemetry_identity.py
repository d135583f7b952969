"""Module identity from telemetry: unrecorded swaps raise one finding; matches stay quiet.

[leaf-id OSFP1] holds module s/n MT...1 (recorded)  -> Ethernet1/1, Ethernet1/2
[leaf-id OSFP2] holds module s/n MT...2 (recorded)  -> Ethernet2/1, Ethernet2/2
"""

from datetime import UTC, datetime, timedelta

import pytest

from inventory.core.choices import AlertRule
from inventory.core.telemetry.decode import decode_objects
from inventory.models import Alert, PortObservation, PortTelemetryState, Transceiver
from inventory.services.telemetry.ingest import telemetry_ingest
from tests import factories as f

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


def ingest(samples, now=T0 + timedelta(hours=1)):
    return telemetry_ingest(
        decoded=decode_objects(samples, now=now, max_future=timedelta(minutes=5)), now=now
    )


@pytest.fixture
def leaf():
    return f.twin_port_device("leaf-id")


def test_matching_serial_is_quiet_and_a_different_one_raises_once(leaf):
    dev, ports = leaf
    recorded = Transceiver.objects.get(cage=ports[0].cage)
    ok = f.telemetry_sample(
        "leaf-id", "Ethernet1/1", T0, module_serial=recorded.serial, module_vendor="NVIDIA"
    )
    ingest([ok])
    assert not Alert.objects.exists()
    swapped = [
        f.telemetry_sample(
            "leaf-id", "Ethernet1/1", T0 + timedelta(seconds=10 * i), module_serial="XX-OTHER-9"
        )
        for i in range(1, 4)
    ]
    ingest(swapped)
    ingest(
        [f.telemetry_sample("leaf-id", "Ethernet1/1", T0 + timedelta(minutes=5), module_serial="XX-OTHER-9")]
    )
    alert = Alert.objects.get(rule=AlertRule.UNRECORDED_SWAP)
    assert alert.port_id == ports[0].pk and alert.state == "open"
    assert alert.key == f"unrecorded_swap:port:{ports[0].pk}"
    assert recorded.serial in alert.summary and "XX-OTHER-9" in alert.summary
    # a second port swapped in the same batch gets its own alert
    ingest([f.telemetry_sample("leaf-id", "Ethernet2/1", T0 + timedelta(minutes=6), module_serial="YY-2")])
    assert Alert.objects.filter(rule=AlertRule.UNRECORDED_SWAP, state="open").count() == 2
    # the identity is kept once per change, the state holds the latest
    assert list(PortObservation.objects.filter(port=ports[0]).values_list("module_serial", flat=True)) == [
        recorded.serial,
        "XX-OTHER-9",
    ]
    assert PortTelemetryState.objects.get(port=ports[0]).module_serial == "XX-OTHER-9"


def test_older_backfill_does_not_overwrite_newer_identity(leaf):
    _, ports = leaf
    ingest([f.telemetry_sample("leaf-id", "Ethernet2/1", T0, module_serial="NEW-1")])
    ingest([f.telemetry_sample("leaf-id", "Ethernet2/1", T0 - timedelta(days=1), module_serial="OLD-1")])
    assert PortTelemetryState.objects.get(port=ports[2]).module_serial == "NEW-1"


def test_port_without_a_recorded_module_is_not_a_swap():
    _, ports = f.twin_port_device("leaf-empty", cages=1, with_modules=False)
    ingest([f.telemetry_sample("leaf-empty", "Ethernet1/1", T0, module_serial="S1")])
    assert not Alert.objects.exists()
