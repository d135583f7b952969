"""rx_power_drift: receive power below its baseline, live loss above the tested loss, or below the
module's own warning threshold."""

from __future__ import annotations

import numpy as np

from inventory.core.telemetry.rules.collect import Collector
from inventory.core.telemetry.rules.config import Thresholds
from inventory.core.telemetry.rules.frames import LinkTable, PortFacts, PortWindow
from inventory.core.telemetry.rules.hits import RowHits
from inventory.core.telemetry.rules.util import profile_values


def rx_power_rows(
    hits: RowHits, w: PortWindow, facts: PortFacts, profiles: list[Thresholds], row_profile: np.ndarray
) -> None:
    """rx power (latest per lane): worst drop from baseline, and below the module's warning."""
    with np.errstate(invalid="ignore"):
        drop = facts.base_rx_dbm - w.rx_power_dbm
        drop_known = np.isfinite(drop)
        rx_drift = np.where(
            drop_known.any(axis=1), np.nanmax(np.where(drop_known, drop, -np.inf), axis=1), np.nan
        )
        drift_thr = profile_values(profiles, row_profile, "rx_drift_db")
        rx_drift_fire = np.isfinite(rx_drift) & (rx_drift > drift_thr)
        rx_known = np.isfinite(w.rx_power_dbm)
        rx_min = np.where(
            rx_known.any(axis=1), np.nanmin(np.where(rx_known, w.rx_power_dbm, np.inf), axis=1), np.nan
        )
        rx_low_fire = np.isfinite(rx_min) & np.isfinite(w.rx_low_warn_dbm) & (rx_min < w.rx_low_warn_dbm)
    hits.rx_drift = rx_drift
    hits.rx_drift_fire = rx_drift_fire
    hits.rx_low_fire = rx_low_fire


def live_loss(window: PortWindow, links: LinkTable) -> tuple[np.ndarray, np.ndarray]:
    """Per row: the worst lane's loss into its receiver from the far end's tx, and the tested loss."""
    n = window.n
    live = np.full(n, np.nan)  # loss into this row's receiver, from the far end's tx
    tested = np.full(n, np.nan)
    for near, far in ((links.a_row, links.b_row), (links.b_row, links.a_row)):
        ok = (near >= 0) & (far >= 0)
        if ok.any():
            with np.errstate(invalid="ignore"):
                diff = window.tx_power_dbm[far[ok]] - window.rx_power_dbm[near[ok]]
                dk = np.isfinite(diff)
                worst = np.where(dk.any(axis=1), np.nanmax(np.where(dk, diff, -np.inf), axis=1), np.nan)
            live[near[ok]] = worst
            tested[near[ok]] = links.tested_loss_db[ok]
    return live, tested


def _rounded(x: float, digits: int = 2) -> float | None:
    return None if not np.isfinite(x) else round(float(x), digits)


def rx_power_findings(
    out: Collector,
    hits: RowHits,
    window: PortWindow,
    facts: PortFacts,
    links: LinkTable,
    profiles: list[Thresholds],
) -> np.ndarray:
    """Add the rx_power_drift findings; return the rows that have one (not a baseline to learn)."""
    loss, tested = live_loss(window, links)
    margin = profile_values(profiles, out.rows.profile, "live_loss_margin_db")
    with np.errstate(invalid="ignore"):
        loss_fire = np.isfinite(loss) & np.isfinite(tested) & (loss > tested + margin)
    rx_any = (hits.rx_drift_fire | loss_fire | hits.rx_low_fire) & ~out.rows.passive
    for r in np.nonzero(rx_any)[0]:
        r = int(r)
        out.add(
            "rx_power_drift",
            r,
            "page" if hits.rx_low_fire[r] else "notify",
            {
                "rx_power_dbm": [_rounded(v) for v in window.rx_power_dbm[r]],
                "baseline_rx_dbm": [_rounded(v) for v in facts.base_rx_dbm[r]],
                "worst_drop_db": _rounded(hits.rx_drift[r]),
                "live_loss_db": _rounded(loss[r]),
                "tested_loss_db": _rounded(tested[r]),
                "module_rx_low_warn_dbm": None
                if not np.isfinite(window.rx_low_warn_dbm[r])
                else float(window.rx_low_warn_dbm[r]),
                "below_module_warning": bool(hits.rx_low_fire[r]),
            },
        )
    out.hold("rx_power_drift", rx_any)
    return rx_any
