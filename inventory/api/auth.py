"""Bearer API tokens, stored hashed (``Authorization: Bearer ct_...``; ``Token`` also accepted).

Failed token authentications are counted per client address (``REMOTE_ADDR`` as the proxy
middleware set it) in the cache: past ``CABLETRACK_TOKEN_FAILURE_LIMIT`` within
``CABLETRACK_TOKEN_FAILURE_WINDOW_SECONDS``, every token request from that address is a 429 with
``Retry-After`` until the window ends, valid token or not (answering a valid one would tell a
guesser when it hit). Other clients are not affected; a session login has its own throttle (axes).
"""

from django.core.cache import cache
from django.utils import timezone
from rest_framework import authentication, exceptions

from inventory.conf import app_settings
from inventory.models import ApiToken
from inventory.models.accounts import hash_token


def token_failures_key(address: str) -> str:
    """The cache key counting one client address's failed token authentications."""
    return f"cabletrack:token-failures:{address}"


def _failure_key(request) -> str:
    return token_failures_key(request.META.get("REMOTE_ADDR", ""))


def _refuse_if_throttled(request) -> None:
    failures = cache.get(_failure_key(request), 0)
    if failures >= app_settings.token_failure_limit:
        raise exceptions.Throttled(
            wait=app_settings.token_failure_window_seconds,
            detail="Too many failed token authentications from this address; try again later.",
        )


def _count_failure(request) -> None:
    key = _failure_key(request)
    if not cache.add(key, 1, timeout=app_settings.token_failure_window_seconds):
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.add(key, 1, timeout=app_settings.token_failure_window_seconds)


class ApiTokenAuthentication(authentication.BaseAuthentication):
    keywords = ("bearer", "token")

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower().decode(errors="replace") not in self.keywords:
            return None
        _refuse_if_throttled(request)
        try:
            token, now = self._token(header)
        except exceptions.AuthenticationFailed:
            _count_failure(request)
            raise
        if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.user, token

    @staticmethod
    def _token(header: list[bytes]):
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
        return token, now

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
