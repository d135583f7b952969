"""One bad row must not stop the rollup for everyone: stored values that once broke it, and a row
whose recompute still fails, which is set aside with its reason while the rest is rolled up.

    [leaf-q Ethernet1/1]  the poisoned port      [leaf-q Ethernet1/2]  a healthy neighbour
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test import override_settings

from inventory.core.telemetry.decode import decode_objects
from inventory.models import PortRollup, TelemetryIngestBatch, TelemetrySample
from inventory.services.telemetry.ingest import telemetry_ingest
from inventory.services.telemetry.rollup import telemetry_rollup
from tests import factories as f

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
NOW = T0 + timedelta(minutes=10)
U64_MAX = (1 << 64) - 1
I64_MAX = (1 << 63) - 1


@pytest.fixture
def ports():
    return f.twin_port_device("leaf-q", cages=1)[1]


def ingest(samples, now=NOW):
    """Ingest without the door's age bound (what an older version stored)."""
    return telemetry_ingest(
        decoded=decode_objects(samples, now=now, max_future=timedelta(minutes=5)), now=now
    )


def series(port, n, start=T0, **fields_at):
    return [
        f.telemetry_sample(
            "leaf-q",
            port.name,
            start + timedelta(seconds=10 * i),
            **{k: fn(i) for k, fn in fields_at.items()},
        )
        for i in range(n)
    ]


def poison(port, ts="infinity"):
    """A raw sample whose time no driver can read back (PostgreSQL keeps 'infinity'; on SQLite
    it is text that is no time), queued for rollup: what a restore, a hand fix or an older
    version can leave behind."""
    table = connection.ops.quote_name(TelemetrySample._meta.db_table)
    with connection.cursor() as cur:
        cur.execute(f"INSERT INTO {table} (port_id, ts) VALUES (%s, %s)", [port.pk, ts])  # noqa: S608 - test table name
    return TelemetryIngestBatch.objects.create(received_at=NOW, min_ts=T0, max_ts=T0, port_ids=[port.pk])


def test_a_stored_year_one_sample_does_not_stop_the_rollup(ports):
    TelemetrySample.objects.create(port=ports[0], ts=datetime(1, 1, 1, tzinfo=UTC), fec_corrected_cw=1)
    TelemetryIngestBatch.objects.create(
        received_at=NOW, min_ts=datetime(1, 1, 1, tzinfo=UTC), max_ts=T0, port_ids=[ports[0].pk]
    )
    ingest(series(ports[1], 6, fec_corrected_codewords=lambda i: i * 100))
    out = telemetry_rollup(now=NOW)
    assert out.set_aside == 0 and not TelemetryIngestBatch.objects.exists()
    assert PortRollup.objects.get(port=ports[1]).fec_corrected_cw == 500


def test_a_counter_from_zero_to_u64_max_is_a_reset_not_an_overflow(ports):
    values = [0, U64_MAX, U64_MAX, 5, 1000, 2000]
    ingest(series(ports[0], 6, fec_corrected_bits=lambda i: values[i], rx_bits=lambda i: values[i]))
    out = telemetry_rollup(now=NOW)
    assert out.set_aside == 0
    (b,) = PortRollup.objects.filter(port=ports[0])
    # 0 -> max: no increase (a reset); max -> max: 0; max -> 5: a 64-bit wrap of 6; then 995 and 1000
    assert b.fec_corrected_bits == 6 + 995 + 1000
    assert b.resets == 2


def test_a_bucket_sum_past_the_bigint_range_saturates_instead_of_failing(ports):
    # three legal increases of 2**62 + 2**61 each in one bucket: 1.6 x 2**63 in total
    step = (1 << 62) + (1 << 61)
    values = [0, step, 0, step, 0, step]  # each drop a reset counted from zero
    ingest(series(ports[0], 6, fec_corrected_codewords=lambda i: values[i]))
    assert telemetry_rollup(now=NOW).set_aside == 0
    assert PortRollup.objects.get(port=ports[0]).fec_corrected_cw == I64_MAX


