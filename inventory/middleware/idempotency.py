"""Request bodies with documented caps, and ``Idempotency-Key`` on every API write.

``BodyLimitMiddleware`` refuses a body larger than its cap with 413 before anything reads it:
``CABLETRACK_MAX_BODY_BYTES`` (default 2.5 MB) for JSON and forms, ``CABLETRACK_MAX_UPLOAD_BYTES``
(default 32 MB) for multipart uploads (OTDR ``.sor`` files, photos), and the per-prefix caps in
``CABLETRACK_BODY_LIMITS`` (bulk telemetry and imports: ``CABLETRACK_MAX_IMPORT_BYTES``, 64 MB).

A chunked body (``Transfer-Encoding: chunked``, no ``Content-Length``) is read here, under the
same cap, and then looks like any other body; a server that cannot end it (runserver) gets a 411.

``IdempotencyMiddleware``: an API ``POST``/``PUT``/``PATCH`` sent with ``Idempotency-Key: <key>``
(1-255 printable characters) is run once per user and key. A retry gets the stored answer back
with ``Idempotent-Replayed: true``; the same key with a different method, path or body gets 422;
a retry while the first is still running waits for it and gets its answer. The key's record and the
request's writes commit together: a request that fails (5xx) or dies half way (database restart,
killed process) leaves neither behind, so its retry runs for real. Answers that invite a retry
(409, 412, 423, 429) are not stored either, nor an answer marked ``never_stored`` (it carries a
secret shown once: a new API token's key).
Keys are kept ``CABLETRACK_IDEMPOTENCY_TTL_HOURS`` (24) hours, then purged by a periodic task.
"""

from __future__ import annotations

import hashlib
import io
from datetime import timedelta

from django.core.handlers.wsgi import LimitedStream
from django.db import IntegrityError, transaction
from django.http import HttpResponse, JsonResponse
from django.utils import timezone

from inventory.conf import app_settings
from inventory.models import ApiToken, IdempotencyRecord
from inventory.models.accounts import hash_token

WRITE_METHODS = {"POST", "PUT", "PATCH"}
NOT_STORED = {409, 412, 423, 425, 429}
ABANDONED_AFTER = timedelta(minutes=5)
REPLAYED_HEADERS = ("Location", "ETag", "Content-Language")


def body_cap(request) -> int:
    path = request.path_info
    for prefix, cap in app_settings.body_limits.items():
        if path.startswith(prefix):
            return cap
    if request.content_type == "multipart/form-data":
        return app_settings.max_upload_bytes
    return app_settings.max_body_bytes


def _content_length(request) -> int | None:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return None


def _error(request, status: int, detail: str, **extra) -> HttpResponse:
    if request.path_info.startswith("/api/"):
        response = JsonResponse({"detail": detail, **extra}, status=status)
    else:
        response = HttpResponse(detail, status=status, content_type="text/plain; charset=utf-8")
    return response


