"""Optimistic concurrency on the API: ``ETag`` on reads, ``If-Match`` on writes.

``GET /api/<things>/<id>/`` answers with an ``ETag`` (a hash of the object's representation).
Send it back as ``If-Match`` on ``PUT``/``PATCH`` or on an object's action (``POST
/api/cables/<label>/retire/``): if someone changed the object since you read it, the write is
refused with 412 and the current representation, instead of silently overwriting their change.
``If-Match: *`` or no header writes unconditionally (set ``CABLETRACK_REQUIRE_IF_MATCH`` to make
the header mandatory: then a missing header gets 428).
"""

from __future__ import annotations

import contextlib
import hashlib

import orjson
from django.db import transaction
from rest_framework import status
from rest_framework.exceptions import APIException

from inventory.conf import app_settings

UNSAFE = {"POST", "PUT", "PATCH", "DELETE"}
CHANGED_MESSAGE = (
    "This record changed since you opened it. Reload it to see the other change, then apply yours again."
)


class PreconditionFailed(APIException):
    status_code = status.HTTP_412_PRECONDITION_FAILED
    default_detail = CHANGED_MESSAGE
    default_code = "changed_since_read"


class PreconditionRequired(APIException):
    status_code = status.HTTP_428_PRECONDITION_REQUIRED
    default_detail = "Send If-Match with the ETag you read (GET the object first)."
    default_code = "if_match_required"


def etag_of(data) -> str:
    raw = orjson.dumps(data, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=str)
    return '"' + hashlib.sha256(raw).hexdigest()[:32] + '"'


def _tags(header: str) -> set[str]:
    return {t.strip().removeprefix("W/") for t in header.split(",") if t.strip()}


class AtomicWritesMixin:
    """Each unsafe request in one transaction (a savepoint inside another): a write that the
    database refuses part-way (``errors.exception_handler`` turns that into a 400) leaves
    nothing behind, and the connection stays usable."""

    atomic_writes = True

    def dispatch(self, request, *args, **kwargs):
        if request.method in UNSAFE:
            with transaction.atomic():
                return super().dispatch(request, *args, **kwargs)
        return super().dispatch(request, *args, **kwargs)


class OptimisticConcurrencyMixin(AtomicWritesMixin):
    """For ``GenericViewSet`` subclasses with a retrieve action (mixed into the API's base viewset)."""

    def _is_object_write(self, request) -> bool:
        return request.method in UNSAFE and bool(getattr(self, "detail", False)) and self.action != "create"

    def etag_for(self, instance) -> str:
        action = self.action
        self.action = "retrieve"
        try:
            serializer_class = self.get_serializer_class()
        finally:
            self.action = action
        return etag_of(serializer_class(instance, context=self.get_serializer_context()).data)

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if not self._is_object_write(request):
            return
        header = request.headers.get("If-Match", "")
        if not header:
            if app_settings.require_if_match:
                raise PreconditionRequired()
            return
        if header.strip() == "*":
            return
        obj = self.get_object()
        type(obj)._base_manager.select_for_update().filter(pk=obj.pk).exists()  # lock it
        current = self.etag_for(self.get_object())
        if current not in _tags(header):
            exc = PreconditionFailed()
            exc.current_etag = current
            raise exc

    def retrieve(self, request, *args, **kwargs):
        response = super().retrieve(request, *args, **kwargs)
        if response.status_code == 200:
            response["ETag"] = etag_of(response.data)
        return response

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        if getattr(response, "status_code", 0) == 412 and getattr(self, "_current_etag", None):
            response["ETag"] = self._current_etag
        elif (
            self._is_object_write(request)
            and 200 <= getattr(response, "status_code", 0) < 300
            and self.kwargs.get(self.lookup_url_kwarg or self.lookup_field)
        ):
            with contextlib.suppress(Exception):  # the write succeeded; an ETag is a courtesy
                response["ETag"] = self.etag_for(self.get_object())
        return response

    def handle_exception(self, exc):
        if isinstance(exc, PreconditionFailed):
            self._current_etag = getattr(exc, "current_etag", None)
        return super().handle_exception(exc)
