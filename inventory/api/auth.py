"""Bearer API tokens, stored hashed (``Authorization: Bearer ct_...``; ``Token`` also accepted)."""

from django.utils import timezone
from rest_framework import authentication, exceptions

from inventory.models import ApiToken
from inventory.models.accounts import hash_token


class ApiTokenAuthentication(authentication.BaseAuthentication):
    keywords = ("bearer", "token")

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower().decode(errors="replace") not in self.keywords:
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed(
                "Malformed Authorization header: expected 'Bearer <token>'."
            )
        raw = header[1].decode(errors="replace")
        token = ApiToken.objects.select_related("user").filter(key_hash=hash_token(raw)).first()
        now = timezone.now()
        if token is None or not token.user.is_active:
            raise exceptions.AuthenticationFailed("Invalid token.")
        if token.revoked_at is not None:
            raise exceptions.AuthenticationFailed("This token has been revoked.")
        if token.expires_at is not None and token.expires_at <= now:
            raise exceptions.AuthenticationFailed("This token has expired.")
        if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.user, token

    def authenticate_header(self, request):
        return 'Bearer realm="api"'


class SessionAuthentication(authentication.SessionAuthentication):
    """DRF's session authentication, with the CSRF check run on Django's own request.

    DRF hands its ``Request`` to the CSRF check, which reads ``request.POST``; on a view that reads
    its body itself (``parser_classes = []``: telemetry, plan and device imports) that is a 415
    before the view runs, so a logged-in browser (Swagger's "Try it out") could never post there.
    Django's request answers ``POST`` without touching a JSON, CSV or text body; the CSRF token
    comes from the ``X-CSRFToken`` header as before.
    """

    def enforce_csrf(self, request):
        return super().enforce_csrf(getattr(request, "_request", request))