@override_settings(CABLETRACK_TELEMETRY_RAW_RETENTION_DAYS=14)
def test_a_1970_sample_never_erases_rollup_history_older_than_the_raw_retention(ports):
    history = f.rollup_rows(ports[0], NOW - timedelta(days=30), 3)
    PortRollup.objects.bulk_create(history)
    old = datetime(1970, 1, 2, tzinfo=UTC)
    TelemetrySample.objects.create(port=ports[0], ts=old, fec_corrected_cw=1)
    TelemetryIngestBatch.objects.create(received_at=NOW, min_ts=old, max_ts=old, port_ids=[ports[0].pk])
    ingest(series(ports[0], 3, fec_corrected_codewords=lambda i: i))
    telemetry_rollup(now=NOW)
    kept = PortRollup.objects.filter(port=ports[0], bucket__lt=NOW - timedelta(days=14))
    assert sorted(kept.values_list("bucket", flat=True)) == [r.bucket for r in history]
    assert PortRollup.objects.filter(port=ports[0], bucket=T0).exists()


@override_settings(
    CABLETRACK_TELEMETRY_ROLLUP_RETRY_SECONDS=60, CABLETRACK_TELEMETRY_ROLLUP_RETRY_MAX_SECONDS=300
)
def test_a_port_whose_rollup_fails_is_set_aside_with_its_reason_and_the_rest_rolls_up(ports):
    ingest(series(ports[0], 6, fec_corrected_codewords=lambda i: i))
    ingest(series(ports[1], 6, fec_corrected_codewords=lambda i: i * 10))
    poison(ports[0])

    out = telemetry_rollup(now=NOW)
    assert out.set_aside == 1 and not out.remaining
    assert PortRollup.objects.get(port=ports[1]).fec_corrected_cw == 50
    assert not PortRollup.objects.filter(port=ports[0]).exists()
    aside = TelemetryIngestBatch.objects.get()
    assert aside.port_ids == [ports[0].pk] and aside.attempts == 1
    assert aside.last_error and aside.next_attempt_at == NOW + timedelta(seconds=60)

    # not taken again before its time; then retried, failing again: the wait doubles, capped
    assert telemetry_rollup(now=NOW + timedelta(seconds=30)).batches == 0
    telemetry_rollup(now=NOW + timedelta(seconds=61))
    again = TelemetryIngestBatch.objects.get()
    assert again.attempts == 2 and again.next_attempt_at == NOW + timedelta(seconds=61 + 120)
    for k in range(5):
        telemetry_rollup(now=NOW + timedelta(hours=k + 1))
    assert TelemetryIngestBatch.objects.get().next_attempt_at == NOW + timedelta(hours=5, seconds=300)

    # the row is repaired: the next retry rolls the port up and empties the queue
    TelemetrySample.objects.filter(port=ports[0], ts__gt=NOW + timedelta(days=3650)).delete()
    with connection.cursor() as cur:
        table = connection.ops.quote_name(TelemetrySample._meta.db_table)
        cur.execute(f"DELETE FROM {table} WHERE port_id = %s AND ts = %s", [ports[0].pk, "infinity"])  # noqa: S608 - test table name
    telemetry_rollup(now=NOW + timedelta(hours=6))
    assert not TelemetryIngestBatch.objects.exists()
    assert PortRollup.objects.get(port=ports[0]).fec_corrected_cw == 5


def test_new_data_for_a_set_aside_port_waits_for_its_retry_instead_of_failing_every_run(ports):
    poison(ports[0])
    assert telemetry_rollup(now=NOW).set_aside == 1
    later = NOW + timedelta(seconds=20)
    ingest(series(ports[0], 2, start=T0 + timedelta(minutes=5), link_down_events=lambda i: 0), now=later)
    ingest(
        series(ports[1], 3, start=T0 + timedelta(minutes=5), fec_corrected_codewords=lambda i: i), now=later
    )
    out = telemetry_rollup(now=later)
    assert out.set_aside == 0 and out.batches == 2
    (aside,) = TelemetryIngestBatch.objects.all()
    assert aside.attempts == 1 and aside.port_ids == [ports[0].pk]
    assert aside.next_attempt_at == NOW + timedelta(seconds=60) and aside.min_ts == T0
    assert PortRollup.objects.get(port=ports[1]).fec_corrected_cw == 2


