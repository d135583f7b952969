"""The forecasting maths against hand-worked values (no database)."""

import math
import sqlite3

import numpy as np
import pytest

from inventory.core import forecast as fm
from inventory.core.forecast import risk, svg


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


def test_each_month_expects_the_same_failures_with_failed_modules_replaced():
    # 10,000 x (1 - 0.98 ** (1/12)) = 16.821 a month; 500 modules: 0.841
    got = fm.monthly_expected(np.array([10_000, 500]), 0.02, months=3)
    assert got.shape == (2, 3)
    assert got.ravel().tolist() == pytest.approx([16.8214] * 3 + [0.84107] * 3, abs=1e-4)
    assert fm.monthly_expected(np.array([10_000]), 0.02).shape == (1, 12)  # a year by default


def test_the_credible_interval_is_central_by_the_poisson_gamma_identity():
    """AFR 1 - e^-0.02 makes the prior Gamma(2, 100); 6 failures in 100 module-years give
    Gamma(8, 200). For a whole shape a, P(Gamma(a, rate b) <= x) = P(Poisson(b x) >= a): the
    interval's ends leave 5% of the Poisson(200 x) on each side of 8 failures."""
    prior = fm.Prior(afr=-math.expm1(-0.02), strength=100)
    r = fm.cohort_rates([6], [100.0], prior=prior, level=0.90)
    lo, hi = fm.hazard_from_afr(r.afr_low[0]), fm.hazard_from_afr(r.afr_high[0])

    def p_at_least_8(mean):
        return 1 - sum(math.exp(-mean) * mean**j / math.factorial(j) for j in range(8))

    assert p_at_least_8(200 * lo) == pytest.approx(0.05, abs=1e-6)
    assert p_at_least_8(200 * hi) == pytest.approx(0.95, abs=1e-6)
    # the docstring's bad lot: 10 failures over 200 module-years at the 2% prior: 3.9%, 2.3%-5.9%
    bad = fm.cohort_rates([10], [200.0])
    assert (bad.afr_mean[0], bad.afr_low[0], bad.afr_high[0]) == pytest.approx(
        (0.0393, 0.0229, 0.0590), abs=1e-4
    )


def test_the_evidence_against_a_reference_is_a_poisson_tail():
    """Reference 0.02/yr at strength 100 is Gamma(2, 100); 6 failures in 100 module-years make
    it Gamma(8, 200), and P(rate > 0.02) = P(Poisson(200 x 0.02) <= 7) = 0.94887."""
    r = fm.cohort_rates([6, 0], [100.0, 40.0], reference_hazard=0.02)
    by_hand = sum(math.exp(-4) * 4**j / math.factorial(j) for j in range(8))
    assert r.prob_above_fleet.tolist() == pytest.approx([by_hand, 0.0])  # no failures, no evidence
    assert r.reference_afr.tolist() == pytest.approx([-math.expm1(-0.02)] * 2)
    assert r.flagged.tolist() == [False, False]  # 0.9489 is short of 1 - 0.10 / 2
    assert r.failures.tolist() == [6, 0] and r.exposure_years.tolist() == [100.0, 40.0]
    assert (r.fleet_failures, r.fleet_exposure_years, r.level) == (6.0, 140.0, 0.90)
    # judged against the fleet when no reference is given: (2.02 + 6) / (100 + 140) per year
    fleet = fm.cohort_rates([6, 0], [100.0, 40.0])
    assert fleet.reference_afr.tolist() == pytest.approx([-math.expm1(-(2.02027 + 6) / 240)] * 2, abs=1e-6)


def test_the_bar_rises_with_the_number_of_cohorts_that_had_failures():
    """6 failures in 90 module-years against 0.02/yr: P = 0.9599. Alone, the bar is 95%: flagged.
    Beside a second cohort with one failure, the bar is 1 - 0.05 / 2 = 97.5%: not flagged. A
    cohort without failures does not raise the bar."""
    assert fm.cohort_rates([6, 0], [90.0, 50.0], reference_hazard=0.02).flagged.tolist() == [True, False]
    assert fm.cohort_rates([6, 1], [90.0, 50.0], reference_hazard=0.02).flagged.tolist() == [False, False]


def test_one_failure_is_enough_against_a_rate_that_expects_none():
    r = fm.cohort_rates([1], [1.0], reference_hazard=0.0001)  # P = 0.990
    assert r.flagged.tolist() == [True]


