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
from inventory.models import ForecastSnapshot
from inventory.selectors import forecast as fsel

DIMENSIONS = ("site", "vendor", "part_number", "form_factor", "lot")


@dataclass(frozen=True)
class ForecastParams:
    annual_failure_rate: float = 0.02
    horizons_days: tuple[int, ...] = (30, 90, 365)
    custom_days: int | None = None
    prior_module_years: float = 100.0
    credible_level: float = 0.90
    service_level: float = 0.95
    lead_time_days: int = 30
    hours_per_incident: float = 3.5
    cluster_gpus: int = 1024
    gpu_hour_cost: float = 2.5
    run_hours: float = 720.0
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


def _group(labels: list[str], *arrays: np.ndarray):
    names, inv = np.unique(np.asarray(labels, dtype=object).astype(str), return_inverse=True)
    return names, [np.bincount(inv, weights=a, minlength=len(names)) for a in arrays]


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

    breakdowns, posterior = _breakdowns(keys, inst, fail, expo, p=p, prior=prior, horizons=horizons)
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
        "expected_learned": {
            str(h): _r(fm.expected_failures(n_total, fleet_rates.fleet_afr, h), 3) for h in horizons
        },
        "flagged_cohorts": sum(r["flagged"] for rows in breakdowns.values() for r in rows),
    }
    monthly_payload = _monthly(breakdowns["vendor"], now=now, months=p.months)
    spares = _spares(data, keys, inst, part_hazard=posterior["part_number"], p=p)
    cost = _cost(n_total, fleet_afr=fleet_rates.fleet_afr, p=p)

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
        },
        "fleet": fleet,
        "breakdowns": breakdowns,
        "monthly": monthly_payload,
        "spares": spares,
        "cost": cost,
        "risk": risk,
    }


def _breakdowns(
    keys: list[fsel.Key],
    inst: np.ndarray,
    fail: np.ndarray,
    expo: np.ndarray,
    *,
    p: ForecastParams,
    prior: fm.Prior,
    horizons: list[int],
) -> tuple[dict[str, list[dict]], dict[str, dict[str, float]]]:
    """Learned rates per cohort of each dimension, flagged ones first; and the posterior hazard
    of each cohort by dimension (the spares and the link risk use it)."""
    breakdowns: dict[str, list[dict]] = {}
    posterior: dict[str, dict[str, float]] = {}
    for dim in DIMENSIONS:
        names, (n, k, e) = _group([_label(dim, key) for key in keys], inst, fail, expo)
        rates = fm.cohort_rates(k, e, prior=prior, level=p.credible_level)
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
                    "prob_above_fleet": _r(rates.prob_above_fleet[i], 4),
                    "flagged": bool(rates.flagged[i]),
                    "expected": {
                        str(h): _r(fm.expected_failures(n[i], p.annual_failure_rate, h), 3) for h in horizons
                    },
                    "expected_learned": {
                        str(h): _r(fm.expected_failures(n[i], rates.afr_mean[i], h), 3) for h in horizons
                    },
                }
            )
        rows.sort(key=lambda r: (not r["flagged"], -r["afr_mean"], r["cohort"]))
        breakdowns[dim] = rows
    return breakdowns, posterior


def _monthly(vendors: list[dict], *, now: datetime, months: int) -> dict:
    """Expected failures by month, stacked by vendor (learned rates)."""
    monthly = fm.monthly_expected(
        np.array([v["installed"] for v in vendors], dtype=float),
        np.array([v["afr_mean"] for v in vendors], dtype=float),
        months=months,
    )
    first = date(now.year, now.month, 1)
    month_labels = []
    for m in range(months):
        y, mo = divmod(first.month - 1 + m, 12)
        month_labels.append(f"{first.year + y:04d}-{mo + 1:02d}")
    return {
        "months": month_labels,
        "series": [
            {"cohort": v["cohort"], "values": [_r(x, 3) for x in monthly[i]]}
            for i, v in enumerate(vendors)
            if v["installed"]
        ],
    }


def _spares(
    data: fsel.CohortData,
    keys: list[fsel.Key],
    inst: np.ndarray,
    *,
    part_hazard: dict[str, float],
    p: ForecastParams,
) -> list[dict]:
    """Spares per site and part number: what to hold over the lead time, and what to order."""
    cells: dict[tuple[str, str], float] = {}
    for key, n in zip(keys, inst, strict=True):
        if n:
            cells[(key[0], key[2])] = cells.get((key[0], key[2]), 0.0) + n
    for sp in data.spares_on_hand:
        cells.setdefault(sp, 0.0)
    spare_keys = sorted(cells)
    afr_part = {name: float(fm.afr_from_hazard(h)) for name, h in part_hazard.items()}
    s_inst = np.array([cells[c] for c in spare_keys], dtype=float)
    s_afr = np.array([afr_part.get(c[1], p.annual_failure_rate) for c in spare_keys], dtype=float)
    s_hand = np.array([data.spares_on_hand.get(c, 0) for c in spare_keys], dtype=np.int64)
    mean, hold, order = fm.spares_needed(
        s_inst, s_afr, lead_time_days=p.lead_time_days, service_level=p.service_level, on_hand=s_hand
    )
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


def _cost(n_total: float, *, fleet_afr: float, p: ForecastParams) -> dict:
    """Cost of failure over one training run of ``run_hours``, at the budget and learned rates."""
    run_days = p.run_hours / 24.0
    cost = {}
    for name, afr in (("budget", p.annual_failure_rate), ("learned", fleet_afr)):
        incidents = float(fm.expected_failures(n_total, afr, run_days))
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
