"""Telemetry storage: unsigned 64-bit counters and lane arrays survive a round trip."""

from datetime import UTC, datetime

import pytest

from inventory.models import TelemetryLaneSample, TelemetrySample
from tests import factories as f

pytestmark = pytest.mark.django_db

TS = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def test_unsigned_64_bit_counters_round_trip_and_compare():
    """A 400G rx_bits counter past 2**63 (about 267 days since clear) and 2**64-1 are kept exactly."""
    _, ports = f.twin_port_device("leaf-u64", cages=1)
    big = (1 << 64) - 1
    TelemetrySample.objects.create(port=ports[0], ts=TS, rx_bits=big, fec_corrected_cw=(1 << 63) + 5)
    TelemetrySample.objects.create(port=ports[1], ts=TS, rx_bits=0, fec_corrected_cw=1)
    row = TelemetrySample.objects.get(port=ports[0], ts=TS)
    assert row.rx_bits == big
    assert row.fec_corrected_cw == (1 << 63) + 5
    # ordering and filters see device values, not stored ones
    assert list(TelemetrySample.objects.filter(rx_bits__gt=1 << 63).values_list("port_id", flat=True)) == [
        ports[0].pk
    ]
    assert TelemetrySample.objects.get(port=ports[1], ts=TS).rx_bits == 0


def test_lane_arrays_round_trip():
    _, ports = f.twin_port_device("leaf-lanes", cages=1)
    TelemetryLaneSample.objects.create(port=ports[0], ts=TS, rx_power_dbm=[-2.5, -3.0, None, 1.25])
    row = TelemetryLaneSample.objects.get(port=ports[0], ts=TS)
    assert row.rx_power_dbm == [-2.5, -3.0, None, 1.25]
    assert row.tx_power_dbm is None
