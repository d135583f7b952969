"""Fuzz the whole API against its own OpenAPI schema (issue 8, "Bad input").

schemathesis reads the schema the product serves at ``/api/schema/`` and, for every operation,
sends generated requests (valid and invalid: the positive and negative generation modes) through
the real WSGI application as an engineer with an API token, and runs every check it has: no 500,
status codes, content types, headers and bodies as documented, invalid input refused, valid
input accepted, ... A failure names the operation and the request that broke it (as curl).

Bounded: ``FUZZ_EXAMPLES`` examples per operation (default 8), so the whole run stays around a
couple of minutes on one core. Raise it locally to dig deeper: ``FUZZ_EXAMPLES=200 pytest ...``.
"""

from __future__ import annotations

import json
import os
import re

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import positive_data_acceptance

# A body schemathesis cannot serialize is skipped with only a warning, which the CI skip guard
# cannot see: here it is an error, so every media type the schema documents is fuzzed.
pytestmark = [
    pytest.mark.django_db,
    pytest.mark.filterwarnings("error:Skipped test cases with unsupported payload media types:UserWarning"),
]

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "8"))


def _served_schema() -> dict:
    """The document ``/api/schema/`` serves, built the way SpectacularAPIView builds it (at import
    time pytest-django allows no database, so not over HTTP; ``test_the_fuzzed_schema_is_the_served_one``
    checks the two are the same)."""
    from drf_spectacular.generators import SchemaGenerator

    return json.loads(json.dumps(SchemaGenerator().get_schema(request=None, public=True), default=str))


@schemathesis.serializer("application/x-ndjson")
def _ndjson(ctx, value) -> bytes:
    """The telemetry endpoint's newline-delimited JSON body (a string in the schema): sent as is; a
    list (negative mode) as one JSON value a line."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    if isinstance(value, list):
        return "\n".join(json.dumps(v) for v in value).encode()
    return json.dumps(value).encode()


SCHEMA = _served_schema()
schema = schemathesis.openapi.from_dict(SCHEMA)
schema.app = get_wsgi_application()


@pytest.fixture(autouse=True)
def _keep_the_test_connection():
    """Django closes the database connection after each request when it is not in autocommit
    (it is not: the test runs in a transaction); the test client turns that off the same way, so
    requests made through the WSGI app see, and roll back with, the test's data."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def engineer_token(plant, raw_token, settings):
    # schemathesis sends requests with a wrong token on purpose (its ignored-auth check), all
    # from one address: past the failed-token throttle the valid token would be refused too.
    # The throttle has its own test (test_clean_edges.py).
    settings.CABLETRACK_TOKEN_FAILURE_LIMIT = 1_000_000
    return raw_token("engineer")


def test_the_fuzzed_schema_is_the_served_one(client_for):
    response = client_for("engineer", "token").get("/api/schema/?format=json")
    assert response.status_code == 200
    assert json.loads(response.content) == SCHEMA


