"""The failure forecast: gather (set-based selectors), compute (pure maths), store (snapshot).

``forecast_compute`` returns a JSON-ready dict; the page, the API, the CSV export and the
nightly snapshot all show that same dict, so the figures never disagree.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from datetime import date, datetime, timedelta

import numpy as np
from django.db import transaction

from inventory.conf import app_settings
from inventory.core import forecast as fm
from inventory.core.choices import SparesRate
from inventory.models import ForecastSnapshot
from inventory.selectors import forecast as fsel

DIMENSIONS = ("site", "vendor", "part_number", "form_factor", "lot")


@dataclass(frozen=True)
class ForecastParams:
    """The forecast's knobs. Those backed by a ``CABLETRACK_*`` setting have no default here
    (the setting is their one home): build with ``from_settings``."""

    annual_failure_rate: float
    prior_module_years: float
    credible_level: float
    service_level: float
    lead_time_days: int
    hours_per_incident: float
    cluster_gpus: int
    gpu_hour_cost: float
    run_hours: float
    horizons_days: tuple[int, ...] = (30, 90, 365)
    custom_days: int | None = None
    # Which rate the spares follow: each lot's learned (posterior) rate, or the budget AFR.
    spares_rate: str = SparesRate.LEARNED
    top_links: int = 50
    # False: score every link even when a few cohorts stand out (the bench times both paths;
    # both rank the same links).
    prune_links: bool = True
    months: int = 12

    @classmethod
    def from_settings(cls, **overrides) -> ForecastParams:
        values = dict(
            annual_failure_rate=app_settings.annual_failure_rate,
            prior_module_years=app_settings.forecast_prior_module_years,
            credible_level=app_settings.forecast_credible_level,
            service_level=app_settings.spares_service_level,
            lead_time_days=app_settings.spares_lead_time_days,
            hours_per_incident=app_settings.failure_hours_per_incident,
            cluster_gpus=app_settings.cluster_gpus,
            gpu_hour_cost=app_settings.gpu_hour_cost,
            run_hours=app_settings.run_hours,
        )
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def horizons(self) -> list[int]:
        return sorted(set(self.horizons_days) | ({self.custom_days} if self.custom_days else set()))


def _label(dim: str, key: fsel.Key) -> str:
    site, vendor, part, ff, lot = key
    return {
        "site": site,
        "vendor": vendor,
        "part_number": part,
        "form_factor": ff or "(none)",
        "lot": lot_label(vendor, lot),
    }[dim]


def lot_label(vendor: str, lot: str) -> str:
    if len(lot) == 4 and lot.isdigit():
        return f"{vendor} 20{lot[:2]}-{lot[2:]}"
    return f"{vendor} {lot or '(no date code)'}"


def _r(x, nd=4):
    return round(float(x), nd)


def _grouping(labels: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Distinct labels (sorted) and, per cell, the index of its label."""
    names, inv = np.unique(np.asarray(labels, dtype=object).astype(str), return_inverse=True)
    return names, inv


def _sum_by(inv: np.ndarray, size: int, values: np.ndarray) -> np.ndarray:
    return np.bincount(inv, weights=values, minlength=size)


