"""The forecast judged lot by lot: a lot is flagged only on its own failures, spares and the
fleet's forecast add up over lots (a known bad lot raises them), "no trouble found" clears a
sealed cable as it clears a module, and a module back from an NTF RMA is on its site's shelf."""

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from django.urls import reverse
from django.utils import timezone

from inventory.core import forecast as fm
from inventory.core.choices import CableStatus, PlacementEnd, RmaOutcome, TransceiverStatus
from inventory.models import Cage, RmaCase, Transceiver
from inventory.services.forecast import snapshot as forecast_services
from inventory.services.plant import cables as cable_services
from inventory.services.plant import transceivers as xcvr_services
from tests import factories as f
from tests.inventory.testing_scenes import dac_link

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def by(payload, dim):
    return {r["cohort"]: r for r in payload["breakdowns"][dim]}


def test_a_young_lot_without_failures_is_not_flagged_however_healthy_the_fleet():
    # 10,000 failure-free module-years pull the fleet far below the 2% prior; a lot one
    # module-year old has no failures of its own, so nothing says it is worse.
    assert fm.cohort_rates([0, 0], [10000.0, 1.0]).flagged.tolist() == [False, False]
    # One failure in a young lot is what a 2% part expects by chance: not evidence either.
    assert fm.cohort_rates([1], [5.0], reference_hazard=fm.hazard_from_afr(0.02)).flagged.tolist() == [False]


def test_a_hundred_healthy_lots_flag_none_by_chance_and_a_bad_one_still_stands_out():
    """150 lots of 100 module-years failing at 2% (chance alone puts a few lots' counts far above
    the two failures each expects), and one lot failing at 15%."""
    rng = np.random.default_rng(7)
    failures = rng.poisson(100 * fm.hazard_from_afr(0.02), size=150).tolist()
    assert max(failures) >= 6  # what a 95% test per lot would flag
    r = fm.cohort_rates([*failures, 15], [100.0] * 151, reference_hazard=fm.hazard_from_afr(0.02))
    assert np.flatnonzero(r.flagged).tolist() == [150]


def test_a_healthy_fleet_flags_no_lot(db):
    """An old, very healthy lot (0.1%/yr), two young lots without failures, one young lot with
    a single failure: the fleet is far healthier than the 2% prior, and nothing stands out."""
    f.forecast_fleet(
        now=NOW,
        cohorts=[
            {
                "vendor": "Goodoptics",
                "part": "GO-400",
                "date_code": "230110",
                "n": 2000,
                "failed": 6,
                "years": 3.0,
            },
            {"vendor": "Goodoptics", "part": "GO-400", "date_code": "261001", "n": 300, "years": 0.1},
            {"vendor": "Goodoptics", "part": "GO-400", "date_code": "261101", "n": 300, "years": 0.05},
            {
                "vendor": "Otheroptics",
                "part": "OO-400",
                "date_code": "260901",
                "n": 50,
                "failed": 1,
                "years": 0.2,
            },
        ],
    )
    p = forecast_services.forecast_compute(now=NOW)
    assert [r["cohort"] for r in p["breakdowns"]["lot"] if r["flagged"]] == []
    assert p["fleet"]["flagged_cohorts"] == 0


def test_a_bad_lot_raises_the_spares_and_the_fleet_forecast_is_the_sum_of_its_lots(db):
    """One part number, a big healthy lot and a small bad one: pooled over the part, the bad
    lot's rate is diluted by the healthy lot's exposure; summed lot by lot it is not."""
    f.forecast_fleet(
        now=NOW,
        cohorts=[
            {
                "vendor": "Mixoptics",
                "part": "MX-400",
                "date_code": "240110",
                "n": 3000,
                "failed": 12,
                "years": 2.0,
            },
            {
                "vendor": "Mixoptics",
                "part": "MX-400",
                "date_code": "251101",
                "n": 200,
                "failed": 30,
                "years": 1.0,
            },
        ],
    )
    params = forecast_services.ForecastParams.from_settings(lead_time_days=365)
    p = forecast_services.forecast_compute(now=NOW, params=params)
    lots = by(p, "lot")
    bad, good = lots["Mixoptics 2025-11"], lots["Mixoptics 2024-01"]
    assert bad["flagged"] and not good["flagged"]
    assert bad["reference_afr"] == pytest.approx(by(p, "part_number")["MX-400"]["afr_mean"], abs=1e-4)

    lot_sum = good["expected_learned"]["365"] + bad["expected_learned"]["365"]
    assert p["fleet"]["expected_learned"]["365"] == pytest.approx(lot_sum, abs=0.01)
    assert by(p, "vendor")["Mixoptics"]["expected_learned"]["365"] == pytest.approx(lot_sum, abs=0.01)

    row = next(r for r in p["spares"] if r["part_number"] == "MX-400")
    assert row["mean_demand"] == pytest.approx(lot_sum, abs=0.01)
    part_pooled = fm.expected_failures(row["installed"], by(p, "part_number")["MX-400"]["afr_mean"], 365)
    assert row["mean_demand"] > part_pooled + 1
    assert row["hold"] > int(fm.poisson_quantile(part_pooled, 0.95))


