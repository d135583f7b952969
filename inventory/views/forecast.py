"""The forecast desk page and the spares CSV for purchasing. Thin: validate, compute, render."""

from __future__ import annotations

from datetime import datetime

from django.http import HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.safestring import mark_safe

from inventory.conf import app_settings
from inventory.core import csvsafe
from inventory.core.forecast import svg
from inventory.forms.forecast import ForecastForm, forecast_for
from inventory.models.devices import port_url

SPARES_COLUMNS = ["site", "part_number", "installed", "afr", "mean_demand", "hold", "on_hand", "to_order"]


def _with_port_urls(links: list[dict]) -> list[dict]:
    """At-risk links with a port-page URL per end (``device:port`` names, as the forecast keeps them)."""
    out = []
    for r in links:
        ends = {}
        for side in ("a", "b"):
            dev, _, port = (r.get(side) or "").partition(":")
            ends[f"{side}_device"], ends[f"{side}_port"] = dev, port
            ends[f"{side}_url"] = port_url(dev, port) if dev and port else None
        out.append({**r, **ends})
    return out


def forecast_page(request):
    form = ForecastForm(request.GET or None)
    cleaned = form.cleaned_data if form.is_bound and form.is_valid() else {}
    data = forecast_for(cleaned)
    params = data["params"]
    if not form.is_bound:  # show the values the forecast used, not empty boxes
        form.initial = {
            "lead_time_days": params.get("lead_time_days"),
            "service_level": params.get("service_level"),
        }
    lots = [r for r in data["breakdowns"]["lot"] if r["installed"] or r["failures"]][:15]
    rates = data["breakdowns"]["vendor"] + lots
    context = {
        "form": form,
        "f": data,
        "horizons": [str(h) for h in data["params"]["horizons_days"]],
        "chart_monthly": mark_safe(svg.stacked_bars(data["monthly"]["months"], data["monthly"]["series"])),  # noqa: S308 - escaped in svg
        "chart_rates": mark_safe(  # noqa: S308 - escaped in svg
            svg.rate_intervals(
                rates,
                fleet_afr=data["fleet"]["afr_learned"],
                budget_afr=data["params"]["annual_failure_rate"],
            )
        ),
        "dims": [(d, data["breakdowns"][d]) for d in ("site", "vendor", "part_number", "form_factor")],
        "lots": lots,
        "as_of": datetime.fromisoformat(data["as_of"]) if data.get("as_of") else None,
        "risk_links": _with_port_urls(data["risk"]["links"]),
        "currency": app_settings.currency,
    }
    return render(request, "inventory/forecast.html", context)


def spares_csv(request):
    form = ForecastForm(request.GET or None)
    cleaned = form.cleaned_data if form.is_bound and form.is_valid() else {}
    if form.is_bound and not form.is_valid():
        return HttpResponse(form.errors.as_text(), status=400, content_type="text/plain")
    data = forecast_for(cleaned)
    resp = HttpResponse(content_type="text/csv")
    resp["Content-Disposition"] = f'attachment; filename="spares-{timezone.localdate():%Y%m%d}.csv"'
    w = csvsafe.writer(resp)
    w.writerow(SPARES_COLUMNS)
    for r in data["spares"]:
        w.writerow([r[c] for c in SPARES_COLUMNS])
    return resp
