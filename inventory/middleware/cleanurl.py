"""A URL with a NUL or another control character in its path, or a NUL in its query, is a 400.

Such a URL names nothing a page or the API serves (labels, rack and device names hold no control
characters), and left to run it reaches places that refuse it (PostgreSQL refuses NUL in any
text: a 500) or must never hold it (log lines). Decided here once, before any view, for pages,
API and admin alike. Kept early in ``MIDDLEWARE``, right after the proxy middleware.
"""

from __future__ import annotations

from urllib.parse import unquote_to_bytes

from django.http import HttpResponseBadRequest, JsonResponse

from inventory.core.safetext import has_control

NUL_BYTE = b"\x00"
PATH_DETAIL = "The URL path contains a control character (such as NUL, CR or LF); no page has such a name."
QUERY_DETAIL = "The URL query contains a NUL character; no parameter takes one."


def url_refusal(path: str, query_string: str) -> str | None:
    """Why this URL is refused, in words, or None when it is fine."""
    if has_control(path):
        return PATH_DETAIL
    if "\x00" in query_string or NUL_BYTE in unquote_to_bytes(query_string.replace("+", " ")):
        return QUERY_DETAIL
    return None


def bad_request(request, detail: str):
    if request.path_info.startswith("/api/") or request.path_info.startswith("/metrics"):
        return JsonResponse({"detail": detail}, status=400)
    return HttpResponseBadRequest(
        f"<!doctype html><title>Bad request</title><h1>Bad request</h1><p>{detail}</p>",
        content_type="text/html; charset=utf-8",
    )


class CleanURLMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        why = url_refusal(request.path_info, request.META.get("QUERY_STRING", ""))
        if why is not None:
            return bad_request(request, why)
        return self.get_response(request)
