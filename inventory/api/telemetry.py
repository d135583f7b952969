"""``POST /api/telemetry/``: bulk telemetry import, and the reconciliation report API.

The view reads the body itself (with its own cap, ``CABLETRACK_TELEMETRY_MAX_BODY_BYTES``;
Django's ``DATA_UPLOAD_MAX_MEMORY_SIZE`` is far below a 5,000-sample batch), picks the
decoder from the ``format`` query parameter or the Content-Type, and calls one service.
"""

from __future__ import annotations

import zlib
from datetime import UTC, datetime, timedelta

from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.exceptions import ParseError, UnsupportedMediaType
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from inventory.api.errors import PayloadTooLarge
from inventory.api.permissions import IngestPermission
from inventory.conf import app_settings
from inventory.core.perf import gc_paused
from inventory.core.telemetry import adapters
from inventory.core.telemetry.decode import (
    BodyError,
    decode_json,
    decode_ndjson,
    decode_objects,
    too_many,
)
from inventory.models import TelemetryIngestBatch
from inventory.selectors.telemetry.pipeline import pipeline_state
from inventory.services.telemetry.ingest import telemetry_ingest

JSON_TYPES = {"application/json"}
NDJSON_TYPES = {"application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines"}
PROMETHEUS_TYPES = {"application/openmetrics-text"}
TEXT_TYPES = {"text/plain"}
XML_TYPES = {"application/xml", "text/xml"}  # native XML outputs (Junos RPC replies), with ?format=


def ts_parameter(description: str) -> OpenApiParameter:
    """The ``?ts=`` query parameter of the ingest endpoints: RFC 3339 or epoch seconds."""
    return OpenApiParameter(
        "ts",
        {
            "anyOf": [
                {"type": "string", "format": "date-time"},
                {"type": "string", "pattern": r"^\d{1,10}(\.\d+)?$"},
            ]
        },
        description=description,
    )


