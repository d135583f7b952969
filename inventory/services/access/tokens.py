"""API tokens: created by their owner (shown once, stored hashed), revoked, never deleted."""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ValidationError
from django.utils import timezone

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
