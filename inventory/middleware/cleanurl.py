"""A URL with a NUL anywhere (path or query) is a 400.

NUL names nothing anyone can store (PostgreSQL refuses it in any text: it used to be a 500), so it
is refused here once, before any view, for pages, API and admin alike. Other control characters
in a path are let through on purpose: names stored before names were checked may hold them
(``bad\r\nname``), and their pages must still open so that they can be renamed (issue 32); the
views never put such a character in a header or a log line unescaped. Kept early in
``MIDDLEWARE``, right after the proxy middleware.
"""

from __future__ import annotations

from urllib.parse import unquote_to_bytes

from django.http import HttpResponseBadRequest, JsonResponse

NUL_BYTE = b"\x00"
PATH_DETAIL = "The URL path contains a NUL character; no page has such a name."
QUERY_DETAIL = "The URL query contains a NUL character; no parameter takes one."


def url_refusal(path: str, query_string: str) -> str | None:
    """Why this URL is refused, in words, or None when it is fine."""
    if "\x00" in path:
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