def test_the_planner_can_have_the_spares_follow_the_budget_rate(db, engineer_api, client, user_with_role):
    """After a failure-free year the learned rate falls far below the 2% budget; the planner
    sees which rate the spares follow and can switch (form and API)."""
    f.forecast_fleet(
        now=timezone.now(),
        cohorts=[{"vendor": "Goodoptics", "part": "GO-400", "date_code": "250110", "n": 2000, "years": 1.0}],
    )
    learned = engineer_api.get("/api/forecast/spares/", {"lead_time_days": 365}).json()
    budget = engineer_api.get(
        "/api/forecast/spares/", {"lead_time_days": 365, "spares_rate": "budget"}
    ).json()
    assert budget[0]["afr"] == pytest.approx(0.02)
    assert budget[0]["hold"] == int(fm.poisson_quantile(fm.expected_failures(2000, 0.02, 365), 0.95))
    assert learned[0]["hold"] < budget[0]["hold"]
    assert engineer_api.get("/api/forecast/", {"spares_rate": "guess"}).status_code == 400
    empty = engineer_api.get("/api/forecast/spares/", {"spares_rate": ""})  # the page's blank, not the API's
    assert empty.status_code == 400 and "leave the parameter out" in str(empty.json())

    client.force_login(user_with_role("engineer"))
    html = client.get(reverse("forecast")).content.decode()
    assert "Spares follow the <strong>learned rate of each lot</strong>" in html
    html = client.get(reverse("forecast"), {"spares_rate": "budget"}).content.decode()
    assert "Spares follow the <strong>budget AFR</strong>" in html


def _faulty_then_retired_dac():
    cable = dac_link()
    cable.install_date = timezone.localdate() - timedelta(days=200)
    cable.save()
    cable_services.cable_set_status(cable=cable, status=CableStatus.FAULTY, reason="no link")
    cable_services.cable_retire(cable=cable, reason="replaced")
    return cable


def _sealed_failures(payload) -> int:
    return sum(r["failures"] for r in payload["breakdowns"]["form_factor"] if r["cohort"] == "DAC")


@pytest.mark.parametrize(
    ("outcome", "failures"), [(RmaOutcome.NO_TROUBLE_FOUND, 0), (RmaOutcome.CONFIRMED, 1)]
)
def test_no_trouble_found_clears_a_sealed_cable_as_it_clears_a_module(db, outcome, failures):
    cable = _faulty_then_retired_dac()
    RmaCase.objects.create(cable=cable, opened_at=timezone.now() + timedelta(minutes=1), outcome=outcome)
    p = forecast_services.forecast_compute(now=timezone.now() + timedelta(days=1))
    assert _sealed_failures(p) == failures


def test_a_sealed_cable_marked_faulty_again_after_an_ntf_counts(db):
    cable = dac_link()
    cable.install_date = timezone.localdate() - timedelta(days=200)
    cable.save()
    RmaCase.objects.create(
        cable=cable, opened_at=timezone.now() - timedelta(days=30), outcome=RmaOutcome.NO_TROUBLE_FOUND
    )
    cable_services.cable_set_status(cable=cable, status=CableStatus.FAULTY, reason="no link again")
    cable_services.cable_retire(cable=cable, reason="replaced")
    p = forecast_services.forecast_compute(now=timezone.now() + timedelta(days=1))
    assert _sealed_failures(p) == 1


def test_a_module_back_from_an_ntf_rma_is_on_its_sites_shelf(db):
    dev, _ = f.twin_port_device("leaf-ntf", cages=1)
    site = dev.rack.row.room.site
    xcvr = Transceiver.objects.get(cage=Cage.objects.get(device=dev))
    now = timezone.now()
    xcvr_services.transceiver_remove(transceiver=xcvr, reason=PlacementEnd.FAILED, now=now)
    case = xcvr_services.transceiver_rma_open(transceiver=xcvr, reference="RMA-NTF", now=now)
    xcvr_services.rma_close(case=case, outcome=RmaOutcome.NO_TROUBLE_FOUND, now=now + timedelta(days=20))
    xcvr.refresh_from_db()
    assert xcvr.status == TransceiverStatus.SPARE
    assert xcvr.stock_site == site
    p = forecast_services.forecast_compute(now=now + timedelta(days=21))
    row = next(
        r for r in p["spares"] if r["site"] == site.name and r["part_number"] == xcvr.model.part_number
    )
    assert row["on_hand"] == 1
    assert row["to_order"] == max(row["hold"] - 1, 0)


def test_failure_cost_has_one_documented_default(settings):
    """README and settings say 2.5 per GPU-hour; the maths takes it from there, never its own."""
    assert settings.CABLETRACK_GPU_HOUR_COST == 2.5
    params = forecast_services.ForecastParams.from_settings()
    assert params.gpu_hour_cost == 2.5
    with pytest.raises(TypeError):
        fm.failure_cost(incidents=1.0)  # no hidden default to drift from the setting
