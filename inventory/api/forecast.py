"""Forecast API: the same figures as the desk page, read-only.

``GET /api/forecast/`` the whole forecast; ``GET /api/forecast/spares/`` the spares table;
``GET /api/forecast/snapshots/`` the stored nightly snapshots (day, AFR, fleet figures).
Query parameters (all optional): ``days`` (custom horizon), ``lead_time_days``, ``service_level``,
``spares_rate`` (``learned``, the default, or ``budget``: which failure rate the spares follow).
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from inventory.core.choices import SparesRate
from inventory.forms.forecast import ForecastForm, forecast_for
from inventory.models import ForecastSnapshot

_FIELDS = ForecastForm.base_fields


class ForecastQuerySerializer(serializers.Serializer):
    """The query parameters as the schema shows them; ``ForecastForm`` validates (its bounds)."""

    days = serializers.IntegerField(
        required=False, min_value=_FIELDS["days"].min_value, max_value=_FIELDS["days"].max_value
    )
    lead_time_days = serializers.IntegerField(
        required=False,
        min_value=_FIELDS["lead_time_days"].min_value,
        max_value=_FIELDS["lead_time_days"].max_value,
    )
    service_level = serializers.FloatField(
        required=False,
        min_value=_FIELDS["service_level"].min_value,
        max_value=_FIELDS["service_level"].max_value,
    )
    spares_rate = serializers.ChoiceField(
        required=False,
        choices=SparesRate.choices,
        help_text="Which failure rate the spares follow: 'learned' (default; each lot's posterior rate "
        "from its own failures, which falls after a failure-free year) or 'budget' (the planning AFR).",
    )


class CohortSerializer(serializers.Serializer):
    cohort = serializers.CharField()
    installed = serializers.IntegerField()
    failures = serializers.IntegerField()
    exposure_years = serializers.FloatField(help_text="Module-years in service")
    afr_mean = serializers.FloatField(help_text="Posterior annual failure rate")
    afr_low = serializers.FloatField()
    afr_high = serializers.FloatField()
    reference_afr = serializers.FloatField(
        help_text="The rate the cohort is judged against: its part number's for a lot, else the fleet's"
    )
    prob_above_fleet = serializers.FloatField(
        help_text="Posterior probability, from the cohort's own failures, that its rate exceeds reference_afr"
    )
    flagged = serializers.BooleanField(
        help_text="At least one confirmed failure and credibly above reference_afr, the false-alarm chance "
        "shared among the cohorts with failures (never a lot without failures)"
    )
    expected = serializers.DictField(
        child=serializers.FloatField(), help_text="Horizon (days) -> at budget AFR"
    )
    expected_learned = serializers.DictField(
        child=serializers.FloatField(),
        help_text="Horizon (days) -> sum of its lots' forecasts at their learned rates",
    )


class BreakdownsSerializer(serializers.Serializer):
    site = CohortSerializer(many=True)
    vendor = CohortSerializer(many=True)
    part_number = CohortSerializer(many=True)
    form_factor = CohortSerializer(many=True)
    lot = CohortSerializer(many=True)


class FleetSerializer(serializers.Serializer):
    installed = serializers.IntegerField()
    failures = serializers.IntegerField()
    exposure_years = serializers.FloatField()
    afr_budget = serializers.FloatField()
    afr_learned = serializers.FloatField()
    expected = serializers.DictField(child=serializers.FloatField())
    expected_learned = serializers.DictField(
        child=serializers.FloatField(),
        help_text="Horizon (days) -> sum of every lot's forecast at its learned rate",
    )
    flagged_cohorts = serializers.IntegerField()


class SeriesSerializer(serializers.Serializer):
    cohort = serializers.CharField()
    values = serializers.ListField(child=serializers.FloatField())


class MonthlySerializer(serializers.Serializer):
    months = serializers.ListField(child=serializers.CharField())
    series = SeriesSerializer(many=True)


class SpareSerializer(serializers.Serializer):
    site = serializers.CharField()
    part_number = serializers.CharField()
    installed = serializers.IntegerField()
    afr = serializers.FloatField(
        help_text="The rate followed (params.spares_rate), installed-weighted over lots"
    )
    mean_demand = serializers.FloatField(help_text="Expected failures over the lead time")
    hold = serializers.IntegerField(help_text="Poisson quantile at the service level")
    on_hand = serializers.IntegerField()
    to_order = serializers.IntegerField()


class CostSerializer(serializers.Serializer):
    incidents = serializers.FloatField()
    hours_lost = serializers.FloatField()
    run_hours = serializers.FloatField()
    fraction_of_run = serializers.FloatField()
    gpu_hours_lost = serializers.FloatField()
    cost = serializers.FloatField()


class CostsSerializer(serializers.Serializer):
    budget = CostSerializer()
    learned = CostSerializer()


class RiskLinkSerializer(serializers.Serializer):
    link_id = serializers.IntegerField()
    a = serializers.CharField()
    b = serializers.CharField()
    pmd = serializers.CharField()
    link_class = serializers.CharField()
    hazard = serializers.FloatField(help_text="Failures per year")
    probability_30d = serializers.FloatField()
    reasons = serializers.ListField(child=serializers.CharField())


class RiskSerializer(serializers.Serializer):
    considered = serializers.IntegerField()
    links = RiskLinkSerializer(many=True)


class ForecastSerializer(serializers.Serializer):
    as_of = serializers.CharField()
    params = serializers.DictField()
    fleet = FleetSerializer()
    breakdowns = BreakdownsSerializer()
    monthly = MonthlySerializer()
    spares = SpareSerializer(many=True)
    cost = CostsSerializer()
    risk = RiskSerializer()


class SnapshotSerializer(serializers.ModelSerializer):
    fleet = serializers.SerializerMethodField()

    class Meta:
        model = ForecastSnapshot
        fields = ["day", "computed_at", "annual_failure_rate", "fleet"]

    def get_fleet(self, obj) -> dict:
        return obj.payload.get("fleet", {})


# The query serializer itself, so the schema carries its bounds (1-3650 days, ...).
_PARAMS = [ForecastQuerySerializer]


def _figures(request) -> dict:
    # The page's form reads a blank field as "the default"; the API's schema has no blank value
    # (an integer, a float, one of the choices), so a parameter given empty is refused.
    empty = [k for k in ForecastQuerySerializer().fields if request.query_params.get(k, None) == ""]
    if empty:
        raise ValidationError({k: ["Give a value, or leave the parameter out."] for k in empty})
    form = ForecastForm(request.query_params)
    if not form.is_valid():
        raise ValidationError({name: list(errors) for name, errors in form.errors.items()})
    return forecast_for(form.cleaned_data)


class ForecastView(APIView):
    @extend_schema(parameters=_PARAMS, responses={200: ForecastSerializer})
    def get(self, request):
        return Response(_figures(request))


class ForecastSparesView(APIView):
    @extend_schema(parameters=_PARAMS, responses={200: SpareSerializer(many=True)})
    def get(self, request):
        return Response(_figures(request)["spares"])


class ForecastSnapshotListView(APIView):
    @extend_schema(responses={200: SnapshotSerializer(many=True)})
    def get(self, request):
        snaps = ForecastSnapshot.objects.order_by("-day")[:90]
        return Response(SnapshotSerializer(snaps, many=True).data)
