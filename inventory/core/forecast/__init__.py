"""Failure forecasting maths: pure, ORM-free, vectorised (numpy/scipy).

``maths``: constant-hazard expected failures, Gamma-Poisson cohort rates, Poisson spares,
cost of failure. ``risk``: per-link risk scores with their reasons. Callers (the forecast
selectors and services) gather the numbers with set-based queries and pass arrays in.
"""

from inventory.core.forecast.maths import (
    CohortRates,
    FailureCost,
    Prior,
    afr_from_hazard,
    cohort_rates,
    expected_failures,
    failure_cost,
    hazard_from_afr,
    monthly_expected,
    poisson_quantile,
    spares_needed,
)
from inventory.core.forecast.risk import RiskInputs, RiskRanking, RiskWeights, rank_links

__all__ = [
    "CohortRates",
    "FailureCost",
    "Prior",
    "RiskInputs",
    "RiskRanking",
    "RiskWeights",
    "afr_from_hazard",
    "cohort_rates",
    "expected_failures",
    "failure_cost",
    "hazard_from_afr",
    "monthly_expected",
    "poisson_quantile",
    "rank_links",
    "spares_needed",
]
