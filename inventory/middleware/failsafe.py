"""When a backing service is down: a clear 503 with ``Retry-After``, never a traceback.

* The database unreachable (PostgreSQL restarting) or the broker refusing a message that has no
  outbox (a view that publishes with ``_outbox=False``): 503, so clients and collectors retry.
* The upload storage full (``ENOSPC``/``EDQUOT`` while writing an OTDR file, a photo, a staged
  import): 507 Insufficient Storage, saying so; the storage removed the partial file and the
  transaction rolled back, so nothing of the request is kept.
* Anything else unhandled: the 500 page (HTML) or ``{"detail", "request_id"}`` (API), logged
  with the request id. ``DEBUG`` keeps Django's own error page for development.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import InterfaceError
from django.db import OperationalError as DbOperationalError
from django.http import HttpResponse, JsonResponse
from django.utils.html import escape

from cabletrack.celery import BROKER_ERRORS
from inventory.db.storage import is_storage_full

log = logging.getLogger("cabletrack.errors")

RETRY_AFTER_S = 5


def unavailable_errors() -> tuple[type[BaseException], ...]:
    return (DbOperationalError, InterfaceError, *BROKER_ERRORS)


def is_unavailable(exc: BaseException) -> bool:
    return isinstance(exc, unavailable_errors())


def unavailable_response(request, exc: BaseException) -> HttpResponse:
    rid = getattr(request, "request_id", "")
    log.warning("service unavailable (%s): %s", type(exc).__name__, exc)
    detail = "A backing service is briefly unavailable; retry shortly."
    if request.path_info.startswith("/api/") or request.path_info.startswith("/metrics"):
        response = JsonResponse({"detail": detail, "request_id": rid}, status=503)
    else:
        response = HttpResponse(
            f"<!doctype html><title>Unavailable</title><h1>Briefly unavailable</h1><p>{detail}</p>"
            f"<p>Request id: <code>{escape(rid)}</code></p>",
            status=503,
        )
    response["Retry-After"] = str(RETRY_AFTER_S)
    return response


STORAGE_FULL_DETAIL = (
    "The upload storage is full, so nothing was recorded; tell the operator, then send it again."
)


def storage_full_response(request, exc: BaseException) -> HttpResponse:
    rid = getattr(request, "request_id", "")
    log.error("upload storage full in %s %s: %s", request.method, request.path, exc)
    if request.path_info.startswith("/api/"):
        return JsonResponse({"detail": STORAGE_FULL_DETAIL, "request_id": rid}, status=507)
    return HttpResponse(
        f"<!doctype html><title>Storage full</title><h1>Storage full</h1><p>{STORAGE_FULL_DETAIL}</p>"
        f"<p>Request id: <code>{escape(rid)}</code></p>",
        status=507,
    )


def server_error_json(request, exc: BaseException) -> JsonResponse:
    rid = getattr(request, "request_id", "")
    log.error("unhandled error in %s %s", request.method, request.path, exc_info=exc)
    return JsonResponse(
        {"detail": "Server error. It has been logged; quote the request id.", "request_id": rid}, status=500
    )


class UnavailableMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exc):
        if is_unavailable(exc):
            return unavailable_response(request, exc)
        if is_storage_full(exc):
            return storage_full_response(request, exc)
        if request.path_info.startswith("/api/") and not settings.DEBUG:
            return server_error_json(request, exc)
        return None
