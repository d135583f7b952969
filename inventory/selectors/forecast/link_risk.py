"""Link risk inputs: which links can make the forecast's top, and their features.

Every active link is scored from its end modules' cohort hazards and age (the same age factor
as ``forecast.risk``). When one or two cohorts stand out, the database scores only the links
touching them and proves no other link can enter the top (``link_features``); otherwise four
narrow columnar reads (modules, open placements, links, ports; one statement, rows packed into
one bytea each) are joined and scored in numpy (``link_scan``), and the top candidates plus
the links with evidence (alerts, thin margins, FEC/DOM trends) are ranked with the full model.
The SQL is portable to SQLite (the embedded default).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from django.db import connection

from inventory.core.forecast.risk import RiskInputs, RiskWeights, age_factor, age_factor_sql, max_age_factor
from inventory.models import Link
from inventory.selectors.forecast.link_evidence import LinkEvidence, link_evidence
from inventory.selectors.forecast.link_scan import score_every_link
from inventory.selectors.forecast.sql import (
    epoch_sql,
    fence_sql,
    hazard_params,
    hazard_rows_sql,
    heavy_queries,
    id_in_sql,
    table_names,
)


@dataclass
class LinkFeatures:
    """Arrays over the candidate links (the top scored and every link with evidence)."""

    link_ids: np.ndarray
    base_hazard: np.ndarray  # failures per link-year from the end modules' cohorts
    age_days: np.ndarray
    open_alert_level: np.ndarray
    past_alerts: np.ndarray
    min_margin_db: np.ndarray
    fec_ratio: np.ndarray
    dom_drift_db: np.ndarray
    considered: int  # every active link was scored
    pruned: bool = False  # the threshold fast path decided (only hot links were scored)

    def risk_inputs(self) -> RiskInputs:
        """The ranking's inputs (``forecast.risk.rank_links``): the same arrays."""
        return RiskInputs(**{f: getattr(self, f) for f in RiskInputs.__dataclass_fields__})


def _hot_links_sql() -> str:
    """Active links with a module of a ``hot`` cohort at either end (indexed walk from the
    modules: cage -> ports -> links)."""
    t = table_names("Link", "Port", "Transceiver")
    return f"""
        SELECT DISTINCT l.id FROM {hazard_rows_sql("hot")} h
        JOIN {{Transceiver}} x ON x.model_id = h.model_id AND x.date_code = h.date_code
        JOIN {{Port}} p ON p.cage_id = x.cage_id
        JOIN {{Link}} l ON (l.a_port_id = p.id OR l.b_port_id = p.id) AND l.active
    """.format(**t)  # noqa: S608 - table names from model meta


def _link_scores_sql(*, where: str, tail: str, weights: RiskWeights) -> str:
    """Every active link's base hazard (both end modules' cohort hazards) and the install time
    of its older module, scored ``base * age factor`` (evidence factors are all >= 1, so the
    top links by this score plus every link with evidence contain the true top links)."""
    t = table_names("Link", "Port", "Transceiver", "TransceiverPlacement")
    ends = ""
    for s in "ab":
        ends += f"""
            LEFT JOIN {{Transceiver}} x{s} ON x{s}.cage_id = p{s}.cage_id
            LEFT JOIN {{TransceiverPlacement}} t{s}
                   ON t{s}.transceiver_id = x{s}.id AND t{s}.removed_at IS NULL
            LEFT JOIN {hazard_rows_sql()} h{s}
                   ON h{s}.model_id = x{s}.model_id AND h{s}.date_code = x{s}.date_code
        """
    return f"""
        SELECT id, base, inst FROM (
            SELECT id, base, inst, (%(now_s)s - inst) / 86400.0 AS age FROM (
                SELECT id,
                       CASE WHEN ha + hb > 0 THEN ha + hb ELSE %(prior)s END AS base,
                       {epoch_sql("CASE WHEN ia IS NULL THEN ib WHEN ib IS NULL THEN ia WHEN ia < ib THEN ia ELSE ib END")} AS inst
                FROM (
                    SELECT l.id,
                           CASE WHEN xa.id IS NULL THEN 0.0 ELSE COALESCE(ha.h, %(prior)s) END AS ha,
                           CASE WHEN xb.id IS NULL THEN 0.0 ELSE COALESCE(hb.h, %(prior)s) END AS hb,
                           ta.installed_at AS ia,
                           tb.installed_at AS ib
                    FROM {{Link}} l
                    JOIN {{Port}} pa ON pa.id = l.a_port_id
                    JOIN {{Port}} pb ON pb.id = l.b_port_id
                    {ends}
                    WHERE l.active AND {where}
                ) e {fence_sql()}
            ) q {fence_sql()}
        ) r
        {tail.replace("{score}", f"base * {age_factor_sql('age', weights)}")}
    """.format(**t)  # noqa: S608 - table names from model meta, values are parameters