def test_spares_default_to_95_percent_and_nothing_on_hand():
    mean, hold, order = fm.spares_needed(10_000, 0.02, lead_time_days=365)
    assert (float(mean), int(hold), int(order)) == (pytest.approx(200.0), 224, 224)
    assert int(fm.poisson_quantile(200)) == 224
    _, hold99, _ = fm.spares_needed(500, 0.02, lead_time_days=365, service_level=0.99)
    assert int(hold99) == 18  # P(Poisson(10) <= 18) = 0.993


def test_half_an_expected_failure_still_needs_two_spares():
    # P(Poisson(0.5) <= 1) = 0.910, <= 2 = 0.986
    assert fm.poisson_quantile([0.5, 0.0], 0.95).tolist() == [2, 0]


def test_a_run_of_unknown_length_costs_no_share_of_it():
    c = fm.failure_cost(incidents=2, hours_per_incident=3.5, run_hours=0, cluster_gpus=8, gpu_hour_cost=2)
    assert c == fm.FailureCost(
        incidents=2.0, hours_lost=7.0, run_hours=0.0, fraction_of_run=0.0, gpu_hours_lost=56.0, cost=112.0
    )


W = fm.RiskWeights()


def test_age_multiplies_the_hazard_in_early_life_and_after_three_years():
    ages = [np.nan, 0, 1, 89, 90, 3 * 365, 4 * 365, 6 * 365]
    assert risk.age_factor(ages, W).tolist() == [1.0, 1.0, 1.5, 1.5, 1.0, 1.0, 1.5, 2.5]
    # the pruning bound: the infant factor, or the oldest link's wear-out when that is higher
    assert risk.max_age_factor(0, W) == 1.5
    assert risk.max_age_factor(-5, W) == 1.5
    assert risk.max_age_factor(6 * 365, W) == 2.5
    assert risk.max_age_factor(30, fm.RiskWeights(infant_factor=0.8)) == 1.0


def test_the_databases_age_factor_is_the_same_formula():
    """The SQL expression, run by SQLite over the same ages (NULL for unknown), gives
    ``age_factor``'s numbers."""
    ages = [None, 0.0, 1.0, 89.0, 90.0, 1095.0, 1460.0, 2190.0]
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (i INTEGER, age REAL)")
    db.executemany("INSERT INTO t VALUES (?, ?)", list(enumerate(ages)))
    sql = f"SELECT {risk.age_factor_sql('age', W)} FROM t ORDER BY i"  # noqa: S608 - weights from code
    got = [row[0] for row in db.execute(sql)]
    want = risk.age_factor([np.nan if a is None else a for a in ages], W).tolist()
    assert got == pytest.approx(want) and want == [1.0, 1.0, 1.5, 1.5, 1.0, 1.0, 1.5, 2.5]


def rank_one_each(**columns):
    """Links 1..n with a base hazard of 0.1/yr, age 1 y, and only the given columns set."""
    n = len(next(iter(columns.values())))
    nan = np.full(n, np.nan)
    x = fm.RiskInputs(
        link_ids=np.arange(1, n + 1),
        base_hazard=np.full(n, 0.1),
        age_days=np.full(n, 365.0),
        open_alert_level=np.zeros(n),
        past_alerts=np.zeros(n),
        min_margin_db=nan.copy(),
        fec_ratio=nan.copy(),
        dom_drift_db=nan.copy(),
    )
    for name, values in columns.items():
        setattr(x, name, np.asarray(values, float))
    r = fm.rank_links(x, top=n)
    return {
        int(i): (round(float(h) / 0.1, 6), why[1:])
        for i, h, why in zip(r.link_ids, r.hazard, r.reasons, strict=True)
    }


def test_open_alerts_multiply_by_their_severity():
    got = rank_one_each(open_alert_level=[0, 1, 2, 3])
    assert {i: f for i, (f, _) in got.items()} == {1: 1.0, 2: 3.0, 3: 6.0, 4: 12.0}
    assert got[2][1] == ["open warning alert x3"] and got[3][1] == ["open notify alert x6"]
    assert got[4][1] == ["open page/critical alert x12"] and got[1][1] == []


def test_past_alerts_add_half_each_up_to_four_times():
    got = rank_one_each(past_alerts=[1, 2, 6, 10])
    assert {i: f for i, (f, _) in got.items()} == {1: 1.5, 2: 2.0, 3: 4.0, 4: 4.0}
    assert got[1][1] == ["1 past alert(s) x1.5"]


