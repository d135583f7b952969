"""Reconciliation API: telemetry's module identities and neighbours against the recorded plant,
and the one reviewed step that creates the missing module records (preview, then apply).

Reading the report needs any role's view permission. Preview and apply are engineer actions:
``inventory.add_transceiver`` and ``inventory.import_plant`` (records made from telemetry are a
plant import), with a token that is neither read-only nor ingest-only.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils import timezone
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from inventory.api.permissions import PlantPermission
from inventory.api.schema import NOT_BLANK
from inventory.api.strict import StrictCharField
from inventory.models import Transceiver
from inventory.selectors.filters import StrictNullBooleanField
from inventory.selectors.telemetry.reconciliation import reconciliation_report
from inventory.selectors.telemetry.reconciliation_rows import MODULE_STATUSES, NEIGHBOUR_STATUSES
from inventory.services.telemetry import reconciliation as recon_services


class ReconcilePermission(PlantPermission):
    """Reads: view permission. Writes: add_transceiver (the model permission) and import_plant."""

    def has_permission(self, request, view):
        if not super().has_permission(request, view):
            return False
        if request.method not in ("GET", "HEAD", "OPTIONS") and not request.user.has_perm(
            "inventory.import_plant"
        ):
            self.message = "Your role does not allow creating records from telemetry."
            return False
        return True


class _Seen(serializers.Serializer):
    vendor = serializers.CharField()
    part = serializers.CharField()
    serial = serializers.CharField()
    at = serializers.DateTimeField(allow_null=True)


class _Recorded(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["module", "cable_end", "none"])
    vendor = serializers.CharField()
    part = serializers.CharField()
    serial = serializers.CharField()
    transceiver = serializers.IntegerField(allow_null=True)
    cable = serializers.CharField(allow_null=True)
    cable_side = serializers.CharField(allow_null=True)


class ModuleRowSerializer(serializers.Serializer):
    key = serializers.CharField(help_text="cage:<id>: name it in a preview")
    status = serializers.ChoiceField(choices=MODULE_STATUSES)
    site = serializers.CharField()
    rack = serializers.CharField()
    device = serializers.CharField()
    cage = serializers.CharField()
    ports = serializers.ListField(child=serializers.CharField())
    seen = _Seen()
    recorded = _Recorded()
    creatable = serializers.BooleanField(help_text="A missing record that can be created as is")
    model = serializers.IntegerField(allow_null=True, help_text="Module model the record would use")
    model_name = serializers.CharField(help_text="That model: vendor, part number (PMD)")
    problem = serializers.CharField(help_text="Why a missing record cannot be created as is")


class NeighbourRowSerializer(serializers.Serializer):
    key = serializers.CharField()
    status = serializers.ChoiceField(choices=NEIGHBOUR_STATUSES)
    site = serializers.CharField()
    rack = serializers.CharField()
    device = serializers.CharField()
    port = serializers.CharField()
    expected = serializers.CharField(allow_null=True, help_text="Recorded far end (device:port)")
    seen = serializers.CharField(allow_null=True, help_text="Neighbour telemetry reports (LLDP / IB)")
    seen_at = serializers.DateTimeField(allow_null=True)
    cables = serializers.ListField(child=serializers.CharField(), help_text="Cables on the recorded path")


class ReportSerializer(serializers.Serializer):
    generated_at = serializers.DateTimeField()
    counts = serializers.DictField(child=serializers.IntegerField())
    modules = ModuleRowSerializer(many=True)
    neighbours = NeighbourRowSerializer(many=True)


class PreviewRequestSerializer(serializers.Serializer):
    keys = serializers.ListField(
        child=StrictCharField(), required=False, help_text="Report rows (cage:<id>) to create"
    )
    all = serializers.BooleanField(
        required=False, default=False, help_text="Every missing record of the site/rack instead"
    )
    site = StrictCharField(required=False, allow_blank=True)
    rack = StrictCharField(required=False, allow_blank=True)

    def validate(self, attrs):
        if attrs.get("all") == bool(attrs.get("keys")):
            raise serializers.ValidationError("Send either keys or all=true (with a site or rack).")
        return attrs


class PreviewRequestSchema(OpenApiSerializerExtension):
    """The schema says the rule ``validate`` and the service apply: rows (``keys``, each
    ``cage:<id>``), or ``all`` with a site or a rack (not blank)."""

    target_class = PreviewRequestSerializer

    def map_serializer(self, auto_schema, direction):
        schema = auto_schema._map_basic_serializer(self.target, direction)
        schema["properties"]["keys"]["items"]["pattern"] = "^cage:[0-9]+$"
        # ``all``'s true/false only under ``not``: drf-spectacular's enum hook would fold enums
        # inside ``anyOf`` branches into one shared component (a wrong one for the other branch)
        all_true = {"required": ["all"], "properties": {"all": {"enum": [True]}}}
        all_false = {"properties": {"all": {"enum": [False]}}}
        has_keys = {"required": ["keys"], "properties": {"keys": {"minItems": 1}}}
        schema["anyOf"] = [
            {**has_keys, "not": all_true},
            *(
                {
                    "required": ["all", scope],
                    "properties": {scope: {"pattern": NOT_BLANK}},
                    "not": {"anyOf": [all_false, has_keys]},
                }
                for scope in ("site", "rack")
            ),
        ]
        return schema


class RefusedRowSerializer(serializers.Serializer):
    key = serializers.CharField()
    message = serializers.CharField()


class PreviewSerializer(serializers.Serializer):
    create = ModuleRowSerializer(many=True, help_text="The records applying the token creates")
    refused = RefusedRowSerializer(many=True, help_text="Chosen rows that cannot be created, and why")
    token = serializers.CharField(help_text="Send it to apply; valid 24 h, for you only")


class ApplyRequestSerializer(serializers.Serializer):
    token = StrictCharField()


class _CreatedSerializer(serializers.ModelSerializer):
    cage = serializers.StringRelatedField()
    model = serializers.StringRelatedField()

    class Meta:
        model = Transceiver
        fields = ["id", "serial", "model", "cage", "status"]


def _scope(request) -> dict:
    return {k: (request.query_params.get(k) or None) for k in ("site", "rack")}


class ReconciliationReportView(APIView):
    """Module identities (vendor/part/serial, AOC/DAC ends included) and neighbours (LLDP / IB)
    that telemetry reports, compared with the recorded plant.

    Module rows (one per cage): ``missing_record``, ``swap``, ``not_seen``, ``ok``. Neighbour
    rows (one per port): ``miswire``, ``unrecorded``, ``no_neighbour``, ``ok``. "Sees none" is
    claimed only for devices whose collectors report that field at all. ``ok`` rows are left
    out unless ``include_ok=true``.
    """

    queryset = Transceiver.objects.none()
    permission_classes = [ReconcilePermission]

    @extend_schema(
        parameters=[
            OpenApiParameter("site", str, description="Site slug or name"),
            OpenApiParameter("rack", str, description="Rack name"),
            OpenApiParameter("include_ok", bool, description="Also list rows that agree"),
        ],
        responses={
            200: ReportSerializer,
            400: OpenApiResponse(description="Unknown site or rack, or include_ok not true or false"),
        },
    )
    def get(self, request):
        try:
            # strictly, as the list filters read yes/no: ``?include_ok=maybe`` is a 400
            include_ok = bool(StrictNullBooleanField().to_python(request.query_params.get("include_ok")))
        except DjangoValidationError as exc:
            return Response({"include_ok": exc.messages}, status=status.HTTP_400_BAD_REQUEST)
        try:
            report = reconciliation_report(now=timezone.now(), include_ok=include_ok, **_scope(request))
        except DjangoValidationError as exc:
            return Response(exc.message_dict, status=status.HTTP_400_BAD_REQUEST)
        return Response(
            {
                "generated_at": report.generated_at,
                "counts": report.counts(),
                "modules": [r.as_dict() for r in report.modules if include_ok or r.status != "ok"],
                "neighbours": [r.as_dict() for r in report.neighbours if include_ok or r.status != "ok"],
            }
        )


class ReconciliationPreviewView(APIView):
    """Preview the module records the chosen rows would create. Writes nothing.

    Rows that cannot be created (no such module model, the serial is recorded elsewhere, the row
    is not a missing record any more) are listed under ``refused`` with the reason. The
    ``token`` pins what was reviewed: apply it with ``POST /api/reconciliation/apply/``.
    """

    queryset = Transceiver.objects.none()
    permission_classes = [ReconcilePermission]

    @extend_schema(request=PreviewRequestSerializer, responses={200: PreviewSerializer})
    def post(self, request):
        body = PreviewRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        d = body.validated_data
        try:
            preview = recon_services.reconciliation_preview(
                actor=request.user,
                now=timezone.now(),
                keys=None if d["all"] else d["keys"],
                site=d.get("site") or None,
                rack=d.get("rack") or None,
            )
        except DjangoValidationError as exc:
            return Response(exc.message_dict, status=status.HTTP_400_BAD_REQUEST)
        return Response(preview.as_dict())


class ReconciliationApplyView(APIView):
    """Create the previewed module records in one transaction, installed in their cages, with
    history naming you. Idempotent: the same token again creates nothing twice (the rows come
    back under ``already_recorded``). If any row changed since the preview (telemetry reports
    another serial, a module was recorded there), answers 409 with a message per stale row
    and creates nothing: preview again."""

    queryset = Transceiver.objects.none()
    permission_classes = [ReconcilePermission]

    @extend_schema(
        request=ApplyRequestSerializer,
        responses={
            201: inline_serializer(
                "ReconApplied",
                {
                    "created": _CreatedSerializer(many=True),
                    "already_recorded": _CreatedSerializer(many=True),
                },
            ),
            200: OpenApiResponse(description="Everything was already recorded (a repeated submission)"),
            400: OpenApiResponse(description="Bad or expired token"),
            409: OpenApiResponse(
                description="Rows changed since the preview: {detail, stale: [{key, message}]}"
            ),
        },
    )
    def post(self, request):
        body = ApplyRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            out = recon_services.reconciliation_apply(
                token=body.validated_data["token"], actor=request.user, now=timezone.now()
            )
        except recon_services.StaleRows as exc:
            return Response({"detail": exc.message, "stale": exc.stale}, status=status.HTTP_409_CONFLICT)
        except DjangoValidationError as exc:
            return Response(exc.message_dict, status=status.HTTP_400_BAD_REQUEST)
        created = Transceiver.objects.filter(pk__in=[x.pk for x in out.created]).select_related(
            "model__vendor", "cage__device"
        )
        return Response(
            {
                "created": _CreatedSerializer(created, many=True).data,
                "already_recorded": _CreatedSerializer(
                    Transceiver.objects.filter(pk__in=[x.pk for x in out.already_recorded]).select_related(
                        "model__vendor", "cage__device"
                    ),
                    many=True,
                ).data,
            },
            status=status.HTTP_201_CREATED if out.created else status.HTTP_200_OK,
        )
