"""Dates and numbers on the desk pages as people read them: the app's one spelling of a day or a
moment (``day``/``when``: "29 Nov 2025"), of a month ("December 2026"), of a figure (grouped
thousands, one precision per column), and a product whose shown factors multiply to the shown
result ("0.96 expected stalls × 3.5 h = 3.4 h lost", never "1.0 × 3.5 h = 3.4 h")."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal

import pytest
from django.utils import timezone

from inventory.core.choices import AlertState, Severity
from inventory.models import Alert
from tests import factories as f
from tests.inventory.services.alerts.test_alerts import plant as alert_plant  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db

ISO_DAY = re.compile(r"\b\d{4}-\d{2}(-\d{2})?\b")
HUMAN_DAY = r"\d{1,2} [A-Z][a-z]{2}( \d{4})?"


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def _shown(value: str, places: int) -> Decimal:
    return Decimal(value.replace(",", "")).quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP)


def test_the_repair_report_says_since_when_as_a_day(engineer_client):
    text = _text(engineer_client.get("/repairs/report/").content.decode())
    intro = text.split("Repairs recorded", 1)[1].split(".", 1)[0]
    assert re.search(rf"\(since {HUMAN_DAY}\)", intro), intro
    assert not ISO_DAY.search(intro), intro


def test_the_vendor_comparison_says_since_when_and_one_precision_per_100_ports(
    alert_plant,  # noqa: F811
    engineer_client,
):
    """One alert on a link of the plant's modules, whose ends report: its model's figure per 100
    reporting ports has a fraction, the others none; the column shows each with one decimal, a
    model without reporting ports a dash."""
    link = alert_plant["links"]["l1"]
    now = timezone.now()
    for port in (link.a_port, link.b_port):
        f.rollups(port, now - timedelta(hours=2), 60)
    Alert.objects.create(
        rule="fec_degradation",
        severity=Severity.WARNING,
        state=AlertState.OPEN,
        link=link,
        opened_at=now - timedelta(hours=1),
        updated_at=now,
        summary="test",
    )
    html = engineer_client.get("/vendors/compare/?days=1").content.decode()
    intro = _text(html).split("Last 1 days", 1)[1].split(")", 1)[0]
    assert re.search(rf"\(since ({HUMAN_DAY}|today|yesterday) \d\d:\d\d$", intro), intro
    assert not ISO_DAY.search(intro), intro
    cells = re.findall(r"<td>([^<]*)</td></tr>", html)  # the last column of every table
    assert cells and all(re.fullmatch(r"\d+\.\d|–", c) for c in cells), cells
    assert any(c not in ("0.0", "–") for c in cells), cells


def test_the_impact_report_names_its_month_in_words(engineer_client):
    site = f.SiteFactory(name="Demo Hall 1")
    html = engineer_client.get("/reports/impact/", {"site": site.name, "month": "2026-12"}).content.decode()
    assert "<h2>Demo Hall 1, December 2026</h2>" in html
    assert 'value="2026-12"' in html  # the month box keeps the value it submits


COHORTS = [
    {"vendor": "Goodoptics", "part": "GO-400", "date_code": "240110", "n": 3000, "failed": 30, "years": 2.0},
    {"vendor": "Badoptics", "part": "BO-400", "date_code": "240315", "n": 600, "failed": 150, "years": 2.0},
]


def test_the_forecast_cost_line_multiplies_as_shown_and_groups_thousands(engineer_client, settings):
    settings.CABLETRACK_CLUSTER_GPUS = 16384
    f.forecast_fleet(now=datetime(2026, 11, 29, 12, 0, tzinfo=UTC), cohorts=COHORTS)
    html = engineer_client.get("/forecast/", {"lead_time_days": 30}).content.decode()
    cost = _text(html.split('id="cost"', 1)[1].split("</p>", 1)[0])
    found = re.search(r"([\d,.]+) expected stalls × ([\d.]+) h = ([\d,.]+) h lost", cost)
    assert found, cost
    stalls, per_stall, lost = found.groups()
    assert _shown(str(Decimal(stalls) * Decimal(per_stall)), 1) == _shown(lost, 1), cost
    gpu_hours = re.search(r"([\d,]+) GPU-hours", cost).group(1)
    assert int(gpu_hours.replace(",", "")) >= 1000 and "," in gpu_hours, cost
    text = _text(html)
    assert "By part number (" in text and "By form factor (" in text
    assert "partnumber" not in text and "formfactor" not in text


def test_the_forecast_says_rates_as_percentages(engineer_client):
    """The budget AFR read "0.020" above a chart that said "2.0%", and the lots' rates "0.0100"."""
    f.forecast_fleet(now=datetime(2026, 11, 29, 12, 0, tzinfo=UTC), cohorts=COHORTS)
    html = engineer_client.get("/forecast/", {"lead_time_days": 30}).content.decode()
    head = _text(html.split("<h1>", 1)[1].split("</p>", 1)[0])
    assert "budget AFR 2.0 %" in head and re.search(r"learned fleet AFR \d+\.\d\d %", head), head
    # the sign never wraps onto a line of its own: a no-break space before it
    assert re.search(r'<td data-label="AFR">\d+\.\d\d\u00a0%</td>', html)
    assert re.search(r"<td>\d+\.\d\d\u00a0% \(\d+\.\d\d\u00a0%–\d+\.\d\d\u00a0%\)</td>", html)
    assert "Mean demand (modules)" in html


def test_the_alert_page_says_a_spike_as_its_summary_does(engineer_client):
    """The evidence of the demo's spike: 29,415 µs against a P99 of 2,843 µs (the ratio and the
    P99 with the decimals that make them multiply to the slowest, as shown)."""
    now = timezone.now()
    alert = Alert.objects.create(
        rule="tail_latency_spike",
        severity=Severity.PAGE,
        state=AlertState.OPEN,
        opened_at=now - timedelta(minutes=10),
        updated_at=now,
        summary="job 7001 ring0 (allreduce 256 MiB): slowest 29.4 ms = 10.3x its P99 2.8 ms",
        evidence={
            "collective": {
                "job": "7001",
                "communicator": "ring0",
                "comm_id": "abc",
                "coll": "allreduce",
                "msg_bytes": 256 << 20,
                "baseline_us": 2843.217,
                "slowest_us": 29415.342,
                "ratio": 10.35,
                "since": None,
                "slow_communicators": ["ring0"],
                "fast_communicators": 3,
                "candidates": 2,
                "candidates_reporting": 2,
                "how": "",
                "sure": "likely",
                "confidence": 0.8,
                "physical_evidence": False,
            }
        },
    )
    text = _text(engineer_client.get(f"/alerts/{alert.pk}/").content.decode())
    assert "Slowest 29.4 ms = 10.35x its P99 2.84 ms" in text, text
    assert "µs" not in text