class _NoFormatNegotiation(DefaultContentNegotiation):
    """``?format=`` names the input adapter here, not an output renderer: always answer JSON."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


def read_body(request, *, limit: int) -> bytes:
    """The raw body, at most ``limit`` bytes (413 beyond), gunzipped when so encoded."""
    django_request = request._request
    try:
        length = int(django_request.META.get("CONTENT_LENGTH") or 0)
    except ValueError as exc:
        raise ParseError("Invalid Content-Length.") from exc
    if length > limit:
        raise PayloadTooLarge(f"The body is {length:,} bytes; this endpoint accepts at most {limit:,}.")
    chunks = []
    total = 0
    while True:
        chunk = django_request.read(min(1 << 20, limit + 1 - total)) if total <= limit else b""
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise PayloadTooLarge(f"The body is larger than {limit:,} bytes.")
    body = b"".join(chunks)
    encoding = (django_request.META.get("HTTP_CONTENT_ENCODING") or "identity").strip().lower()
    if encoding in ("gzip", "x-gzip"):
        body = _gunzip(body, limit)
    elif encoding != "identity":
        raise UnsupportedMediaType(
            encoding, detail=f"Unsupported Content-Encoding {encoding!r} (gzip or none)."
        )
    return body


def _gunzip(data: bytes, limit: int) -> bytes:
    """Every member of a gzip body (``cat a.gz b.gz`` is one valid gzip stream, as RFC 1952 and
    ``gzip -d`` read it), at most ``limit`` bytes in all; a truncated member is a 400."""
    out, total = [], 0
    while data.strip(b"\0"):  # trailing NUL padding after the last member is allowed, as gzip does
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            part = d.decompress(data, limit + 1 - total)
        except zlib.error as exc:
            raise ParseError(f"Content-Encoding gzip, but the body is not gzip data: {exc}") from exc
        total += len(part)
        if total > limit or d.unconsumed_tail:
            raise PayloadTooLarge(f"The decompressed body is larger than {limit:,} bytes.")
        if not d.eof:
            raise ParseError("Content-Encoding gzip, but the gzip data ends early (truncated).")
        out.append(part)
        data = d.unused_data
    return b"".join(out)


def _param(request, name: str) -> str | None:
    v = request.query_params.get(name) or request.META.get(
        "HTTP_X_CABLETRACK_" + name.upper().replace("-", "_")
    )
    return v.strip() if v else None


def _default_ts(request, now: datetime) -> datetime:
    """``?ts=`` (or ``X-Cabletrack-Ts``), read whatever the format, so a bad one is a 400 even
    where the body carries its own times."""
    if request.query_params.get("ts") == "":
        raise ParseError("ts: give an RFC 3339 time or epoch seconds, or leave it out.")
    raw = _param(request, "ts")
    if not raw:
        return now
    try:
        if raw.replace(".", "", 1).isdigit():
            return datetime.fromtimestamp(float(raw), UTC)
        ts = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except (ValueError, OverflowError) as exc:
        raise ParseError(f"ts: not an RFC 3339 time or epoch seconds: {raw!r}") from exc
    if ts.tzinfo is None:
        raise ParseError("ts: needs a timezone (e.g. 2026-11-29T12:00:00Z).")
    return ts


class ItemErrorSerializer(serializers.Serializer):
    index = serializers.IntegerField(help_text="Position of the item in the batch (0-based)")
    code = serializers.ChoiceField(
        choices=[
            "malformed",
            "invalid",
            "no_data",
            "future_ts",
            "too_old",
            "unknown_device",
            "unknown_port",
            "conflict",
        ]
    )
    message = serializers.CharField()
    device = serializers.CharField(required=False)
    port = serializers.CharField(required=False)


class IgnoredSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="Occurrences of source fields not used")
    fields = serializers.DictField(
        child=serializers.IntegerField(), help_text="Source field name -> occurrences"
    )


class IngestResultSerializer(serializers.Serializer):
    received = serializers.IntegerField(help_text="Items in the batch")
    stored = serializers.IntegerField(help_text="New samples stored")
    duplicates = serializers.IntegerField(help_text="Items identical to a stored sample (not stored again)")
    rejected = serializers.IntegerField(help_text="Items refused, each listed in errors")
    errors = ItemErrorSerializer(many=True)
    ignored = IgnoredSerializer(
        help_text="Fields of a native output that no sample field takes (counted and named, not stored)"
    )


INGEST_DESCRIPTION = (
    """
Bulk telemetry import. Bodies:

* `application/json`: `{"samples": [{"device": "leaf-01", "port": "Ethernet1/1",
  "ts": "2026-11-29T12:00:00Z", "fec_corrected_codewords": 1234, ...}, ...]}` (fields as in
  the README; counters are cumulative unsigned 64-bit; `ts` RFC 3339 with a zone, or epoch s).
* `application/x-ndjson` (also `application/jsonl`): one sample object per line.
* Native collector outputs, chosen with `?format=` (Content-Type `text/plain`,
  `application/json` or `application/xml` as the tool prints it): """
    + ", ".join(f"`{k}`" for k in adapters.FORMATS)
    + """.
  Prometheus text (`text/plain; version=0.0.4` or `application/openmetrics-text`) needs no
  `format`. Native outputs that do not name the device (or port) take it from `?device=` /
  `?port=` (or the headers `X-Cabletrack-Device` / `X-Cabletrack-Port`); their time is `?ts=`
  (`X-Cabletrack-Ts`), else the payload's own timestamp, else the time of receipt.

`Content-Encoding: gzip` is accepted. The body cap (after decompression) is
`CABLETRACK_TELEMETRY_MAX_BODY_BYTES` (32 MiB by default), at most
`CABLETRACK_TELEMETRY_MAX_SAMPLES` items per request.

