"""REST API: thin viewsets over the selectors and services."""

import orjson
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Prefetch
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ParseError, UnsupportedMediaType
from rest_framework.response import Response

from inventory.api import serializers as s
from inventory.api.concurrency import OptimisticConcurrencyMixin
from inventory.api.errors import PayloadTooLarge
from inventory.api.server_owned import ServerOwnedFieldsMixin
from inventory.conf import app_settings
from inventory.core.validators import LABEL_RE
from inventory.models import (
    Cable,
    Cage,
    Device,
    Link,
    LinkSegment,
    Port,
    Rack,
    Room,
    Row,
    Site,
    Transceiver,
    TransceiverModel,
    TransceiverPlacement,
    Vendor,
)
from inventory.selectors.filters import CableFilter, DeviceFilter, PortFilter, TransceiverFilter
from inventory.selectors.plant.history import history_for
from inventory.selectors.plant.ports import ports_resolve
from inventory.selectors.plant.trace import port_trace
from inventory.services.interop.device_csv import DeviceCsvError, devices_csv_export, devices_csv_import
from inventory.services.plans import files as plan_files
from inventory.services.plans.cable_plan import cable_plan_import
from inventory.services.plant import cables as cable_services
from inventory.services.plant import ports as port_services
from inventory.services.plant import transceivers as xcvr_services

_PLAN_REQUIRED = ["label", "a_device", "a_port", "b_device", "b_port"]


@extend_schema_field(
    {
        "type": "object",
        "required": _PLAN_REQUIRED,
        "properties": {
            **{c: {"type": "string", "pattern": r"\S"} for c in _PLAN_REQUIRED},
            "label": {"type": "string", "pattern": LABEL_RE.pattern},
        },
        "additionalProperties": {
            "oneOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}],
            "nullable": True,
        },
    }
)
class PlanRowField(serializers.DictField):
    """One cable of a plan: column -> text, a number, yes/no or null (never a list or object)."""


class NoDeleteModelViewSet(
    ServerOwnedFieldsMixin,
    OptimisticConcurrencyMixin,
    mixins.CreateModelMixin,
    mixins.RetrieveModelMixin,
    mixins.UpdateModelMixin,
    mixins.ListModelMixin,
    viewsets.GenericViewSet,
):
    """Create, read, update. Nothing is hard-deleted through the product.

    Reads carry an ``ETag``; writes honour ``If-Match`` (``concurrency.py``); server-owned
    fields are read-only on every serializer (``server_owned.py``).
    """


class SiteViewSet(NoDeleteModelViewSet):
    queryset = Site.objects.all()
    serializer_class = s.SiteSerializer
    filterset_fields = ["slug", "name"]


class RoomViewSet(NoDeleteModelViewSet):
    queryset = Room.objects.all()
    serializer_class = s.RoomSerializer
    filterset_fields = ["site"]


class RowViewSet(NoDeleteModelViewSet):
    queryset = Row.objects.all()
    serializer_class = s.RowSerializer
    filterset_fields = ["room"]


class RackViewSet(NoDeleteModelViewSet):
    queryset = Rack.objects.select_related("row__room__site")
    serializer_class = s.RackSerializer
    filterset_fields = ["row", "name"]
    lookup_field = "name"
    lookup_value_regex = "[^/]+"


class VendorViewSet(NoDeleteModelViewSet):
    queryset = Vendor.objects.all()
    serializer_class = s.VendorSerializer