# A schema-valid request may still be refused for what no schema can say: the object it names
# does not exist (the fuzzer makes up ids and labels), a name is already taken (unique), or one
# field depends on another (telemetry's ``format`` decides what the body must be). Such a 400
# is right; any other refusal of valid data fails the test, as schemathesis's own
# positive_data_acceptance check would.
NOT_EXPRESSIBLE = re.compile(
    "|".join(
        [
            # the object named does not exist / the name is taken
            r"does not exist|already exists|must make a unique set|Invalid pk|Object with|not found",
            r"No \w+ (labelled|named|with)|Unknown (port|device|cable|rack|link)|Select a valid choice",
            r"^No such port\.$|^No (site|rack) '.*'( \(give its slug or name\))?\.$|^No rack '.*' here: ",
            # a date-time the schema allows but the calendar does not (year 1 moved to UTC)
            r"Datetime value out of range",
            # one field depends on another
            r"must end after it starts|lasts at most|Choose at least one|Choose the cable end or the port",
            r"Give a port id, or device and port_name",
            # an MPO end's fibre count depends on its connector (``core.validators``)
            r"^MPO needs a fibre count: |^An MPO plug has ",
            r"^This list pages by keyset only in its default order\.$|^Give either page or after, not both\.$",
            r"does not name the (device|port)|Not a Prometheus text line|No gNMI updates found",
            r"Body is not valid JSON|Body must be a JSON object",
            # the file's content is not what the schema (a binary) can say
            r"no column for|map a column to|is not in the file|Not a readable CSV|not a Bellcore|Not an? (SOR|OTDR|zip)|The plan has no cables",
            r"^no header line$|^The photo must be a JPEG or PNG image\.$|^The header lacks the column",
            # an empty file: schemathesis sends b"" for a required file whatever its minLength, and
            # Django's parser drops an empty part
            r"^No file was submitted\.$|^The submitted file is empty\.$",
            # a plan file's YAML or topology lines, a device CSV's header and rows (text bodies)
            r"^Not valid YAML: |^Expected a list under 'cables:'\.$|^Every cable is a mapping of columns\.$",
            r"^Line \d+: expected 'a_device a_port b_device b_port cables'|^A new cable needs a kind: ",
            r"^The file has no devices: |^The header needs at least: name|^Unknown role .*; one of ",
            # collective timings: the body's format is the query's (nccl-tests tables, the NCCL
            # Inspector's JSON), which the schema cannot express for a text body
            r"^No nccl-tests result table |: not that format\.$",
            # a NUL in a path parameter: refused before any view (inventory/middleware/cleanurl.py)
            r"^The URL path contains a NUL character",
            # a NUL in a cable plan's row (free-form columns the schema cannot constrain):
            # PostgreSQL stores no NUL in text, so the field is an error of its row
            r"^Contains a NUL character\.$",
            # a token only this server can sign
            r"^This is not a preview token from this server\.$",
        ]
    ),
    re.I,
)


def _messages(body) -> list[str]:
    if isinstance(body, str):
        return [body]
    if isinstance(body, list):
        return [m for item in body for m in _messages(item)]
    if isinstance(body, dict) and "where" in body:
        return _messages(body.get("errors"))  # an import error: {"where": "line 3", "errors": ...}
    if isinstance(body, dict):
        return [m for key, item in body.items() if key not in ("request_id", "help") for m in _messages(item)]
    return [str(body)]


# Telemetry's native formats: the body must be that device's output, which a JSON schema cannot
# say; every adapter refuses a body of another shape in its own words ("No 'Physical interface:'
# block: not Junos ..."), so any 400 of a native format is the field dependency, not a defect.
JSON_FORMATS = {None, "samples", "ndjson"}


def _accepts_valid_data(case, response) -> None:
    if case.meta.generation.mode != GenerationMode.POSITIVE or response.status_code != 400:
        return
    if (
        case.operation.label == "POST /api/telemetry/"
        and (case.query or {}).get("format") not in JSON_FORMATS
    ):
        return
    body = response.json()
    # The import endpoints answer a preview with its errors by row: judge the errors only.
    if isinstance(body, dict) and "errors" in body:
        body = body["errors"]
    elif isinstance(body, dict) and isinstance(body.get("rows"), list):  # the cable plan's rows
        body = [r.get("errors") for r in body["rows"] if isinstance(r, dict) and r.get("errors")]
    messages = _messages(body)
    unexplained = [m for m in messages if not NOT_EXPRESSIBLE.search(m)]
    assert not unexplained, (
        f"{case.operation.label}: a schema-valid request was refused: {unexplained}\n{case.as_curl_command()}"
    )


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
    database=None,
)
def test_api_conforms_to_its_schema(case, engineer_token):
    response = case.call_and_validate(
        headers={"Authorization": f"Bearer {engineer_token}"},
        excluded_checks=[positive_data_acceptance],
    )
    _accepts_valid_data(case, response)
