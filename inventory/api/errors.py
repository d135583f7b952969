"""One error shape for the whole API: ``{"errors": {field: [messages]}}`` plus DRF's detail.

A backing service down answers 503 with ``Retry-After``; any other unhandled error answers a
JSON 500 with the request id (logged with its traceback), never a traceback to the client.
"""

import re

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import DataError, IntegrityError, connection, transaction
from rest_framework import exceptions
from rest_framework.views import exception_handler as drf_handler

from inventory.api.concurrency import UNSAFE
from inventory.core.help import api_help
from inventory.db.storage import is_storage_full
from inventory.middleware.failsafe import (
    is_unavailable,
    server_error_json,
    storage_full_response,
    unavailable_response,
)


def _undo_the_write(context) -> None:
    """Roll back the request's own transaction (``concurrency.AtomicWritesMixin``); outside one
    the refused statement was its own transaction and is already gone."""
    request = context.get("request")
    if (
        getattr(context.get("view"), "atomic_writes", False)
        and getattr(request, "method", "GET") in UNSAFE  # a read opened no transaction of its own
        and connection.in_atomic_block
    ):
        transaction.set_rollback(True)


_SQLITE_RULE = re.compile(r"^(CHECK|UNIQUE) constraint failed: (\S+)")


def _broken_rule(exc: IntegrityError) -> tuple[str, bool]:
    """(the rule's name, whether it is a uniqueness rule), from PostgreSQL's diagnostics or
    SQLite's message, so both databases answer the same 400."""
    diag = getattr(getattr(exc, "__cause__", None), "diag", None)
    if diag is not None:
        return diag.constraint_name or "a database rule", diag.sqlstate == "23505"
    found = _SQLITE_RULE.match(str(exc))
    if found is None:
        return "a database rule", False
    return found.group(2), found.group(1) == "UNIQUE"


def exception_handler(exc, context):
    # Any error ends the request's write: a refusal raised after a part was written (a create
    # checked against the site scope once built, a bad row late in a batch) leaves nothing.
    _undo_the_write(context)
    if isinstance(exc, DjangoValidationError):
        if hasattr(exc, "message_dict"):
            exc = exceptions.ValidationError(exc.message_dict)
        else:
            exc = exceptions.ValidationError({"non_field_errors": exc.messages})
    if isinstance(exc, IntegrityError):
        # A database rule the serializer did not check first (a CHECK or UNIQUE constraint):
        # the statement was refused and rolled back, so nothing was written. Say which rule.
        rule, unique = _broken_rule(exc)
        _undo_the_write(context)
        if unique:
            message = f"A record with these values already exists ({rule})."
        else:
            message = f"Refused: the values break {rule}."
        exc = exceptions.ValidationError({"non_field_errors": [message]})
    if isinstance(exc, OverflowError):
        # SQLite's form of PostgreSQL's "out of range" DataError: an integer past 64 bits.
        exc = DataError(str(exc))
    if isinstance(exc, DataError):
        # A value the database cannot hold (a NUL in text, a number past its column): refused
        # by the database before anything was written; the client's input, so a 400.
        _undo_the_write(context)
        reason = "text cannot contain the NUL character" if "NUL" in str(exc) else "a value is out of range"
        exc = exceptions.ValidationError({"non_field_errors": [f"Refused: {reason}."]})
    response = drf_handler(exc, context)
    request = context.get("request")
    django_request = getattr(request, "_request", request)
    if is_storage_full(exc):
        _undo_the_write(context)
        return storage_full_response(django_request, exc)
    if response is not None:
        _link_the_fix(response, django_request)
        return response
    if is_unavailable(exc):
        return unavailable_response(django_request, exc)
    if settings.DEBUG:
        return None  # Django's debug page, for development
    return server_error_json(django_request, exc)


def _link_the_fix(response, request) -> None:
    """An error whose fix the documentation explains carries ``help``: the link to it."""
    data = response.data if isinstance(response.data, dict) else None
    detail = str(data.get("detail", "")) if data else ""
    link = api_help(response.status_code, getattr(request, "path", ""), detail)
    if link and data is not None and "help" not in data:
        response.data["help"] = link


class PayloadTooLarge(exceptions.APIException):
    status_code = 413
    default_detail = "Request body too large."
    default_code = "payload_too_large"