class DeviceViewSet(NoDeleteModelViewSet):
    queryset = Device.objects.select_related("rack")
    serializer_class = s.DeviceSerializer
    filterset_class = DeviceFilter
    lookup_field = "name"
    lookup_value_regex = "[^/]+"

    @extend_schema(
        summary="Import devices from NetBox's device CSV (dry run first, then all-or-nothing)",
        description=(
            "Body: `text/csv` as NetBox's *Devices > Import* takes it: `name, role, manufacturer, "
            "device_type, rack, position, serial, asset_tag` are read (`status, site, face` are "
            "ignored; racks must exist here). `?dry_run=1` (the default) reports create / change / "
            "unchanged / error per row; `?dry_run=0` writes every row or none. Ports come from a "
            "cable plan or a NetBox API import. 20,000 rows and `CABLETRACK_MAX_IMPORT_BYTES` per request."
        ),
        request={"text/csv": str},
        responses={
            200: OpenApiResponse(description="Per-row result"),
            201: OpenApiResponse(description="Applied"),
            400: OpenApiResponse(description="Rows with errors, or a body that is not CSV"),
        },
    )
    @action(detail=False, methods=["post"], url_path="import", parser_classes=[])
    def import_csv(self, request):
        ctype = (request.content_type or "").split(";")[0].strip().lower()
        if ctype not in ("text/csv", "application/csv"):
            raise UnsupportedMediaType(ctype or "none", detail="Send text/csv (NetBox's device import CSV).")
        dry_run = request.query_params.get("dry_run", "1").lower() not in ("0", "false", "no")
        try:
            result = devices_csv_import(text=_read_body_text(request), dry_run=dry_run, actor=request.user)
        except DeviceCsvError as exc:
            raise ParseError(str(exc)) from exc
        code = (
            status.HTTP_400_BAD_REQUEST
            if result.errors
            else (status.HTTP_201_CREATED if result.applied else status.HTTP_200_OK)
        )
        return Response(result.as_dict(), status=code)

    @extend_schema(
        summary="Export devices as NetBox's device import CSV",
        responses={200: OpenApiResponse(description="text/csv")},
    )
    @action(detail=False, methods=["get"], url_path="export")
    def export_csv(self, request):
        devices = self.filter_queryset(self.get_queryset()).filter(retired_at__isnull=True)
        resp = HttpResponse(devices_csv_export(devices=devices), content_type="text/csv; charset=utf-8")
        resp["Content-Disposition"] = 'attachment; filename="devices.netbox.csv"'
        return resp


class CageViewSet(NoDeleteModelViewSet):
    queryset = Cage.objects.all()
    serializer_class = s.CageSerializer
    filterset_fields = ["device"]


class PortViewSet(NoDeleteModelViewSet):
    queryset = Port.objects.select_related("device").prefetch_related("aliases")
    serializer_class = s.PortSerializer
    filterset_class = PortFilter

    def perform_create(self, serializer):
        port = serializer.save()
        port_services.port_alias_add(port=port, name=port.name, source="canonical")

    @extend_schema(request=None, responses={200: OpenApiResponse(description="The traced path")})
    @action(detail=True, methods=["get"], url_path="trace", url_name="trace")
    def trace_path(self, request, pk=None):
        # Not named ``trace``: DRF dispatches an HTTP TRACE request to a view method of that name.
        if not str(pk).isdigit():
            raise Http404("No such port.")
        port = get_object_or_404(Port.objects.select_related("device__rack"), pk=pk)
        return Response(s.trace_as_dict(port_trace(port)))

    @extend_schema(request=s.PortAliasWriteSerializer, responses={201: s.PortAliasSerializer})
    @action(detail=True, methods=["post"])
    def aliases(self, request, pk=None):
        port = self.get_object()
        body = s.PortAliasWriteSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        alias = port_services.port_alias_add(port=port, **body.validated_data)
        return Response(s.PortAliasSerializer(alias).data, status=status.HTTP_201_CREATED)


class TransceiverModelViewSet(NoDeleteModelViewSet):
    queryset = TransceiverModel.objects.select_related("vendor")
    serializer_class = s.TransceiverModelSerializer
    filterset_fields = ["vendor", "form_factor", "pmd"]


