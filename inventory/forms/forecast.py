"""The forecast's parameters form (the desk page, the spares CSV and the API), and what it asks."""

from __future__ import annotations

from django import forms
from django.utils import timezone

from inventory.core.choices import SparesRate
from inventory.services.forecast import snapshot as forecast_services


class ForecastForm(forms.Form):
    days = forms.IntegerField(
        required=False, min_value=1, max_value=3650, label="Custom horizon (days)", help_text="1-3650"
    )
    lead_time_days = forms.IntegerField(required=False, min_value=1, max_value=365, label="Lead time (days)")
    service_level = forms.FloatField(required=False, min_value=0.5, max_value=0.999, label="Service level")
    spares_rate = forms.ChoiceField(
        required=False,
        choices=[("", "Learned rate of each lot (default)"), *SparesRate.choices],
        label="Spares follow",
        help_text="Learned: each lot's rate from its own failures (falls after a failure-free year); "
        "budget: the planning AFR.",
    )


def forecast_for(cleaned: dict) -> dict:
    """Today's stored forecast when nothing is overridden, else one computed for the overrides."""
    now = timezone.now()
    overrides = {
        "custom_days": cleaned.get("days"),
        "lead_time_days": cleaned.get("lead_time_days"),
        "service_level": cleaned.get("service_level"),
        "spares_rate": cleaned.get("spares_rate") or None,
    }
    if not any(v is not None for v in overrides.values()):
        return forecast_services.forecast_latest(now=now)
    params = forecast_services.ForecastParams.from_settings(**overrides)
    return forecast_services.forecast_compute(now=now, params=params)
