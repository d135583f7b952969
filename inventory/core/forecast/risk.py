"""Which links fail next: a multiplicative hazard model over what we know of each link.

Every link starts from the hazard of the modules at its ends (their cohort's posterior rate),
then each piece of evidence multiplies it: age (infant mortality, wear-out), open alerts by
severity, past alerts, thin or failed test margins, a rising FEC rate, drifting receive power
or module temperature (DOM). The score is the probability of a failure within the horizon,
``1 - exp(-hazard * days / 365)``. Vectorised over all links at once; reasons are written only
for the links returned.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from inventory.core.forecast.maths import DAYS_PER_YEAR


@dataclass(frozen=True)
class RiskWeights:
    infant_days: float = 90.0
    infant_factor: float = 1.5
    wearout_years: float = 3.0
    wearout_per_year: float = 0.5
    open_alert_factor: tuple[float, float, float] = (3.0, 6.0, 12.0)  # warning, notify, page/critical
    past_alert_step: float = 0.5
    past_alert_cap: float = 4.0
    margin_fail_factor: float = 4.0  # margin below 0 dB
    margin_thin_db: float = 0.3
    margin_thin_factor: float = 2.0
    margin_low_db: float = 0.5
    margin_low_factor: float = 1.3
    fec_rise_ratio: tuple[float, float] = (3.0, 10.0)  # recent / baseline corrected rate
    fec_rise_factor: tuple[float, float] = (2.0, 4.0)
    dom_drift_db: tuple[float, float] = (1.0, 2.0)
    dom_drift_factor: tuple[float, float] = (1.5, 3.0)
    horizon_days: float = 30.0


@dataclass
class RiskInputs:
    """One entry per link; ``nan`` where a figure is unknown."""

    link_ids: np.ndarray
    base_hazard: np.ndarray  # failures per link-year from the modules' cohorts
    age_days: np.ndarray
    open_alert_level: np.ndarray  # 0 none, 1 warning, 2 notify, 3 page/critical
    past_alerts: np.ndarray
    min_margin_db: np.ndarray
    fec_ratio: np.ndarray
    dom_drift_db: np.ndarray


@dataclass
class RiskRanking:
    link_ids: np.ndarray
    hazard: np.ndarray
    probability: np.ndarray
    reasons: list[list[str]] = field(default_factory=list)
    considered: int = 0


_LEVEL_NAMES = ("", "warning", "notify", "page/critical")


def age_factor(age_days, w: RiskWeights) -> np.ndarray:
    """Infant mortality before ``infant_days``, wear-out after ``wearout_years`` (NaN: 1)."""
    age = np.nan_to_num(np.asarray(age_days, float), nan=0.0)
    years = age / DAYS_PER_YEAR
    return np.where(
        (age > 0) & (age < w.infant_days),
        w.infant_factor,
        np.where(years > w.wearout_years, 1.0 + w.wearout_per_year * (years - w.wearout_years), 1.0),
    )


def max_age_factor(oldest_age_days: float, w: RiskWeights) -> float:
    """An upper bound of ``age_factor`` over every age up to ``oldest_age_days``."""
    years = max(float(oldest_age_days), 0.0) / DAYS_PER_YEAR
    return max(1.0, float(w.infant_factor), 1.0 + w.wearout_per_year * (years - w.wearout_years))


def _factors(x: RiskInputs, w: RiskWeights) -> dict[str, np.ndarray]:
    n = len(x.link_ids)
    one = np.ones(n)
    f_age = age_factor(x.age_days, w)
    lvl = np.clip(np.asarray(x.open_alert_level, dtype=np.int64), 0, 3)
    f_open = np.concatenate([[1.0], np.asarray(w.open_alert_factor, float)])[lvl]
    past = np.asarray(x.past_alerts, float)
    f_past = np.minimum(1.0 + w.past_alert_step * past, w.past_alert_cap)
    m = np.asarray(x.min_margin_db, float)
    with np.errstate(invalid="ignore"):
        f_margin = np.where(
            m < 0,
            w.margin_fail_factor,
            np.where(
                m < w.margin_thin_db,
                w.margin_thin_factor,
                np.where(m < w.margin_low_db, w.margin_low_factor, 1.0),
            ),
        )
        fr = np.asarray(x.fec_ratio, float)
        f_fec = np.where(
            fr >= w.fec_rise_ratio[1],
            w.fec_rise_factor[1],
            np.where(fr >= w.fec_rise_ratio[0], w.fec_rise_factor[0], 1.0),
        )
        d = np.abs(np.asarray(x.dom_drift_db, float))
        f_dom = np.where(
            d >= w.dom_drift_db[1],
            w.dom_drift_factor[1],
            np.where(d >= w.dom_drift_db[0], w.dom_drift_factor[0], 1.0),
        )
    return {
        "age": f_age * one,
        "open": f_open,
        "past": f_past,
        "margin": f_margin,
        "fec": f_fec,
        "dom": f_dom,
    }


def age_factor_sql(age_days: str, w: RiskWeights) -> str:
    """``age_factor`` as a SQL expression over ``age_days`` (NULL: unknown,
    factor 1), so the database can rank a million links by ``base * age`` and return only the
    top ones. Kept beside ``_factors`` so the two stay one formula; the weights are floats
    from code, never user input."""
    a = f"COALESCE({age_days}, 0.0)"
    infant, infant_f = float(w.infant_days), float(w.infant_factor)
    wear, per_year, year = float(w.wearout_years), float(w.wearout_per_year), float(DAYS_PER_YEAR)
    return (
        f"(CASE WHEN {a} > 0 AND {a} < {infant!r} THEN {infant_f!r} "
        f"WHEN {a} / {year!r} > {wear!r} THEN 1.0 + {per_year!r} * ({a} / {year!r} - {wear!r}) "
        "ELSE 1.0 END)"
    )


def _reasons(x: RiskInputs, i: int, f: dict[str, np.ndarray], base: float) -> list[str]:
    out = [f"modules' cohort rate {-np.expm1(-base):.1%}/yr"]
    age = x.age_days[i]
    if f["age"][i] != 1.0 and not np.isnan(age):
        kind = "early life" if age < DAYS_PER_YEAR else "wear-out"
        out.append(f"age {age / DAYS_PER_YEAR:.1f} y ({kind}) x{f['age'][i]:.1f}")
    if f["open"][i] != 1.0:
        out.append(f"open {_LEVEL_NAMES[int(x.open_alert_level[i])]} alert x{f['open'][i]:.0f}")
    if f["past"][i] != 1.0:
        out.append(f"{int(x.past_alerts[i])} past alert(s) x{f['past'][i]:.1f}")
    if f["margin"][i] != 1.0:
        out.append(f"test margin {x.min_margin_db[i]:+.2f} dB x{f['margin'][i]:.1f}")
    if f["fec"][i] != 1.0:
        out.append(f"FEC corrected rate {x.fec_ratio[i]:.0f} times its baseline x{f['fec'][i]:.0f}")
    if f["dom"][i] != 1.0:
        out.append(f"DOM drift {x.dom_drift_db[i]:+.1f} dB x{f['dom'][i]:.1f}")
    return out


def rank_links(x: RiskInputs, *, top: int = 50, weights: RiskWeights = RiskWeights()) -> RiskRanking:  # noqa: B008
    """The ``top`` links by hazard, highest first, with the reasons behind each score."""
    n = len(x.link_ids)
    if n == 0:
        return RiskRanking(np.array([], dtype=np.int64), np.array([]), np.array([]), [], 0)
    f = _factors(x, weights)
    base = np.asarray(x.base_hazard, float)
    hazard = base * f["age"] * f["open"] * f["past"] * f["margin"] * f["fec"] * f["dom"]
    k = min(top, n)
    ids = np.asarray(x.link_ids)
    if k < n:
        # Keep every link tied with the k-th hazard, so the id tie-break below decides who is
        # in, not argpartition's arbitrary order among equals.
        cut = -np.partition(-hazard, k - 1)[k - 1]
        idx = np.flatnonzero(hazard >= cut)
    else:
        idx = np.arange(n)
    # Highest hazard first; ties broken by link id for a stable, reproducible list.
    idx = idx[np.lexsort((ids[idx], -hazard[idx]))][:k]
    prob = -np.expm1(-hazard[idx] * weights.horizon_days / DAYS_PER_YEAR)
    return RiskRanking(
        link_ids=np.asarray(x.link_ids)[idx],
        hazard=hazard[idx],
        probability=prob,
        reasons=[_reasons(x, int(i), f, float(base[i])) for i in idx],
        considered=n,
    )
