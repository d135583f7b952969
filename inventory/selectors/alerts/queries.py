"""Reads for alerts: the cable page block, the alert list, vendor comparison, /metrics."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from django.db.models import Case, Count, F, IntegerField, Q, Value, When
from django.utils import timezone

from inventory.core.choices import FEC_LIMITS, SEVERITY_ORDER, AlertState
from inventory.core.telemetry.rules import PHYSICAL_RULES
from inventory.core.words import human_age
from inventory.db.compiled import CompiledRead
from inventory.models import Alert, Cable, Link, LinkSegment, MaintenanceWindow, Port
from inventory.selectors.filters import AlertFilter
from inventory.selectors.telemetry.source import fec_series, port_stats

SPARK_W, SPARK_H = 160, 32


def sparkline(
    values: list[float | None], *, log: bool = True, width: int = SPARK_W, height: int = SPARK_H
) -> dict:
    """SVG polyline points for ``values`` (None = gap), log scale by default. Pure."""
    pts = [(i, v) for i, v in enumerate(values) if v is not None and (v > 0 or not log)]
    if not pts:
        return {"points": "", "width": width, "height": height, "empty": True}
    ys = [math.log10(v) if log else v for _, v in pts]
    lo, hi = min(ys), max(ys)
    n = max(len(values) - 1, 1)
    if hi == lo:
        # A steady series has no scale of its own: drawn across the middle, not along the floor
        # (where it read as "no errors" beside an alert quoting a high BER held all day).
        xy = [(i, f"{1 + (i / n) * (width - 2):.1f}", f"{height / 2:.1f}") for i, _ in pts]
    else:
        xy = [
            (
                i,
                f"{1 + (i / n) * (width - 2):.1f}",
                f"{height - 2 - ((y - lo) / (hi - lo)) * (height - 4):.1f}",
            )
            for (i, _), y in zip(pts, ys, strict=True)
        ]
    if len(pts) == 1 or len(values) == 1:  # one reading: a dot in the middle, not an empty box
        xy = [(i, f"{width / 2:.1f}", f"{height / 2:.1f}") for i, _, _ in xy]
    have = {i for i, _, _ in xy}
    # A reading with no neighbour draws no line segment: it gets a dot so it is seen.
    dots = [(x, y) for i, x, y in xy if i - 1 not in have and i + 1 not in have]
    coords = " ".join(f"{x},{y}" for _, x, y in xy)
    return {"points": coords, "dots": dots, "width": width, "height": height, "empty": False}


def fec_health(ber: float | None, limit: float) -> dict:
    """A small traffic light: decades of margin between the pre-FEC BER and the FEC limit."""
    if ber is None or ber <= 0:
        return {"state": "unknown", "label": "no FEC data", "ber": None, "limit": limit, "decades": None}
    decades = math.log10(limit / ber)
    if decades >= 3:
        state, label = "ok", "healthy"
    elif decades >= 1:
        state, label = "warn", "margin shrinking"
    else:
        state, label = "bad", "near the FEC limit"
    return {"state": state, "label": label, "ber": ber, "limit": limit, "decades": round(decades, 1)}


_CABLE_ALERTS = CompiledRead(
    lambda cable_id: (
        Alert.objects.filter(state=AlertState.OPEN)
        # As the suspect, as a segment of the recorded path, or on an active link through it
        # (``selectors.decision`` reads the same three for a page of cables).
        .filter(
            Q(cables__id=cable_id)
            | Q(cable_id=cable_id)
            | Q(link__active=True, link__segments__cable_id=cable_id)
        )
        .distinct()
        .annotate(suspect_label=F("cable__label"))  # the decision names it on the link's other cables
        .order_by("-opened_at")[:20]
    )
)


def cable_alerts_context(cable: Cable, *, now: datetime | None = None, links=None) -> dict:
    """Open alerts on a cable, the FEC rate over the last day and a FEC health light.

    Used by ``templates/inventory/_cable_alerts.html`` on the cable (and rack) pages. A fixed
    number of queries, whatever the cable's history.
    """
    now = now or timezone.now()
    alerts = _CABLE_ALERTS(cable.pk)
    links = (
        [(link.pk, link.a_port_id, link.b_port_id, link.fec) for link in links]
        if links is not None  # the cable page has read them already
        else list(
            Link.objects.filter(active=True, segments__cable=cable).values_list(
                "id", "a_port_id", "b_port_id", "fec"
            )
        )
    )
    port_ids = [p for _, a, b, _ in links for p in (a, b)]
    limit = FEC_LIMITS.get(links[0][3] if links else "RS544", FEC_LIMITS["RS544"])[0]
    start = now - timedelta(days=1)
    series = fec_series(port_ids=port_ids, start=start, end=now, bucket_s=3600)
    rate, ber = _worst_hourly(list(series.values()))
    last = next((j for j in range(len(ber) - 1, -1, -1) if ber[j] is not None), None)
    last_ber = ber[last] if last is not None else None
    # The figure's moment: the end of the hour it was measured over (the last hour ends now),
    # so the page tells it apart from the figures an alert recorded when it fired.
    ber_at = start + timedelta(hours=last + 1) if last is not None else None
    last_rate = next((r for r in reversed(rate) if r is not None), None)
    return {
        "cable_alerts": alerts,
        "fec_spark": sparkline(ber if any(b is not None for b in ber) else rate),
        "fec_spark_metric": "pre-FEC BER" if any(b is not None for b in ber) else "corrected codewords/s",
        "fec_rate_now": last_rate,
        "fec_health": fec_health(last_ber, limit),
        "fec_health_at": ber_at,
        "fec_health_age": human_age((now - ber_at).total_seconds()) if ber_at else "",
        "fec_has_links": bool(links),
    }


def moved_alerts(cable: Cable, limit: int = 10) -> list[Alert]:
    """The alerts a replacement moved off this (retired) cable, with the cable each went to."""
    return list(
        Alert.objects.filter(moved_from=cable).select_related("cable").order_by("-opened_at", "-id")[:limit]
    )


def _worst_hourly(per_port: list[list], hours: int = 24) -> tuple[list, list]:
    """Worst receiver per hour of several ports' ``fec_series``: (corrected codewords/s, BER)."""
    rate: list[float | None] = [None] * hours
    ber: list[float | None] = [None] * hours
    for pts in per_port:
        for i, (cw_rate, b) in enumerate(pts[-hours:]):
            j = hours - len(pts[-hours:]) + i
            if cw_rate is not None:
                rate[j] = max(rate[j] or 0.0, cw_rate)
            if b is not None:
                ber[j] = max(ber[j] or 0.0, b)
    return rate, ber


