"""Alerts API: list/filter, acknowledge, silence; maintenance windows; vendor comparison;
bring-up report; expected-topology export. Thin: serializers validate, services write."""

from __future__ import annotations

from datetime import timedelta

from django.db.models import Prefetch
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.views import APIView

from inventory.access import authz
from inventory.api.concurrency import AtomicWritesMixin
from inventory.api.strict import StrictModelSerializer, StrictSlugRelatedField
from inventory.models import Alert, Cable, Device, Link, LinkDrain, MaintenanceWindow, Rack
from inventory.selectors.alerts import queries as alert_selectors
from inventory.selectors.filters import AlertFilter
from inventory.selectors.plant import wiring as wiring_selectors
from inventory.services import alerts as alert_services
from inventory.services.collectives import DrainConflict, drain_verdict, link_drain, link_restore


class LinkDrainSerializer(serializers.ModelSerializer):
    """A drain recorded from an alert: who took the link out, when, the maintenance window it
    opened (``window_starts_at`` .. ``window_ends_at``: the planned end, or the restore), and
    who put it back."""

    drained_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    restored_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    window_starts_at = serializers.DateTimeField(source="window.starts_at", read_only=True)
    window_ends_at = serializers.DateTimeField(source="window.ends_at", read_only=True)

    class Meta:
        model = LinkDrain
        fields = [
            "id",
            "link",
            "drained_at",
            "drained_by",
            "window",
            "window_starts_at",
            "window_ends_at",
            "safe",
            "reasons",
            "override_reason",
            "restored_at",
            "restored_by",
        ]
        read_only_fields = fields


class AlertSerializer(StrictModelSerializer):
    cable = serializers.SlugRelatedField(slug_field="label", read_only=True)
    cables = serializers.SlugRelatedField(slug_field="label", many=True, read_only=True)
    acknowledged_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    drains = LinkDrainSerializer(many=True, read_only=True)

    class Meta:
        model = Alert
        fields = [
            "id",
            "key",
            "rule",
            "severity",
            "state",
            "link",
            "port",
            "cable",
            "cables",
            "opened_at",
            "updated_at",
            "resolved_at",
            "silenced",
            "acknowledged_at",
            "acknowledged_by",
            "summary",
            "recommendation",
            "evidence",
            "drains",
        ]
        read_only_fields = fields


class DrainSerializer(serializers.Serializer):
    """The drain's planned end (``ends_at``, or ``hours`` from now; neither: the
    ``CABLETRACK_DRAIN_HOURS`` default) and, for a drain the safety check refuses, an engineer's
    ``override_reason`` (journalled)."""

    ends_at = serializers.DateTimeField(required=False)
    hours = serializers.FloatField(min_value=0.25, max_value=336, required=False)
    override_reason = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")

    def validate(self, attrs):
        if "ends_at" in attrs and "hours" in attrs:
            raise serializers.ValidationError({"hours": "Give ends_at or hours, not both."})
        return attrs


class SilenceSerializer(serializers.Serializer):
    hours = serializers.FloatField(min_value=0.25, max_value=336)
    reason = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")


