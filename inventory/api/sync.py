"""Sync conflicts (NetBox/Nautobot) through the API: list the open ones, resolve one.

Listing needs the view permission on sync runs (every role but collector). Resolving is an
engineer's plant import decision (``inventory.import_plant``), and taking the source's ends
also edits the cable (``edit_cable``, site-scoped): the same ``authz`` policy as the page.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from inventory.access import authz
from inventory.api.strict import StrictCharField
from inventory.models import Cable, SyncRun
from inventory.selectors.interop.conflicts import sync_conflicts_open
from inventory.services.interop.netbox_conflicts import RESOLUTIONS, sync_conflict_resolve


class ResolveSerializer(serializers.Serializer):
    run = serializers.IntegerField(min_value=1, max_value=2**63 - 1)
    cable = StrictCharField(max_length=64)
    take = serializers.ChoiceField(choices=list(RESOLUTIONS))


class SyncConflictsView(APIView):
    """The open conflicts of each site's latest sync, each naming the ports on both sides."""

    queryset = SyncRun.objects.none()
    required_permission = "inventory.import_plant"

    @extend_schema(
        summary="Open NetBox/Nautobot sync conflicts",
        responses={
            200: OpenApiResponse(
                description="{results: [{run, source, site, kind, key, message, "
                "here: {A, B}, theirs: {A, B}, resolutions}]}"
            )
        },
    )
    def get(self, request):
        return Response({"results": sync_conflicts_open()})

    @extend_schema(
        summary="Resolve a cable conflict: take the source's ends, or keep ours",
        request=ResolveSerializer,
        responses={
            200: OpenApiResponse(description="The resolved conflict"),
            400: OpenApiResponse(description="No such open conflict, or the source's ports are taken here"),
            403: OpenApiResponse(description="Your role may not import, or not edit this cable"),
        },
    )
    def post(self, request):
        body = ResolveSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        authz.check(request.user, "import")
        cable = Cable.objects.filter(label=data["cable"]).first()
        if data["take"] == "take_source" and cable is not None:
            authz.check(request.user, "edit_cable", cable)
        try:
            conflict = sync_conflict_resolve(
                run_id=data["run"], cable_label=data["cable"], take=data["take"], actor=request.user
            )
        except DjangoValidationError as exc:
            return Response(exc.message_dict, status=status.HTTP_400_BAD_REQUEST)
        return Response(conflict)