def test_many_failing_ports_are_set_aside_without_trying_each_alone(ports, monkeypatch):
    from inventory.services.telemetry import rollup_queue

    monkeypatch.setattr(rollup_queue, "MAX_SINGLE_TRIES", 2)
    many = f.twin_port_device("leaf-many", cages=8)[1]
    for p in many:
        poison(p)
    out = telemetry_rollup(now=NOW)
    assert out.set_aside == len(many)
    assert sorted(pid for b in TelemetryIngestBatch.objects.all() for pid in b.port_ids) == sorted(
        p.pk for p in many
    )


def test_set_aside_ports_and_a_stalled_queue_show_on_the_page_the_api_and_metrics(ports, settings, api_as):
    from django.test import Client

    now = datetime.now(UTC).replace(microsecond=0)
    ingest(series(ports[1], 2, start=now - timedelta(minutes=20), link_down_events=lambda i: 0), now=now)
    TelemetryIngestBatch.objects.update(received_at=now - timedelta(minutes=20))  # nobody rolled it up
    queued = poison(ports[0])
    TelemetryIngestBatch.objects.filter(pk=queued.pk).update(
        attempts=3, last_error="DataError: timestamp too large", next_attempt_at=now + timedelta(minutes=4)
    )

    api = api_as("viewer").get("/api/telemetry/pipeline/").json()
    assert api["rollup"]["waiting"] == 1 and api["rollup"]["oldest_waiting_s"] >= 1200
    (row,) = api["rollup"]["set_aside_rows"]
    assert row["ports"] == [{"id": ports[0].pk, "device": "leaf-q", "port": ports[0].name}]
    assert row["attempts"] == 3 and "timestamp too large" in row["last_error"]

    client = Client()
    client.force_login(f.UserFactory(username="viewer-pipe", role="viewer"))
    page = client.get("/telemetry/pipeline/").content.decode()
    assert f"leaf-q:{ports[0].name}" in page and "timestamp too large" in page and "Stalled" in page

    settings.CABLETRACK_METRICS_TOKEN = "scrape-secret-3"
    body = Client().get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-secret-3").content.decode()
    assert "cabletrack_telemetry_rollup_set_aside_ports 1.0" in body
    assert "cabletrack_telemetry_rollup_waiting_batches 1.0" in body
    waited = next(
        x for x in body.splitlines() if x.startswith("cabletrack_telemetry_rollup_oldest_waiting_seconds ")
    )
    assert float(waited.split()[1]) >= 1200


def test_a_collector_account_cannot_read_the_pipeline(user_with_role):
    from inventory.core.choices import TokenKind

    collector = f.api_token_client(user_with_role("collector"), TokenKind.FULL)
    assert collector.get("/api/telemetry/pipeline/").status_code == 403


@pytest.mark.parametrize("failure", ["time limit", "lock timeout"])
def test_a_run_stopped_by_its_time_limit_or_a_lock_timeout_sets_no_port_aside(ports, monkeypatch, failure):
    """A run blocked past its soft time limit (or whose statement the server cancelled) failed
    for itself, not for its ports: it stops, its transaction rolls back, and every port stays
    queued as it was, none set aside as poison to wait out a backoff."""
    from celery.exceptions import SoftTimeLimitExceeded
    from django.db import OperationalError

    from inventory.services.telemetry import rollup

    for p in ports:
        assert ingest(series(p, 12, fec_corrected_bits=lambda i: 1000 * i)).stored == 12
    queued = sorted(TelemetryIngestBatch.objects.values_list("id", "attempts"))
    exc = (
        SoftTimeLimitExceeded()
        if failure == "time limit"
        else OperationalError("canceling statement due to lock timeout")
    )

    def stuck(*args, **kwargs):
        raise exc

    monkeypatch.setattr(rollup, "_rollup_chunk", stuck)
    with pytest.raises(type(exc)):
        telemetry_rollup(now=NOW)
    assert sorted(TelemetryIngestBatch.objects.values_list("id", "attempts")) == queued  # nothing set aside
    assert not PortRollup.objects.exists()

    monkeypatch.undo()
    telemetry_rollup(now=NOW)
    assert not TelemetryIngestBatch.objects.exists()
    assert set(PortRollup.objects.values_list("port_id", flat=True)) == {p.pk for p in ports}
