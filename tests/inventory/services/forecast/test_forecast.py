"""The forecast from the database: failures counted right, bad batches flagged, spares,
the nightly snapshot, the desk page, the CSV and the API."""

import csv
import io
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse

from inventory.core.choices import RmaOutcome, TransceiverStatus
from inventory.models import ForecastSnapshot, RmaCase, Transceiver
from inventory.services.forecast import snapshot as forecast_services
from inventory.tasks import forecast_snapshot_task
from tests import factories as f

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)

COHORTS = [
    # healthy vendor: 3 failures in 600 module-years
    {"vendor": "Goodoptics", "part": "GO-400", "date_code": "240110", "n": 300, "failed": 3, "years": 2.0},
    # a bad lot of one vendor: 15 of 60 failed in 2 years
    {"vendor": "Badoptics", "part": "BO-400", "date_code": "240315", "n": 60, "failed": 15, "years": 2.0},
    # the same vendor's other lot is fine
    {"vendor": "Badoptics", "part": "BO-400", "date_code": "240901", "n": 100, "failed": 1, "years": 2.0},
]


@pytest.fixture
def fleet(db):
    return f.forecast_fleet(now=NOW, cohorts=COHORTS)


def by(payload, dim):
    return {r["cohort"]: r for r in payload["breakdowns"][dim]}


def test_a_bad_lot_is_flagged_and_a_healthy_vendor_is_not(fleet):
    p = forecast_services.forecast_compute(now=NOW)
    lots = by(p, "lot")
    assert lots["Badoptics 2024-03"]["flagged"]
    assert lots["Badoptics 2024-03"]["failures"] == 15
    assert not lots["Badoptics 2024-09"]["flagged"]
    assert not by(p, "vendor")["Goodoptics"]["flagged"]
    assert p["fleet"]["failures"] == 19
    assert p["fleet"]["installed"] == 460 - 19


def test_exposure_is_counted_in_module_years_from_placements(fleet):
    p = forecast_services.forecast_compute(now=NOW)
    # 300 modules placed 2 years ago, 3 of them removed 10 days ago.
    good = by(p, "vendor")["Goodoptics"]
    assert good["exposure_years"] == pytest.approx(600 - 3 * 10 / 365, abs=0.05)
    assert good["installed"] == 297
    # 297 at 2% over 365 days: 5.94 expected.
    assert good["expected"]["365"] == pytest.approx(5.94, abs=1e-3)


def test_no_trouble_found_does_not_count_and_a_confirmed_rma_does(fleet):
    bad_ids = fleet["ids"][1]
    # One of the bad lot's failures came back from the vendor with no trouble found.
    RmaCase.objects.create(
        transceiver_id=bad_ids[0], opened_at=NOW - timedelta(days=5), outcome=RmaOutcome.NO_TROUBLE_FOUND
    )
    # A healthy spare was dead on arrival: confirmed by the vendor, never placed.
    doa = f.module(model=f.twin_dr4_model(vendor="Goodoptics", part="GO-400"))
    RmaCase.objects.create(transceiver=doa, opened_at=NOW - timedelta(days=3), outcome=RmaOutcome.CONFIRMED)
    p = forecast_services.forecast_compute(now=NOW)
    assert by(p, "lot")["Badoptics 2024-03"]["failures"] == 14
    assert by(p, "vendor")["Goodoptics"]["failures"] == 4
    assert p["fleet"]["failures"] == 19


def test_spares_per_site_and_part_subtract_what_is_on_hand(fleet):
    site = fleet["site"]
    model = f.twin_dr4_model(vendor="Goodoptics", part="GO-400")
    for k in range(2):
        Transceiver.objects.create(
            model=model, serial=f"SPARE{k}", status=TransceiverStatus.SPARE, stock_site=site
        )
    params = forecast_services.ForecastParams.from_settings(lead_time_days=365, service_level=0.95)
    p = forecast_services.forecast_compute(now=NOW, params=params)
    row = next(r for r in p["spares"] if r["part_number"] == "GO-400")
    assert row["site"] == site.name
    assert row["installed"] == 297
    assert row["on_hand"] == 2
    assert row["hold"] >= 1
    assert row["to_order"] == row["hold"] - 2


