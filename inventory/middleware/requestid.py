"""Request ids: on every log line, in the ``X-Request-ID`` header, and on the 500 page.

Kept free of Django imports so the logging config can load it before apps are ready.
"""

import contextvars
import logging
import re
import uuid

from inventory.core.safetext import log_escaped

# A client-chosen X-Request-ID is used only if it is 1-64 of these characters (a UUID, a trace id):
# never markup on the 503 page, never a forged line in the logs.
VALID_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")

_request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = _request_id.get()
        return True


class OneLineFormatter(logging.Formatter):
    """Each record's message on one line: a control character in a logged value (a module serial
    a collector posted, a path, a name) is written as an escape (``\\n``, ``\\x00``), so no value
    can forge a log line. A traceback, appended after the message, keeps its own lines."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return log_escaped(super().formatMessage(record))


class RequestIdMiddleware:
    """Tags every log line with a request id, and returns it as ``X-Request-ID``.

    A 500 in production shows the id (never a traceback) so a user can quote it. A client's own
    id is kept when it matches ``VALID_ID``; any other is replaced by a fresh one.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        rid = request.headers.get("X-Request-ID", "")
        if not VALID_ID.fullmatch(rid):
            rid = uuid.uuid4().hex  # a client's id is kept only when it is safe to print and log
        request.request_id = rid
        token = _request_id.set(rid)
        try:
            response = self.get_response(request)
        finally:
            _request_id.reset(token)
        response["X-Request-ID"] = rid
        return response
