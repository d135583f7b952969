"""REST API for test results: thin views over ``services.testing`` and ``selectors.testing``."""

from __future__ import annotations

from django.db.models import Prefetch
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
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from inventory.access import authz
from inventory.api.concurrency import AtomicWritesMixin
from inventory.api.parsers import StrictJSONParser
from inventory.api.strict import StrictModelSerializer
from inventory.conf import app_settings
from inventory.core.choices import Direction, ReferenceMethod
from inventory.core.validators import is_whole_number
from inventory.models import (
    Cable,
    CableEnd,
    CableTest,
    FibreResult,
    Inspection,
    Link,
    OtdrTrace,
    Port,
    Rack,
    Row,
    Site,
)
from inventory.selectors.pages import commissioning as sel
from inventory.selectors.testing.facts import sor_max_bytes
from inventory.selectors.testing.gate import cable_gate_check
from inventory.services import testing as svc
from inventory.services.testing import tester_import
from inventory.services.testing.qualification import SOAK_MINUTES_MAX, SOAK_MINUTES_RULE

TESTED_AT_HELP = (
    "Default now. Accepted from the cable's install date (without one, CABLETRACK_TEST_DATE_FLOOR, "
    "2000-01-01) to CABLETRACK_TEST_MAX_FUTURE_SECONDS (one day) ahead of now; outside, a 400."
)


class FibreResultSerializer(StrictModelSerializer):
    class Meta:
        model = FibreResult
        fields = [
            "fibre",
            "wavelength_nm",
            "direction",
            "reference_dbm",
            "measured_dbm",
            "loss_db",
            "verdict",
        ]


class OtdrTraceSerializer(StrictModelSerializer):
    download_url = serializers.SerializerMethodField()

    class Meta:
        model = OtdrTrace
        fields = [
            "id",
            "fibre",
            "original_name",
            "sha256",
            "sor_version",
            "make",
            "model",
            "serial",
            "measured_at",
            "wavelength_nm",
            "pulse_width_ns",
            "index_of_refraction",
            "fibre_length_m",
            "fibre_length_source",
            "fibre_start_offset_m",
            "has_event_table",
            "total_loss_db",
            "orl_db",
            "checksum_ok",
            "checksum_convention",
            "events",
            "trace",
            "download_url",
        ]

    def get_download_url(self, obj) -> str:
        return f"/files/otdr/{obj.pk}"


class CableTestSerializer(StrictModelSerializer):
    cable = serializers.SlugRelatedField(slug_field="label", read_only=True)
    technician = serializers.SlugRelatedField(slug_field="username", read_only=True)
    fibres = FibreResultSerializer(many=True, read_only=True)
    traces = OtdrTraceSerializer(many=True, read_only=True)

    class Meta:
        model = CableTest
        fields = [
            "id",
            "cable",
            "link",
            "kind",
            "tested_at",
            "technician",
            "instrument",
            "instrument_serial",
            "calibration_date",
            "reference_method",
            "launch_condition",
            "wavelength_nm",
            "loss_db",
            "budget_db",
            "margin_db",
            "verdict",
            "is_baseline",
            "warnings",
            "details",
            "notes",
            "fibres",
            "traces",
        ]
        # Computed by the budget engine and the baseline rule, never taken from a client.
        read_only_fields = ["link", "loss_db", "budget_db", "margin_db", "verdict", "is_baseline", "warnings"]


class ReadingSerializer(serializers.Serializer):
    fibre = serializers.IntegerField(min_value=1)
    wavelength_nm = serializers.IntegerField()
    loss_db = serializers.FloatField(required=False, allow_null=True)
    direction = serializers.ChoiceField(choices=Direction.choices, default=Direction.A_TO_B)
    reference_dbm = serializers.FloatField(required=False, allow_null=True)
    measured_dbm = serializers.FloatField(required=False, allow_null=True)


class OltsCreateSerializer(serializers.Serializer):
    cable = serializers.CharField(help_text="Cable label")
    link = serializers.IntegerField(
        required=False, allow_null=True, help_text="Set when the whole channel was measured"
    )
    tested_at = serializers.DateTimeField(required=False, help_text=TESTED_AT_HELP)
    instrument = serializers.CharField(required=False, allow_blank=True, default="")
    instrument_serial = serializers.CharField(required=False, allow_blank=True, default="")
    calibration_date = serializers.DateField(required=False, allow_null=True)
    reference_method = serializers.ChoiceField(
        choices=ReferenceMethod.choices, default=ReferenceMethod.ONE_JUMPER
    )
    launch_condition = serializers.CharField(required=False, allow_blank=True, default="")
    notes = serializers.CharField(required=False, allow_blank=True, default="")
    readings = ReadingSerializer(many=True)


