"""Read what the forecast needs, with set-based aggregate queries only.

Items that fail like modules: transceivers, and sealed cables (DAC/ACC/AOC). Each cohort
cell is (site, vendor, part number, form factor, date-code lot); every query here groups by
that key in the database and returns one row per cell, never one per item. The link risk
features come from one joined query over the active links (raw SQL, as plain tuples) plus
small evidence queries (alerts, thin test margins) keyed by link.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np
from django.apps import apps
from django.db import connection
from django.db.models import (
    Avg,
    Count,
    DateField,
    DurationField,
    Exists,
    ExpressionWrapper,
    F,
    Min,
    OuterRef,
    Q,
    Sum,
    Value,
)
from django.db.models.functions import Coalesce, TruncDate

from ..choices import (
    AlertState,
    CableKind,
    CableStatus,
    PlacementEnd,
    RmaOutcome,
    TransceiverStatus,
)
from ..models import (
    Alert,
    Cable,
    CableTest,
    Link,
    PortRollup,
    RmaCase,
    Transceiver,
    TransceiverPlacement,
)

Key = tuple[str, str, str, str, str]  # site, vendor, part number, form factor, lot
NO_SITE = "(no site)"

_SITE = "cage__device__rack__row__room__site__name"


def lot_of(date_code: str | None) -> str:
    dc = date_code or ""
    return dc[:4] if len(dc) >= 6 and dc[:6].isdigit() else dc


_XCVR_KEY = {
    "k_vendor": F("model__vendor__name"),
    "k_part": F("model__part_number"),
    "k_ff": F("model__form_factor"),
    "k_lot": F("date_code"),
}
_CABLE_IN_SERVICE = [
    CableStatus.INSTALLED,
    CableStatus.TESTED,
    CableStatus.IN_PRODUCTION,
    CableStatus.DEGRADED,
    CableStatus.FAULTY,
]


@dataclass
class CohortData:
    """Per cohort cell: installed now, confirmed failures, exposure (module-years)."""

    installed: dict[Key, int] = field(default_factory=lambda: defaultdict(int))
    failures: dict[Key, int] = field(default_factory=lambda: defaultdict(int))
    exposure_years: dict[Key, float] = field(default_factory=lambda: defaultdict(float))
    spares_on_hand: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))

    def keys(self) -> list[Key]:
        return sorted(set(self.installed) | set(self.failures) | set(self.exposure_years))


def _key(row: dict) -> Key:
    return (
        row.get("k_site") or NO_SITE,
        row.get("k_vendor") or "(unknown)",
        row.get("k_part") or "(unknown)",
        row.get("k_ff") or "",
        lot_of(row.get("k_lot")),
    )


def _years(d) -> float:
    if d is None:
        return 0.0
    if isinstance(d, timedelta):
        return d.total_seconds() / 86400.0 / 365.0
    return float(d) / 86400e6 / 365.0  # microseconds (some backends)


def _ntf_after(removed_at_ref: str = "removed_at") -> Exists:
    """An RMA on the same module, opened after this removal, that came back 'no trouble found'."""
    return Exists(
        RmaCase.objects.filter(
            transceiver_id=OuterRef("transceiver_id"),
            outcome=RmaOutcome.NO_TROUBLE_FOUND,
            opened_at__gte=OuterRef(removed_at_ref),
        )
    )


def failed_placements():
    """Placements that ended in a failure not later cleared by a 'no trouble found' RMA."""
    return TransceiverPlacement.objects.filter(end_reason=PlacementEnd.FAILED).filter(~_ntf_after())


def cohort_data(*, now: datetime) -> CohortData:
    """Installed base, confirmed failures, exposure and spares, grouped per cohort cell.

    Confirmed failures (one query per source, each grouped in the database):

    * a placement that ended ``failed``, unless an RMA opened afterwards found no trouble;
    * a confirmed RMA on a module that has no failed placement (failed before installation);
    * a module with status ``failed`` and neither of the above (recorded failed directly);
    * a sealed cable (DAC/ACC/AOC) retired after being marked faulty, or with a confirmed RMA.

    Exposure: every placement's time in a cage (to its removal, or ``now``), and every sealed
    cable's time in service (install date to retirement, or today).
    """
    data = CohortData()
    today = now.date()

    # Installed base.
    for r in (
        Transceiver.objects.filter(status=TransceiverStatus.INSTALLED)
        .values(k_site=F(_SITE), **_XCVR_KEY)
        .annotate(n=Count("pk"))
        .order_by()
    ):
        data.installed[_key(r)] += r["n"]
    sealed = Cable.objects.filter(kind__in=CableKind.sealed())
    cable_site = Coalesce(
        F("ends__cage__device__rack__row__room__site__name"),
        F("ends__port__device__rack__row__room__site__name"),
    )
    cable_key = {
        "k_site": cable_site,
        "k_vendor": F("vendor__name"),
        "k_part": F("part_number"),
        "k_ff": F("kind"),
    }
    for r in (
        sealed.filter(status__in=_CABLE_IN_SERVICE, ends__side="A", ends__leg=0)
        .values(**cable_key, k_lot=F("lot"))
        .annotate(n=Count("pk"))
        .order_by()
    ):
        data.installed[_key(r)] += r["n"]

    # Exposure.
    span = ExpressionWrapper(
        Coalesce("removed_at", Value(now)) - F("installed_at"), output_field=DurationField()
    )
    for r in (
        TransceiverPlacement.objects.filter(installed_at__lt=now)
        .values(
            k_site=F(_SITE),
            k_vendor=F("transceiver__model__vendor__name"),
            k_part=F("transceiver__model__part_number"),
            k_ff=F("transceiver__model__form_factor"),
            k_lot=F("transceiver__date_code"),
        )
        .annotate(t=Sum(span))
        .order_by()
    ):
        data.exposure_years[_key(r)] += _years(r["t"])
    cable_span = ExpressionWrapper(
        Coalesce(TruncDate("retired_at"), Value(today, output_field=DateField())) - F("install_date"),
        output_field=DurationField(),
    )
    for r in (
        sealed.filter(install_date__isnull=False, install_date__lt=today, ends__side="A", ends__leg=0)
        .exclude(status=CableStatus.PLANNED)
        .values(**cable_key, k_lot=F("lot"))
        .annotate(t=Sum(cable_span))
        .order_by()
    ):
        data.exposure_years[_key(r)] += _years(r["t"])

    # Confirmed failures.
    for r in (
        failed_placements()
        .values(
            k_site=F(_SITE),
            k_vendor=F("transceiver__model__vendor__name"),
            k_part=F("transceiver__model__part_number"),
            k_ff=F("transceiver__model__form_factor"),
            k_lot=F("transceiver__date_code"),
        )
        .annotate(n=Count("pk"))
        .order_by()
    ):
        data.failures[_key(r)] += r["n"]
    any_failed_placement = Exists(
        TransceiverPlacement.objects.filter(transceiver_id=OuterRef("pk"), end_reason=PlacementEnd.FAILED)
    )
    confirmed_rma = Exists(
        RmaCase.objects.filter(transceiver_id=OuterRef("pk"), outcome=RmaOutcome.CONFIRMED)
    )
    for r in (
        Transceiver.objects.filter(
            (Q(confirmed_rma) | Q(status=TransceiverStatus.FAILED)) & ~Q(any_failed_placement)
        )
        .values(k_site=F("stock_site__name"), **_XCVR_KEY)
        .annotate(n=Count("pk"))
        .order_by()
    ):
        data.failures[_key(r)] += r["n"]
    HistoricalCable = Cable.history.model
    was_faulty = Exists(HistoricalCable.objects.filter(id=OuterRef("pk"), status=CableStatus.FAULTY))
    cable_confirmed = Exists(RmaCase.objects.filter(cable_id=OuterRef("pk"), outcome=RmaOutcome.CONFIRMED))
    for r in (
        sealed.filter(ends__side="A", ends__leg=0)
        .filter((Q(status=CableStatus.RETIRED) & Q(was_faulty)) | Q(cable_confirmed))
        .values(**cable_key, k_lot=F("lot"))
        .annotate(n=Count("pk"))
        .order_by()
    ):
        data.failures[_key(r)] += r["n"]

    # Spares on hand, per site and part number.
    for r in (
        Transceiver.objects.filter(status=TransceiverStatus.SPARE)
        .values(k_site=F("stock_site__name"), k_part=F("model__part_number"))
        .annotate(n=Count("pk"))
        .order_by()
    ):
        data.spares_on_hand[(r["k_site"] or NO_SITE, r["k_part"])] += r["n"]
    return data


# --- link risk features -------------------------------------------------------------------

_SEVERITY_LEVEL = {"info": 0, "warning": 1, "notify": 2, "critical": 3, "page": 3}
FEC_RULES = ("fec_degradation", "fec_tail", "fec_uncorrectable")
DOM_RULES = ("rx_power_drift",)


@dataclass
class LinkFeatures:
    """Arrays over the active links (sorted by id) and the small evidence maps."""

    link_ids: np.ndarray
    age_days: np.ndarray
    a_cohort: list[tuple[str, str]]  # (vendor, lot) of the module at each end, "" if none
    b_cohort: list[tuple[str, str]]
    open_alert_level: np.ndarray
    past_alerts: np.ndarray
    min_margin_db: np.ndarray
    fec_ratio: np.ndarray
    dom_drift_db: np.ndarray


def _epoch(col: str) -> str:
    if connection.vendor == "postgresql":
        return f"EXTRACT(EPOCH FROM {col})"
    return f"CAST(strftime('%%s', {col}) AS REAL)"


def _link_rows() -> list[tuple]:
    """(link id, a vendor, a lot, a installed epoch, b vendor, b lot, b installed epoch)."""
    t = {
        m: apps.get_model("inventory", m)._meta.db_table
        for m in ("Link", "Port", "Transceiver", "TransceiverPlacement", "TransceiverModel", "Vendor")
    }
    end = """
        LEFT JOIN {Transceiver} x{s} ON x{s}.cage_id = p{s}.cage_id
        LEFT JOIN {TransceiverModel} m{s} ON m{s}.id = x{s}.model_id
        LEFT JOIN {Vendor} v{s} ON v{s}.id = m{s}.vendor_id
        LEFT JOIN {TransceiverPlacement} t{s} ON t{s}.transceiver_id = x{s}.id AND t{s}.removed_at IS NULL
    """
    sql = f"""
        SELECT l.id, va.name, xa.date_code, {_epoch("ta.installed_at")},
               vb.name, xb.date_code, {_epoch("tb.installed_at")}
        FROM {{Link}} l
        JOIN {{Port}} pa ON pa.id = l.a_port_id
        JOIN {{Port}} pb ON pb.id = l.b_port_id
        {end.replace("{s}", "a")}
        {end.replace("{s}", "b")}
        WHERE l.active
        ORDER BY l.id
    """.format(**t)  # noqa: S608 - table names from model meta, no user input
    with connection.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


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


def link_features(*, now: datetime, lookback_days: int = 365, margin_below_db: float = 0.5) -> LinkFeatures:
    rows = _link_rows()
    n = len(rows)
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=n)
    now_s = now.timestamp()
    ta = np.array([r[3] if r[3] is not None else np.nan for r in rows], dtype=float)
    tb = np.array([r[6] if r[6] is not None else np.nan for r in rows], dtype=float)
    installed = np.fmin(ta, tb)  # the older module: NaN only when neither end has one
    age = (now_s - installed) / 86400.0
    a_coh = [(r[1] or "", lot_of(r[2])) for r in rows]
    b_coh = [(r[4] or "", lot_of(r[5])) for r in rows]

    open_level = np.zeros(n, dtype=np.int64)
    past = np.zeros(n)
    margin = np.full(n, np.nan)
    fec = np.full(n, np.nan)
    dom = np.full(n, np.nan)

    def put(arr, lid, value, how=max):
        i = np.searchsorted(ids, lid)
        if i < n and ids[i] == lid:
            arr[i] = value if np.isnan(arr[i]) else how(arr[i], value)

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
    for lid, rule, sev, state, ev in by_link + by_cable:
        if lid is None:
            continue
        i = np.searchsorted(ids, lid)
        if i >= n or ids[i] != lid:
            continue
        level = _SEVERITY_LEVEL.get(sev, 1)
        ev = ev if isinstance(ev, dict) else {}
        if state == AlertState.OPEN:
            open_level[i] = max(open_level[i], level)
        else:
            past[i] += 1
        if rule in FEC_RULES:
            ratio = float(
                ev.get("ratio") or (10.0 if level >= 3 else 3.0 if state == AlertState.OPEN else 1.0)
            )
            fec[i] = ratio if np.isnan(fec[i]) else max(fec[i], ratio)
        if rule in DOM_RULES:
            drift = float(
                ev.get("drift_db") or (2.0 if level >= 3 else 1.0 if state == AlertState.OPEN else 0.0)
            )
            dom[i] = drift if np.isnan(dom[i]) else max(dom[i], abs(drift))

    for lid, (ratio, drift) in telemetry_trends(now=now).items():
        if not np.isnan(ratio):
            put(fec, lid, min(float(ratio), 1e6))
        if not np.isnan(drift):
            put(dom, lid, float(drift), lambda a, b: a if abs(a) >= abs(b) else b)

    # Thin margins: the worst recent test on any cable of the path (only the thin ones travel).
    for lid, m in (
        CableTest.objects.filter(tested_at__gte=since, margin_db__lt=margin_below_db)
        .values_list("cable__link_segments__link_id")
        .annotate(m=Min("margin_db"))
        .order_by()
    ):
        put(margin, lid, m, min)
    return LinkFeatures(ids, age, a_coh, b_coh, open_level, past, margin, fec, dom)


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


__all__ = [
    "CohortData",
    "LinkFeatures",
    "cohort_data",
    "failed_placements",
    "link_features",
    "link_labels",
]
