"""API tokens for automation: an administrator mints, lists and revokes the tokens of service
accounts (collectors) without a browser. The raw key is in the creation answer only; it is stored
hashed. Permissions: ``view_apitoken`` to list, ``add_apitoken`` to mint, ``change_apitoken`` to
revoke (the admin role); minting follows ``services.access.tokens.api_token_mint_for`` (never for
an account holding a permission the caller lacks)."""

from __future__ import annotations

import django_filters
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from inventory.core.choices import TokenKind
from inventory.models import ApiToken
from inventory.services.access import tokens as token_services


class ApiTokenSerializer(serializers.ModelSerializer):
    user = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = ApiToken
        fields = [
            "id",
            "user",
            "name",
            "kind",
            "prefix",
            "created_at",
            "expires_at",
            "revoked_at",
            "last_used_at",
        ]
        read_only_fields = fields


class ApiTokenCreatedSerializer(ApiTokenSerializer):
    token = serializers.CharField(read_only=True, help_text="The key: in this answer only, never again")

    class Meta(ApiTokenSerializer.Meta):
        fields = [*ApiTokenSerializer.Meta.fields, "token"]
        read_only_fields = fields


class ApiTokenCreateSerializer(serializers.Serializer):
    user = serializers.SlugRelatedField(slug_field="username", queryset=get_user_model().objects.all())
    name = serializers.CharField(max_length=100)
    kind = serializers.ChoiceField(choices=TokenKind.choices, default=TokenKind.INGEST)
    expires_at = serializers.DateTimeField(required=False, allow_null=True, default=None)


class ApiTokenFilter(django_filters.FilterSet):
    user = django_filters.CharFilter(field_name="user__username", help_text="The owner's username")

    class Meta:
        model = ApiToken
        fields = ["user", "kind"]


class ApiTokenViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet
):
    queryset = ApiToken.objects.select_related("user").order_by("-created_at", "-pk")
    serializer_class = ApiTokenSerializer
    filterset_class = ApiTokenFilter

    @extend_schema(request=ApiTokenCreateSerializer, responses={201: ApiTokenCreatedSerializer})
    def create(self, request, *args, **kwargs):
        data = ApiTokenCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            token, raw = token_services.api_token_mint_for(actor=request.user, **data.validated_data)
        except DjangoValidationError as exc:
            raise ValidationError(exc.message_dict) from None
        response = Response({**ApiTokenSerializer(token).data, "token": raw}, status=status.HTTP_201_CREATED)
        response.never_stored = True  # the key is in this answer only: no idempotency replay keeps it
        response["Cache-Control"] = "no-store, private"
        return response

    @extend_schema(request=None, responses={200: ApiTokenSerializer})
    @action(detail=True, methods=["post"])
    def revoke(self, request, pk=None):
        token = token_services.api_token_revoke(token=self.get_object())
        return Response(ApiTokenSerializer(token).data)