class OtdrUploadSerializer(serializers.Serializer):
    cable = serializers.CharField(help_text="Cable label")
    fibre = serializers.IntegerField(min_value=1, default=1)
    files = serializers.ListField(
        # An empty file is refused by the SOR reader, naming the file (DRF would say "file 0").
        child=serializers.FileField(allow_empty_file=True),
        min_length=1,
        help_text="One or more .sor files (SOR v1 or v2)",
    )
    notes = serializers.CharField(required=False, allow_blank=True, default="")


class OtdrBatchSerializer(serializers.Serializer):
    files = serializers.ListField(
        child=serializers.FileField(allow_empty_file=True),
        min_length=1,
        help_text="Many .sor files (or one zip of them): each matched to its cable and fibre",
    )
    instrument = serializers.CharField(required=False, allow_blank=True, default="")


class QualificationSerializer(serializers.Serializer):
    cable = serializers.CharField(help_text="Label of the DAC/ACC/AOC")
    serial_a = serializers.CharField(required=False, allow_blank=True, default="")
    serial_b = serializers.CharField(required=False, allow_blank=True, default="")
    part_number = serializers.CharField(required=False, allow_blank=True, default="")
    link_up = serializers.BooleanField()
    # The ranges telemetry takes (``core.telemetry.decode``): a BER of -1 passed the soak's check.
    speed_gbps = serializers.IntegerField(required=False, allow_null=True, min_value=0, max_value=100_000)
    lanes = serializers.IntegerField(required=False, allow_null=True, min_value=0, max_value=64)
    pre_fec_ber = serializers.FloatField(required=False, allow_null=True, min_value=0, max_value=1)
    uncorrectable_codewords = serializers.IntegerField(
        required=False, allow_null=True, min_value=0, max_value=2**64 - 1
    )
    # Bounds and words from ``soak_minutes_problem``'s home, so a refusal here and in the service
    # read alike; inf and nan are "invalid" (DRF refuses them) and say the rule too.
    soak_minutes = serializers.FloatField(
        min_value=0,
        max_value=SOAK_MINUTES_MAX,
        error_messages={
            k: SOAK_MINUTES_RULE
            for k in ("required", "null", "invalid", "min_value", "max_value", "overflow")
        },
        help_text=f"How long the BER soak ran, in minutes (0 to {SOAK_MINUTES_MAX:,}: a week)",
    )
    tested_at = serializers.DateTimeField(required=False, help_text=TESTED_AT_HELP)


@extend_schema_field({"type": "object", "additionalProperties": True, "nullable": True})
class JsonObjectField(serializers.JSONField):
    """A JSON object, in a JSON body or as a JSON string in a multipart part."""

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if value is not None and not isinstance(value, dict):
            raise serializers.ValidationError("A JSON object.")
        return value


@extend_schema_field(
    {
        "type": "object",
        "properties": {k: {"type": "string"} for k in tester_import.FIELDS},
        "additionalProperties": False,
        "nullable": True,
    }
)
class ColumnMappingField(JsonObjectField):
    """Our field -> the CSV column; the keys are ``tester_import.FIELDS``."""


class ImportSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="A tester CSV export, or a zip of SOR files and CSVs")
    instrument = serializers.CharField(
        help_text="Instrument name; its confirmed column mapping is remembered"
    )
    mapping = ColumnMappingField(
        required=False, help_text='Our field -> the CSV column, e.g. {"cable": "Cable ID"}'
    )
    apply = serializers.BooleanField(default=False, help_text="false: preview; true: apply all-or-nothing")


class InspectionSerializer(StrictModelSerializer):
    class Meta:
        model = Inspection
        fields = ["id", "cable_end", "port", "test", "inspected_at", "passed", "zones", "cleaned", "photo"]