def rack_alerts_context(
    rack, *, now: datetime | None = None, limit: int = 20, alert_ids: list[int] | None = None
) -> dict:
    """Open alerts whose path touches the rack (``AlertFilter``), each with a sparkline of its
    link's FEC rate over the last day (worst receiver, hourly). One query when the rack has none,
    two else. ``alert_ids``: the rack page has found them already (``open_alerts_touching``), so
    the alerts are read by key instead of through the filter's rack semi-joins."""
    now = now or timezone.now()
    if alert_ids is not None:
        alerts = list(alerts_for_list().filter(pk__in=alert_ids)[: limit + 1]) if alert_ids else []
    else:
        alerts = list(AlertFilter({"rack": rack.name}, queryset=alerts_for_list()).qs[: limit + 1])
    more = len(alerts) > limit
    alerts = alerts[:limit]
    if not alerts:
        return {"rack": rack, "rack_alerts": [], "rack_alerts_more": False}
    ports = {
        a.pk: [p for p in (a.link.a_port_id, a.link.b_port_id)] if a.link_id else [a.port_id] for a in alerts
    }
    wanted = sorted({p for ps in ports.values() for p in ps if p})
    series = fec_series(port_ids=wanted, start=now - timedelta(days=1), end=now, bucket_s=3600)
    rows = []
    for a in alerts:
        rate, ber = _worst_hourly([series[p] for p in ports[a.pk] if p in series])
        use_ber = any(b is not None for b in ber)
        rows.append(
            {
                "alert": a,
                "spark": sparkline(ber if use_ber else rate),
                "metric": "pre-FEC BER" if use_ber else "corrected codewords/s",
            }
        )
    return {"rack": rack, "rack_alerts": rows, "rack_alerts_more": more}


