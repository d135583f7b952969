"""The engine: every per-port check over the window, then the findings family by family."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from inventory.core.telemetry.rules.collect import Collector, row_map
from inventory.core.telemetry.rules.config import Thresholds
from inventory.core.telemetry.rules.fec import (
    fec_candidates,
    fec_degradation_rows,
    fec_findings,
    fec_rates,
    fec_tail_rows,
    fec_uncorrectable_rows,
    window_rates,
)
from inventory.core.telemetry.rules.frames import Evaluation, LinkTable, PortFacts, PortWindow, SampleSteps
from inventory.core.telemetry.rules.hits import RowHits
from inventory.core.telemetry.rules.link import link_findings, link_flap_rows
from inventory.core.telemetry.rules.pfc import pfc_findings, pfc_storm_rows
from inventory.core.telemetry.rules.rx_power import rx_power_findings, rx_power_rows
from inventory.core.telemetry.rules.util import step_candidates
from inventory.core.telemetry.rules.wiring import miswire_findings, unrecorded_swap_findings


def row_checks(
    w: PortWindow,
    facts: PortFacts,
    profiles: list[Thresholds],
    row_profile: np.ndarray,
    row_limit: np.ndarray,
    rates: tuple[np.ndarray, np.ndarray],
) -> RowHits:
    """Every per-port check, each profile over its own rows at once (``rates``: ``fec_rates``
    of the window, which ``evaluate`` has already computed)."""
    n, b = w.n, w.buckets
    has = w.seconds > 0
    secs = np.where(has, w.seconds, np.nan)
    ber, cw_rate = rates
    hits = RowHits.empty(n, b)
    for pi, p in enumerate(profiles):
        rows = np.nonzero(row_profile == pi)[0]
        if rows.size == 0 or b == 0:
            continue
        fec_degradation_rows(hits, p, rows, w, facts, ber=ber, cw_rate=cw_rate, row_limit=row_limit)
        fec_tail_rows(hits, p, rows, w)
        fec_uncorrectable_rows(hits, p, rows, w)
        link_flap_rows(hits, p, rows, w)
        pfc_storm_rows(hits, p, rows, w, secs)
    rx_power_rows(hits, w, facts, profiles, row_profile)
    window_rates(hits, w, has)
    hits.has_data = has.any(axis=1)
    return hits


def sample_candidates(
    w: PortWindow,
    facts: PortFacts,
    links: LinkTable,
    profiles: list[Thresholds],
    rates: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """Rows whose buckets show something a sliding-window rule could open or hold on (FEC
    degradation or tail past the hold bar, uncorrectables, pause frames): only these need their
    raw sample steps; the rules find nothing to judge in every other row."""
    if w.buckets == 0:
        return np.zeros(0, dtype=np.int64)
    rows = row_map(w, links)
    if rates is None:
        has = w.seconds > 0
        rates = fec_rates(w, has, np.where(has, w.seconds, np.nan))
    ber, cw_rate = rates
    need = np.zeros(w.n, bool)
    need[step_candidates(w, profiles)] = True
    for pi, p in enumerate(profiles):
        sl = np.nonzero(rows.profile == pi)[0]
        if sl.size:
            need[sl] |= fec_candidates(p, sl, w, facts, ber=ber, cw_rate=cw_rate, row_limit=rows.limit)
    return np.nonzero(need)[0]


def evaluate(
    window: PortWindow, facts: PortFacts, links: LinkTable, profiles: list[Thresholds] | None = None
) -> Evaluation:
    """Run every rule over the window. Pure: same input, same output."""
    profiles = profiles or [Thresholds()]
    has = window.seconds > 0
    rates = fec_rates(window, has, np.where(has, window.seconds, np.nan))
    if window.steps is None:  # no raw samples given: bucket steps of the rows that need them
        needed = sample_candidates(window, facts, links, profiles, rates)
        window = replace(window, steps=SampleSteps.from_buckets(window, needed))
    rows = row_map(window, links)
    hits = row_checks(window, facts, profiles, rows.profile, rows.limit, rates)

    out = Collector(window, links, rows)
    fec_findings(out, hits, window, facts)
    link_findings(out, hits, window, links)
    rx_any = rx_power_findings(out, hits, window, facts)
    pfc_findings(out, hits, window, facts)
    miswire_findings(out, window, facts)
    unrecorded_swap_findings(out, window, facts)
    findings = out.finish(hits.has_data)

    healthy = hits.has_data & ~hits.fec_hold & ~hits.tail_hold & ~hits.uncorr_hold & ~hits.flap_fire
    # A lane's receive-power baseline is learnt only while its link is healthy and tested.
    tested = np.zeros(window.n, bool)
    on_link = rows.link >= 0
    link_tested = links.tested if links.tested is not None else np.ones(links.link_id.shape[0], bool)
    tested[on_link] = link_tested[rows.link[on_link]]
    return Evaluation(
        findings=findings,
        holding=out.holding,
        reporting_port_ids=window.port_id[hits.has_data],
        baseline_ber=np.where(healthy, hits.window_ber, np.nan),
        baseline_cw_rate=np.where(healthy, hits.window_cw_rate, np.nan),
        rx_now=np.where((healthy & ~rx_any & tested)[:, None], window.rx_power_dbm, np.nan),
    )
