"""OpenAPI extensions: describe our token authentication to drf-spectacular."""

import re

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "inventory.api.auth.ApiTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "API token from your profile: `Authorization: Bearer ct_...`",
        }


class SessionScheme(OpenApiAuthenticationExtension):
    """The web login's session cookie (``auth.SessionAuthentication``: DRF's, CSRF read alike)."""

    target_class = "inventory.api.auth.SessionAuthentication"
    name = "cookieAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "apiKey", "in": "cookie", "name": "sessionid"}


# --- Error responses every operation can give ------------------------------------------------

ERROR_COMPONENT = {
    "type": "object",
    "description": (
        "An error: `detail` (a sentence) for request-level errors, or `{field: [messages]}` for "
        "invalid fields (`non_field_errors` for the whole object). 500 and 503 carry `request_id`. "
        "An error whose fix the documentation explains carries `help`, the link to it."
    ),
    "properties": {
        "detail": {"type": "string"},
        "request_id": {"type": "string"},
        "help": {
            "type": "string",
            "format": "uri",
            "description": "Where the documentation explains the fix.",
        },
    },
    "additionalProperties": True,
}
_ERROR_REF = {"$ref": "#/components/schemas/Error"}
_WRITES = {"post", "put", "patch", "delete"}
_WHY = {
    "400": "Invalid input: the fields and what is wrong with each.",
    "401": "No valid credentials (missing, unknown, expired or revoked token).",
    "403": "Authenticated, but your role or token kind does not allow this.",
    "404": "No such object.",
    "409": "A request with this Idempotency-Key is still in progress: retry later.",
    "412": "If-Match did not match: the object changed since you read it (body: the current object).",
    "413": "Request body over the documented cap (`max_bytes`).",
    "415": "Unsupported Content-Type.",
    "422": "This Idempotency-Key was used with a different request.",
    "428": "If-Match is required (CABLETRACK_REQUIRE_IF_MATCH) and was not sent.",
    "503": "A backing service is down; retry after `Retry-After` seconds.",
}


def _error_codes(path: str, method: str, operation: dict) -> list[str]:
    codes = ["401", "403", "503"]
    has_query = any(p.get("in") == "query" for p in operation.get("parameters", []))
    paginated = any(
        p.get("in") == "query" and p.get("name") == "page" for p in operation.get("parameters", [])
    )
    if "{" in path or paginated:  # a page past the last one is 404 too
        codes.append("404")
    if method in _WRITES or has_query or "{" in path:  # a path naming with a control character: 400
        codes.append("400")
    if method in _WRITES:
        codes += ["409", "413", "415", "422"]
        if "{" in path:
            codes += ["412", "428"]
    return codes


def add_error_responses(result, generator, request, public):
    """drf-spectacular postprocessing hook: document the errors any operation can answer.

    DRF, the middleware and our views answer 400/401/403/404/413/415 (and the idempotency and
    If-Match codes on writes) from every endpoint, but drf-spectacular only lists the success
    response. An operation's own error response (given with ``extend_schema``) is kept.
    """
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas["Error"] = ERROR_COMPONENT
    for name, component in schemas.items():
        for prop in component.get("properties", {}).values():
            _decimal_needs_a_digit(prop)
        if name.endswith("Request"):
            _no_nul(component)
    for path, item in result.get("paths", {}).items():
        for method, operation in item.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            _json_first(operation, schemas)
            _body_required_by_any_of(operation, schemas)
            for param in operation.get("parameters", []):
                if param.get("in") == "query":
                    _no_nul(param.get("schema", {}))
                elif param.get("in") == "path":
                    _no_control(param.get("schema", {}))
            for media in operation.get("requestBody", {}).get("content", {}).values():
                _no_nul(media.get("schema", {}))
            responses = operation["responses"]
            for code in _error_codes(path, method, operation):
                responses.setdefault(
                    code,
                    {"description": _WHY[code], "content": {"application/json": {"schema": _ERROR_REF}}},
                )
    return result


_FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


def _has_file(schema: dict, schemas: dict) -> bool:
    if "$ref" in schema:
        schema = schemas.get(schema["$ref"].rsplit("/", 1)[-1], {})
    return any(p.get("format") == "binary" for p in schema.get("properties", {}).values())