class AlertViewSet(
    AtomicWritesMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    """Alerts (newest first). Open alerts by default: ``?state=resolved`` or ``?state=`` for all."""

    serializer_class = AlertSerializer
    filterset_class = AlertFilter
    required_permission = "inventory.change_alert"
    ordering_fields = ["opened_at", "severity", "updated_at"]
    queryset = Alert.objects.select_related("cable", "acknowledged_by").prefetch_related(
        Prefetch("cables", queryset=Cable.objects.only("id", "label")),
        Prefetch(
            "drains",
            queryset=LinkDrain.objects.select_related("window", "drained_by", "restored_by").order_by(
                "-drained_at", "-id"
            ),
        ),
    )

    def get_queryset(self):
        return super().get_queryset().order_by("-opened_at", "-id")

    def filter_queryset(self, queryset):
        # The list's filters (open alerts unless ``?state=`` names one) choose what to list; an
        # alert's own URL (detail, acknowledge, silence) finds it by id whatever the query says.
        return super().filter_queryset(queryset) if self.action == "list" else queryset

    @extend_schema(request=None, responses={200: AlertSerializer})
    @action(detail=True, methods=["post"])
    def acknowledge(self, request, pk=None):
        alert = self.get_object()
        authz.check(request.user, "acknowledge_alert", alert)
        alert = alert_services.alert_acknowledge(alert=alert, actor=request.user, now=timezone.now())
        return Response(AlertSerializer(alert).data)

    @extend_schema(
        methods=["GET"],
        request=None,
        responses={200: OpenApiTypes.OBJECT},
        description=(
            "Safe to take the alert's link out of service? `safe`, `reasons` (what must be repaired "
            "or wait first), `notes`, the leaf's uplinks against its minimum, the GPUs that lose their "
            "rail and the running jobs that would be hit. 404 for an alert on no link."
        ),
    )
    @extend_schema(
        methods=["POST"],
        request=DrainSerializer,
        responses={
            201: LinkDrainSerializer,
            409: OpenApiResponse(
                OpenApiTypes.OBJECT,
                description="Not safe (`detail`, and the verdict: `reasons` ...), or drained already.",
            ),
        },
        description=(
            "Drain the alert's link: take it out of service and open a maintenance window on it "
            "until `ends_at` (or `hours` from now; default `CABLETRACK_DRAIN_HOURS`), recorded with "
            "who and when. Refused with 409 and the reasons when it is not safe, unless an engineer "
            "gives `override_reason` (written in the journal of the link's cables)."
        ),
    )
    @action(detail=True, methods=["get", "post"])
    def drain(self, request, pk=None):
        alert = self.get_object()
        if alert.link_id is None:
            return Response({"detail": "This alert names no link."}, status=status.HTTP_404_NOT_FOUND)
        now = timezone.now()
        if request.method == "GET":
            return Response(drain_verdict(link_id=alert.link_id, now=now).as_dict())
        authz.check(request.user, "drain", alert)
        body = DrainSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        if data["override_reason"].strip():
            authz.check(request.user, "override_drain", alert)
        ends_at = data.get("ends_at") or (now + timedelta(hours=data["hours"]) if "hours" in data else None)
        try:
            drain = link_drain(
                alert=alert,
                actor=request.user,
                now=now,
                ends_at=ends_at,
                override_reason=data["override_reason"],
            )
        except DrainConflict as exc:
            return Response(exc.as_dict(), status=status.HTTP_409_CONFLICT)
        return Response(LinkDrainSerializer(drain).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        request=None,
        responses={
            200: LinkDrainSerializer,
            409: OpenApiResponse(OpenApiTypes.OBJECT, description="Not drained."),
        },
        description="Put the alert's drained link back in service: the drain is recorded as restored "
        "(who, when) and its maintenance window ends now. 409 when the link is not drained.",
    )
    @action(detail=True, methods=["post"])
    def restore(self, request, pk=None):
        alert = self.get_object()
        if alert.link_id is None:
            return Response({"detail": "This alert names no link."}, status=status.HTTP_404_NOT_FOUND)
        authz.check(request.user, "drain", alert)
        try:
            drain = link_restore(alert=alert, actor=request.user, now=timezone.now())
        except DrainConflict as exc:
            return Response(exc.as_dict(), status=status.HTTP_409_CONFLICT)
        return Response(LinkDrainSerializer(drain).data)

    @extend_schema(request=SilenceSerializer, responses={200: AlertSerializer})
    @action(detail=True, methods=["post"])
    def silence(self, request, pk=None):
        alert = self.get_object()
        authz.check(request.user, "silence", alert)
        body = SilenceSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        alert_services.alert_silence(
            alert=alert, actor=request.user, now=timezone.now(), **body.validated_data
        )
        alert.refresh_from_db()
        return Response(AlertSerializer(alert).data)


class MaintenanceWindowSerializer(StrictModelSerializer):
    links = serializers.PrimaryKeyRelatedField(
        many=True, queryset=Link.objects.filter(active=True), required=False
    )
    devices = StrictSlugRelatedField(
        slug_field="name", many=True, queryset=Device.objects.all(), required=False
    )
    racks = StrictSlugRelatedField(slug_field="name", many=True, queryset=Rack.objects.all(), required=False)
    starts_at = serializers.DateTimeField(required=False)

    class Meta:
        model = MaintenanceWindow
        fields = [
            "id",
            "starts_at",
            "ends_at",
            "reason",
            "links",
            "devices",
            "racks",
            "created_by",
            "created_at",
        ]
        read_only_fields = ["created_by", "created_at"]


class MaintenanceWindowViewSet(
    AtomicWritesMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    """Maintenance windows: silence links (ids), devices or racks (names) for a time window.

    ``?active=true`` lists the windows in force now. ``POST .../{id}/end`` ends one early.
    """

    serializer_class = MaintenanceWindowSerializer
    required_permission = "inventory.add_maintenancewindow"  # start and end alike (technicians)
    queryset = MaintenanceWindow.objects.prefetch_related("links", "devices", "racks").order_by("-starts_at")

    def get_queryset(self):
        qs = super().get_queryset()
        if self.request.query_params.get("active") in ("true", "1"):
            now = timezone.now()
            qs = qs.filter(starts_at__lte=now, ends_at__gt=now)
        return qs

    def create(self, request, *args, **kwargs):
        body = self.get_serializer(data=request.data)
        body.is_valid(raise_exception=True)
        now = timezone.now()
        data = dict(body.validated_data)
        targets = [*data.get("links", []), *data.get("devices", []), *data.get("racks", [])]
        authz.check_each(request.user, "silence", targets)  # every link, device and rack silenced
        mw = alert_services.maintenance_start(
            starts_at=data.pop("starts_at", now),
            ends_at=data.pop("ends_at"),
            reason=data.pop("reason"),
            links=data.pop("links", []),
            devices=data.pop("devices", []),
            racks=data.pop("racks", []),
            actor=request.user,
            now=now,
        )
        return Response(self.get_serializer(mw).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={200: MaintenanceWindowSerializer})
    @action(detail=True, methods=["post"])
    def end(self, request, pk=None):
        window = self.get_object()
        authz.check(request.user, "silence", window)
        mw = alert_services.maintenance_end(window=window, now=timezone.now())
        return Response(self.get_serializer(mw).data)


class VendorComparisonView(APIView):
    """Corrected-error rates and alert counts by module vendor/model, by module temperature band,
    and by model within each band (which optics degrade under thermal load)."""

    queryset = Alert.objects.none()

    @extend_schema(
        parameters=[
            inline_serializer(
                "VendorComparisonQuery",
                {"days": serializers.IntegerField(required=False, min_value=1, max_value=90, default=7)},
            )
        ],
        responses={
            200: OpenApiResponse(
                description="by_model, by_temperature and by_model_temperature (model within each band) rows"
            )
        },
    )
    def get(self, request):
        raw = request.query_params.get("days", "7")
        if not raw.isdigit() or not 1 <= int(raw) <= 90:
            return Response(
                {"days": ["A whole number of days from 1 to 90."]}, status=status.HTTP_400_BAD_REQUEST
            )
        data = alert_selectors.vendor_comparison(now=timezone.now(), days=int(raw))
        return Response(
            {
                "since": data["since"],
                "by_model": data["by_model"],
                "by_temperature": data["by_temperature"],
                "by_model_temperature": data["by_model_temperature"],
            }
        )


class BringupView(APIView):
    """Bring-up report of one rack: miswires, ports with no neighbour, rail-rule breaks."""

    queryset = Rack.objects.none()

    @extend_schema(responses={200: OpenApiResponse(description="The report")})
    def get(self, request, name: str):
        rack = get_object_or_404(Rack, name=name)
        r = wiring_selectors.bringup_report(rack=rack, now=timezone.now())
        rows = [
            {
                "port": f"{x['port'].device.name}:{x['port'].name}",
                "expected": x["expected"],
                "seen": x["seen"],
                "status": x["status"],
            }
            for x in r["rows"]
        ]
        return Response(
            {
                "rack": rack.name,
                "miswired": r["miswired"],
                "no_neighbour": r["no_neighbour"],
                "unrecorded": r["unrecorded"],
                "rail_recorded": r["rail_recorded"],
                "rail_seen": r["rail_seen"],
                "ports": rows,
            }
        )


class TopologyExportView(APIView):
    """The expected topology: ``txt`` (port-to-port list), ``ufm`` (UFM CVT .topo), ``dot``."""

    queryset = Link.objects.none()

    @extend_schema(
        parameters=[
            OpenApiParameter("fmt", str, OpenApiParameter.PATH, enum=["txt", "ufm", "dot"]),
            OpenApiParameter("site", str, description="Site slug or name"),
        ],
        responses={(200, "text/plain"): OpenApiResponse(OpenApiTypes.STR, description="The topology")},
    )
    def get(self, request, fmt: str):
        site = request.query_params.get("site") or None
        makers = {
            "txt": wiring_selectors.topology_port_list,
            "ufm": wiring_selectors.topology_ufm,
            "dot": wiring_selectors.topology_dot,
        }
        if fmt not in makers:
            return Response({"format": ["Use txt, ufm or dot."]}, status=status.HTTP_400_BAD_REQUEST)
        return HttpResponse(makers[fmt](site=site), content_type="text/plain; charset=utf-8")
