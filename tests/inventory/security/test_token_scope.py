"""Tokens and accounts never reach beyond a role (issue 14).

* A token is immutable but for its name and its revocation: in the Django admin, the admin role
  cannot move a token to another user, raise its kind, extend it or clear its ``revoked_at``.
* The admin role manages user accounts (roles.py) but never makes anyone a superuser, and cannot
  change a superuser's account.
* A token's kind follows its owner's role: no full token for a role that cannot write, no token
  at all for an account whose role grants nothing it could use.
* An administrator mints, lists and revokes tokens for a collector account from the command line
  and the API: shown once, stored hashed, kind and expiry chosen, never for an account holding a
  permission the administrator lacks.
"""

import io
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from inventory.core.choices import TokenKind
from inventory.models import ApiToken, IdempotencyRecord, TelemetrySample
from inventory.models.accounts import hash_token
from inventory.services.access import tokens as token_services
from tests import factories as f
from tests.inventory.security.conftest import one_sample_batch

pytestmark = pytest.mark.django_db
User = get_user_model()


def _staff_admin(plant) -> Client:
    user = plant.users["admin"]
    user.is_staff = True
    user.save()
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def root(plant):
    return User.objects.create_superuser("root", "root@example.com", "x-root-password-1")


def test_the_admin_role_cannot_move_raise_or_unrevoke_a_token_in_the_admin(plant, root):
    token, raw = token_services.api_token_create(user=plant.users["viewer"], name="grafana", kind="read_only")
    token_services.api_token_revoke(token=token)
    client = _staff_admin(plant)
    url = f"/admin/inventory/apitoken/{token.pk}/change/"
    assert client.get(url).status_code == 200
    response = client.post(
        url,
        {
            "name": "renamed",
            "user": root.pk,
            "kind": TokenKind.FULL,
            "expires_at_0": "",
            "expires_at_1": "",
            "revoked_at_0": "",
            "revoked_at_1": "",
            "key_hash": hash_token("ct_chosen"),
        },
    )
    assert response.status_code == 302
    token.refresh_from_db()
    assert token.name == "renamed"  # the name is editable
    assert (token.user, token.kind, token.key_hash) == (plant.users["viewer"], "read_only", hash_token(raw))
    assert token.revoked_at is not None
    bearer = APIClient()
    bearer.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert bearer.get("/api/cables/").status_code == 401


def test_the_admin_role_revokes_tokens_with_the_admin_action_and_cannot_add_one(plant):
    token, raw = token_services.api_token_create(user=plant.users["collector"], name="c", kind="ingest")
    client = _staff_admin(plant)
    response = client.post(
        "/admin/inventory/apitoken/", {"action": "revoke_tokens", "_selected_action": [token.pk]}
    )
    assert response.status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert client.get("/admin/inventory/apitoken/add/").status_code == 403


def test_the_admin_role_adds_a_user_with_a_role(plant):
    client = _staff_admin(plant)
    response = client.post(
        "/admin/auth/user/add/",
        {"username": "newtech", "password1": "a-long-passphrase-42", "password2": "a-long-passphrase-42"},
    )
    assert response.status_code == 302, response.content[:500]
    new = User.objects.get(username="newtech")
    form = client.get(f"/admin/auth/user/{new.pk}/change/")
    assert form.status_code == 200
    assert b'name="is_superuser"' not in form.content
    assert b'name="user_permissions"' not in form.content


def test_the_admin_role_cannot_make_anyone_a_superuser(plant):
    client = _staff_admin(plant)
    me = plant.users["admin"]
    technician = plant.users["technician"]
    for user in (me, technician):
        response = client.post(
            f"/admin/auth/user/{user.pk}/change/",
            {
                "username": user.username,
                "is_active": "on",
                "is_staff": "on",
                "is_superuser": "on",
                "groups": [g.pk for g in user.groups.all()],
                "date_joined_0": "2026-01-01",
                "date_joined_1": "00:00:00",
            },
        )
        assert response.status_code == 302, response.content[:800]
        user.refresh_from_db()
        assert not user.is_superuser


def test_the_admin_role_cannot_change_a_superusers_account(plant, root):
    client = _staff_admin(plant)
    changed = client.post(
        f"/admin/auth/user/{root.pk}/change/",
        {"username": "root", "is_active": "", "date_joined_0": "2026-01-01", "date_joined_1": "00:00:00"},
    )
    assert changed.status_code == 403
    response = client.post(
        f"/admin/auth/user/{root.pk}/password/", {"password1": "taken-over-42", "password2": "taken-over-42"}
    )
    assert response.status_code == 403
    root.refresh_from_db()
    assert root.is_active and not root.check_password("taken-over-42")


