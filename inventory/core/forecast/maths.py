"""Constant-hazard forecasting, Gamma-Poisson cohort rates, Poisson spares, cost of failure.

Units: an annual failure rate (AFR) is the probability that one module fails within a year
(2% by default). Under a constant hazard ``lam`` (failures per module-year),
``AFR = 1 - exp(-lam)``, so a fleet of ``N`` modules expects
``N * (1 - (1 - AFR) ** (t / 365))`` failures in ``t`` days.

Cohort rates learn from what happened with a conjugate Gamma-Poisson model: failures in a
cohort are Poisson with mean ``lam * E`` (``E`` = exposure in module-years). The prior on
``lam`` is ``Gamma(alpha0, beta0)`` centred on the configured AFR's hazard, with a strength
of ``beta0`` module-years (``alpha0 = lam0 * beta0``). After ``k`` failures over ``E``
module-years the posterior is ``Gamma(alpha0 + k, beta0 + E)``.

Prior strength, default 100 module-years: the evidence of about two expected failures at 2%.
A vendor with ten module-years and no failures stays at 1.8% (it cannot talk the rate down);
a lot of 200 modules with 10 failures in a year (5%) moves to a posterior mean of 3.9% with a
90% interval of 2.3%-5.9%, credibly above a 2% fleet; 1,000 module-years of a healthy vendor
overwhelm the prior. Chosen so a bad batch stands out within months, not years.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DAYS_PER_YEAR = 365.0


def _stats():
    """``scipy.stats``, imported on first use. It adds about 78 MB to every process that loads
    it, and only a forecast computation needs it (the daily snapshot task, a desk user's
    overrides): a web worker that serves the stored snapshot, and the ingest, never do."""
    from scipy import stats  # noqa: PLC0415 - deferred on purpose: see the docstring

    return stats


def hazard_from_afr(afr):
    """Failures per module-year for an annual failure probability (vectorised)."""
    return -np.log1p(-np.asarray(afr, dtype=float))


def afr_from_hazard(lam):
    """Annual failure probability for a hazard in failures per module-year (vectorised)."""
    return -np.expm1(-np.asarray(lam, dtype=float))


def expected_failures(n, afr, days):
    """``n * (1 - (1 - afr) ** (days / 365))``, broadcast over arrays of n, afr and days."""
    n = np.asarray(n, dtype=float)
    afr = np.asarray(afr, dtype=float)
    days = np.asarray(days, dtype=float)
    return n * -np.expm1(np.log1p(-afr) * days / DAYS_PER_YEAR)


def monthly_expected(n, afr, months: int = 12, days_per_month: float = DAYS_PER_YEAR / 12):
    """Expected failures in each of the next ``months`` months, per row of ``n``.

    Failed modules are assumed replaced (the installed base stays at ``n``), so every month
    expects the same ``n * (1 - (1 - afr) ** (30.4 / 365))``. Returns shape (len(n), months).
    """
    per_month = expected_failures(n, afr, days_per_month)
    return np.repeat(np.atleast_1d(per_month)[:, None], months, axis=1)


@dataclass(frozen=True)
class Prior:
    """Gamma prior on the hazard, centred on ``afr`` with ``strength`` module-years of weight."""

    afr: float = 0.02
    strength: float = 100.0

    @property
    def hazard(self) -> float:
        return float(hazard_from_afr(self.afr))

    @property
    def alpha(self) -> float:
        return self.hazard * self.strength

    @property
    def beta(self) -> float:
        return self.strength


@dataclass(frozen=True)
class CohortRates:
    """Posterior rates, one entry per cohort (arrays of equal length), and the fleet's."""

    failures: np.ndarray
    exposure_years: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    hazard_mean: np.ndarray  # failures per module-year
    afr_mean: np.ndarray  # as an annual failure probability
    afr_low: np.ndarray
    afr_high: np.ndarray
    reference_afr: np.ndarray  # the rate each cohort is judged against (the fleet's, or its part's)
    prob_above_fleet: np.ndarray  # P(cohort hazard > its reference), from its own failures
    flagged: np.ndarray  # its own failures put it credibly above its reference (see cohort_rates)
    fleet_afr: float
    fleet_failures: float
    fleet_exposure_years: float
    level: float