# The fast path is tried only when its hottest cohort's hazard is at least this many times any
# cohort left out (or the default). Exactness does not depend on it (the proof decides); it only saves
# a wasted attempt on a fleet where nothing stands out: at 1M modules a failed attempt cost
# ~1.7 s on top of the ~2.3 s full scan.
STANDOUT = 1.5


def _hot_cohorts(
    module_hazard: dict[tuple[int, str], float], module_installed: dict[tuple[int, str], int], budget: int
) -> tuple[dict[tuple[int, str], float], float]:
    """The highest-hazard cohorts holding at most ``budget`` installed modules, and the hazard
    of the best cohort left out (every module outside the set is at or below it)."""
    ranked = sorted(module_hazard.items(), key=lambda kv: -kv[1])
    hot: dict[tuple[int, str], float] = {}
    total, i = 0, 0
    while i < len(ranked):
        j = i  # cohorts of equal hazard go in together or not at all
        while j < len(ranked) and ranked[j][1] == ranked[i][1]:
            j += 1
        group = ranked[i:j]
        n = sum(module_installed.get(key, 0) for key, _ in group)
        if total + n > budget:
            return hot, ranked[i][1]
        hot.update(group)
        total += n
        i = j
    return hot, 0.0


def link_features(
    *,
    now: datetime,
    module_hazard: dict[tuple[int, str], float],
    default_hazard: float,
    top: int,
    weights: RiskWeights | None = None,
    evidence: LinkEvidence | None = None,
    module_installed: dict[tuple[int, str], int] | None = None,
    oldest_install: datetime | None = None,
    prune_budget: int | None = None,
    timings: dict[str, float] | None = None,
) -> LinkFeatures:
    """Risk inputs for the links that can make the top ``top``, and how many links were ranked.

    A link's hazard is its base (both end modules' cohort hazards; unknown cohorts get
    ``default_hazard``) times the age factor times evidence factors that are all >= 1. So the
    top links by ``base * age`` plus every link with evidence contain the true top links, and
    only those leave the database:

    * fast path (threshold pruning, exact): score only links touching the hottest cohorts
      (``module_installed`` bounds their size); accepted when the ``top``-th score beats the
      best any other link could reach (``2 * max(next cohort hazard, default) * max age
      factor``, the oldest open placement bounding age);
      tried only when the hottest cohort's hazard is ``STANDOUT`` times any cohort left out;
    * otherwise every active link is scored (``score_every_link``) and the best
      ``2 * top + 16`` kept.

    ``prune_budget``: the most modules the fast path may start from (default: 2,000, then
    20,000). ``timings``, when given, receives seconds per step (``risk.*``, for the bench).
    """
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        if timings is not None:
            timings[name] = timings.get(name, 0.0) + time.perf_counter() - clock
        clock = time.perf_counter()

    w = weights or RiskWeights()
    ev = evidence if evidence is not None else link_evidence(now=now)
    lap("risk.evidence")
    k = 2 * top + 16
    params = {
        **hazard_params(module_hazard),
        "prior": float(default_hazard),
        "now_s": now.timestamp(),
        "k": k,
    }
    ev_ids = set(ev.ids())
    rows, pruned = None, False
    with heavy_queries(), connection.cursor() as cur:
        if module_installed and oldest_install is not None and top > 0:
            rows = _pruned_rows(
                cur,
                params,
                w,
                now=now,
                module_hazard=module_hazard,
                default_hazard=default_hazard,
                module_installed=module_installed,
                oldest_install=oldest_install,
                top=top,
                k=k,
                ev_ids=ev_ids,
                prune_budget=prune_budget,
            )
            pruned = rows is not None
        lap("risk.pruned_path")
        if rows is None:
            rows, considered = score_every_link(cur, params, w, k, ev_ids, now, lap)
        else:
            cur.execute(f"SELECT COUNT(*) FROM {table_names('Link')['Link']} WHERE active")  # noqa: S608 - table name from model _meta
            considered = cur.fetchone()[0]
    return _features(rows, ev, now=now, considered=considered, pruned=pruned, lap=lap)


