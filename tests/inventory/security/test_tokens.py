"""API tokens: created in the profile page (shown once, stored hashed), kinds, expiry, revocation."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient, APIRequestFactory

from inventory.api.permissions import IngestPermission, PlantPermission
from inventory.core.choices import TokenKind
from inventory.models import ApiToken, Cable, Site, TelemetrySample, Vendor
from inventory.models.accounts import hash_token
from inventory.services.access import tokens as token_services
from tests.inventory.security.conftest import one_sample_batch

pytestmark = pytest.mark.django_db


def _bearer(raw):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def test_profile_creates_a_token_shown_once_and_stored_hashed(plant):
    client = Client()
    client.force_login(plant.users["technician"])
    response = client.post("/profile/", {"name": "phone", "kind": "read_only", "expires_in_days": "30"})
    assert response.status_code == 201
    assert response["Cache-Control"].startswith("max-age=0") or "no-cache" in response["Cache-Control"]
    raw = response.context["raw_token"]
    assert raw.startswith("ct_") and raw in response.content.decode()
    token = ApiToken.objects.get(user=plant.users["technician"])
    assert token.key_hash == hash_token(raw) and raw not in (token.key_hash, token.prefix)
    assert token.kind == TokenKind.READ_ONLY
    assert timedelta(days=29) < token.expires_at - timezone.now() <= timedelta(days=30)
    # Listed afterwards with its prefix and "never used", but the key is never shown again.
    page = client.get("/profile/").content.decode()
    assert token.prefix in page and raw not in page and "never" in page
    _bearer(raw).get("/api/sites/")
    assert token.prefix in client.get("/profile/").content.decode()
    token.refresh_from_db()
    assert token.last_used_at is not None


def test_profile_refuses_bad_input_and_writes_nothing(plant):
    client = Client()
    client.force_login(plant.users["viewer"])
    for data in [
        {"name": "", "kind": "full"},
        {"name": "x", "kind": "root"},
        {"name": "x", "kind": "full", "expires_in_days": "-3"},
    ]:
        response = client.post("/profile/", data)
        assert response.status_code == 400
        assert 'class="error"' in response.content.decode()
    assert not ApiToken.objects.exists()


def test_revoke_from_the_profile_then_the_token_gets_401(plant):
    token, raw = token_services.api_token_create(user=plant.users["engineer"], name="ci")
    assert _bearer(raw).get("/api/sites/").status_code == 200
    client = Client()
    client.force_login(plant.users["engineer"])
    assert client.post(f"/profile/tokens/{token.pk}/revoke").status_code == 302
    response = _bearer(raw).get("/api/sites/")
    assert response.status_code == 401
    assert "revoked" in response.json()["detail"]


def test_nobody_revokes_someone_elses_token(plant):
    token, raw = token_services.api_token_create(user=plant.users["engineer"], name="ci")
    client = Client()
    client.force_login(plant.users["admin"])
    assert client.post(f"/profile/tokens/{token.pk}/revoke").status_code == 404
    assert _bearer(raw).get("/api/sites/").status_code == 200


def test_expired_token_gets_401(plant):
    token, raw = token_services.api_token_create(
        user=plant.users["engineer"], name="old", expires_at=timezone.now() + timedelta(seconds=5)
    )
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = _bearer(raw).get("/api/sites/")
    assert response.status_code == 401
    assert "expired" in response.json()["detail"]
    assert response["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize("raw", ["ct_not-a-real-token", "", "a b"])
def test_unknown_or_malformed_token_gets_401(plant, raw):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert client.get("/api/sites/").status_code == 401


def test_read_only_token_gets_200_on_get_and_403_on_every_write(plant, raw_token):
    client = _bearer(raw_token("engineer", TokenKind.READ_ONLY))
    assert client.get("/api/cables/").status_code == 200
    assert client.get(f"/api/cables/{plant.north_cable.label}/").status_code == 200
    assert client.post("/api/vendors/", {"name": "X", "slug": "x"}, format="json").status_code == 403
    assert (
        client.patch(f"/api/cables/{plant.north_cable.label}/", {"notes": "x"}, format="json").status_code
        == 403
    )
    assert (
        client.put(f"/api/sites/{plant.north.pk}/", {"name": "n", "slug": "n"}, format="json").status_code
        == 403
    )
    assert client.post(f"/api/cables/{plant.north_cable.label}/retire/", {}, format="json").status_code == 403
    # and nothing was written
    assert not Vendor.objects.filter(slug="x").exists()
    cable = Cable.objects.get(pk=plant.north_cable.pk)
    assert (cable.notes, cable.status) == (plant.north_cable.notes, plant.north_cable.status)
    assert Site.objects.get(pk=plant.north.pk).name == plant.north.name


def _ingest_permission(raw, method="POST"):
    factory = APIRequestFactory()
    from rest_framework.request import Request

    from inventory.api.auth import ApiTokenAuthentication

    django_request = getattr(factory, method.lower())("/api/telemetry/", HTTP_AUTHORIZATION=f"Bearer {raw}")
    request = Request(django_request, authenticators=[ApiTokenAuthentication()])
    return IngestPermission().has_permission(request, view=None), PlantPermission, request


@pytest.mark.parametrize(
    ("role", "kind", "allowed"),
    [
        ("collector", TokenKind.INGEST, True),
        ("engineer", TokenKind.INGEST, True),
        ("engineer", TokenKind.FULL, True),
        ("engineer", TokenKind.READ_ONLY, False),
        # (a viewer gets no ingest token at all: test_token_scope.py)
        ("technician", TokenKind.FULL, False),
    ],
)
def test_ingest_permission(plant, raw_token, role, kind, allowed):
    ok, _, _ = _ingest_permission(raw_token(role, kind))
    assert ok is allowed


def test_ingest_token_can_do_nothing_else(plant, raw_token):
    client = _bearer(raw_token("collector", TokenKind.INGEST))
    for url in [
        "/api/cables/",
        "/api/sites/",
        "/api/links/",
        f"/api/cables/{plant.north_cable.label}/history/",
    ]:
        assert client.get(url).status_code == 403, url
    assert client.post("/api/vendors/", {"name": "X", "slug": "x"}, format="json").status_code == 403
    # and no page either: a token is not a session
    assert Client(HTTP_AUTHORIZATION=client._credentials["HTTP_AUTHORIZATION"]).get("/").status_code == 302


def test_telemetry_endpoint_when_present_accepts_an_ingest_token(plant, raw_token):
    """Once ``POST /api/telemetry/`` exists, an ingest token posts to it; before, the route is 404."""
    from django.urls import Resolver404, resolve

    try:
        resolve("/api/telemetry/")
    except Resolver404:
        assert (
            _bearer(raw_token("collector", TokenKind.INGEST)).post("/api/telemetry/", {}).status_code == 404
        )
        return
    response = _bearer(raw_token("collector", TokenKind.INGEST)).post(
        "/api/telemetry/", one_sample_batch(), format="json"
    )
    assert response.status_code == 200, response.content
    assert response.json()["stored"] == 1
    assert TelemetrySample.objects.filter(port__device__name="leaf-n").count() == 1
    read_only = _bearer(raw_token("engineer", TokenKind.READ_ONLY)).post(
        "/api/telemetry/", one_sample_batch(port="Ethernet1/2"), format="json"
    )
    assert read_only.status_code == 403
    assert not TelemetrySample.objects.filter(port__name="Ethernet1/2").exists()
