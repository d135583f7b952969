"""REST API: cables (by label, with trace, status, retire, history, plan import and export) and links."""

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Prefetch
from django.http import Http404, HttpResponse
from django.utils import timezone
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from inventory.access import authz
from inventory.api import impact as impact_api
from inventory.api import serializers as s
from inventory.api.server_owned import ServerOwnedFieldsMixin
from inventory.api.views.base import NoDeleteModelViewSet
from inventory.api.views.bodies import read_plan_rows
from inventory.core.validators import LABEL_RE
from inventory.db.compiled import CompiledRead
from inventory.models import Cable, Link, LinkSegment, Port, Vendor
from inventory.selectors.collectives.impact import cable_impact, impact_window
from inventory.selectors.filters import CableFilter
from inventory.selectors.plant.history import history_for
from inventory.selectors.plant.ports import ports_resolve
from inventory.selectors.plant.trace import port_trace
from inventory.services.plans import files as plan_files
from inventory.services.plans.cable_plan import cable_plan_import
from inventory.services.plant import cables as cable_services

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


_CABLE_DETAIL = CompiledRead(
    lambda label: (
        Cable.objects.select_related("vendor").only(*CABLE_READ_FIELDS).filter(label=label).order_by()[:1]
    )
)


class CableViewSet(NoDeleteModelViewSet):
    """Cables, by label. Create takes both ends; status changes and retirement have their own actions."""

    serializer_class = s.CableSerializer
    filterset_class = CableFilter
    ordering_fields = ["label", "install_date", "status", "retest_due"]
    lookup_field = "label"
    lookup_value_regex = "[^/]+"
    keyset_field = "label"  # ?after=<label>: keyset pages in the default order (api.pagination)

    def get_queryset(self):
        # Ends are read by the serializer in one flat query per page (end_points_by_cable).
        qs = Cable.objects.select_related("vendor").order_by("label")
        if self.action in ("list", "retrieve"):  # writes load whole rows (history, save)
            qs = qs.only(*CABLE_READ_FIELDS)
        return qs

    def get_object(self):
        """A plain ``GET /api/cables/<label>/``: the cable by its label through a read compiled
        once (``db.compiled``), past the list's filter backends, which a detail without query
        parameters leaves unchanged. Anything else goes DRF's way."""
        if self.action != "retrieve" or self.request.query_params:
            return super().get_object()
        found = _CABLE_DETAIL(self.kwargs[self.lookup_field])
        if not found:
            raise Http404("No cable has this label.")
        self.check_object_permissions(self.request, found[0])
        return found[0]

    def filter_queryset(self, queryset):
        qs = super().filter_queryset(queryset)
        # One site's cables in the default order sort by the site first (the same rows, the same
        # order): then the ``cable_site_label`` index gives it and a page is one range of it, as
        # on the desk (``cable_list_queryset``); keyset pages keep the lead (api.pagination).
        params = self.request.query_params
        if self.action == "list" and not params.get("ordering") and CableFilter(params).within_site:
            qs = qs.order_by("site_id", "label")
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
        authz.check(request.user, "install_cable", cable)  # in this request's transaction
        out = s.CableSerializer(self.get_queryset().get(pk=cable.pk)).data
        out["warnings"] = warnings
        return Response(out, status=status.HTTP_201_CREATED)

    def perform_update(self, serializer):
        if serializer.instance.retired_at:
            raise DjangoValidationError({"label": "A retired cable cannot be edited."})
        super().perform_update(serializer)

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

    @extend_schema(
        summary="What ran over this cable while it was degraded",
        description=(
            "The jobs whose ranks' GPUs use a link through this cable while a warning-or-worse "
            "physical alert (or a tail-latency spike naming it) was open on that link, their ranks, "
            "the GPU-hours overlapped (job GPUs x hours) and the estimated stall cost (one stall of "
            "each job hit, the forecast's arithmetic)."
        ),
        parameters=[impact_api.DAYS_PARAMETER],
        responses={200: impact_api.ImpactSerializer},
    )
    @action(detail=True, methods=["get"], url_path="impact")
    def impact(self, request, label=None):
        days, error = impact_api.days_or_error(request)
        if error is not None:
            return error
        cable = self.get_object()
        start, end = impact_window(now=timezone.now(), days=days)
        return Response(
            impact_api.impact_body(cable_impact(cable=cable, start=start, end=end, now=end), days)
        )

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
        cable = cable_services.cable_retire(
            cable=self.get_object(), reason=body.validated_data["reason"], actor=request.user
        )
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
            "`CABLETRACK_MAX_IMPORT_BYTES` per request; a YAML plan at most 16 MiB, without aliases or "
            "anchors, its cables counted while it is parsed (a 400 past any limit)."
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
        rows, already = read_plan_rows(request)
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
        description=(
            "`as=netbox` writes NetBox's cable import CSV with NetBox's own type, status, length, "
            "unit and profile for cables imported from NetBox. A cable the CSV cannot carry (several "
            "terminations on a side) is not written as something else: the `X-Not-Exported-Count` and "
            "`X-Not-Exported` headers name it, and `report=1` answers JSON "
            "`{csv, not_exported: [{label, reason}]}`."
        ),
        parameters=[
            OpenApiParameter("as", str, enum=["yaml", "csv", "netbox"]),
            OpenApiParameter("report", bool, description="with as=netbox: JSON with what was not exported"),
        ],
        responses={200: OpenApiResponse(description="The plan file")},
    )
    @action(detail=False, methods=["get"], url_path="export")
    def export_plan(self, request):
        fmt = request.query_params.get("as", "yaml")
        cables = self.filter_queryset(self.get_queryset())
        not_exported = None
        report = request.query_params.get("report", "false").lower()
        if report not in ("1", "true", "0", "false"):
            return Response({"report": ["true or false"]}, status=status.HTTP_400_BAD_REQUEST)
        if fmt == "netbox":
            body, not_exported = plan_files.netbox_csv_export(cables=cables)
            ctype, ext = "text/csv", "netbox.csv"
            if report in ("1", "true"):
                return Response({"csv": body, "not_exported": not_exported})
        elif fmt in ("yaml", "csv"):
            body = plan_files.plan_export(cables=cables, fmt=fmt)
            ctype, ext = ("application/yaml", "yaml") if fmt == "yaml" else ("text/csv", "csv")
        else:
            return Response({"as": ["yaml, csv or netbox"]}, status=status.HTTP_400_BAD_REQUEST)
        resp = HttpResponse(body, content_type=f"{ctype}; charset=utf-8")
        resp["Content-Disposition"] = f'attachment; filename="cable-plan.{ext}"'
        if not_exported is not None:
            # What NetBox's CSV cannot carry is never dropped silently: counted and named here
            # (the reasons with ``?report=1``).
            resp["X-Not-Exported-Count"] = str(len(not_exported))
            if not_exported:
                names = ", ".join(n["label"] for n in not_exported)
                resp["X-Not-Exported"] = names.encode("ascii", "replace").decode()[:4000]
        return resp


class LinkViewSet(ServerOwnedFieldsMixin, viewsets.ReadOnlyModelViewSet):
    queryset = Link.objects.select_related("a_port__device", "b_port__device").prefetch_related(
        Prefetch("segments", queryset=LinkSegment.objects.select_related("cable"))
    )
    serializer_class = s.LinkSerializer
    filterset_fields = ["active", "pmd", "path_ok"]