def forecast_compute(
    *, now: datetime, params: ForecastParams | None = None, timings: dict[str, float] | None = None
) -> dict:
    """The whole forecast as plain data: fleet, breakdowns, monthly, spares, cost, risk.

    ``timings``, when given, receives the seconds spent per phase (the benchmark reports them).
    """
    p = params or ForecastParams.from_settings()
    prior = fm.Prior(afr=p.annual_failure_rate, strength=p.prior_module_years)
    clock = time.perf_counter()
    data = fsel.cohort_data(now=now)
    if timings is not None:
        timings["cohort_aggregates"] = time.perf_counter() - clock
        clock = time.perf_counter()
    keys = data.keys()
    inst = np.array([data.installed.get(k, 0) for k in keys], dtype=float)
    fail = np.array([data.failures.get(k, 0) for k in keys], dtype=float)
    expo = np.array([data.exposure_years.get(k, 0.0) for k in keys], dtype=float)
    horizons = p.horizons()

    breakdowns, posterior, cell_afr = _breakdowns(keys, inst, fail, expo, p=p, prior=prior, horizons=horizons)
    fleet_rates = fm.cohort_rates(fail, expo, prior=prior, level=p.credible_level)
    n_total = float(inst.sum())
    fleet = {
        "installed": int(n_total),
        "failures": int(fail.sum()),
        "exposure_years": _r(expo.sum(), 2),
        "afr_budget": p.annual_failure_rate,
        "afr_learned": _r(fleet_rates.fleet_afr, 5),
        "expected": {
            str(h): _r(fm.expected_failures(n_total, p.annual_failure_rate, h), 3) for h in horizons
        },
        # The sum of every lot's own forecast, so a known bad lot raises the fleet's.
        "expected_learned": {str(h): _r(fm.expected_failures(inst, cell_afr, h).sum(), 3) for h in horizons},
        "flagged_cohorts": sum(r["flagged"] for rows in breakdowns.values() for r in rows),
    }
    monthly_payload = _monthly(keys, inst, cell_afr, now=now, months=p.months)
    spares = _spares(data, keys, inst, cell_afr=cell_afr, p=p)
    cost = _cost(inst, cell_afr=cell_afr, p=p)

    if timings is not None:
        timings["cohort_maths"] = time.perf_counter() - clock
        clock = time.perf_counter()
    risk = links_at_risk(
        now=now,
        lot_hazard=posterior["lot"],
        data=data,
        prior=prior,
        top=p.top_links,
        timings=timings,
        prune=p.prune_links,
    )
    if timings is not None:
        timings["risk_ranking"] = time.perf_counter() - clock

    return {
        "as_of": now.isoformat(),
        "params": {
            "annual_failure_rate": p.annual_failure_rate,
            "horizons_days": horizons,
            "prior_module_years": p.prior_module_years,
            "credible_level": p.credible_level,
            "service_level": p.service_level,
            "lead_time_days": p.lead_time_days,
            "hours_per_incident": p.hours_per_incident,
            "cluster_gpus": p.cluster_gpus,
            "gpu_hour_cost": p.gpu_hour_cost,
            "run_hours": p.run_hours,
            "spares_rate": p.spares_rate,
        },
        "fleet": fleet,
        "breakdowns": breakdowns,
        "monthly": monthly_payload,
        "spares": spares,
        "cost": cost,
        "risk": risk,
    }


def _lot_reference(
    keys: list[fsel.Key],
    cells: tuple[np.ndarray, np.ndarray, np.ndarray],
    lot_inv: np.ndarray,
    n_lots: int,
    *,
    prior: fm.Prior,
    level: float,
) -> np.ndarray:
    """Each lot's reference hazard: its part number's learned rate (exposure-weighted over the
    lot's cells when a lot spans part numbers; installed-weighted before any exposure)."""
    inst, fail, expo = cells
    part_names, part_inv = _grouping([key[2] for key in keys])
    size = len(part_names)
    part = fm.cohort_rates(
        _sum_by(part_inv, size, fail), _sum_by(part_inv, size, expo), prior=prior, level=level
    )
    cell_part_h = part.hazard_mean[part_inv]
    e_sum = _sum_by(lot_inv, n_lots, expo)
    n_sum = _sum_by(lot_inv, n_lots, inst)
    by_expo = _sum_by(lot_inv, n_lots, expo * cell_part_h)
    by_inst = _sum_by(lot_inv, n_lots, inst * cell_part_h)
    fleet_h = float(fm.hazard_from_afr(part.fleet_afr))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(e_sum > 0, by_expo / e_sum, np.where(n_sum > 0, by_inst / n_sum, fleet_h))


