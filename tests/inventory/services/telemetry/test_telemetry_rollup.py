"""Rollups from raw samples into PortRollup, idempotent, with resets, out-of-order and retention.

[leaf-r Ethernet1/1]  400G, 4 lanes x 106.25 Gb/s; samples every 10 s
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test import override_settings

from inventory.core.telemetry.decode import decode_objects
from inventory.models import PortRollup, PortTelemetryState, TelemetryIngestBatch, TelemetrySample
from inventory.services.telemetry.ingest import telemetry_ingest
from inventory.services.telemetry.rollup import telemetry_retention_enforce, telemetry_rollup
from tests import factories as f

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
NOW = T0 + timedelta(hours=1)


def ingest(samples, now=NOW):
    return telemetry_ingest(
        decoded=decode_objects(samples, now=now, max_future=timedelta(minutes=5)), now=now
    )


@pytest.fixture
def port():
    _, ports = f.twin_port_device("leaf-r", cages=1)
    return ports[0]


def series(port, n, start=T0, every=10, **fields_at):
    """n samples; fields_at maps a field to a function of the sample number."""
    return [
        f.telemetry_sample(
            "leaf-r",
            port.name,
            start + timedelta(seconds=every * i),
            **{k: fn(i) for k, fn in fields_at.items()},
        )
        for i in range(n)
    ]


def rollups(port):
    return list(PortRollup.objects.filter(port=port).order_by("bucket"))


def test_rollup_increases_ber_gauges_and_histogram_tail(port):
    hist = lambda i: [10**9 + i * 1000] + [i * 10] * 5 + [0, 0, 0, 0, 0, 0, i, 0, 0, 0]  # noqa: E731  bin 12 = crit
    samples = series(
        port,
        18,  # 3 minutes
        fec_corrected_bits=lambda i: 5_000_000 + i * 1_000_000,
        fec_corrected_codewords=lambda i: i * 900,
        fec_uncorrectable_codewords=lambda i: 0,
        rx_power_dbm=lambda i: [-2.0 - i * 0.01, -3.0, -2.5, -2.0],
        temperature_c=lambda i: 50 + i,
        fec_hist=hist,
        module_serial=lambda i: "MT-A",
    )
    r = ingest(samples)
    assert r.stored == 18
    outcome = telemetry_rollup(now=NOW)
    assert outcome.ports == 1 and not outcome.remaining
    assert not TelemetryIngestBatch.objects.exists()
    b0, b1, b2 = rollups(port)
    assert b0.bucket == T0 and b0.samples == 6
    # the first bucket has 5 intervals (its first sample has no predecessor), the others 6
    assert b0.fec_corrected_bits == 5_000_000 and b1.fec_corrected_bits == 6_000_000
    assert b1.covered_s == 60.0 and b1.fec_corrected_cw == 5_400
    assert b1.pre_fec_ber == pytest.approx(6_000_000 / (60 * 4 * 106.25e9))
    assert b1.line_bits == pytest.approx(60 * 4 * 106.25e9)
    assert b1.fec_uncorrectable_cw == 0 and b1.resets == 0
    assert b1.hist_cw_crit == 6 and b1.hist_cw_warn == 0 and b1.fec_correction_limit == 15
    assert b1.hist_max_bin_high == 12
    assert b2.rx_power_min_dbm[0] == pytest.approx(
        -2.17, abs=1e-4
    ) and b2.rx_power_min_any_dbm == pytest.approx(-3.0)
    assert b2.temperature_max_c == 67
    assert b2.module_serial == "MT-A"
    state = PortTelemetryState.objects.get(port=port)
    assert state.last_ts == T0 + timedelta(seconds=170) and state.module_serial == "MT-A"


def test_reset_and_out_of_order_and_rerun_are_handled(port):
    # counter resets to zero at sample 9 (a reboot), samples 3-5 arrive late
    values = [i * 100 for i in range(9)] + [(i - 9) * 100 for i in range(9, 18)]
    samples = series(port, 18, fec_corrected_codewords=lambda i: values[i])
    late = samples[3:6]
    ingest(samples[:3] + samples[6:])
    telemetry_rollup(now=NOW)
    ingest(late)
    telemetry_rollup(now=NOW)
    first = [(b.bucket, b.fec_corrected_cw, b.resets) for b in rollups(port)]
    # 17 intervals of 100 each, except the reset interval which counts its new value (0)
    assert sum(x[1] for x in first) == 16 * 100
    assert sum(x[2] for x in first) == 1
    # a rerun (a retried task) changes nothing
    TelemetryIngestBatch.objects.create(received_at=NOW, min_ts=T0, max_ts=T0, port_ids=[port.pk])
    telemetry_rollup(now=NOW)
    assert [(b.bucket, b.fec_corrected_cw, b.resets) for b in rollups(port)] == first


def test_unsigned_64_bit_counters_roll_up(port):
    top = (1 << 64) - 1
    samples = series(
        port, 6, rx_bits=lambda i: top - 10_000 + i * 1000, fec_corrected_bits=lambda i: (1 << 63) + i * 10
    )
    ingest(samples)
    telemetry_rollup(now=NOW)
    (b,) = rollups(port)
    assert b.fec_corrected_bits == 50 and b.resets == 0


def test_queue_is_worked_in_batches_until_empty(port):
    for k in range(3):
        ingest(
            series(
                port, 2, start=T0 + timedelta(minutes=k), fec_corrected_codewords=lambda i, k=k: k * 10 + i
            )
        )
    first = telemetry_rollup(now=NOW, max_batches=2)
    assert first.batches == 2 and first.remaining
    second = telemetry_rollup(now=NOW, max_batches=2)
    assert second.batches == 1 and not second.remaining
    assert len(rollups(port)) == 3


@override_settings(CABLETRACK_TELEMETRY_RAW_RETENTION_DAYS=14, CABLETRACK_TELEMETRY_ROLLUP_RETENTION_DAYS=365)
def test_retention(port):
    now = T0 + timedelta(days=20)
    ingest(series(port, 2, start=T0, fec_corrected_codewords=lambda i: i), now=now)
    ingest(series(port, 2, start=now - timedelta(days=1), fec_corrected_codewords=lambda i: i), now=now)
    telemetry_rollup(now=now)
    PortRollup.objects.create(port=port, bucket=now - timedelta(days=400), computed_at=now)
    out = telemetry_retention_enforce(now=now)
    if connection.vendor == "postgresql":  # the old day's partition dropped whole
        assert out.days_dropped == 1 and out.rollups == 1
    else:
        assert out.samples == 2 and out.rollups == 1
    assert TelemetrySample.objects.filter(port=port).count() == 2
    assert PortRollup.objects.filter(port=port, bucket__lt=now - timedelta(days=365)).count() == 0
    assert PortRollup.objects.filter(port=port).exists()