class TransceiverViewSet(NoDeleteModelViewSet):
    queryset = Transceiver.objects.select_related("model__vendor", "cage__device")
    serializer_class = s.TransceiverSerializer
    filterset_class = TransceiverFilter
    ordering_fields = ["serial", "status"]

    def get_queryset(self):
        qs = super().get_queryset()
        if self.action == "retrieve":
            qs = qs.prefetch_related(
                Prefetch("placements", queryset=TransceiverPlacement.objects.select_related("cage__device"))
            )
        return qs

    def get_serializer_class(self):
        return s.TransceiverDetailSerializer if self.action == "retrieve" else s.TransceiverSerializer

    @extend_schema(request=s.InstallSerializer, responses={200: s.TransceiverSerializer})
    @action(detail=True, methods=["post"])
    def install(self, request, pk=None):
        xcvr = self.get_object()
        body = s.InstallSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        xcvr = xcvr_services.transceiver_install(
            transceiver=xcvr, cage=body.validated_data["cage"], actor=request.user
        )
        return Response(s.TransceiverSerializer(xcvr).data)

    @extend_schema(request=s.RemoveSerializer, responses={200: s.TransceiverSerializer})
    @action(detail=True, methods=["post"])
    def remove(self, request, pk=None):
        xcvr = self.get_object()
        body = s.RemoveSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        reason = "failed" if body.validated_data["failed"] else "removed"
        xcvr = xcvr_services.transceiver_remove(
            transceiver=xcvr, reason=reason, actor=request.user, notes=body.validated_data["notes"]
        )
        return Response(s.TransceiverSerializer(xcvr).data)

    @extend_schema(request=None, responses={200: OpenApiResponse(description="Change history")})
    @action(detail=True, methods=["get"])
    def history(self, request, pk=None):
        return Response(history_for(self.get_object()))


CABLE_READ_FIELDS = (
    "id",
    "label",
    "kind",
    "role",
    "polarity",
    "length_m",
    "vendor__name",
    "part_number",
    "serial_a",
    "serial_b",
    "lot",
    "install_date",
    "status",
    "retest_due",
    "retired_at",
    "replaced_by",
    "notes",
)


