"""Alerts API: list/filter, acknowledge, silence; maintenance windows; vendor comparison;
bring-up report; expected-topology export. Thin: serializers validate, services write."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import Prefetch
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.views import APIView

from inventory.access import authz
from inventory.api.concurrency import AtomicWritesMixin
from inventory.api.strict import StrictCharField, StrictModelSerializer, StrictSlugRelatedField
from inventory.core.choices import RepairAction, RepairEnd, RepairOutcome
from inventory.core.decision import drain_overdue_words
from inventory.core.validators import is_whole_number
from inventory.models import Alert, Cable, Device, Link, LinkDrain, MaintenanceWindow, Rack, Repair
from inventory.selectors.alerts import queries as alert_selectors
from inventory.selectors.alerts import repairs as repair_selectors
from inventory.selectors.filters import AlertFilter
from inventory.selectors.plant import wiring as wiring_selectors
from inventory.services import alerts as alert_services
from inventory.services.collectives import (
    DrainConflict,
    drain_verdict,
    link_drain,
    link_drain_extend,
    link_restore,
)


class LinkDrainSerializer(serializers.ModelSerializer):
    """A drain recorded from an alert: who took the link out, when, the maintenance window it
    opened (``window_starts_at`` .. ``window_ends_at``: the planned end, or the restore), and
    who put it back."""

    drained_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    restored_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    extended_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    overdue = serializers.SerializerMethodField()
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
            "extended_at",
            "extended_by",
            "overdue",
        ]
        read_only_fields = fields

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_overdue(self, obj) -> str | None:
        """'drained since 09:12, window ended 13:12 UTC: restore it or extend' for a drain whose
        window ended without a restore (and no drain after it on the link)."""
        now = timezone.now()
        if obj.restored_at is not None or obj.window.ends_at > now:
            return None
        if LinkDrain.objects.filter(link_id=obj.link_id, drained_at__gt=obj.drained_at).exists():
            return None  # a later drain of the link took over (rare: one query for such a row)
        return drain_overdue_words(obj.drained_at, obj.window.ends_at, now.date())


class RepairSerializer(serializers.ModelSerializer):
    """A repair recorded on an alert, with its verdict (``core.repairs.repair_outcome``)."""

    done_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    cable = serializers.SlugRelatedField(
        slug_field="label",
        read_only=True,
        help_text="The cable whose `end` it was done at, as the alert page names it (End A of J-100); "
        "null for both ends of a link over several cables, or where not recorded",
    )
    outcome = serializers.SerializerMethodField()
    judged_at = serializers.SerializerMethodField()
    outcome_reason = serializers.SerializerMethodField()

    class Meta:
        model = Repair
        fields = [
            "id",
            "alert",
            "action",
            "end",
            "cable",
            "note",
            "done_by",
            "done_at",
            "source",
            "symptoms",
            "symptom_end",
            "outcome",
            "judged_at",
            "outcome_reason",
        ]
        read_only_fields = fields

    def _verdict(self, obj):
        return (self.context.get("verdicts") or {}).get(obj.pk)

    @extend_schema_field(serializers.ChoiceField(choices=RepairOutcome.choices))
    def get_outcome(self, obj) -> str:
        v = self._verdict(obj)
        return v.verdict if v else obj.outcome

    def get_judged_at(self, obj) -> datetime | None:
        v = self._verdict(obj)
        at = v.at if v else obj.judged_at
        return serializers.DateTimeField().to_representation(at) if at else None

    def get_outcome_reason(self, obj) -> str:
        v = self._verdict(obj)
        return v.reason if v else obj.outcome_reason


class RepairCreateSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=RepairAction.choices)
    end = serializers.ChoiceField(choices=RepairEnd.choices, default=RepairEnd.NA)
    cable = StrictCharField(
        max_length=64,
        required=False,
        allow_blank=True,
        default="",
        help_text="The label of the cable whose end it was (a cable of the alert's link). Without it, "
        "End A or B is the end the alert page calls so, on the cable plugged there.",
    )
    note = StrictCharField(max_length=300, required=False, allow_blank=True, default="")


class RankedActionSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=RepairAction.choices)
    label = serializers.CharField()
    rate = serializers.FloatField(help_text="First-time-fix rate, the prior included")
    prior = serializers.FloatField(help_text="The documented prior for this rule's advice")
    fixed = serializers.IntegerField(help_text="Judged repairs of this action that fixed it")
    repairs = serializers.IntegerField(help_text="Judged repairs of this action the rate rests on")


class RankingSerializer(serializers.Serializer):
    scope = serializers.CharField(help_text="Which repairs the rates rest on")
    moved = serializers.BooleanField(
        help_text="Recorded outcomes rank another action above the rule's advice"
    )
    symptoms = serializers.CharField()
    actions = RankedActionSerializer(many=True)


class AlertRepairsSerializer(serializers.Serializer):
    ranking = RankingSerializer()
    repairs = RepairSerializer(many=True)


class AlertSerializer(StrictModelSerializer):
    cable = serializers.SlugRelatedField(slug_field="label", read_only=True)
    repairs = RepairSerializer(many=True, read_only=True)
    cables = serializers.SlugRelatedField(slug_field="label", many=True, read_only=True)
    acknowledged_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    drains = LinkDrainSerializer(many=True, read_only=True)
    watching = serializers.SerializerMethodField(
        help_text="On watch after a repair or a replacement, as the pages say it "
        '("cleaned at End B, watching"); null when not watching'
    )

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
            "watching",
            "watching_since",
            "repairs",
            "drains",
        ]
        read_only_fields = fields

    def get_watching(self, obj) -> str | None:
        return obj.watching or None


class AlertDetailSerializer(AlertSerializer):
    """One alert: its fields, its repairs with their live verdicts, and the ranked actions."""

    ranking = serializers.SerializerMethodField()

    class Meta(AlertSerializer.Meta):
        fields = [*AlertSerializer.Meta.fields, "ranking"]
        read_only_fields = fields

    @extend_schema_field(RankingSerializer)
    def get_ranking(self, obj) -> dict:
        return self.context["ranking"]


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


class ExtendSerializer(serializers.Serializer):
    """The drain's new end: ``ends_at``, or ``hours`` from now (neither: ``CABLETRACK_DRAIN_HOURS``)."""

    ends_at = serializers.DateTimeField(required=False)
    hours = serializers.FloatField(min_value=0.25, max_value=336, required=False)

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
        Prefetch("repairs", queryset=Repair.objects.select_related("done_by", "cable")),
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

    def _repairs_context(self, alert: Alert) -> dict:
        now = timezone.now()
        ctx, ranking = repair_selectors.alert_ranking(alert)
        verdicts = repair_selectors.repair_verdicts(
            [r for r in alert.repairs.all() if r.outcome == RepairOutcome.PENDING], now=now
        )
        return {"ranking": {**ranking.as_dict(), "symptoms": ctx.symptoms}, "verdicts": verdicts}

    @extend_schema(responses={200: AlertDetailSerializer})
    def retrieve(self, request, *args, **kwargs):
        alert = self.get_object()
        context = {**self.get_serializer_context(), **self._repairs_context(alert)}
        return Response(AlertDetailSerializer(alert, context=context).data)

    @extend_schema(
        methods=["GET"],
        request=None,
        responses={200: AlertRepairsSerializer},
        description="The repairs recorded on the alert (newest first) with their verdicts, and the "
        "actions ranked by measured first-time-fix rate for the alert's symptoms.",
    )
    @extend_schema(
        methods=["POST"],
        request=RepairCreateSerializer,
        responses={201: RepairSerializer, 200: RepairSerializer},
        description="Record what was done about the alert (`action`, `end`: End A or B as the alert page "
        "names its ends, `both` or `na`, an optional `cable`: the label of the cable whose end it was, "
        "needed only when both ends of the link are named alike, and an optional `note`). The repair is "
        "recorded against that cable end (`cable` in the answer). The alert must be open and show that "
        "end (else 400); the same repair by the "
        "same person within 5 minutes is a double tap and answers the first (200). The outcome is "
        "judged later by the telemetry: `pending`, then `fixed` or `came_back`.",
    )
    @action(detail=True, methods=["get", "post"])
    def repairs(self, request, pk=None):
        alert = self.get_object()
        if request.method == "GET":
            context = self._repairs_context(alert)
            repairs = list(alert.repairs.all())
            return Response(
                {
                    "ranking": context["ranking"],
                    "repairs": RepairSerializer(repairs, many=True, context=context).data,
                }
            )
        authz.check(request.user, "record_repair", alert)
        body = RepairCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        repair, created = alert_services.repair_record(
            alert=alert, actor=request.user, now=timezone.now(), **body.validated_data
        )
        return Response(
            RepairSerializer(repair).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )

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

    @extend_schema(
        request=ExtendSerializer,
        responses={
            200: LinkDrainSerializer,
            409: OpenApiResponse(OpenApiTypes.OBJECT, description="Not drained."),
        },
        description="Keep the alert's drained link out longer: the window of its latest drain not yet "
        "restored (in force, or ended without a restore: `overdue`) ends at `ends_at` (or `hours` from "
        "now; default `CABLETRACK_DRAIN_HOURS`), recorded with who and when (`extended_at`, "
        "`extended_by`). 400 for an end in the past, 409 when the link is not drained.",
    )
    @action(detail=True, methods=["post"])
    def extend(self, request, pk=None):
        alert = self.get_object()
        if alert.link_id is None:
            return Response({"detail": "This alert names no link."}, status=status.HTTP_404_NOT_FOUND)
        authz.check(request.user, "drain", alert)
        body = ExtendSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        now = timezone.now()
        data = body.validated_data
        ends_at = data.get("ends_at") or (now + timedelta(hours=data["hours"]) if "hours" in data else None)
        try:
            drain = link_drain_extend(alert=alert, actor=request.user, now=now, ends_at=ends_at)
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