def _breakdowns(
    keys: list[fsel.Key],
    inst: np.ndarray,
    fail: np.ndarray,
    expo: np.ndarray,
    *,
    p: ForecastParams,
    prior: fm.Prior,
    horizons: list[int],
) -> tuple[dict[str, list[dict]], dict[str, dict[str, float]], np.ndarray]:
    """Learned rates per cohort of each dimension, flagged ones first; the posterior hazard of
    each cohort by dimension (the link risk uses it); and each cell's learned AFR (its lot's).

    A cohort's learned forecast is the sum of its cells' forecasts at their lots' rates, so
    every breakdown adds up to the fleet's and a known bad lot raises its vendor, part, site
    and the fleet. Lots are judged against their part number's rate, other cohorts against
    the fleet's (``forecast.maths.cohort_rates``)."""
    lot_names, lot_inv = _grouping([_label("lot", key) for key in keys])
    n_lots = len(lot_names)
    lot_ref = _lot_reference(keys, (inst, fail, expo), lot_inv, n_lots, prior=prior, level=p.credible_level)
    lot_rates = fm.cohort_rates(
        _sum_by(lot_inv, n_lots, fail),
        _sum_by(lot_inv, n_lots, expo),
        prior=prior,
        level=p.credible_level,
        reference_hazard=lot_ref,
    )
    cell_afr = lot_rates.afr_mean[lot_inv] if keys else np.zeros(0)
    cell_expected = {h: fm.expected_failures(inst, cell_afr, h) for h in horizons}

    breakdowns: dict[str, list[dict]] = {}
    posterior: dict[str, dict[str, float]] = {}
    for dim in DIMENSIONS:
        if dim == "lot":
            names, inv, rates = lot_names, lot_inv, lot_rates
        else:
            names, inv = _grouping([_label(dim, key) for key in keys])
            rates = fm.cohort_rates(
                _sum_by(inv, len(names), fail),
                _sum_by(inv, len(names), expo),
                prior=prior,
                level=p.credible_level,
            )
        size = len(names)
        n, k, e = (_sum_by(inv, size, a) for a in (inst, fail, expo))
        learned = {h: _sum_by(inv, size, cell_expected[h]) for h in horizons}
        posterior[dim] = dict(zip(names.tolist(), rates.hazard_mean.tolist(), strict=True))
        rows = []
        for i, name in enumerate(names.tolist()):
            rows.append(
                {
                    "cohort": name,
                    "installed": int(n[i]),
                    "failures": int(k[i]),
                    "exposure_years": _r(e[i], 2),
                    "afr_mean": _r(rates.afr_mean[i], 5),
                    "afr_low": _r(rates.afr_low[i], 5),
                    "afr_high": _r(rates.afr_high[i], 5),
                    "reference_afr": _r(rates.reference_afr[i], 5),
                    "prob_above_fleet": _r(rates.prob_above_fleet[i], 4),
                    "flagged": bool(rates.flagged[i]),
                    "expected": {
                        str(h): _r(fm.expected_failures(n[i], p.annual_failure_rate, h), 3) for h in horizons
                    },
                    "expected_learned": {str(h): _r(learned[h][i], 3) for h in horizons},
                }
            )
        rows.sort(key=lambda r: (not r["flagged"], -r["afr_mean"], r["cohort"]))
        breakdowns[dim] = rows
    return breakdowns, posterior, cell_afr


def _monthly(
    keys: list[fsel.Key], inst: np.ndarray, cell_afr: np.ndarray, *, now: datetime, months: int
) -> dict:
    """Expected failures by month, stacked by vendor (each lot at its learned rate)."""
    names, inv = _grouping([_label("vendor", key) for key in keys])
    per_cell = fm.monthly_expected(inst, cell_afr, months=months) if keys else np.zeros((0, months))
    monthly = np.zeros((len(names), months))
    np.add.at(monthly, inv, per_cell)
    installed = _sum_by(inv, len(names), inst)
    first = date(now.year, now.month, 1)
    month_labels = []
    for m in range(months):
        y, mo = divmod(first.month - 1 + m, 12)
        month_labels.append(f"{first.year + y:04d}-{mo + 1:02d}")
    return {
        "months": month_labels,
        "series": [
            {"cohort": name, "values": [_r(x, 3) for x in monthly[i]]}
            for i, name in enumerate(names.tolist())
            if installed[i]
        ],
    }


def _spares(
    data: fsel.CohortData,
    keys: list[fsel.Key],
    inst: np.ndarray,
    *,
    cell_afr: np.ndarray,
    p: ForecastParams,
) -> list[dict]:
    """Spares per site and part number: what to hold over the lead time, and what to order.

    Demand is the sum of each lot's own over the lead time (a sum of Poissons is Poisson), at
    each lot's learned rate or at the budget AFR, as ``p.spares_rate`` says; so a bad lot
    raises its site's spares. ``afr`` is the installed-weighted rate the row follows."""
    rate = cell_afr if p.spares_rate == SparesRate.LEARNED else np.full(len(keys), p.annual_failure_rate)
    demand = fm.expected_failures(inst, rate, p.lead_time_days) if keys else np.zeros(0)
    cells: dict[tuple[str, str], list[float]] = {}
    for i, key in enumerate(keys):
        if inst[i]:
            c = cells.setdefault((key[0], key[2]), [0.0, 0.0, 0.0])
            c[0] += inst[i]
            c[1] += demand[i]
            c[2] += inst[i] * rate[i]
    for sp in data.spares_on_hand:
        cells.setdefault(sp, [0.0, 0.0, 0.0])
    spare_keys = sorted(cells)
    s_inst = np.array([cells[c][0] for c in spare_keys], dtype=float)
    mean = np.array([cells[c][1] for c in spare_keys], dtype=float)
    weighted = np.array([cells[c][2] for c in spare_keys], dtype=float)
    s_afr = np.where(s_inst > 0, weighted / np.maximum(s_inst, 1.0), p.annual_failure_rate)
    s_hand = np.array([data.spares_on_hand.get(c, 0) for c in spare_keys], dtype=np.int64)
    hold = fm.poisson_quantile(mean, p.service_level)
    order = np.maximum(hold - s_hand, 0)
    return [
        {
            "site": c[0],
            "part_number": c[1],
            "installed": int(s_inst[i]),
            "afr": _r(s_afr[i], 5),
            "mean_demand": _r(mean[i], 3),
            "hold": int(hold[i]),
            "on_hand": int(s_hand[i]),
            "to_order": int(order[i]),
        }
        for i, c in enumerate(spare_keys)
    ]


