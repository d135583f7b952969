"""API tokens: created by their owner or, for a service account (a collector), by an
administrator; shown once, stored hashed; revoked, never deleted.

A token never does more than its owner's role allows (``authz.token_kinds_for``: no full token
for a role that cannot write), and an administrator mints tokens only for accounts that hold no
permission the administrator lacks (never a superuser's), so minting is never an escalation.
"""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import PermissionDenied, ValidationError
from django.utils import timezone

from inventory.access import authz
from inventory.core.choices import TokenKind
from inventory.models import ApiToken
from inventory.models.accounts import hash_token

MAX_ACTIVE_TOKENS_PER_USER = 50


def api_token_create(
    *,
    user,
    name: str,
    kind: str = TokenKind.FULL,
    expires_at: datetime | None = None,
    now: datetime | None = None,
) -> tuple[ApiToken, str]:
    """Make a token for ``user``; returns it and the raw key (the only time it exists in clear)."""
    now = now or timezone.now()
    errors: dict[str, str] = {}
    name = (name or "").strip()
    if not name:
        errors["name"] = "Give the token a name (what uses it)."
    elif len(name) > 100:
        errors["name"] = "At most 100 characters."
    if kind not in TokenKind.values:
        errors["kind"] = f"Unknown token kind {kind!r}."
    elif kind not in authz.token_kinds_for(user):
        allowed = ", ".join(authz.token_kinds_for(user)) or "none"
        errors["kind"] = f"{user.get_username()}'s role does not allow a {kind} token (allowed: {allowed})."
    if expires_at is not None and expires_at <= now:
        errors["expires_at"] = "The expiry must be in the future."
    active = ApiToken.objects.filter(user=user, revoked_at__isnull=True).count()
    if active >= MAX_ACTIVE_TOKENS_PER_USER:
        errors["name"] = f"You already have {active} active tokens; revoke some first."
    if errors:
        raise ValidationError(errors)
    raw = ApiToken.generate()
    token = ApiToken.objects.create(
        user=user, name=name, kind=kind, key_hash=hash_token(raw), prefix=raw[:10], expires_at=expires_at
    )
    return token, raw


def api_token_revoke(*, token: ApiToken, now: datetime | None = None) -> ApiToken:
    """Revoke a token (idempotent: a revoked token keeps its first revocation time)."""
    if token.revoked_at is None:
        token.revoked_at = now or timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def api_token_mint_for(
    *, actor, user, name: str, kind: str, expires_at: datetime | None = None
) -> tuple[ApiToken, str]:
    """An administrator makes a token for another account (a collector's, from the command line or
    the API). Refused (PermissionDenied) for a superuser or staff account, an inactive one, or one
    holding a permission ``actor`` lacks."""
    if not actor.is_superuser:
        if not actor.has_perm("inventory.add_apitoken"):
            raise PermissionDenied("Your role does not allow minting tokens for other accounts.")
        if (
            user.is_superuser
            or user.is_staff
            or not user.get_all_permissions() <= actor.get_all_permissions()
        ):
            raise PermissionDenied(
                f"{user.get_username()} holds permissions you do not; you may not mint tokens for it."
            )
    if not user.is_active:
        raise ValidationError({"user": f"{user.get_username()} is inactive."})
    return api_token_create(user=user, name=name, kind=kind, expires_at=expires_at)