def _read_chunked(request, cap: int) -> HttpResponse | None:
    """A chunked body (no Content-Length) read up front, at most ``cap`` bytes, so every reader
    after this sees it as an ordinary body of known length (Django would read it as empty).

    Only a server that de-chunks the body and ends the stream at its end (gunicorn sets
    ``wsgi.input_terminated``) can be read so; elsewhere (runserver) the answer is a clear 411.
    """
    stream = request.META.get("wsgi.input")
    if not request.META.get("wsgi.input_terminated") or stream is None:
        return _error(request, 411, "Send a Content-Length: this server cannot read a chunked body.")
    chunks, total = [], 0
    while True:
        chunk = stream.read(min(1 << 20, cap + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if total > cap:
            return _error(
                request, 413, f"The request body is over {cap} bytes, this endpoint's cap.", max_bytes=cap
            )
    body = b"".join(chunks)
    request.META["CONTENT_LENGTH"] = str(len(body))
    request.META.pop("HTTP_TRANSFER_ENCODING", None)
    request._stream = LimitedStream(io.BytesIO(body), len(body))
    return None


class BodyLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "%00" in request.META.get("QUERY_STRING", ""):
            # A NUL reaches no field: PostgreSQL refuses it in any text, so it would be a 500
            # wherever a parameter is used in a query (the schema fuzzer found four such).
            return _error(request, 400, "The query string contains a NUL character.")
        cap = body_cap(request)
        if "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower():
            refused = _read_chunked(request, cap)
            if refused is not None:
                return refused
        length = _content_length(request)
        if length is None:
            return _error(request, 400, "Content-Length is not a number.")
        if length > cap:
            return _error(
                request,
                413,
                f"The request body is {length} bytes; this endpoint accepts at most {cap} bytes.",
                max_bytes=cap,
            )
        return self.get_response(request)


def _request_user(request):
    """The user a request will authenticate as: session, or a usable bearer token."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return user
    header = request.META.get("HTTP_AUTHORIZATION", "").split()
    if len(header) != 2 or header[0].lower() not in ("bearer", "token"):
        return None
    token = ApiToken.objects.select_related("user").filter(key_hash=hash_token(header[1])).first()
    if token is None or not token.is_usable() or not token.user.is_active:
        return None
    return token.user


class _Replay(Exception):
    """The key exists: answer from the stored record (outside the transaction)."""


class IdempotencyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        key = request.headers.get("Idempotency-Key")
        if key is None or request.method not in WRITE_METHODS or not request.path_info.startswith("/api/"):
            return self.get_response(request)
        if not 1 <= len(key) <= 255 or not key.isprintable():
            return _error(request, 400, "Idempotency-Key must be 1-255 printable characters.")
        user = _request_user(request)
        if user is None:
            return self.get_response(request)  # the view answers 401
        body = request.read()  # bounded by BodyLimitMiddleware
        request._body = body
        request._stream = io.BytesIO(body)
        request._read_started = False
        digest = hashlib.sha256(
            b"\n".join([request.method.encode(), request.get_full_path().encode(), body])
        ).hexdigest()
        # The record and the view's writes are one transaction: if the request dies half way (the
        # database restarts, the process is killed), both roll back and the client's retry runs
        # for real; a record can never be left "in progress" by a request that no longer runs.
        # A concurrent retry waits on the key's unique index until the first one has finished.
        try:
            with transaction.atomic():
                try:
                    with transaction.atomic():
                        record = IdempotencyRecord.objects.create(
                            user=user,
                            key=key,
                            method=request.method,
                            path=request.get_full_path()[:2048],
                            request_hash=digest,
                        )
                except IntegrityError:
                    raise _Replay from None
                response = self.get_response(request)
                if (
                    response.status_code >= 500
                    or response.status_code in NOT_STORED
                    or response.streaming
                    or getattr(response, "never_stored", False)  # a secret shown once (a new token)
                ):
                    if response.status_code >= 500:
                        transaction.set_rollback(True)  # a failed request leaves nothing behind
                    else:
                        record.delete()
                    return response
                record.status_code = response.status_code
                record.content_type = response.get("Content-Type", "")[:100]
                record.headers = {h: response[h] for h in REPLAYED_HEADERS if response.has_header(h)}
                record.body = bytes(response.content)
                record.completed_at = timezone.now()
                record.save(update_fields=["status_code", "content_type", "headers", "body", "completed_at"])
        except _Replay:
            return self._replay(request, user, key, digest)
        return response

    def _replay(self, request, user, key, digest):
        record = IdempotencyRecord.objects.filter(user=user, key=key).first()
        if record is None:  # purged between the insert and this read: let the client retry
            response = _error(request, 409, "Retry this request.")
            response["Retry-After"] = "1"
            return response
        if record.request_hash != digest:
            return _error(
                request,
                422,
                "This Idempotency-Key was already used for a different request; use a new key.",
            )
        if record.status_code is None and record.created_at < timezone.now() - ABANDONED_AFTER:
            # The first attempt died with its process: forget it, the client's next retry runs.
            IdempotencyRecord.objects.filter(pk=record.pk, status_code__isnull=True).delete()
            response = _error(request, 409, "The first attempt was interrupted; retry this request.")
            response["Retry-After"] = "1"
            return response
        if record.status_code is None:
            response = _error(request, 409, "A request with this Idempotency-Key is still in progress.")
            response["Retry-After"] = "1"
            return response
        response = HttpResponse(
            bytes(record.body), status=record.status_code, content_type=record.content_type
        )
        for name, value in (record.headers or {}).items():
            response[name] = value
        response["Idempotent-Replayed"] = "true"
        return response