@pytest.mark.parametrize(
    ("role", "offered"),
    [
        ("viewer", ["read_only"]),
        ("collector", ["ingest"]),
        ("technician", ["full", "read_only"]),
        ("engineer", ["full", "read_only", "ingest"]),
    ],
)
def test_the_profile_offers_and_makes_only_the_token_kinds_the_role_allows(plant, role, offered):
    client = Client()
    client.force_login(plant.users[role])
    page = client.get("/profile/").content.decode()
    for kind in TokenKind.values:
        assert (f'value="{kind}"' in page) == (kind in offered), (role, kind)
    for kind in TokenKind.values:
        response = client.post("/profile/", {"name": f"t-{kind}", "kind": kind})
        assert (response.status_code == 201) == (kind in offered), (role, kind, response.status_code)
    made = set(ApiToken.objects.filter(user=plant.users[role]).values_list("kind", flat=True))
    assert made == set(offered)


def test_an_account_with_no_role_gets_no_token(plant):
    nobody = f.UserFactory(username="nobody")
    client = Client()
    client.force_login(nobody)
    for kind in TokenKind.values:
        assert client.post("/profile/", {"name": "t", "kind": kind}).status_code == 400
    assert not ApiToken.objects.filter(user=nobody).exists()


# --- tokens for automation --------------------------------------------------------------------


def test_the_command_mints_lists_and_revokes_a_collector_token(plant):
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "api_token", "create", "collector", "--name", "leaf collectors", "--kind", "ingest",
        "--expires-days", "30", stdout=out, stderr=err,
    )  # fmt: skip
    raw = out.getvalue().strip()
    token = ApiToken.objects.get(user=plant.users["collector"])
    assert token.key_hash == hash_token(raw) and raw not in (token.key_hash, token.prefix)
    assert token.kind == "ingest"
    assert timezone.now() + timedelta(days=29) < token.expires_at < timezone.now() + timedelta(days=31)
    bearer = APIClient()
    bearer.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    minted = bearer.post("/api/telemetry/", one_sample_batch(), format="json")
    assert minted.status_code == 200 and minted.json()["stored"] == 1, minted.content

    listing = io.StringIO()
    call_command("api_token", "list", "collector", stdout=listing)
    assert token.prefix in listing.getvalue() and "active" in listing.getvalue()
    assert raw not in listing.getvalue()

    call_command("api_token", "revoke", token.prefix, stdout=io.StringIO())
    token.refresh_from_db()
    assert token.revoked_at is not None
    revoked = bearer.post("/api/telemetry/", one_sample_batch(fec=5678), format="json")
    assert revoked.status_code == 401
    assert TelemetrySample.objects.count() == 1  # the revoked token's sample was not stored


def test_the_command_refuses_a_kind_the_accounts_role_does_not_allow(plant):
    with pytest.raises(CommandError, match="does not allow a full token"):
        call_command(
            "api_token", "create", "collector", "--name", "x", "--kind", "full", stdout=io.StringIO()
        )
    assert not ApiToken.objects.exists()


def test_an_administrator_mints_lists_and_revokes_a_collector_token_through_the_api(plant):
    admin = APIClient()
    admin.force_login(plant.users["admin"])
    expires = (timezone.now() + timedelta(days=7)).isoformat()
    made = admin.post(
        "/api/tokens/",
        {"user": "collector", "name": "rack A collectors", "kind": "ingest", "expires_at": expires},
        format="json",
    )
    assert made.status_code == 201, made.content
    raw = made.json()["token"]
    token = ApiToken.objects.get(pk=made.json()["id"])
    assert token.key_hash == hash_token(raw) and token.user == plant.users["collector"]
    listed = admin.get("/api/tokens/?user=collector").json()["results"]
    assert [t["id"] for t in listed] == [token.pk]
    assert "token" not in listed[0] and raw not in str(listed)
    assert admin.post(f"/api/tokens/{token.pk}/revoke/").status_code == 200
    token.refresh_from_db()
    assert token.revoked_at is not None


def test_minting_tokens_for_others_is_for_administrators_and_never_an_escalation(plant, root):
    engineer = APIClient()
    engineer.force_login(plant.users["engineer"])
    body = {"user": "collector", "name": "x", "kind": "ingest"}
    assert engineer.post("/api/tokens/", body, format="json").status_code == 403
    assert engineer.get("/api/tokens/").status_code == 403
    admin = APIClient()
    admin.force_login(plant.users["admin"])
    assert (
        admin.post("/api/tokens/", {**body, "user": "root", "kind": "full"}, format="json").status_code == 403
    )
    refused = admin.post("/api/tokens/", {**body, "kind": "full"}, format="json")
    assert refused.status_code == 400 and "kind" in refused.json()
    assert not ApiToken.objects.exists()


def test_a_minted_key_is_never_kept_for_an_idempotent_replay(plant):
    admin = APIClient()
    admin.force_login(plant.users["admin"])
    made = admin.post(
        "/api/tokens/",
        {"user": "collector", "name": "keyed", "kind": "ingest"},
        format="json",
        HTTP_IDEMPOTENCY_KEY="mint-1",
    )
    assert made.status_code == 201 and "no-store" in made["Cache-Control"]
    raw = made.json()["token"]
    assert not [r for r in IdempotencyRecord.objects.all() if raw.encode() in bytes(r.body or b"")]