@extend_schema_field(
    {
        "type": "object",
        "properties": {z: {"description": "The finding in this zone"} for z in svc.IEC_ZONES},
        "additionalProperties": False,
        "nullable": True,
    }
)
class ZonesField(JsonObjectField):
    """IEC 61300-3-35 zone -> finding; the keys are ``svc.IEC_ZONES`` (others are refused)."""


class InspectionCreateSerializer(serializers.Serializer):
    cable = serializers.CharField(required=False, help_text="Cable label (with side/leg)")
    side = serializers.ChoiceField(choices=["A", "B"], required=False)
    leg = serializers.IntegerField(required=False, default=0)
    port = serializers.IntegerField(required=False, help_text="Or a port id (module socket, panel port)")
    passed = serializers.BooleanField()
    zones = ZonesField(required=False, allow_null=True, help_text="Zone -> finding")
    cleaned = serializers.BooleanField(default=False)
    photo = serializers.FileField(required=False)


def _cable(label: str, user=None, action: str = "record_test") -> Cable:
    """The cable a body names; with ``user``, one they may ``action`` (the site scope: 403)."""
    cable = Cable.objects.filter(label=label).first()
    if cable is None:
        raise serializers.ValidationError({"cable": [f"No cable labelled {label!r}."]})
    if user is not None:
        authz.check(user, action, cable)
    return cable