class VendorFiguresSerializer(serializers.Serializer):
    """One row's figures; every table counts and divides the same way (one rule, the selector's)."""

    ports = serializers.IntegerField(
        help_text="by_model: every installed module port of the model; a band's rows: its reporting ports"
    )
    ports_reporting = serializers.IntegerField(
        help_text="Ports that reported telemetry in the period: the base of every other figure"
    )
    median_cw_rate = serializers.FloatField(
        allow_null=True, help_text="Median corrected codewords per second"
    )
    median_pre_fec_ber = serializers.FloatField(allow_null=True)
    worst_pre_fec_ber = serializers.FloatField(allow_null=True)
    alerts = serializers.IntegerField(help_text=alert_selectors.VENDOR_ALERTS_COUNTED)
    alerts_per_100_ports = serializers.FloatField(
        allow_null=True, help_text=alert_selectors.VENDOR_PER_100_BASE
    )


class VendorModelRowSerializer(VendorFiguresSerializer):
    vendor = serializers.CharField()
    model = serializers.CharField(help_text="The module's part number")


class VendorBandRowSerializer(VendorFiguresSerializer):
    band = serializers.CharField(help_text="Module temperature band, e.g. '40-50 °C', or 'unknown'")


class VendorModelBandRowSerializer(VendorModelRowSerializer):
    band = serializers.CharField(help_text="Module temperature band, e.g. '40-50 °C', or 'unknown'")