class CableViewSet(NoDeleteModelViewSet):
    """Cables, by label. Create takes both ends; status changes and retirement have their own actions."""

    serializer_class = s.CableSerializer
    filterset_class = CableFilter
    ordering_fields = ["label", "install_date", "status", "retest_due"]
    lookup_field = "label"
    lookup_value_regex = "[^/]+"

    def get_queryset(self):
        # Ends are read by the serializer in one flat query per page (end_points_by_cable).
        qs = Cable.objects.select_related("vendor").order_by("label")
        if self.action in ("list", "retrieve"):  # writes load whole rows (history, save)
            qs = qs.only(*CABLE_READ_FIELDS)
        return qs

    def get_serializer_class(self):
        if self.action == "create":
            return s.CableWriteSerializer
        if self.action in ("update", "partial_update"):
            return s.CableUpdateSerializer
        return s.CableSerializer

    def _port(self, ref: dict, field: str) -> Port:
        if "port" in ref:
            port = (
                Port.objects.select_related("device__rack", "cage__transceiver__model")
                .filter(pk=ref["port"])
                .first()
            )
        else:
            port_id = ports_resolve([(ref["device"], ref["port_name"])]).get(
                (ref["device"], ref["port_name"])
            )
            port = (
                Port.objects.select_related("device__rack", "cage__transceiver__model")
                .filter(pk=port_id)
                .first()
                if port_id
                else None
            )
        if port is None:
            raise DjangoValidationError({field: "Unknown port."})
        return port

    def _spec(self, ref: dict, field: str) -> cable_services.EndSpec:
        return cable_services.EndSpec(
            port=self._port(ref, field),
            connector_type=ref.get("connector_type", ""),
            fibre_count=ref.get("fibre_count"),
            pinned=ref.get("pinned"),
            polish=ref.get("polish", ""),
            label=ref.get("label", ""),
        )

    @extend_schema(request=s.CableWriteSerializer, responses={201: s.CableSerializer})
    def create(self, request, *args, **kwargs):
        body = s.CableWriteSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = dict(body.validated_data)
        a = self._spec(data.pop("a"), "a")
        b = [self._spec(ref, "b") for ref in data.pop("b")]
        vendor_name = data.pop("vendor", "")
        vendor = Vendor.objects.filter(name__iexact=vendor_name).first() if vendor_name else None
        if vendor_name and vendor is None:
            raise DjangoValidationError({"vendor": f"Unknown vendor {vendor_name!r}."})
        cable, warnings = cable_services.cable_install(a=a, b=b, vendor=vendor, **data)
        out = s.CableSerializer(self.get_queryset().get(pk=cable.pk)).data
        out["warnings"] = warnings
        return Response(out, status=status.HTTP_201_CREATED)

    def perform_update(self, serializer):
        if serializer.instance.retired_at:
            raise DjangoValidationError({"label": "A retired cable cannot be edited."})
        serializer.save()

    def update(self, request, *args, **kwargs):
        super().update(request, *args, **kwargs)
        return Response(s.CableSerializer(self.get_queryset().get(label=kwargs["label"])).data)

    @extend_schema(request=None, responses={200: OpenApiResponse(description="The traced path from end A")})
    @action(detail=True, methods=["get"], url_path="trace", url_name="trace")
    def trace_path(self, request, label=None):
        # Not named ``trace``: DRF dispatches an HTTP TRACE request to a view method of that name.
        cable = self.get_object()
        end = next((e for e in cable.ends.all() if e.side == "A"), None)
        port = None
        if end and end.port_id:
            port = end.port
        elif end and end.cage_id:
            port = (
                Port.objects.select_related("device__rack")
                .filter(cage_id=end.cage_id, connector=end.connector)
                .order_by("lane_start")
                .first()
            )
        if port is None:
            return Response({"detail": "End A is not on a port."}, status=status.HTTP_404_NOT_FOUND)
        return Response(s.trace_as_dict(port_trace(port)))

    @extend_schema(request=s.StatusSerializer, responses={200: s.CableSerializer})
    @action(detail=True, methods=["post"], url_path="status")
    def set_status(self, request, label=None):
        body = s.StatusSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        cable = cable_services.cable_set_status(cable=self.get_object(), **body.validated_data)
        return Response(s.CableSerializer(self.get_queryset().get(pk=cable.pk)).data)

    @extend_schema(request=s.RetireSerializer, responses={200: s.CableSerializer})
    @action(detail=True, methods=["post"])
    def retire(self, request, label=None):
        body = s.RetireSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        cable = cable_services.cable_retire(cable=self.get_object(), reason=body.validated_data["reason"])
        return Response(s.CableSerializer(self.get_queryset().get(pk=cable.pk)).data)

    @extend_schema(request=None, responses={200: OpenApiResponse(description="Change history")})
    @action(detail=True, methods=["get"])
    def history(self, request, label=None):
        return Response(history_for(self.get_object()))

    @extend_schema(
        summary="Import a cable plan (dry run first, then all-or-nothing)",
        description=(
            'Body: JSON `{"rows": [...]}` or CSV with a header line. Columns: label, kind, a_device, a_port, '
            "b_device, b_port (breakout legs separated by ';'), and optionally role, polarity, length_m, vendor, "
            "part_number, serial_a, serial_b, lot, install_date, status, notes, a_/b_connector, a_/b_fibres, "
            "a_/b_pinned, a_/b_polish. Also: YAML plans (`application/yaml`), NetBox's cable CSV "
            "(`?dialect=netbox`), and the expected-topology port list of `GET /api/topology/txt/` "
            "(`text/plain`; new cables take `?kind=`; paths through patch panels that are already "
            "recorded are counted in `paths_already_recorded`). `?dry_run=1` (the default) reports what would be created or changed and "
            "every error by row; `?dry_run=0` applies the plan only if no row has an error. 20,000 rows and "
            "`CABLETRACK_MAX_IMPORT_BYTES` per request."
        ),
        request={
            "application/json": inline_serializer(
                "CablePlan",
                {
                    "rows": serializers.ListField(
                        child=PlanRowField(),
                        min_length=1,
                    )
                },
            ),
            "text/csv": str,
            "application/yaml": str,
            "text/plain": str,
        },
        responses={
            200: OpenApiResponse(description="Per-row result"),
            400: OpenApiResponse(description="Rows with errors"),
        },
    )
    @action(detail=False, methods=["post"], url_path="import", parser_classes=[])
    def import_plan(self, request):
        dry_run = request.query_params.get("dry_run", "1").lower() not in ("0", "false", "no")
        rows, already = _read_plan_rows(request)
        if not rows and already is None:
            return Response({"rows": ["The plan has no cables."]}, status=status.HTTP_400_BAD_REQUEST)
        result = cable_plan_import(rows=rows, dry_run=dry_run, actor=request.user)
        code = (
            status.HTTP_400_BAD_REQUEST
            if result.errors
            else (status.HTTP_201_CREATED if result.applied else status.HTTP_200_OK)
        )
        body = result.as_dict()
        if already is not None:
            body["paths_already_recorded"] = already
        return Response(body, status=code)

    @extend_schema(
        summary="Export the cable plan (YAML, CSV, or NetBox's cable import CSV)",
        parameters=[OpenApiParameter("as", str, enum=["yaml", "csv", "netbox"])],
        responses={200: OpenApiResponse(description="The plan file")},
    )
    @action(detail=False, methods=["get"], url_path="export")
    def export_plan(self, request):
        fmt = request.query_params.get("as", "yaml")
        cables = self.filter_queryset(self.get_queryset())
        if fmt == "netbox":
            body, ctype, ext = plan_files.netbox_csv_export(cables=cables), "text/csv", "netbox.csv"
        elif fmt in ("yaml", "csv"):
            body = plan_files.plan_export(cables=cables, fmt=fmt)
            ctype, ext = ("application/yaml", "yaml") if fmt == "yaml" else ("text/csv", "csv")
        else:
            return Response({"as": ["yaml, csv or netbox"]}, status=status.HTTP_400_BAD_REQUEST)
        resp = HttpResponse(body, content_type=f"{ctype}; charset=utf-8")
        resp["Content-Disposition"] = f'attachment; filename="cable-plan.{ext}"'
        return resp


