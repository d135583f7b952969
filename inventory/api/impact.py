"""Impact (issue 35): ``GET /api/cables/<label>/impact/``, ``GET /api/transceivers/<id>/impact/``
(what ran over it while it was degraded) and ``GET /api/reports/impact/?site=&month=`` (stalls
incurred against problems caught early). Thin: validate, call the selector, answer."""

from __future__ import annotations

from django.utils import timezone
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from inventory.conf import app_settings
from inventory.core.impact import Impact
from inventory.core.validators import is_whole_number
from inventory.models import Alert
from inventory.selectors.collectives import impact as impact_selectors


class RankOnPathSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    host = serializers.CharField()
    gpu = serializers.IntegerField()
    link = serializers.IntegerField(help_text="The degraded link the rank's GPU uses")


class JobImpactSerializer(serializers.Serializer):
    job = serializers.CharField(help_text="The scheduler's job id")
    name = serializers.CharField()
    gpus = serializers.IntegerField(help_text="The job's GPUs (its world size)")
    ranks_on_path = RankOnPathSerializer(many=True, help_text="Its ranks whose GPU uses a degraded link")
    hours = serializers.FloatField(help_text="Hours the job ran while the link was degraded")
    gpu_hours = serializers.FloatField(help_text="gpus x hours")
    stall_cost = serializers.FloatField(help_text="One stall of this job, as the forecast estimates it")


class ImpactSerializer(serializers.Serializer):
    days = serializers.IntegerField(help_text="The window: the last this many days")
    currency = serializers.CharField()
    degraded_hours = serializers.FloatField(
        help_text="Hours with a warning-or-worse alert open on a link through it"
    )
    jobs_hit = serializers.IntegerField()
    ranks = serializers.IntegerField(help_text="Ranks of the jobs hit (every rank waits on the slowest)")
    gpu_hours = serializers.FloatField(help_text="Sum over the jobs hit of their GPUs x hours overlapped")
    stall_cost = serializers.FloatField(help_text="Estimated stall cost: one stall of each job hit")
    jobs = JobImpactSerializer(many=True)


DAYS_PARAMETER = inline_serializer(
    "ImpactQuery",
    {
        "days": serializers.IntegerField(
            required=False,
            min_value=1,
            max_value=3650,
            default=impact_selectors.IMPACT_DAYS,
            help_text="The window: the last this many days",
        )
    },
)


def days_or_error(request) -> tuple[int | None, Response | None]:
    raw = request.query_params.get("days", str(impact_selectors.IMPACT_DAYS))
    if not is_whole_number(raw) or not 1 <= int(raw) <= 3650:
        return None, Response(
            {"days": ["A whole number of days from 1 to 3650."]}, status=status.HTTP_400_BAD_REQUEST
        )
    return int(raw), None


def impact_body(impact: Impact, days: int) -> dict:
    return {"days": days, "currency": app_settings.currency, **impact.as_dict()}


class StallSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["tail_latency_spike", "fec_uncorrectable"])
    alert = serializers.IntegerField()
    job = serializers.CharField()
    gpus = serializers.IntegerField()
    at = serializers.DateTimeField()
    link = serializers.IntegerField(allow_null=True)


class CaughtSerializer(serializers.Serializer):
    alert = serializers.IntegerField()
    link = serializers.IntegerField()
    rule = serializers.CharField()
    opened_at = serializers.DateTimeField()
    ended_at = serializers.DateTimeField(help_text="Resolved, or first repaired")


class ImpactReportSerializer(serializers.Serializer):
    site = serializers.CharField()
    month = serializers.CharField()
    currency = serializers.CharField()
    stalls_incurred = serializers.IntegerField()
    stall_cost = serializers.FloatField()
    caught_before_uncorrectable = serializers.IntegerField()
    stall_estimate = serializers.FloatField(help_text="One stall of a CABLETRACK_CLUSTER_GPUS-GPU run")
    estimated_saving = serializers.FloatField(help_text="caught_before_uncorrectable x stall_estimate")
    stalls = StallSerializer(many=True)
    caught = CaughtSerializer(many=True)
    assumptions = serializers.ListField(child=serializers.CharField())


class ImpactReportView(APIView):
    """Per site and month: stalls incurred against problems caught before the first uncorrectable
    error, and what that saved at the forecast's stall estimate."""

    queryset = Alert.objects.none()

    @extend_schema(
        parameters=[
            inline_serializer(
                "ImpactReportQuery",
                {
                    "site": serializers.CharField(min_length=1, help_text="The site's name or slug"),
                    "month": serializers.RegexField(
                        impact_selectors.MONTH_RE, required=False, help_text="YYYY-MM (default: this month)"
                    ),
                },
            )
        ],
        responses={200: ImpactReportSerializer},
    )
    def get(self, request):
        site, month, bounds, errors = impact_selectors.report_params(request.query_params)
        if errors:
            return Response(errors, status=status.HTTP_400_BAD_REQUEST)
        start, end = bounds
        return Response(
            impact_selectors.impact_report(site=site, month=month, start=start, end=end, now=timezone.now())
        )
