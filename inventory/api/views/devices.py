"""REST API: vendors, devices (with NetBox's device CSV in and out), cages and ports."""

from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.exceptions import ParseError, UnsupportedMediaType
from rest_framework.response import Response

from inventory.access import authz
from inventory.api import serializers as s
from inventory.api.views.base import MovesCablesMixin, NoDeleteModelViewSet
from inventory.api.views.bodies import read_body_text
from inventory.core.validators import is_whole_number
from inventory.models import Cage, Device, Port, Vendor
from inventory.selectors.filters import DeviceFilter, PortFilter
from inventory.selectors.plant.trace import port_trace
from inventory.services.interop.device_csv import DeviceCsvError, devices_csv_export, devices_csv_import
from inventory.services.plant import ports as port_services


class VendorViewSet(NoDeleteModelViewSet):
    queryset = Vendor.objects.all()
    serializer_class = s.VendorSerializer


class DeviceViewSet(MovesCablesMixin, NoDeleteModelViewSet):
    queryset = Device.objects.select_related("rack")
    serializer_class = s.DeviceSerializer
    filterset_class = DeviceFilter
    lookup_field = "name"
    # Any name stored, "/" (sent as %2F) and an older line break included (core.names).
    lookup_value_regex = r"[\s\S]+"

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
        authz.check(request.user, "import")  # an import: the role first, then each row's site
        ctype = (request.content_type or "").split(";")[0].strip().lower()
        if ctype not in ("text/csv", "application/csv"):
            raise UnsupportedMediaType(ctype or "none", detail="Send text/csv (NetBox's device import CSV).")
        dry_run = request.query_params.get("dry_run", "1").lower() not in ("0", "false", "no")
        try:
            result = devices_csv_import(text=read_body_text(request), dry_run=dry_run, actor=request.user)
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


class CageViewSet(MovesCablesMixin, NoDeleteModelViewSet):
    queryset = Cage.objects.all()
    serializer_class = s.CageSerializer
    filterset_fields = ["device"]


class PortViewSet(MovesCablesMixin, NoDeleteModelViewSet):
    queryset = Port.objects.select_related("device").prefetch_related("aliases")
    serializer_class = s.PortSerializer
    filterset_class = PortFilter

    def perform_create(self, serializer):
        super().perform_create(serializer)
        port = serializer.instance
        port_services.port_alias_add(port=port, name=port.name, source="canonical")

    @extend_schema(request=None, responses={200: OpenApiResponse(description="The traced path")})
    @action(detail=True, methods=["get"], url_path="trace", url_name="trace")
    def trace_path(self, request, pk=None):
        # Not named ``trace``: DRF dispatches an HTTP TRACE request to a view method of that name.
        if not is_whole_number(str(pk)):
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