**Per-item policy.** Items are validated one by one. An item with an unknown device or port, a
bad type or range (a counter above 2^64-1, a NUL character in a text field, a `ts` that is no
time: epoch seconds at or before 1970-01-02, or a time past the calendar in UTC), a timestamp
more than `CABLETRACK_TELEMETRY_MAX_FUTURE_SECONDS` (300 s) ahead (`future_ts`) or older than
the raw retention `CABLETRACK_TELEMETRY_RAW_RETENTION_DAYS` (14 days; `too_old`: it would be
deleted at once and must not rewrite older rollups), an item that carries no reading at all
(`no_data`: device, port and time only, or a native record none of whose fields is one
cabletrack stores), or a malformed shape is refused and listed in `errors` with its `index` and
a `code`; **the valid items of the batch are kept** and the response is 200. **Nothing is
dropped in silence**: `ignored` counts and names the fields of a native output that no sample
field takes (not stored). A native body that plainly has another known format's shape is
refused (400) naming that format ("This is SONiC transceiver DOM output ...: use
?format=sonic-dom"); a SONiC period output (`show ... -p N`: increases over N seconds, not
counters) is refused (400). Re-posting a batch stores nothing twice (`duplicates`); the same port and
timestamp with different values is refused per item (`conflict`). Request-level problems write
nothing: 400 (body not decodable as the chosen format, more items than the cap, JSON nested too
deeply), 413 (body over the cap), 415 (Content-Type or `format` not accepted). The item cap is
checked before any sample is built.
"""
)


class TelemetryIngestView(APIView):
    permission_classes = [IngestPermission]
    parser_classes: list = []
    renderer_classes = [JSONRenderer]
    content_negotiation_class = _NoFormatNegotiation

    @extend_schema(
        operation_id="telemetry_ingest",
        summary="Import a batch of telemetry samples",
        description=INGEST_DESCRIPTION,
        parameters=[
            OpenApiParameter("format", OpenApiTypes.STR, enum=["samples", "ndjson", *adapters.FORMATS]),
            OpenApiParameter("device", OpenApiTypes.STR, description="Device name for native outputs"),
            OpenApiParameter("port", OpenApiTypes.STR, description="Port name for native outputs"),
            ts_parameter("Sample time for native outputs: RFC 3339 with a zone, or epoch seconds"),
        ],
        request={
            "application/json": inline_serializer(
                "TelemetryBatch",
                {
                    # Any items: one that is not a sample object is refused by itself (per-item
                    # policy), so the schema does not refuse the batch for it.
                    "samples": serializers.ListField(
                        child=serializers.JSONField(), help_text="Sample objects (see above)"
                    )
                },
            ),
            "application/x-ndjson": OpenApiTypes.STR,
            "text/plain": OpenApiTypes.STR,
        },
        responses={
            200: IngestResultSerializer,
            400: OpenApiResponse(description="Malformed body; nothing stored"),
            401: OpenApiResponse(description="No credentials"),
            403: OpenApiResponse(description="Token or role may not post telemetry"),
            413: OpenApiResponse(description="Body over the cap; nothing stored"),
            415: OpenApiResponse(description="Content-Type or format not accepted; nothing stored"),
        },
        examples=[
            OpenApiExample(
                "Two samples",
                value={
                    "samples": [
                        {
                            "device": "leaf-01",
                            "port": "Ethernet1/1",
                            "ts": "2026-11-29T12:00:00Z",
                            "fec_corrected_codewords": 123456,
                            "fec_uncorrectable_codewords": 0,
                            "fec_corrected_bits": 130000,
                            "fec_symbol_errors": 124000,
                        }
                    ]
                },
                request_only=True,
            )
        ],
        tags=["telemetry"],
    )
    def post(self, request):
        now = timezone.now()
        default_ts = _default_ts(request, now)
        fmt = (request.query_params.get("format") or "").strip().lower()
        ctype = (request.content_type or "").split(";")[0].strip().lower()
        if fmt and fmt not in ("samples", "json", "ndjson") and fmt not in adapters.FORMATS:
            raise UnsupportedMediaType(
                fmt, detail=f"Unknown format {fmt!r}. Known: {', '.join(adapters.FORMATS)}."
            )
        if not fmt:
            if ctype in JSON_TYPES:
                fmt = "samples"
            elif ctype in NDJSON_TYPES:
                fmt = "ndjson"
            elif ctype in PROMETHEUS_TYPES or (
                ctype in TEXT_TYPES and "version=0.0.4" in request.content_type
            ):
                fmt = "prometheus"
            else:
                raise UnsupportedMediaType(
                    ctype or "none",
                    detail=(
                        f"Content-Type {ctype or '(none)'!r} is not accepted: send application/json, "
                        "application/x-ndjson, Prometheus text, or a native output with ?format=."
                    ),
                )
        elif ctype not in JSON_TYPES | NDJSON_TYPES | PROMETHEUS_TYPES | TEXT_TYPES | XML_TYPES:
            raise UnsupportedMediaType(
                ctype or "none", detail=f"Content-Type {ctype or '(none)'!r} is not accepted."
            )
        body = read_body(request, limit=app_settings.telemetry_max_body_bytes)
        with gc_paused():  # a batch decoded and stored: tens of thousands of acyclic containers
            return self._ingest(request, fmt, body, now, default_ts)

    def _ingest(self, request, fmt: str, body: bytes, now: datetime, default_ts: datetime) -> Response:
        window = {
            "max_future": timedelta(seconds=app_settings.telemetry_max_future_seconds),
            "max_age": timedelta(days=app_settings.telemetry_raw_retention_days),
        }
        max_samples = app_settings.telemetry_max_samples
        report = adapters.Report()
        try:
            if fmt in ("samples", "json"):
                decoded = decode_json(body, now=now, max_samples=max_samples, **window)
            elif fmt == "ndjson":
                decoded = decode_ndjson(body, now=now, max_samples=max_samples, **window)
            else:
                ctx = adapters.Context(
                    device=_param(request, "device"),
                    port=_param(request, "port"),
                    ts=default_ts,
                    max_items=max_samples,
                    report=report,
                )
                objs = adapters.parse(fmt, body, ctx)
                if len(objs) > max_samples:
                    raise too_many(max_samples)
                decoded = decode_objects(objs, now=now, **window)
        except (BodyError, adapters.AdapterError) as exc:
            raise ParseError(str(exc)) from exc
        result = telemetry_ingest(decoded=decoded, now=now)
        return Response({**result.as_dict(), "ignored": report.as_dict()}, status=status.HTTP_200_OK)


class TelemetryPipelineView(APIView):
    """The rollup queue and the last retest sweep: what waits, what was set aside and why."""

    queryset = TelemetryIngestBatch.objects.none()  # reading it needs the queue's view permission
    renderer_classes = [JSONRenderer]

    @extend_schema(
        operation_id="telemetry_pipeline",
        summary="The telemetry rollup queue and the retest sweep: waiting, stalled, set aside",
        description=(
            "`rollup.waiting`: ingest batches not rolled up yet; `rollup.oldest_waiting_s`: how long the "
            "oldest has waited (it grows while the pipeline is stalled; alert on it); `rollup.set_aside_rows`: "
            "ports whose rollup failed, with the error, the number of tries and the next retry (backoff "
            "from `CABLETRACK_TELEMETRY_ROLLUP_RETRY_SECONDS` doubling to "
            "`CABLETRACK_TELEMETRY_ROLLUP_RETRY_MAX_SECONDS`); the other ports are rolled up all the same. "
            "`retest_sweep.set_aside`: cables the last sweep could not date (kept as they were)."
        ),
        responses={200: OpenApiTypes.OBJECT},
        tags=["telemetry"],
    )
    def get(self, request):
        return Response(pipeline_state(now=timezone.now()).as_dict())