def _json_first(operation: dict, schemas: dict) -> None:
    """Document form encodings only where a file needs them.

    DRF's default parsers also take every JSON body as a form, but a form cannot say ``null`` or
    carry nested objects (the string "null" is not a null), so a schema offering both for the
    same fields promises what a form cannot deliver. Where JSON is accepted it is the documented
    encoding, except for bodies with a file, which are multipart only."""
    content = operation.get("requestBody", {}).get("content", {})
    if "application/json" not in content:
        return
    multipart = content.get("multipart/form-data")
    if multipart and _has_file(multipart.get("schema", {}), schemas):
        # A file goes in multipart only: JSON cannot carry it.
        for media in ("application/json", "application/x-www-form-urlencoded"):
            content.pop(media, None)
        return
    for media in _FORMS:
        content.pop(media, None)


def _body_required_by_any_of(operation: dict, schemas: dict) -> None:
    """A body whose every ``anyOf`` branch requires a field cannot be left out: say so
    (drf-spectacular marks a body required only from the top-level ``required``)."""
    body = operation.get("requestBody")
    if not body or body.get("required"):
        return
    for media in body.get("content", {}).values():
        schema = media.get("schema", {})
        if "$ref" in schema:
            schema = schemas.get(schema["$ref"].rsplit("/", 1)[-1], {})
        branches = schema.get("anyOf")
        if branches and all(b.get("required") for b in branches):
            body["required"] = True


_DECIMAL = re.compile(r"^\^-\?\\d\{0,(\d+)\}\(\?:\\\.\\d\{0,(\d+)\}\)\?\$$")


def _decimal_needs_a_digit(prop: dict) -> None:
    """drf-spectacular's decimal pattern (``^-?\\d{0,6}(?:\\.\\d{0,2})?$``) also matches "", "-"
    and ".", which DRF's DecimalField refuses: require a digit, as the server does."""
    m = _DECIMAL.match(prop.get("pattern", "")) if prop.get("format") == "decimal" else None
    if m:
        whole, frac = m.groups()
        prop["pattern"] = rf"^-?(?:\d{{1,{whole}}}(?:\.\d{{0,{frac}}})?|\.\d{{1,{frac}}})$"


NO_NUL = "^[^\\u0000]*$"
#: a required text: DRF trims whitespace (``str.strip``: Python's ``\\s``, which the fuzzer's
#: regex engine shares) before refusing a blank value, so it needs one other character
NOT_BLANK = "^[^\\u0000]*[^\\u0000\\s][^\\u0000]*$"


#: what a name in a URL path may not hold: a control character (``middleware.cleanurl``: 400)
CONTROL_CLASS = "\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029"


def _no_control(schema: dict) -> None:
    """A string path parameter says it holds no control character: its own ``^[^/]+$`` (a
    router's lookup) gains them in its negated class; one without a pattern gets one."""
    if not isinstance(schema, dict) or schema.get("type") != "string":
        return
    pattern = schema.get("pattern")
    if pattern is None:
        schema["pattern"] = f"^[^{CONTROL_CLASS}]*$"
    elif pattern == "^[^/]+$":
        schema["pattern"] = f"^[^/{CONTROL_CLASS}]+$"


def _no_nul(schema: dict) -> None:
    """Say what DRF and Django forms refuse in every text field: the NUL character (their
    ``ProhibitNullCharactersValidator``), and whitespace only where the text may not be blank
    (``minLength``). Free text only: not enums, formats or patterns."""
    if not isinstance(schema, dict) or "$ref" in schema:
        return
    if schema.get("type") == "string" and not ({"enum", "format", "pattern"} & schema.keys()):
        schema["pattern"] = NOT_BLANK if schema.get("minLength", 0) >= 1 else NO_NUL
    for key in ("properties",):
        for sub in schema.get(key, {}).values():
            _no_nul(sub)
    for key in ("items", "additionalProperties"):
        _no_nul(schema.get(key))
    for key in ("oneOf", "anyOf", "allOf"):
        for sub in schema.get(key, []):
            _no_nul(sub)