class LinkViewSet(ServerOwnedFieldsMixin, viewsets.ReadOnlyModelViewSet):
    queryset = Link.objects.select_related("a_port__device", "b_port__device").prefetch_related(
        Prefetch("segments", queryset=LinkSegment.objects.select_related("cable"))
    )
    serializer_class = s.LinkSerializer
    filterset_fields = ["active", "pmd", "path_ok"]


PLAN_TYPES = {
    "application/json",
    "text/csv",
    "application/csv",
    "application/yaml",
    "text/yaml",
    "application/x-yaml",
    "text/plain",
}


def _read_body_text(request) -> str:
    """The request body as UTF-8 text, at most ``CABLETRACK_MAX_IMPORT_BYTES`` (413 beyond)."""
    limit = app_settings.max_import_bytes
    if int(request.META.get("CONTENT_LENGTH") or 0) > limit:
        raise PayloadTooLarge(f"The body is larger than the {limit:,}-byte import limit.")
    raw = request._request.read(limit + 1)
    if len(raw) > limit:
        raise PayloadTooLarge(f"The body is larger than the {limit:,}-byte import limit.")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ParseError("The body must be UTF-8.") from exc


def _read_plan_rows(request) -> tuple[list[dict], int | None]:
    """Rows from a JSON body ``{"rows": [...]}``, a CSV (plain or NetBox's) or YAML plan, or
    the topology port list; with the number of panel paths the topology list names that are
    recorded already (``None`` for the other formats)."""
    ctype = (request.content_type or "").split(";")[0].strip().lower()
    if ctype not in PLAN_TYPES:
        raise UnsupportedMediaType(
            ctype or "none",
            detail="Send application/json, text/csv, application/yaml or text/plain (the topology list).",
        )
    text = _read_body_text(request)
    if ctype == "application/json":
        try:
            body = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise ParseError(f"Malformed JSON: {exc}") from exc
        if not isinstance(body, dict) or not isinstance(body.get("rows"), list):
            raise ParseError('Expected {"rows": [ {...}, ... ]}.')
        rows = body["rows"]
        scalar = (str, int, float, bool, type(None))
        for i, row in enumerate(rows):
            if not isinstance(row, dict) or not all(isinstance(v, scalar) for v in row.values()):
                raise ParseError(f"Row {i}: every row is an object of column -> text or number.")
        return rows, None
    try:
        if "yaml" in ctype:
            return plan_files.plan_rows_from_yaml(text), None
        if ctype == "text/plain" or request.query_params.get("dialect") == "topology":
            return plan_files.plan_rows_from_topology(text, kind=request.query_params.get("kind", ""))
        if request.query_params.get("dialect") == "netbox":
            return plan_files.plan_rows_from_netbox_csv(text), None
        return plan_files.plan_rows_from_csv(text), None
    except plan_files.PlanFileError as exc:
        raise ParseError(str(exc)) from exc
