"""Evidence per link for the risk ranking: alerts, thin test margins, FEC and DOM trends."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np
from django.db.models import Avg, F, Min, Q, Sum

from inventory.core.choices import SEVERITY_ORDER, AlertState, Severity
from inventory.models import Alert, CableTest, PortRollup

# The risk model has one top alert level, "page/critical": a page counts as a critical there.
_TOP_ALERT_LEVEL = SEVERITY_ORDER[Severity.CRITICAL]


FEC_RULES = ("fec_degradation", "fec_tail", "fec_uncorrectable")


DOM_RULES = ("rx_power_drift",)


def telemetry_trends(*, now: datetime, recent_hours: int = 24, baseline_days: int = 7) -> dict[int, tuple]:
    """FEC and DOM trends per link from the telemetry rollups (``PortRollup``), set-based.

    Per port: the corrected-codeword rate of the last ``recent_hours`` over the rate of the
    ``baseline_days`` before (the FEC trend), and the lowest receive power of the recent window
    against the baseline's average lowest (the DOM drift, dB, negative when it fell). Grouped by
    link in the database (both ends), worst end kept. Returns {link id: (fec ratio, drift dB)}.
    """
    recent_from = now - timedelta(hours=recent_hours)
    base_from = recent_from - timedelta(days=baseline_days)
    recent = Q(bucket__gte=recent_from, bucket__lte=now)
    base = Q(bucket__gte=base_from, bucket__lt=recent_from)
    out: dict[int, tuple] = {}
    for side in ("links_a", "links_b"):
        rows = (
            PortRollup.objects.filter(
                bucket__gte=base_from, bucket__lte=now, **{f"port__{side}__active": True}
            )
            .values(lid=F(f"port__{side}__id"))
            .annotate(
                cw_r=Sum("fec_corrected_cw", filter=recent),
                s_r=Sum("covered_s", filter=recent & Q(fec_corrected_cw__isnull=False)),
                cw_b=Sum("fec_corrected_cw", filter=base),
                s_b=Sum("covered_s", filter=base & Q(fec_corrected_cw__isnull=False)),
                rx_r=Min("rx_power_min_any_dbm", filter=recent),
                rx_b=Avg("rx_power_min_any_dbm", filter=base),
            )
            .order_by()
        )
        for r in rows:
            ratio = drift = np.nan
            if r["s_r"] and r["s_b"] and r["cw_b"] is not None and r["cw_r"] is not None:
                rate_b = r["cw_b"] / r["s_b"]
                rate_r = r["cw_r"] / r["s_r"]
                ratio = rate_r / rate_b if rate_b > 0 else (np.inf if rate_r > 0 else 1.0)
            if r["rx_r"] is not None and r["rx_b"] is not None:
                drift = r["rx_r"] - r["rx_b"]
            old = out.get(r["lid"], (np.nan, np.nan))
            out[r["lid"]] = (
                np.fmax(old[0], ratio),
                drift if np.isnan(old[1]) or abs(drift) > abs(old[1]) else old[1],
            )
    return out


@dataclass
class LinkEvidence:
    """Per link id, only for links with something to say (alerts, thin margins, trends)."""

    open_level: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    past: dict[int, float] = field(default_factory=lambda: defaultdict(float))
    margin: dict[int, float] = field(default_factory=dict)
    fec: dict[int, float] = field(default_factory=dict)
    dom: dict[int, float] = field(default_factory=dict)

    def ids(self) -> set[int]:
        return set(self.open_level) | set(self.past) | set(self.margin) | set(self.fec) | set(self.dom)


def link_evidence(*, now: datetime, lookback_days: int = 365, margin_below_db: float = 0.5) -> LinkEvidence:
    """Alerts (open, and past within ``lookback_days``), thin test margins and telemetry trends,
    keyed by link: small sets, each gathered with one query."""
    ev = LinkEvidence()
    since = now - timedelta(days=lookback_days)
    # Alerts name the link directly, or a cable on its path.
    alerts = Alert.objects.filter(Q(state=AlertState.OPEN) | Q(opened_at__gte=since)).filter(silenced=False)
    by_link = list(
        alerts.filter(link__isnull=False).values_list("link_id", "rule", "severity", "state", "evidence")
    )
    by_cable = list(
        alerts.filter(link__isnull=True, cable__isnull=False).values_list(
            "cable__link_segments__link_id", "rule", "severity", "state", "evidence"
        )
    )
    for lid, rule, sev, state, evidence in by_link + by_cable:
        if lid is None:
            continue
        level = min(SEVERITY_ORDER.get(sev, 1), _TOP_ALERT_LEVEL)
        evidence = evidence if isinstance(evidence, dict) else {}
        if state == AlertState.OPEN:
            ev.open_level[lid] = max(ev.open_level[lid], level)
        else:
            ev.past[lid] += 1
        if rule in FEC_RULES:
            ratio = float(
                evidence.get("ratio") or (10.0 if level >= 3 else 3.0 if state == AlertState.OPEN else 1.0)
            )
            ev.fec[lid] = max(ev.fec.get(lid, ratio), ratio)
        if rule in DOM_RULES:
            drift = float(
                evidence.get("drift_db") or (2.0 if level >= 3 else 1.0 if state == AlertState.OPEN else 0.0)
            )
            ev.dom[lid] = drift if lid not in ev.dom else max(ev.dom[lid], abs(drift))

    for lid, (ratio, drift) in telemetry_trends(now=now).items():
        if not np.isnan(ratio):
            ratio = min(float(ratio), 1e6)
            ev.fec[lid] = max(ev.fec.get(lid, ratio), ratio)
        if not np.isnan(drift):
            old = ev.dom.get(lid)
            ev.dom[lid] = float(drift) if old is None or abs(drift) > abs(old) else old

    # Thin margins: the worst recent test on any cable of the path (only the thin ones travel).
    for lid, m in (
        CableTest.objects.filter(tested_at__gte=since, margin_db__lt=margin_below_db)
        .values_list("cable__link_segments__link_id")
        .annotate(m=Min("margin_db"))
        .order_by()
    ):
        if lid is not None:
            ev.margin[lid] = min(ev.margin.get(lid, m), m)
    return ev
