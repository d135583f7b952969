import sys

from django.http import JsonResponse
from django.shortcuts import render
from django.views import defaults

from inventory.middleware.failsafe import is_unavailable, unavailable_response
from inventory.middleware.notfound import (
    api_not_found_response,
    is_api,
    not_allowed_response,
    not_found_response,
)


def server_error(request):
    """A 500 shows the request id to quote, never a traceback; a service outage is a 503."""
    exc = sys.exc_info()[1]
    if exc is not None and is_unavailable(exc):
        return unavailable_response(request, exc)
    if is_api(request):
        return JsonResponse(
            {
                "detail": "Server error. It has been logged; quote the request id.",
                "request_id": getattr(request, "request_id", ""),
            },
            status=500,
        )
    return render(request, "500.html", {"request_id": getattr(request, "request_id", "")}, status=500)


def page_not_found(request, exception):
    """Under /api/ (a URL no route matches, e.g. ``/api/cables/1.5/``) the API's JSON error,
    not the HTML page: an API client always gets the content type the schema documents."""
    if is_api(request):
        return api_not_found_response()
    message = exception.args[0] if exception and exception.args and isinstance(exception.args[0], str) else ""
    return not_found_response(request, message)


def permission_denied(request, exception):
    if is_api(request):
        return JsonResponse({"detail": str(exception) or "You do not have permission."}, status=403)
    return not_allowed_response(request, str(exception) if exception else "")


def bad_request(request, exception):
    if is_api(request):
        return JsonResponse({"detail": "Bad request."}, status=400)
    return defaults.bad_request(request, exception)