def open_alerts_touching(*, cable_ids: list[int], device_ids: list[int]) -> list[tuple[int, int | None]]:
    """``(alert id, cable id)`` of every open alert on these cables (as the suspect or a segment
    of its path) or on a port or link end of these devices (cable id None), in one query.

    What ``AlertFilter``'s ``rack`` finds for a rack (the rack page passes the cables plugged in
    it and its devices), read by the keys the page already has.
    """
    if not cable_ids and not device_ids:
        return []
    return _ALERTS_TOUCHING(list(cable_ids), list(device_ids))


def _alerts_touching_query(cable_ids: list[int], device_ids: list[int]):
    open_ = Alert.objects.filter(state=AlertState.OPEN).order_by()
    suspect = open_.filter(cable_id__any=cable_ids).values_list("pk", "cable_id")
    on_path = (
        Alert.cables.through.objects.filter(alert__state=AlertState.OPEN, cable_id__any=cable_ids)
        .order_by()
        .values_list("alert_id", "cable_id")
    )
    on_devices = (
        open_.filter(
            Q(port__device_id__any=device_ids)
            | Q(link__a_port__device_id__any=device_ids)
            | Q(link__b_port__device_id__any=device_ids)
        )
        .annotate(no_cable=Value(None, output_field=IntegerField()))
        .values_list("pk", "no_cable")
    )
    return suspect.union(on_path, on_devices, all=True)


_ALERTS_TOUCHING = CompiledRead(_alerts_touching_query)  # a rack page's: compiled once per process


def alerts_for_list():
    """The alerts a list shows (newest first), with what each row draws; filter with ``AlertFilter``."""
    return Alert.objects.select_related(
        "link__a_port__device", "link__b_port__device", "cable", "port__device"
    ).order_by("-opened_at", "-id")


def maintenance_windows(*, now: datetime, include_past: bool = False):
    qs = MaintenanceWindow.objects.prefetch_related(
        "links__a_port__device", "links__b_port__device", "devices", "racks"
    )
    if not include_past:
        qs = qs.filter(ends_at__gt=now)
    return qs.order_by("-starts_at")


def dashboard_alerts() -> dict:
    counts = Alert.objects.filter(state=AlertState.OPEN).aggregate(
        open=Count("pk"),
        page=Count("pk", filter=Q(severity__in=["page", "critical"], silenced=False)),
        silenced=Count("pk", filter=Q(silenced=True)),
    )
    # The most severe first (a page before a warning), then the newest.
    rank = Case(*(When(severity=s, then=Value(r)) for s, r in SEVERITY_ORDER.items()), default=Value(-1))
    recent = list(
        Alert.objects.filter(state=AlertState.OPEN, silenced=False)
        .select_related("cable")
        .annotate(severity_rank=rank)
        .order_by("-severity_rank", "-opened_at", "-id")[:10]
    )
    return {"alert_counts": counts, "recent_alerts": recent}