class CableTestViewSet(
    AtomicWritesMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    """Test sessions (OLTS, OTDR, inspection, qualification) with their per-fibre results."""

    queryset = (
        CableTest.objects.select_related("cable", "technician")
        .prefetch_related(
            Prefetch("fibres", queryset=FibreResult.objects.order_by("fibre", "wavelength_nm")), "traces"
        )
        .order_by("-tested_at", "-pk")
    )
    serializer_class = CableTestSerializer
    filterset_fields = {
        "kind": ["exact"],
        "verdict": ["exact"],
        "cable__label": ["exact"],
        "is_baseline": ["exact"],
    }
    parser_classes = [StrictJSONParser, MultiPartParser, FormParser]

    @extend_schema(
        summary="Record a power-meter (OLTS) session",
        request=OltsCreateSerializer,
        responses={201: CableTestSerializer},
    )
    def create(self, request):
        body = OltsCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        d = body.validated_data
        cable = _cable(d["cable"], request.user)
        link = get_object_or_404(Link, pk=d["link"]) if d.get("link") else None
        test = svc.cable_test_record_olts(
            cable=cable,
            data=svc.OltsInput(
                readings=[svc.FibreReading(**r) for r in d["readings"]],
                tested_at=d.get("tested_at") or timezone.now(),
                technician=request.user,
                instrument=d["instrument"],
                instrument_serial=d["instrument_serial"],
                calibration_date=d.get("calibration_date"),
                reference_method=d["reference_method"],
                launch_condition=d["launch_condition"],
                notes=d["notes"],
                link=link,
                source="api",
            ),
        )
        return Response(
            CableTestSerializer(self.get_queryset().get(pk=test.pk)).data, status=status.HTTP_201_CREATED
        )

    @extend_schema(
        summary="Upload OTDR .sor files (multipart)",
        description=(
            "SOR v1 and v2. Every file is parsed before anything is stored; a bad file (not a SOR, "
            "truncated, HTML, over `CABLETRACK_SOR_MAX_BYTES`) gets a 400 naming it and nothing is written."
        ),
        request={"multipart/form-data": OtdrUploadSerializer},
        responses={201: CableTestSerializer, 400: OpenApiResponse(description="Field errors")},
    )
    @action(detail=False, methods=["post"], parser_classes=[MultiPartParser, FormParser])
    def otdr(self, request):
        body = OtdrUploadSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        d = body.validated_data
        cable = _cable(d["cable"], request.user)
        cap = sor_max_bytes()
        big = [
            f"{f.name}: the file is {f.size:,} bytes, over the {cap:,}-byte limit."
            for f in d["files"]
            if f.size > cap
        ]
        if big:
            raise serializers.ValidationError({"files": big})
        uploads = [svc.SorUpload(name=f.name, data=f.read(), fibre=d["fibre"]) for f in d["files"]]
        test = svc.cable_test_upload_otdr(
            cable=cable, files=uploads, technician=request.user, notes=d["notes"], source="api"
        )
        return Response(
            CableTestSerializer(self.get_queryset().get(pk=test.pk)).data, status=status.HTTP_201_CREATED
        )

    @extend_schema(
        summary="Upload a batch of OTDR .sor files for many cables (multipart)",
        description=(
            "A tester's project in one request: many `files` (loose .sor files, or a zip of them). Each "
            "file is matched to its cable by the cable ID inside it, else by its name "
            "(`<cable label>_<fibre>...sor`), as `POST /api/tests/import/` does. All or nothing: a file "
            "that matches no cable, cannot be read or does not fit its cable gets a 400 naming it and "
            "nothing is written. The retest dates are recomputed once for the whole batch."
        ),
        request={"multipart/form-data": OtdrBatchSerializer},
        responses={
            201: OpenApiResponse(description="The tests written"),
            400: OpenApiResponse(description="Errors and unmatched files"),
        },
    )
    @action(
        detail=False, methods=["post"], url_path="otdr/batch", parser_classes=[MultiPartParser, FormParser]
    )
    def otdr_batch(self, request):
        body = OtdrBatchSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        d = body.validated_data
        cap = app_settings.max_import_bytes
        total = sum(f.size for f in d["files"])
        if total > cap:
            raise serializers.ValidationError(
                {"files": [f"The files are {total:,} bytes, over the {cap:,}-byte limit."]}
            )
        kwargs = dict(instrument=d["instrument"], apply=True, technician=request.user)
        blobs = [(f.name, f.read()) for f in d["files"]]
        if len(blobs) == 1 and blobs[0][1][:4] == b"PK\x03\x04":
            result = tester_import.instrument_project_import(zip_data=blobs[0][1], **kwargs)
        else:
            result = tester_import.instrument_project_import(files=blobs, **kwargs)
        code = status.HTTP_201_CREATED if result.applied else status.HTTP_400_BAD_REQUEST
        return Response(result.as_dict(), status=code)

    @extend_schema(
        summary="Record a link qualification of a sealed DAC/ACC/AOC",
        description="EEPROM identity, link up at the expected speed and width, and a BER soak (measured values in).",
        request=QualificationSerializer,
        responses={201: CableTestSerializer},
    )
    @action(detail=False, methods=["post"])
    def qualification(self, request):
        body = QualificationSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        d = dict(body.validated_data)
        cable = _cable(d.pop("cable"), request.user)
        test = svc.link_qualify(cable=cable, data=svc.QualificationInput(**d, technician=request.user))
        return Response(
            CableTestSerializer(self.get_queryset().get(pk=test.pk)).data, status=status.HTTP_201_CREATED
        )

    @extend_schema(
        summary="Production gate: what a cable still needs",
        parameters=[OpenApiParameter("cable", OpenApiTypes.STR, required=True, description="Cable label")],
        responses={
            200: inline_serializer(
                "GateResult",
                {
                    "cable": serializers.CharField(),
                    "ready": serializers.BooleanField(),
                    "missing": serializers.ListField(child=serializers.CharField()),
                },
            )
        },
    )
    @action(detail=False, methods=["get"])
    def gate(self, request):
        cable = _cable(request.query_params.get("cable", ""))
        missing = cable_gate_check(cable=cable)
        return Response({"cable": cable.label, "ready": not missing, "missing": missing})

    @extend_schema(
        summary="Import a tester CSV export or a tester project zip (preview, then apply)",
        description=(
            "A CSV (one row per fibre per wavelength) or a zip of SOR files and CSVs. The first time an "
            "instrument is seen the answer proposes a column `mapping` (`needs_mapping: true`) and previews the "
            "file with it; send it back confirmed and it is remembered. `apply=false` previews matched / unmatched / errors by row; "
            "`apply=true` writes everything or nothing."
        ),
        request={"multipart/form-data": ImportSerializer},
        responses={
            200: OpenApiResponse(description="Preview or result"),
            400: OpenApiResponse(description="Errors by row"),
        },
    )
    @action(detail=False, methods=["post"], url_path="import", parser_classes=[MultiPartParser, FormParser])
    def import_export(self, request):
        body = ImportSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        d = body.validated_data
        f = d["file"]
        cap = app_settings.max_import_bytes
        if f.size > cap:
            raise serializers.ValidationError(
                {"file": [f"The file is {f.size:,} bytes, over the {cap:,}-byte limit."]}
            )
        data = f.read()
        mapping = d.get("mapping") or None
        if mapping is not None and not isinstance(mapping, dict):
            raise serializers.ValidationError({"mapping": ["A JSON object: our field -> the CSV column."]})
        kwargs = dict(instrument=d["instrument"], mapping=mapping, apply=d["apply"], technician=request.user)
        if data[:4] == b"PK\x03\x04":
            result = tester_import.instrument_project_import(zip_data=data, **kwargs)
        elif f.name.lower().endswith(".sor"):
            result = tester_import.instrument_project_import(files=[(f.name, data)], **kwargs)
        else:
            result = tester_import.instrument_csv_import(data=data, **kwargs)
        code = (
            status.HTTP_400_BAD_REQUEST
            if (result.errors or (d["apply"] and not result.ok))
            else status.HTTP_200_OK
        )
        return Response(result.as_dict(), status=code)


class InspectionViewSet(AtomicWritesMixin, mixins.ListModelMixin, viewsets.GenericViewSet):
    """End-face inspections (IEC 61300-3-35) of cable ends, module sockets and panel ports."""

    queryset = Inspection.objects.order_by("-inspected_at", "-pk")
    serializer_class = InspectionSerializer
    filterset_fields = ["passed", "cable_end__cable__label", "port"]
    parser_classes = [StrictJSONParser, MultiPartParser, FormParser]

    @extend_schema(
        request={
            "application/json": InspectionCreateSerializer,
            "multipart/form-data": InspectionCreateSerializer,
        },
        responses={201: InspectionSerializer},
    )
    def create(self, request):
        body = InspectionCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        d = body.validated_data
        cable = end = port = None
        if d.get("cable"):
            cable = _cable(d["cable"], request.user, "inspect")
            end = CableEnd.objects.filter(
                cable=cable, side=d.get("side") or "A", leg=d.get("leg") or 0
            ).first()
            if end is None:
                raise serializers.ValidationError({"side": ["That cable has no such end."]})
        if d.get("port"):
            port = Port.objects.filter(pk=d["port"]).first()
            if port is None:  # a body naming a missing object is a 400, not a 404 of the URL
                raise serializers.ValidationError({"port": ["No such port."]})
            authz.check(request.user, "inspect", port)
        photo = d.get("photo")
        insp = svc.cable_inspect(
            cable=cable,
            end=end,
            port=port,
            passed=d["passed"],
            zones=d.get("zones") or {},
            cleaned=d["cleaned"],
            photo=photo.read() if photo else None,
            technician=request.user,
        )
        return Response(InspectionSerializer(insp).data, status=status.HTTP_201_CREATED)


class CommissioningReportView(APIView):
    """Every link of a rack, row or site with its TIA and PMD verdicts and what blocks production."""

    queryset = CableTest.objects.none()

    @extend_schema(
        summary="Commissioning report (JSON)",
        parameters=[
            OpenApiParameter("site", OpenApiTypes.STR, description="Site slug"),
            OpenApiParameter("row", OpenApiTypes.INT, description="Row id"),
            OpenApiParameter("rack", OpenApiTypes.STR, description="Rack name"),
            OpenApiParameter(
                "page",
                {"type": "integer", "minimum": 1, "maximum": (1 << 63) - 1},
                description=f"Page of links ({sel.REPORT_PAGE} a page, by A-end port); the counts cover the whole scope",
            ),
        ],
        responses={
            200: OpenApiResponse(
                description="Report: counts of every link in scope, and one entry per link of the page"
            ),
            404: OpenApiResponse(description="No such rack, row or site"),
        },
    )
    def get(self, request):
        q = request.query_params
        if q.get("row") and not is_whole_number(q["row"].removeprefix("-")):
            raise serializers.ValidationError({"row": ["A row id (a whole number)."]})
        page = q.get("page", "1")
        if not (is_whole_number(page) and 0 < int(page) < 1 << 63):
            raise serializers.ValidationError({"page": ["A page number (1 or more)."]})
        rack = get_object_or_404(Rack, name=q["rack"]) if q.get("rack") else None
        row = get_object_or_404(Row, pk=q["row"]) if q.get("row") and not rack else None
        site = get_object_or_404(Site, slug=q["site"]) if q.get("site") and not (rack or row) else None
        return Response(sel.commissioning_report(site=site, row=row, rack=rack, page=int(page)).as_dict())


__all__ = ["CableTestViewSet", "CommissioningReportView", "InspectionViewSet"]
