import sys

from django.shortcuts import render

from ..failsafe import is_unavailable, unavailable_response


def server_error(request):
    """A 500 shows the request id to quote, never a traceback; a service outage is a 503."""
    exc = sys.exc_info()[1]
    if exc is not None and is_unavailable(exc):
        return unavailable_response(request, exc)
    if request.path_info.startswith("/api/"):
        from django.http import JsonResponse

        return JsonResponse(
            {
                "detail": "Server error. It has been logged; quote the request id.",
                "request_id": getattr(request, "request_id", ""),
            },
            status=500,
        )
    return render(request, "500.html", {"request_id": getattr(request, "request_id", "")}, status=500)