def link_segments(link_ids: list[int]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for lid, label in (
        LinkSegment.objects.filter(link_id__any=link_ids)
        .order_by("link_id", "seq")
        .values_list("link_id", "cable__label")
    ):
        out.setdefault(lid, []).append(label)
    return out


TEMP_BANDS = [
    (None, 40, "< 40 °C"),
    (40, 50, "40-50 °C"),
    (50, 60, "50-60 °C"),
    (60, 70, "60-70 °C"),
    (70, None, "≥ 70 °C"),
]


def temperature_band(t: float | None) -> str:
    if t is None:
        return "unknown"
    for lo, hi, label in TEMP_BANDS:
        if (lo is None or t >= lo) and (hi is None or t < hi):
            return label
    return "unknown"


# The vendor comparison's one counting rule, stated once for the page, the API schema and docs:
# alerts can only be raised on ports that report telemetry, so every table counts and divides by
# the same ports, and an alert on a link counts at each end whose module reported (in that end's
# model and temperature band), so the bands add up to the models.
VENDOR_ALERTS_COUNTED = (
    "Alerts are the physical-layer alerts opened in the period, each counted at every end of its "
    "link whose module reported telemetry, in that end's model and temperature band (an alert on "
    "a link between two reporting modules counts at both ends), so every table adds up to the "
    "same total."
)
VENDOR_PER_100_BASE = (
    "Per 100 reporting ports divides a row's alerts by its ports that reported telemetry in the "
    "period (alerts are raised only on those): the same base in every table."
)


def alerts_per_100_reporting_ports(*, alerts: int, reporting: int) -> float | None:
    """The one "per 100" of the vendor comparison (see ``VENDOR_PER_100_BASE``)."""
    return round(100 * alerts / reporting, 2) if reporting else None


def vendor_comparison(*, now: datetime, days: int = 7) -> dict:
    """Corrected-error rates and alert counts by module vendor/model, by temperature band, and
    by model within each band (``by_model_temperature``: which optics degrade under thermal load).

    Rates are per module port that reported over the last ``days`` (mean corrected codewords/s
    and pre-FEC BER from bits, median across ports, so one bad module does not hide a model's
    typical behaviour, with the worst shown too). ``ports`` of a model counts every installed
    module port; every other figure is of the reporting ports (``ports_reporting``), each in
    exactly one model and one band, and alerts count as ``VENDOR_ALERTS_COUNTED`` says, so a
    band's alerts are the sum of its models' and every table sums to the same total.
    """
    start = now - timedelta(days=days)
    with_module = Port.objects.filter(cage__transceiver__isnull=False)
    model = ("cage__transceiver__model__vendor__name", "cage__transceiver__model__part_number")

    def row(**key) -> dict:
        return {**key, "ports": 0, "ports_reporting": 0, "rates": [], "bers": [], "alerts": 0}

    # Every installed module port counts in its model's ports (one aggregate); only the ports
    # that reported are read one by one (a site has 528,384 module ports; the reporting ones are
    # what every other figure is of).
    groups: dict[tuple, dict] = {
        (v, m): {**row(vendor=v, model=m), "ports": n}
        for v, m, n in with_module.values_list(*model).annotate(n=Count("pk")).order_by()
    }
    stats = port_stats(start=start, end=now)
    model_of = {
        pid: (v, m) for pid, v, m in with_module.filter(pk__any=sorted(stats)).values_list("pk", *model)
    }
    band_of = {pid: temperature_band(stats[pid].get("temperature_c")) for pid in model_of}
    bands: dict[str, dict] = {}
    cross: dict[tuple, dict] = {}  # (vendor, model, band): which optics degrade when hot

    def rows_of(pid: int) -> tuple[dict, dict, dict]:
        """The three rows a reporting module port counts in: its model, its band, both."""
        (v, m), band = model_of[pid], band_of[pid]
        return (
            groups.setdefault((v, m), row(vendor=v, model=m)),  # a module installed since the count
            bands.setdefault(band, row(band=band)),
            cross.setdefault((v, m, band), row(vendor=v, model=m, band=band)),
        )

    for pid in model_of:
        s = stats[pid]
        for acc in rows_of(pid):
            acc["ports_reporting"] += 1
            if s.get("corrected_cw_rate") is not None:
                acc["rates"].append(s["corrected_cw_rate"])
            if s.get("pre_fec_ber") is not None:
                acc["bers"].append(s["pre_fec_ber"])
    for ends in Alert.objects.filter(
        opened_at__gte=start, rule__in=PHYSICAL_RULES, link__isnull=False
    ).values_list("link__a_port_id", "link__b_port_id"):
        for pid in ends:
            if pid in model_of:
                for acc in rows_of(pid):
                    acc["alerts"] += 1

    def finish(g):
        rates, bers = sorted(g.pop("rates")), sorted(g.pop("bers"))
        g["ports"] = max(g["ports"], g["ports_reporting"])
        g["median_cw_rate"] = rates[len(rates) // 2] if rates else None
        g["median_pre_fec_ber"] = bers[len(bers) // 2] if bers else None
        g["worst_pre_fec_ber"] = bers[-1] if bers else None
        g["alerts_per_100_ports"] = alerts_per_100_reporting_ports(
            alerts=g["alerts"], reporting=g["ports_reporting"]
        )
        return g

    order = [label for _, _, label in TEMP_BANDS] + ["unknown"]
    return {
        "by_model": sorted((finish(g) for g in groups.values()), key=lambda g: (g["vendor"], g["model"])),
        "by_temperature": sorted((finish(b) for b in bands.values()), key=lambda b: order.index(b["band"])),
        "by_model_temperature": sorted(
            (finish(x) for x in cross.values()),
            key=lambda x: (x["vendor"], x["model"], order.index(x["band"])),
        ),
        "since": start,
    }
