"""The forecast desk page and the spares CSV for purchasing. Thin: validate, compute, render."""

from __future__ import annotations

import csv

from django import forms
from django.http import HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.safestring import mark_safe

from inventory.core.forecast import svg
from inventory.services.forecast import snapshot as forecast_services

SPARES_COLUMNS = ["site", "part_number", "installed", "afr", "mean_demand", "hold", "on_hand", "to_order"]


class ForecastForm(forms.Form):
    days = forms.IntegerField(
        required=False, min_value=1, max_value=3650, label="Custom horizon (days)", help_text="1-3650"
    )
    lead_time_days = forms.IntegerField(required=False, min_value=1, max_value=365, label="Lead time (days)")
    service_level = forms.FloatField(required=False, min_value=0.5, max_value=0.999, label="Service level")


def forecast_for(cleaned: dict) -> dict:
    now = timezone.now()
    overrides = {
        "custom_days": cleaned.get("days"),
        "lead_time_days": cleaned.get("lead_time_days"),
        "service_level": cleaned.get("service_level"),
    }
    if not any(v is not None for v in overrides.values()):
        return forecast_services.forecast_latest(now=now)
    params = forecast_services.ForecastParams.from_settings(**overrides)
    return forecast_services.forecast_compute(now=now, params=params)


def forecast_page(request):
    form = ForecastForm(request.GET or None)
    cleaned = form.cleaned_data if form.is_bound and form.is_valid() else {}
    data = forecast_for(cleaned)
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
    w = csv.writer(resp)
    w.writerow(SPARES_COLUMNS)
    for r in data["spares"]:
        w.writerow([r[c] for c in SPARES_COLUMNS])
    return resp
