"""Friendly "not found" and "not allowed" pages for every page URL, with DEBUG on or off.

Django's handlers show the technical 404 page (every URL pattern of the site) when DEBUG is on
and a view raises ``Http404``; a technician who scans a rack or types a device name gets that
page on a development server or a demo. This middleware answers every ``Http404`` a page view
raises with the phone-sized page (``templates/404.html``: what was not found, a search box filled
with it, Racks and Home); the 404 handler (DEBUG off, or a URL no route matches) renders the same
page. The API keeps its JSON errors (DRF answers its own 404s inside its views), and a URL under
``/api/`` that no route matches answers the API's JSON 404 too: with DEBUG on Django would send
its HTML technical 404 page (the 404 handler only runs with DEBUG off), and a collector or a
script must get the content type the schema documents on a development server as in production.
"""

from __future__ import annotations

from django.http import Http404, JsonResponse
from django.shortcuts import render
from django.urls import Resolver404, resolve

API_PREFIX = "/api/"


def is_api(request) -> bool:
    return request.path_info.startswith(API_PREFIX)


def api_not_found_response():
    """The API's 404 for a URL no route matches (DRF's shape; a view's own 404 keeps its message)."""
    return JsonResponse({"detail": "Not found."}, status=404)


def not_found_response(request, message: str = "", key: str = ""):
    """The one "not found" page: ``message`` says what ("No rack R-99"), ``key`` fills the search."""
    if not message or message.endswith("matches the given query."):
        message = "Nothing here"
    ctx = {"message": message, "key": key[:80], "path": request.path[:200]}
    return render(request, "404.html", ctx, status=404)


def not_allowed_response(request, message: str = ""):
    """The one "not allowed" page: the sentence saying why, and who can change it."""
    ctx = {"message": message or "Your role does not allow this."}
    return render(request, "403.html", ctx, status=403)


def _routed(request) -> bool:
    try:
        resolve(request.path_info, getattr(request, "urlconf", None))
    except Resolver404:
        return False
    return True


def _key(request, kwargs: dict) -> str:
    for name in ("label", "name", "key", "port"):
        if kwargs.get(name):
            return str(kwargs[name])
    return ""


class FriendlyNotFoundMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        # Only a 404 costs the second resolve; a routed URL's 404 is its view's (a missing object).
        if response.status_code == 404 and is_api(request) and not _routed(request):
            return api_not_found_response()
        return response

    def process_view(self, request, view_func, view_args, view_kwargs):
        request._ct_view_kwargs = view_kwargs  # for the search key of a not-found page
        return None

    def process_exception(self, request, exception):
        if not isinstance(exception, Http404) or is_api(request):
            return None
        message = exception.args[0] if exception.args and isinstance(exception.args[0], str) else ""
        return not_found_response(request, message, _key(request, getattr(request, "_ct_view_kwargs", {})))