def _cost(inst: np.ndarray, *, cell_afr: np.ndarray, p: ForecastParams) -> dict:
    """Cost of failure over one training run of ``run_hours``, at the budget AFR and at the
    learned rates (every lot at its own)."""
    run_days = p.run_hours / 24.0
    n_total = float(inst.sum())
    learned = float(fm.expected_failures(inst, cell_afr, run_days).sum()) if inst.size else 0.0
    cost = {}
    for name, incidents in (
        ("budget", float(fm.expected_failures(n_total, p.annual_failure_rate, run_days))),
        ("learned", learned),
    ):
        c = fm.failure_cost(
            incidents=incidents,
            hours_per_incident=p.hours_per_incident,
            run_hours=p.run_hours,
            cluster_gpus=p.cluster_gpus,
            gpu_hour_cost=p.gpu_hour_cost,
        )
        cost[name] = {k: _r(v, 4) for k, v in asdict(c).items()}
        # As the seed says it: 227.5 h of a 720-h run is 31.6% (one decimal, not rounded up).
        cost[name]["percent_of_run"] = _r(c.fraction_of_run * 100, 1)
    return cost


def links_at_risk(
    *,
    now: datetime,
    lot_hazard: dict[str, float],
    data: fsel.CohortData,
    prior: fm.Prior,
    top: int,
    timings: dict[str, float] | None = None,
    prune: bool = True,
) -> dict:
    """Rank every active link; return the ``top`` with reasons (``prune=False``: never take the
    fast path of scoring only links of standout cohorts).

    The database scores all links and returns the candidates (see ``fsel.link_features``);
    the full model (``forecast.risk.rank_links``) ranks those and writes the reasons.
    """
    prior_h = prior.hazard
    module_hazard = {
        key: lot_hazard.get(lot_label(vendor, lot), prior_h) for key, (vendor, lot) in data.lots.items()
    }
    feats = fsel.link_features(
        now=now,
        module_hazard=module_hazard,
        default_hazard=prior_h,
        top=top,
        module_installed=data.module_installed,
        oldest_install=data.oldest_install,
        prune_budget=None if prune else 0,
        timings=timings,
    )
    ranking = fm.rank_links(
        feats.risk_inputs(),
        top=top,
    )
    labels = fsel.link_labels(ranking.link_ids.tolist())
    return {
        "considered": feats.considered,
        "pruned": feats.pruned,
        "links": [
            {
                "link_id": int(lid),
                **labels.get(int(lid), {}),
                "hazard": _r(ranking.hazard[i], 5),
                "probability_30d": _r(ranking.probability[i], 5),
                "reasons": ranking.reasons[i],
            }
            for i, lid in enumerate(ranking.link_ids.tolist())
        ],
    }


@transaction.atomic
def forecast_snapshot_store(*, now: datetime, params: ForecastParams | None = None) -> ForecastSnapshot:
    """Compute and store today's forecast: one snapshot per day, recomputed if run again."""
    p = params or ForecastParams.from_settings()
    payload = forecast_compute(now=now, params=p)
    snap, _ = ForecastSnapshot.objects.update_or_create(
        day=now.date(),
        defaults={"computed_at": now, "annual_failure_rate": p.annual_failure_rate, "payload": payload},
    )
    return snap


def forecast_latest(*, now: datetime, max_age: timedelta = timedelta(days=1)) -> dict:
    """Today's snapshot if there is one, else a fresh computation (not stored)."""
    snap = ForecastSnapshot.objects.filter(day=now.date()).first()
    if snap is not None and now - snap.computed_at <= max_age:
        return snap.payload
    return forecast_compute(now=now)