def test_snapshot_task_is_idempotent_per_day(fleet):
    forecast_snapshot_task()
    forecast_snapshot_task()
    assert ForecastSnapshot.objects.count() == 1
    snap = ForecastSnapshot.objects.get()
    assert snap.payload["fleet"]["failures"] == 19
    assert snap.annual_failure_rate == pytest.approx(0.02)


def test_snapshot_is_scheduled_nightly(settings):
    entries = [
        e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == "inventory.forecast_snapshot"
    ]
    assert len(entries) == 1


def test_the_page_shows_the_figures_and_charts(fleet, client, user_with_role, django_assert_max_num_queries):
    client.force_login(user_with_role("engineer"))
    with django_assert_max_num_queries(30):
        resp = client.get(reverse("forecast"), {"days": 45})
    assert resp.status_code == 200
    html = resp.content.decode()
    assert "Badoptics 2024-03 ⚑ above fleet" in html
    assert "<svg" in html and "Expected failures, cumulative, by month" in html
    assert "45 days" in html
    assert "Download CSV for purchasing" in html
    assert re.search(r"h lost</strong> \(\d+\.\d% of the run\)", html)


def test_the_page_shows_a_clear_error_for_a_bad_horizon(fleet, client, user_with_role):
    client.force_login(user_with_role("engineer"))
    resp = client.get(reverse("forecast"), {"days": "-3"})
    assert resp.status_code == 200
    assert "Ensure this value is greater than or equal to 1" in resp.content.decode()


def test_spares_csv_for_purchasing(fleet, client, user_with_role):
    client.force_login(user_with_role("engineer"))
    resp = client.get(reverse("forecast-spares-csv"), {"lead_time_days": 90})
    assert resp.status_code == 200
    assert resp["Content-Type"] == "text/csv"
    rows = list(csv.DictReader(io.StringIO(resp.content.decode())))
    assert {r["part_number"] for r in rows} == {"GO-400", "BO-400"}
    assert all(int(r["to_order"]) >= 0 for r in rows)


def test_api_exposes_the_same_figures(fleet, engineer_api, django_assert_max_num_queries):
    with django_assert_max_num_queries(30):
        resp = engineer_api.get("/api/forecast/", {"days": 45})
    assert resp.status_code == 200
    data = resp.json()
    assert data["fleet"]["failures"] == 19
    assert "45" in data["fleet"]["expected"]
    assert by(data, "lot")["Badoptics 2024-03"]["flagged"] is True
    spares = engineer_api.get("/api/forecast/spares/").json()
    assert {r["part_number"] for r in spares} == {"GO-400", "BO-400"}


def test_cost_of_failure_says_the_seeds_arithmetic(fleet):
    """65 stalls x 3.5 h = 227.5 h of a 720-h run: 31.6% (the seed's "227 hours, 31%")."""
    params = forecast_services.ForecastParams.from_settings(hours_per_incident=3.5, run_hours=720)
    p = forecast_services.forecast_compute(now=NOW, params=params)
    learned = p["cost"]["learned"]
    stalls = learned["incidents"]
    assert learned["hours_lost"] == pytest.approx(stalls * 3.5, abs=1e-3)
    assert learned["percent_of_run"] == pytest.approx(stalls * 3.5 / 720 * 100, abs=0.05)


def test_api_rejects_bad_parameters_with_field_errors(fleet, engineer_api):
    resp = engineer_api.get("/api/forecast/", {"service_level": 2, "days": "x"})
    assert resp.status_code == 400
    body = resp.json()
    text = str(body)
    assert "service_level" in text and "days" in text


def test_api_lists_snapshots(fleet, engineer_api):
    forecast_services.forecast_snapshot_store(now=NOW)
    data = engineer_api.get("/api/forecast/snapshots/").json()
    assert [s["day"] for s in data] == ["2026-11-29"]
    assert data[0]["fleet"]["failures"] == 19


def test_forecast_is_in_the_openapi_schema(engineer_api):
    schema = engineer_api.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    assert "/api/forecast/" in schema["paths"]
    assert "/api/forecast/spares/" in schema["paths"]