def _pruned_rows(
    cur,
    params: dict,
    w: RiskWeights,
    *,
    now: datetime,
    module_hazard: dict[tuple[int, str], float],
    default_hazard: float,
    module_installed: dict[tuple[int, str], int],
    oldest_install: datetime,
    top: int,
    k: int,
    ev_ids: set[int],
    prune_budget: int | None,
) -> list[tuple] | None:
    """The fast path of ``link_features`` (threshold pruning, exact): the candidate rows
    ``(id, base, install epoch)`` when the ``top``-th hot link provably beats every other link,
    else None (the caller scans every link). ``params`` gains the hot cohorts and the ids."""

    def by_ids(ids: list[int]) -> list[tuple]:
        if not ids:
            return []
        params["ids"] = ids if connection.vendor == "postgresql" else json.dumps(ids)
        cur.execute(_link_scores_sql(where=id_in_sql("l.id", "ids"), tail="", weights=w), params)
        return cur.fetchall()

    oldest_days = (now - oldest_install).total_seconds() / 86400.0
    f_max = max_age_factor(oldest_days, w)
    # A small hot set first (cheap when one lot stands out), then a larger one.
    budgets = (prune_budget,) if prune_budget is not None else (max(2_000, 4 * k), max(20_000, 20 * k))
    tried: set | None = None
    for budget in budgets:
        hot, next_h = _hot_cohorts(module_hazard, module_installed, budget)
        if not hot or next_h <= 0 or set(hot) == tried:
            continue
        if max(hot.values()) < STANDOUT * max(next_h, float(default_hazard)):
            continue  # nothing stands out: the proof would likely fail, scan instead
        tried = set(hot)
        params.update(hazard_params(hot, "hot"))
        cur.execute(_hot_links_sql(), params)
        hot_ids = {r[0] for r in cur.fetchall()}
        if len(hot_ids) < top:
            continue
        cand = by_ids(sorted(hot_ids | ev_ids))
        hot_rows = [r for r in cand if r[0] in hot_ids]
        inst = np.array([np.nan if r[2] is None else float(r[2]) for r in hot_rows])
        scores = np.array([float(r[1]) for r in hot_rows]) * age_factor((now.timestamp() - inst) / 86400.0, w)
        nth = float(np.sort(scores)[::-1][top - 1])
        if nth > 2.0 * max(next_h, float(default_hazard)) * f_max:
            return cand
    return None


def _features(
    rows: list[tuple], ev: LinkEvidence, *, now: datetime, considered: int, pruned: bool, lap
) -> LinkFeatures:
    """The candidate rows ``(id, base, install epoch)`` and their evidence as arrays by link id."""
    by_id = {r[0]: r for r in rows}
    ids = np.array(sorted(by_id), dtype=np.int64)
    n = len(ids)
    base = np.array([float(by_id[i][1]) for i in ids.tolist()], dtype=float)
    inst = np.array(
        [np.nan if by_id[i][2] is None else float(by_id[i][2]) for i in ids.tolist()], dtype=float
    )
    age = (now.timestamp() - inst) / 86400.0

    def arr(d: dict, fill: float) -> np.ndarray:
        out = np.full(n, fill, dtype=float)
        for i, lid in enumerate(ids.tolist()):
            v = d.get(lid)
            if v is not None:
                out[i] = v
        return out

    lap("risk.features")
    return LinkFeatures(
        link_ids=ids,
        base_hazard=base,
        age_days=age,
        open_alert_level=arr(ev.open_level, 0).astype(np.int64),
        past_alerts=arr(ev.past, 0.0),
        min_margin_db=arr(ev.margin, np.nan),
        fec_ratio=arr(ev.fec, np.nan),
        dom_drift_db=arr(ev.dom, np.nan),
        considered=int(considered),
        pruned=pruned,
    )


def link_labels(link_ids: list[int]) -> dict[int, dict]:
    """Names for the links shown (one query)."""
    out = {}
    for lid, ad, ap, bd, bp, pmd, lc in Link.objects.filter(pk__in=link_ids).values_list(
        "pk",
        "a_port__device__name",
        "a_port__name",
        "b_port__device__name",
        "b_port__name",
        "pmd",
        "link_class",
    ):
        out[lid] = {"a": f"{ad}:{ap}", "b": f"{bd}:{bp}", "pmd": pmd, "link_class": lc}
    return out