def test_test_margins_by_band():
    got = rank_one_each(min_margin_db=[-0.01, 0.0, 0.29, 0.3, 0.49, 0.5, np.nan])
    factors = {i: f for i, (f, _) in got.items()}
    assert factors == {1: 4.0, 2: 2.0, 3: 2.0, 4: 1.3, 5: 1.3, 6: 1.0, 7: 1.0}
    assert got[1][1] == ["test margin -0.01 dB x4.0"] and got[4][1] == ["test margin +0.30 dB x1.3"]
    assert got[2][1] == ["test margin +0.00 dB x2.0"]


def test_a_rising_fec_rate_by_band():
    got = rank_one_each(fec_ratio=[2.9, 3.0, 9.9, 10.0, np.nan])
    assert {i: f for i, (f, _) in got.items()} == {1: 1.0, 2: 2.0, 3: 2.0, 4: 4.0, 5: 1.0}
    assert got[2][1] == ["FEC corrected rate 3 times its baseline x2"]
    assert got[4][1] == ["FEC corrected rate 10 times its baseline x4"]


def test_dom_drift_either_way_by_band():
    got = rank_one_each(dom_drift_db=[0.9, -1.0, 1.9, 2.0, -2.5, np.nan])
    assert {i: f for i, (f, _) in got.items()} == {1: 1.0, 2: 1.5, 3: 1.5, 4: 3.0, 5: 3.0, 6: 1.0}
    assert got[2][1] == ["DOM drift -1.0 dB x1.5"] and got[5][1] == ["DOM drift -2.5 dB x3.0"]


def test_age_reasons_name_early_life_and_wear_out():
    got = rank_one_each(age_days=[30.0, 4 * 365.0, np.nan, 5 * 365.0])
    assert got[1] == (1.5, ["age 0.1 y (early life) x1.5"])
    assert got[2] == (1.5, ["age 4.0 y (wear-out) x1.5"])
    assert got[3] == (1.0, [])
    assert got[4] == (2.0, ["age 5.0 y (wear-out) x2.0"])


def test_the_ranking_keeps_the_top_by_hazard_ties_by_link_id_with_the_30_day_probability():
    n = 6
    nan = np.full(n, np.nan)
    x = fm.RiskInputs(
        link_ids=np.array([16, 15, 14, 13, 12, 11]),
        base_hazard=np.array([0.1, 0.3, 0.2, 0.3, 0.05, 0.3]),
        age_days=np.full(n, 365.0),
        open_alert_level=np.zeros(n),
        past_alerts=np.zeros(n),
        min_margin_db=nan.copy(),
        fec_ratio=nan.copy(),
        dom_drift_db=nan.copy(),
    )
    r = fm.rank_links(x, top=2)
    assert r.link_ids.tolist() == [11, 13] and r.considered == 6  # three tied at 0.3: lowest ids
    assert r.hazard.tolist() == [0.3, 0.3]
    assert r.probability.tolist() == pytest.approx([1 - math.exp(-0.3 * 30 / 365)] * 2)
    assert r.reasons[0] == ["modules' cohort rate 25.9%/yr"]  # 1 - e^-0.3
    r = fm.rank_links(x, top=4)
    assert r.link_ids.tolist() == [11, 13, 15, 14]
    assert fm.rank_links(x, top=5).link_ids.tolist() == [11, 13, 15, 14, 16]
    everything = fm.rank_links(x, top=10)
    assert everything.link_ids.tolist() == [11, 13, 15, 14, 16, 12]
    none = fm.rank_links(fm.RiskInputs(*([np.array([])] * 8)), top=5)
    assert (none.link_ids.tolist(), none.hazard.tolist(), none.probability.tolist()) == ([], [], [])
    assert (none.considered, none.reasons) == (0, [])


def test_the_ranking_shows_fifty_links_by_default_and_ranks_a_lone_link():
    got = rank_one_each(past_alerts=np.arange(60) % 7)
    assert len(got) == 60  # asked for every one
    n = 60
    nan = np.full(n, np.nan)
    x = fm.RiskInputs(
        link_ids=np.arange(1, n + 1),
        base_hazard=np.linspace(0.01, 0.6, n),
        age_days=np.full(n, 365.0),
        open_alert_level=np.zeros(n),
        past_alerts=np.zeros(n),
        min_margin_db=nan.copy(),
        fec_ratio=nan.copy(),
        dom_drift_db=nan.copy(),
    )
    r = fm.rank_links(x)
    assert r.link_ids.tolist() == list(range(60, 10, -1)) and r.considered == 60
    one = fm.rank_links(fm.RiskInputs(*(a[:1] for a in vars(x).values())))
    assert (one.link_ids.tolist(), one.hazard.tolist(), one.considered) == ([1], [0.01], 1)
