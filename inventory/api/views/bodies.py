"""Import bodies read by hand: size-capped UTF-8 text, and a cable plan's rows by content type."""

from rest_framework.exceptions import ParseError, UnsupportedMediaType

from inventory.api.errors import PayloadTooLarge
from inventory.conf import app_settings
from inventory.core import strictjson
from inventory.services.plans import files as plan_files

PLAN_TYPES = {
    "application/json",
    "text/csv",
    "application/csv",
    "application/yaml",
    "text/yaml",
    "application/x-yaml",
    "text/plain",
}


def read_body_text(request) -> str:
    """The request body as UTF-8 text, at most ``CABLETRACK_MAX_IMPORT_BYTES`` (413 beyond)."""
    limit = app_settings.max_import_bytes
    if int(request.META.get("CONTENT_LENGTH") or 0) > limit:
        raise PayloadTooLarge(f"The body is larger than the {limit:,}-byte import limit.")
    raw = request._request.read(limit + 1)
    if len(raw) > limit:
        raise PayloadTooLarge(f"The body is larger than the {limit:,}-byte import limit.")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ParseError("The body must be UTF-8.") from exc


def read_plan_rows(request) -> tuple[list[dict], int | None]:
    """Rows from a JSON body ``{"rows": [...]}``, a CSV (plain or NetBox's) or YAML plan, or
    the topology port list; with the number of panel paths the topology list names that are
    recorded already (``None`` for the other formats)."""
    ctype = (request.content_type or "").split(";")[0].strip().lower()
    if ctype not in PLAN_TYPES:
        raise UnsupportedMediaType(
            ctype or "none",
            detail="Send application/json, text/csv, application/yaml or text/plain (the topology list).",
        )
    text = read_body_text(request)
    if ctype == "application/json":
        try:
            body = strictjson.loads(text)
        except strictjson.StrictJSONError as exc:
            raise ParseError(str(exc)) from None
        if not isinstance(body, dict) or not isinstance(body.get("rows"), list):
            raise ParseError('Expected {"rows": [ {...}, ... ]}.')
        rows = body["rows"]
        scalar = (str, int, float, bool, type(None))
        # Numbered from 1, as the rows of the answer are (it said "Row 0" of the first row).
        for n, row in enumerate(rows, start=1):
            if not isinstance(row, dict):
                raise ParseError(f"Row {n}: every row is an object of column -> text or number.")
            if bad := next((k for k, v in row.items() if not isinstance(v, scalar)), None):
                raise ParseError(
                    f"Row {n}, column {bad!r}: a text, a number, yes/no or null, not a list or an object."
                )
        return rows, None
    try:
        if "yaml" in ctype:
            return plan_files.plan_rows_from_yaml(text), None
        if ctype == "text/plain" or request.query_params.get("dialect") == "topology":
            return plan_files.plan_rows_from_topology(text, kind=request.query_params.get("kind", ""))
        if request.query_params.get("dialect") == "netbox":
            return plan_files.plan_rows_from_netbox_csv(text), None
        return plan_files.plan_rows_from_csv(text), None
    except plan_files.PlanFileError as exc:
        raise ParseError(str(exc)) from exc
