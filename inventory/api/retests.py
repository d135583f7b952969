"""Retests over the API: the worklist, and the sweep on demand."""

from __future__ import annotations

from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from inventory.selectors.retests import worklist as sel
from inventory.services.retests import reminders as reminder_services


class WorkItemSerializer(serializers.Serializer):
    cable = serializers.CharField(source="label")
    kind = serializers.CharField()
    due = serializers.DateField()
    days_overdue = serializers.IntegerField()
    bucket = serializers.CharField()
    test = serializers.CharField(source="what")
    site = serializers.CharField(source="place.site", default=None)
    row = serializers.CharField(source="place.row", default=None)
    rack = serializers.CharField(source="place.rack", default=None)
    device = serializers.CharField()
    u = serializers.IntegerField(allow_null=True)
    url = serializers.CharField()


class RetestWorklistView(APIView):
    """Cables due by the end of next week and all overdue ones, in walking order."""

    @extend_schema(
        parameters=[
            OpenApiParameter("bucket", str, enum=[sel.OVERDUE, sel.THIS_WEEK, sel.NEXT_WEEK]),
            OpenApiParameter("site", int),
            OpenApiParameter("row", int),
        ],
        responses=WorkItemSerializer(many=True),
    )
    def get(self, request):
        errors = {}
        ids = {}
        for name in ("site", "row"):
            raw = request.query_params.get(name)
            if raw:
                try:
                    ids[name] = int(raw)
                except ValueError:
                    errors[name] = [f"{name} must be an id (a whole number)."]
        bucket = request.query_params.get("bucket", "")
        if bucket and bucket not in (sel.OVERDUE, sel.THIS_WEEK, sel.NEXT_WEEK):
            errors["bucket"] = ["One of overdue, this_week, next_week."]
        if errors:
            return Response(errors, status=status.HTTP_400_BAD_REQUEST)
        today = timezone.localdate()
        items = sel.retest_worklist(
            today=today, until=sel.week_bounds(today)[2], site_id=ids.get("site"), row_id=ids.get("row")
        )
        if bucket:
            items = [i for i in items if i.bucket == bucket]
        return Response(WorkItemSerializer(items, many=True).data)


class RetestSweepView(APIView):
    """Run the retest sweep now (recompute due dates, claim and send reminders). Asynchronous."""

    required_permission = "inventory.change_cable"

    @extend_schema(
        request=None,
        responses={202: inline_serializer("SweepQueued", {"queued": serializers.BooleanField()})},
    )
    def post(self, request):
        reminder_services.retests_sweep_request()
        return Response({"queued": True}, status=status.HTTP_202_ACCEPTED)