def cohort_rates(
    failures,
    exposure_years,
    *,
    prior: Prior = Prior(),  # noqa: B008 - frozen
    level: float = 0.90,
    reference_hazard=None,
) -> CohortRates:
    """Gamma-Poisson posterior per cohort and a flag for cohorts credibly above their reference.

    The posterior shown (mean and central ``level`` credible interval) starts from ``prior``.
    The fleet's rate is the posterior of all cohorts pooled; each cohort is judged against
    ``reference_hazard`` (per cohort; default: the fleet's rate). A lot is judged against its
    part number's rate, so a bad lot stands out from its own part, not from a pooled prior.

    A cohort is flagged only on evidence of its own failures: it has at least one confirmed
    failure, and with a prior centred on its reference (same strength), the posterior
    probability that its rate exceeds the reference is at least ``1 - (1 - level) / 2 / m``,
    where ``m`` is the number of cohorts with failures (95% at 0.90 for one cohort). Sharing the
    false-alarm chance among the cohorts compared (Bonferroni) keeps a healthy fleet of a
    hundred lots from flagging a few by chance. A young lot without failures never stands out,
    however healthy the fleet (its posterior cannot rise above the reference it started from),
    and a lot whose few failures are what the reference rate expects does not either.
    """
    k = np.asarray(failures, dtype=float)
    e = np.asarray(exposure_years, dtype=float)
    alpha = prior.alpha + k
    beta = prior.beta + e
    tail = (1.0 - level) / 2.0
    stats = _stats()
    lo = stats.gamma.ppf(tail, alpha, scale=1.0 / beta)
    hi = stats.gamma.ppf(1.0 - tail, alpha, scale=1.0 / beta)
    mean = alpha / beta
    fleet_k, fleet_e = float(k.sum()), float(e.sum())
    fleet_hazard = (prior.alpha + fleet_k) / (prior.beta + fleet_e)
    ref = np.broadcast_to(
        np.asarray(fleet_hazard if reference_hazard is None else reference_hazard, dtype=float), k.shape
    )
    # The cohort's own evidence against its reference: Gamma(ref * s + k, s + E).
    with np.errstate(invalid="ignore", divide="ignore"):
        p_above = stats.gamma.sf(ref, ref * prior.strength + k, scale=1.0 / (prior.strength + e))
    p_above = np.where(k > 0, p_above, 0.0)
    bar = 1.0 - tail / max(int((k >= 1).sum()), 1)
    return CohortRates(
        failures=k,
        exposure_years=e,
        alpha=alpha,
        beta=beta,
        hazard_mean=mean,
        afr_mean=afr_from_hazard(mean),
        afr_low=afr_from_hazard(lo),
        afr_high=afr_from_hazard(hi),
        reference_afr=afr_from_hazard(ref),
        prob_above_fleet=p_above,
        flagged=(k >= 1) & (p_above >= bar),
        fleet_afr=float(afr_from_hazard(fleet_hazard)),
        fleet_failures=fleet_k,
        fleet_exposure_years=fleet_e,
        level=level,
    )


def poisson_quantile(mean, service_level: float = 0.95):
    """Smallest ``q`` with ``P(Poisson(mean) <= q) >= service_level`` (vectorised)."""
    mean = np.asarray(mean, dtype=float)
    q = _stats().poisson.ppf(service_level, mean)
    return np.where(mean > 0, q, 0.0).astype(np.int64)


def spares_needed(installed, afr, *, lead_time_days: float, service_level: float = 0.95, on_hand=0):
    """Spares to hold and to order, per row.

    Demand over the replenishment lead time is Poisson with mean
    ``installed * (1 - (1 - afr) ** (lead_time / 365))``; the stock to hold is its
    ``service_level`` quantile, and the order is what that leaves after spares on hand.
    Returns ``(mean_demand, hold, to_order)``.
    """
    mean = expected_failures(installed, afr, lead_time_days)
    hold = poisson_quantile(mean, service_level)
    to_order = np.maximum(hold - np.asarray(on_hand, dtype=np.int64), 0)
    return mean, hold, to_order


@dataclass(frozen=True)
class FailureCost:
    incidents: float
    hours_lost: float
    run_hours: float
    fraction_of_run: float
    gpu_hours_lost: float
    cost: float


def failure_cost(
    *,
    incidents: float,
    hours_per_incident: float,
    run_hours: float,
    cluster_gpus: int,
    gpu_hour_cost: float,
) -> FailureCost:
    """Training time a number of failures costs: each stalls the whole job to detect, drain
    and resume. The seed's arithmetic: 65 stalls x 3.5 h = 227.5 h lost of a 720-h run (31%).

    No defaults here: the figures (hours per incident, run length, GPUs, cost of a GPU-hour)
    have one home, the ``CABLETRACK_*`` settings, which ``ForecastParams.from_settings`` reads."""
    hours = incidents * hours_per_incident
    gpu_hours = hours * cluster_gpus
    return FailureCost(
        incidents=float(incidents),
        hours_lost=float(hours),
        run_hours=float(run_hours),
        fraction_of_run=float(hours / run_hours) if run_hours else 0.0,
        gpu_hours_lost=float(gpu_hours),
        cost=float(gpu_hours * gpu_hour_cost),
    )
