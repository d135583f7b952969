"""Link rules: link_flap (link-down and error-recovery events) and link_degraded (speed or lanes)."""

from __future__ import annotations

import numpy as np

from inventory.core.telemetry.rules.collect import Collector
from inventory.core.telemetry.rules.config import Thresholds
from inventory.core.telemetry.rules.frames import LinkTable, PortWindow
from inventory.core.telemetry.rules.hits import RowHits
from inventory.core.telemetry.rules.util import bucket_count, json_number


def link_flap_rows(hits: RowHits, p: Thresholds, sl: np.ndarray, w: PortWindow) -> None:
    kf = bucket_count(p.flap_window_s, w.bucket_s, w.buckets)
    ev = np.nansum(w.link_down[sl, -kf:], axis=1) + np.nansum(w.error_recovery[sl, -kf:], axis=1)
    hits.flap_fire[sl] = ev >= p.flap_min_events
    hits.flap_events[sl] = ev


def link_findings(out: Collector, hits: RowHits, window: PortWindow, links: LinkTable) -> None:
    n = window.n
    row_link = out.rows.link
    on_link = row_link >= 0
    for r in np.nonzero(hits.flap_fire)[0]:
        r = int(r)
        out.add(
            "link_flap",
            r,
            "page",
            {
                "link_down": float(np.nansum(window.link_down[r])),
                "error_recovery": float(np.nansum(window.error_recovery[r])),
            },
        )
    out.hold("link_flap", hits.flap_fire)
    exp_speed = np.full(n, np.nan)
    exp_speed[on_link] = links.expected_speed_gbps[row_link[on_link]]
    exp_width = np.full(n, np.nan)
    exp_width[on_link] = links.expected_width[row_link[on_link]]
    with np.errstate(invalid="ignore"):  # NaN (unknown) compares False: never a finding
        slow = (window.speed_gbps < exp_speed) | (window.link_width < exp_width)
    for r in np.nonzero(slow)[0]:
        r = int(r)
        out.add(
            "link_degraded",
            r,
            "page",
            {
                "speed_gbps": json_number(window.speed_gbps[r]),
                "expected_gbps": json_number(exp_speed[r]),
                "width": json_number(window.link_width[r]),
                "expected_width": json_number(exp_width[r]),
            },
        )
    out.hold("link_degraded", slow)
