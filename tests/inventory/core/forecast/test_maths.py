"""The forecasting maths against hand-worked values (no database)."""

import math

import numpy as np
import pytest

from inventory.core import forecast as fm
from inventory.core.forecast import svg


def test_ten_thousand_modules_at_two_percent_expect_200_failures_in_a_year():
    assert fm.expected_failures(10_000, 0.02, 365) == pytest.approx(200.0)


def test_expected_failures_scale_with_the_horizon_under_constant_hazard():
    got = fm.expected_failures(10_000, 0.02, np.array([30, 90, 365]))
    # 10,000 * (1 - exp(t/365 * ln 0.98)): ln 0.98 = -0.0202027; t=30: 1 - exp(-0.00166049) -> 16.591.
    assert got == pytest.approx([16.591, 49.691, 200.0], abs=1e-3)


def test_95_percent_poisson_quantile_for_a_mean_of_200_is_224():
    assert int(fm.poisson_quantile(200, 0.95)) == 224
    assert int(fm.poisson_quantile(0.0, 0.95)) == 0


def test_gamma_poisson_posterior_for_a_cohort():
    """Prior: AFR 2% -> hazard -ln(0.98) = 0.0202027/yr, strength 100 module-years, so
    alpha0 = 2.02027, beta0 = 100. Cohort: 6 failures in 100 module-years ->
    Gamma(8.02027, 200): mean 0.0401013/yr, AFR 1 - exp(-0.0401013) = 3.9308%."""
    prior = fm.Prior(afr=0.02, strength=100)
    assert prior.alpha == pytest.approx(2.02027, abs=1e-5)
    r = fm.cohort_rates([6], [100.0], prior=prior, level=0.90)
    assert r.alpha[0] == pytest.approx(8.02027, abs=1e-5)
    assert r.beta[0] == pytest.approx(200.0)
    assert r.hazard_mean[0] == pytest.approx(0.0401013, abs=1e-6)
    assert r.afr_mean[0] == pytest.approx(1 - math.exp(-0.0401013), abs=1e-6)
    assert r.afr_low[0] < r.afr_mean[0] < r.afr_high[0]


def test_a_cohort_with_little_history_stays_near_the_prior():
    r = fm.cohort_rates([0], [10.0], prior=fm.Prior(afr=0.02, strength=100))
    assert r.afr_mean[0] == pytest.approx(0.0182, abs=5e-4)  # 2.02 / 110 module-years
    assert not r.flagged[0]


def test_a_bad_batch_is_flagged_and_a_healthy_vendor_is_not():
    # A bad lot: 10 failures in 200 module-years (5%); a healthy vendor: 20 in 1,500 (1.3%).
    r = fm.cohort_rates([10, 20], [200.0, 1500.0], prior=fm.Prior(afr=0.02, strength=100))
    assert r.flagged.tolist() == [True, False]
    assert r.afr_low[0] > r.fleet_afr > r.afr_mean[1]


def test_spares_cover_the_lead_time_at_the_service_level_minus_stock():
    mean, hold, order = fm.spares_needed(
        np.array([10_000, 500]), 0.02, lead_time_days=365, service_level=0.95, on_hand=np.array([30, 40])
    )
    assert mean.tolist() == pytest.approx([200.0, 10.0])
    assert hold.tolist() == [224, 15]  # P(Poisson(10) <= 15) = 0.951
    assert order.tolist() == [194, 0]


def test_cost_of_failure_reproduces_the_seed_arithmetic():
    """65 stalls x 3.5 h = 227.5 h lost of a 720-h run: 31% of the run."""
    c = fm.failure_cost(
        incidents=65, hours_per_incident=3.5, run_hours=720, cluster_gpus=1000, gpu_hour_cost=2
    )
    assert c.hours_lost == pytest.approx(227.5)
    assert int(c.hours_lost) == 227
    assert int(c.fraction_of_run * 100) == 31
    assert c.gpu_hours_lost == pytest.approx(227_500)
    assert c.cost == pytest.approx(455_000)


def test_links_with_evidence_rank_first_with_their_reasons():
    n = 5
    nan = np.full(n, np.nan)
    x = fm.RiskInputs(
        link_ids=np.arange(1, n + 1),
        base_hazard=np.full(n, 0.04),
        age_days=np.array([400, 400, 400, 30, 1800.0]),
        open_alert_level=np.array([0, 3, 0, 0, 0]),
        past_alerts=np.array([0, 0, 2, 0, 0]),
        min_margin_db=np.array([np.nan, np.nan, np.nan, np.nan, -0.2]),
        fec_ratio=nan.copy(),
        dom_drift_db=nan.copy(),
    )
    r = fm.rank_links(x, top=3)
    assert r.link_ids.tolist() == [2, 5, 3]
    assert any("open page/critical alert" in why for why in r.reasons[0])
    assert any("test margin -0.20 dB" in why for why in r.reasons[1])
    assert any("wear-out" in why for why in r.reasons[1])
    assert any("2 past alert" in why for why in r.reasons[2])
    assert r.considered == 5
    assert (np.diff(r.hazard) <= 0).all()


def test_charts_escape_cohort_names():
    out = svg.stacked_bars(["2026-12"], [{"cohort": "<script>", "values": [1.0]}])
    assert "<script>" not in out and "&lt;script&gt;" in out