class VendorComparisonSerializer(serializers.Serializer):
    since = serializers.DateTimeField()
    by_model = VendorModelRowSerializer(many=True)
    by_temperature = VendorBandRowSerializer(many=True)
    by_model_temperature = VendorModelBandRowSerializer(
        many=True, help_text="Each model within each band: which optics degrade under thermal load"
    )


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
        responses={200: VendorComparisonSerializer},
    )
    def get(self, request):
        raw = request.query_params.get("days", "7")
        if not is_whole_number(raw) or not 1 <= int(raw) <= 90:
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


class RepairReportView(APIView):
    """First-time-fix rate of recorded repairs, per month and per vendor (judged repairs only)."""

    queryset = Repair.objects.none()

    @extend_schema(
        parameters=[
            inline_serializer(
                "RepairReportQuery",
                {"months": serializers.IntegerField(required=False, min_value=1, max_value=120, default=12)},
            )
        ],
        responses={
            200: OpenApiResponse(description="by_month and by_vendor rows: fixed, judged, pending, rate")
        },
    )
    def get(self, request):
        raw = request.query_params.get("months", "12")
        if not is_whole_number(raw) or not 1 <= int(raw) <= 120:
            return Response(
                {"months": ["A whole number of months from 1 to 120."]}, status=status.HTTP_400_BAD_REQUEST
            )
        since = timezone.now() - timedelta(days=31 * int(raw))
        return Response({"since": since, **repair_selectors.first_time_fix_report(since=since)})


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
