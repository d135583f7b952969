"""REST API: transceiver models, and modules with their install, remove and history actions."""

from django.db.models import Prefetch
from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.decorators import action
from rest_framework.response import Response

from inventory.access import authz
from inventory.api import impact as impact_api
from inventory.api import serializers as s
from inventory.api.views.base import NoDeleteModelViewSet
from inventory.models import Transceiver, TransceiverModel, TransceiverPlacement
from inventory.selectors.collectives.impact import impact_window, module_impact
from inventory.selectors.filters import TransceiverFilter
from inventory.selectors.plant.history import history_for
from inventory.services.plant import transceivers as xcvr_services


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

    @extend_schema(
        summary="What ran over this module while it was degraded",
        description=(
            "As a cable's impact, over the links through the cages the module sat in, each counted "
            "only while it sat there."
        ),
        parameters=[impact_api.DAYS_PARAMETER],
        responses={200: impact_api.ImpactSerializer},
    )
    @action(detail=True, methods=["get"], url_path="impact")
    def impact(self, request, pk=None):
        days, error = impact_api.days_or_error(request)
        if error is not None:
            return error
        xcvr = self.get_object()
        start, end = impact_window(now=timezone.now(), days=days)
        return Response(
            impact_api.impact_body(module_impact(transceiver=xcvr, start=start, end=end, now=end), days)
        )

    @extend_schema(request=s.InstallSerializer, responses={200: s.TransceiverSerializer})
    @action(detail=True, methods=["post"])
    def install(self, request, pk=None):
        xcvr = self.get_object()
        body = s.InstallSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        authz.check(request.user, "swap_module", xcvr)  # where it is now (its stock site)
        authz.check(request.user, "swap_module", body.validated_data["cage"])  # and where it goes
        xcvr = xcvr_services.transceiver_install(
            transceiver=xcvr, cage=body.validated_data["cage"], actor=request.user
        )
        return Response(s.TransceiverSerializer(xcvr).data)

    @extend_schema(request=s.RemoveSerializer, responses={200: s.TransceiverSerializer})
    @action(detail=True, methods=["post"])
    def remove(self, request, pk=None):
        xcvr = self.get_object()
        authz.check(request.user, "swap_module", xcvr)
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
