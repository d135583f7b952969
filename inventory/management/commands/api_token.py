"""Mint, list and revoke API tokens from the command line (for collector service accounts).

    manage.py api_token create collector-1 --name "leaf collectors" --kind ingest --expires-days 90
    manage.py api_token list [collector-1]
    manage.py api_token revoke <id or prefix>

The key is printed once, by ``create``, and stored hashed. The kind must be one the account's role
allows (a collector: ingest).
"""

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db.models import Q
from django.utils import timezone

from inventory.core.choices import TokenKind
from inventory.models import ApiToken
from inventory.services.access import tokens as token_services


class Command(BaseCommand):
    help = "Mint, list and revoke API tokens (e.g. ingest tokens for collector accounts)."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="op", required=True)
        create = sub.add_parser("create", help="Mint a token; its key is printed once.")
        create.add_argument("username")
        create.add_argument("--name", required=True, help="What uses it, e.g. 'collector leaf-01'.")
        create.add_argument("--kind", choices=TokenKind.values, default=TokenKind.INGEST)
        create.add_argument("--expires-days", type=int, default=None, help="Days until it expires.")
        lst = sub.add_parser("list", help="Tokens (no keys), newest first.")
        lst.add_argument("username", nargs="?")
        revoke = sub.add_parser("revoke", help="Revoke a token by id or key prefix.")
        revoke.add_argument("token", help="The token's id or its prefix (ct_...).")

    def handle(self, *args, op, **options):
        getattr(self, f"_{op}")(**options)

    def _create(self, *, username, name, kind, expires_days, **_):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user {username!r}.")
        if expires_days is not None and not 1 <= expires_days <= 3650:
            raise CommandError("--expires-days must be 1-3650.")
        expires = timezone.now() + timedelta(days=expires_days) if expires_days else None
        try:
            token, raw = token_services.api_token_create(user=user, name=name, kind=kind, expires_at=expires)
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from None
        self.stderr.write(f"Token {token.pk} ({token.kind}) for {username}; the key is shown once:")
        self.stdout.write(raw)

    def _list(self, *, username=None, **_):
        tokens = ApiToken.objects.select_related("user").order_by("-created_at", "-pk")
        if username:
            tokens = tokens.filter(user__username=username)
        for t in tokens:
            state = "revoked" if t.revoked_at else ("expired" if not t.is_usable() else "active")
            expires = t.expires_at.isoformat() if t.expires_at else "never"
            self.stdout.write(
                f"{t.pk}\t{t.prefix}\t{t.user.username}\t{t.kind}\t{state}\texpires {expires}\t{t.name}"
            )

    def _revoke(self, *, token, **_):
        match = Q(prefix=token) | (Q(pk=int(token)) if token.isdigit() else Q())
        found = list(ApiToken.objects.filter(match)[:2])
        if len(found) != 1:
            raise CommandError(f"{'No' if not found else 'More than one'} token matches {token!r}.")
        token_services.api_token_revoke(token=found[0])
        self.stdout.write(f"Revoked token {found[0].pk} ({found[0].prefix}) of {found[0].user.username}.")
