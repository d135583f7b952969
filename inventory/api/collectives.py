"""``POST /api/jobs/`` (job registration) and ``POST /api/collectives/`` (collective timings).

Both take the telemetry ingest's token (an ingest token may post them), its body cap and item
cap (``CABLETRACK_TELEMETRY_MAX_BODY_BYTES``, ``CABLETRACK_TELEMETRY_MAX_SAMPLES``), gzip, its
per-item policy (bad items refused by index, the others kept) and ``Idempotency-Key``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import msgspec
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, ParseError, UnsupportedMediaType
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from inventory.api.permissions import IngestPermission
from inventory.api.telemetry import _default_ts, _NoFormatNegotiation, _param, read_body, ts_parameter
from inventory.conf import app_settings
from inventory.core import strictjson
from inventory.core.collectives import formats
from inventory.services.collectives import (
    JobConflict,
    JobError,
    RankSpec,
    UnknownJob,
    collective_records_ingest,
    job_register,
    ranks_from_hosts,
)

MAX_HOSTS = 512
Gpu = Annotated[int, msgspec.Meta(ge=0, le=255)]
HostName = Annotated[str, msgspec.Meta(min_length=1, max_length=100)]


class _Rank(msgspec.Struct):
    rank: Annotated[int, msgspec.Meta(ge=0, le=1 << 24)]
    host: HostName
    gpu: Gpu
    local_rank: Annotated[int, msgspec.Meta(ge=0, le=255)] | None = None
    pid: Annotated[int, msgspec.Meta(ge=0, le=1 << 32)] | None = None


class _Job(msgspec.Struct):
    """Unknown fields are ignored, as the telemetry ingest ignores them."""

    job_id: Annotated[str, msgspec.Meta(min_length=1, max_length=100)]
    started_at: datetime | None = None
    ended_at: datetime | None = None
    name: Annotated[str, msgspec.Meta(max_length=200)] = ""
    hosts: Annotated[list[HostName], msgspec.Meta(max_length=MAX_HOSTS)] | None = None
    tasks_per_node: Annotated[int, msgspec.Meta(ge=1, le=64)] | None = None
    visible_devices: str | Annotated[list[Gpu], msgspec.Meta(max_length=64)] | None = None
    ranks: list[_Rank] | None = None


class _RankSerializer(serializers.Serializer):
    rank = serializers.IntegerField(min_value=0, max_value=1 << 24)
    host = serializers.CharField(min_length=1, max_length=100)
    gpu = serializers.IntegerField(min_value=0, max_value=255)
    local_rank = serializers.IntegerField(min_value=0, max_value=255, required=False)
    pid = serializers.IntegerField(min_value=0, max_value=1 << 32, required=False)


JOB_REQUEST = inline_serializer(
    "JobRegistration",
    {
        "job_id": serializers.CharField(min_length=1, max_length=100),
        "name": serializers.CharField(max_length=200, required=False),
        "started_at": serializers.DateTimeField(required=False),
        "ended_at": serializers.DateTimeField(required=False),
        "hosts": serializers.ListField(
            child=serializers.CharField(min_length=1, max_length=100), required=False, max_length=MAX_HOSTS
        ),
        "tasks_per_node": serializers.IntegerField(min_value=1, max_value=64, required=False),
        "visible_devices": serializers.CharField(
            required=False, help_text="CUDA_VISIBLE_DEVICES, e.g. 0,1,2,3"
        ),
        "ranks": serializers.ListField(child=_RankSerializer(), required=False),
    },
)


def _devices(v: str | list[int] | None) -> list[int] | None:
    if v is None or isinstance(v, list):
        return v
    try:
        return [int(x) for x in v.split(",") if x.strip()]
    except ValueError as exc:
        raise ParseError(
            "visible_devices: comma-separated GPU indexes (CUDA_VISIBLE_DEVICES), e.g. '0,1,2,3'"
        ) from exc


JOB_DESCRIPTION = """
Register a job's ranks (what a Slurm prolog or a Kubernetes operator knows): either
`{"job_id": "4242", "hosts": ["gpu-0001", "gpu-0002"], "tasks_per_node": 8,
"visible_devices": "0,1,2,3,4,5,6,7"}` (block distribution: rank = host index x tasks per node
+ local rank) or an explicit `"ranks": [{"rank": 0, "host": "gpu-0001", "gpu": 0, "local_rank": 0,
"pid": 12345}, ...]`. Each GPU's NIC port comes from the host's server model's GPU-to-NIC map.
Posting the same rank map again is 200 (pids, name and `ended_at` may be added); another map for a
known job is 409; an unknown host is 400. 201 when created.
"""


class JobRegisterView(APIView):
    permission_classes = [IngestPermission]
    parser_classes: list = []
    renderer_classes = [JSONRenderer]

    @extend_schema(
        operation_id="job_register",
        summary="Register a job: its ranks on hosts and GPUs",
        description=JOB_DESCRIPTION,
        request={"application/json": JOB_REQUEST},
        responses={
            200: OpenApiTypes.OBJECT,
            201: OpenApiTypes.OBJECT,
            400: OpenApiResponse(description="Not a job registration, or an unknown host"),
            409: OpenApiResponse(description="The job is registered with another rank map"),
        },
        tags=["collectives"],
    )
    def post(self, request):
        now = timezone.now()
        body = read_body(request, limit=app_settings.telemetry_max_body_bytes)
        try:
            j = msgspec.json.decode(body, type=_Job)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise ParseError(f"Not a job registration: {exc}") from exc
        duplicate = strictjson.duplicate_key(body)
        if duplicate is not None:
            raise ParseError(strictjson.duplicate_message(duplicate))
        for ts in (j.started_at, j.ended_at):
            if ts is not None and ts.tzinfo is None:
                raise ParseError("started_at/ended_at need a timezone (e.g. 2026-12-04T12:00:00Z)")
        if (j.ranks is None) == (j.hosts is None):
            raise ParseError("Choose at least one of hosts (with tasks_per_node) or ranks, not both.")
        try:
            if j.hosts is not None:
                if not j.tasks_per_node:
                    raise ParseError("Choose at least one task per node: tasks_per_node goes with hosts.")
                specs = ranks_from_hosts(
                    hosts=j.hosts,
                    tasks_per_node=j.tasks_per_node,
                    visible_devices=_devices(j.visible_devices),
                )
            else:
                if len(j.ranks) > app_settings.telemetry_max_samples:
                    raise ParseError("too many ranks for one registration")
                local: dict[str, int] = {}
                specs = []
                for r in sorted(j.ranks, key=lambda r: r.rank):
                    specs.append(
                        RankSpec(
                            rank=r.rank,
                            host=r.host,
                            gpu=r.gpu,
                            local_rank=r.local_rank if r.local_rank is not None else local.get(r.host, 0),
                            pid=r.pid,
                        )
                    )
                    local[r.host] = local.get(r.host, 0) + 1
            job, created = job_register(
                job_id=j.job_id,
                ranks=specs,
                started_at=j.started_at or now,
                ended_at=j.ended_at,
                name=j.name[:200],
                now=now,
            )
        except JobConflict as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        except JobError as exc:
            raise ParseError(str(exc)) from exc
        unmapped = job.ranks.filter(port__isnull=True).count()
        return Response(
            {
                "job_id": job.job_id,
                "world_size": job.world_size,
                "created": created,
                "ranks_without_nic": unmapped,
            },
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )


COLLECTIVES_DESCRIPTION = """
Collective timing records of a registered job (`?job=<job id>`, or `X-Cabletrack-Job`; cabletrack's
own JSON may name it in the body). `?format=`:

* `json` (default for `application/json`): `{"job": "4242", "records": [{"comm": "0x7f8c496ae9f661",
  "comm_name": "DP rail 4", "n_ranks": 8, "rank": 3, "coll": "AllReduce", "seq": 1407,
  "msg_bytes": 268435456, "exec_us": 15234.0, "busbw_gbs": 350.2, "ts": "2026-12-04T12:00:00Z",
  "host": "gpu-0004", "gpu": 3}]}` (`host`/`gpu` or `host`/`pid` optional: they place the rank).
* `inspector`: the NCCL Inspector plugin's JSON output, as written (objects one after another).
* `inspector-prom`: the Inspector's Prometheus textfile (`NCCL_INSPECTOR_PROM_DUMP=1`): each
  series (node, GPU, communicator name, collective, message-size bucket) is one operation of that
  GPU's rank, dated `?ts=` (the file's time; else the time of receipt).
* `nccl-tests`: the text output of an nccl-tests binary; it registers the job from its
  "# Using devices" lines when the job is unknown. `?ts=` dates it (else the time of receipt).

Per item: `unknown_rank` (the rank is on no registered GPU), `future_ts`, `too_old`, `invalid`,
`conflict` (same operation and rank, other values); a record posted again is a duplicate, stored once.
"""


class CollectivesIngestView(APIView):
    permission_classes = [IngestPermission]
    parser_classes: list = []
    renderer_classes = [JSONRenderer]
    content_negotiation_class = _NoFormatNegotiation

    @extend_schema(
        operation_id="collectives_ingest",
        summary="Import collective timing records (NCCL Inspector, nccl-tests, JSON)",
        description=COLLECTIVES_DESCRIPTION,
        parameters=[
            OpenApiParameter("format", OpenApiTypes.STR, enum=list(formats.FORMATS)),
            OpenApiParameter(
                "job",
                {"type": "string", "minLength": 1, "maxLength": 100},
                required=True,
                description="The job's id as registered (cabletrack's JSON may name it in the body instead)",
            ),
            ts_parameter(
                "nccl-tests: when the run ended; inspector-prom: the file's time (RFC 3339 or epoch s)"
            ),
            OpenApiParameter(
                "test", OpenApiTypes.STR, description="nccl-tests: the binary, when the output lacks it"
            ),
        ],
        request={
            "application/json": inline_serializer(
                "CollectiveRecords",
                {
                    "job": serializers.CharField(required=False, max_length=100),
                    "records": serializers.ListField(
                        child=serializers.JSONField(), help_text="Records (see above)"
                    ),
                },
            ),
            "text/plain": OpenApiTypes.STR,
        },
        responses={
            200: OpenApiTypes.OBJECT,
            400: OpenApiResponse(description="Body not readable as the format; nothing stored"),
            404: OpenApiResponse(description="The job is not registered"),
            413: OpenApiResponse(description="Body over the cap; nothing stored"),
            415: OpenApiResponse(description="Unknown format"),
        },
        tags=["collectives"],
    )
    def post(self, request):
        now = timezone.now()
        fmt = (request.query_params.get("format") or "json").strip().lower()
        if fmt not in formats.FORMATS:
            raise UnsupportedMediaType(
                fmt, detail=f"Unknown format {fmt!r}. Known: {', '.join(formats.FORMATS)}."
            )
        body = read_body(request, limit=app_settings.telemetry_max_body_bytes)
        cap = app_settings.telemetry_max_samples
        try:
            if fmt == "json":
                parsed = formats.parse_own(body, max_items=cap)
            elif fmt == "inspector":
                parsed = formats.parse_inspector(body, max_items=cap)
            elif fmt == "inspector-prom":
                parsed = formats.parse_inspector_prom(
                    body, max_items=cap, ts=_default_ts(request, now).astimezone(UTC)
                )
            else:
                parsed = formats.parse_nccl_tests(
                    body,
                    max_items=cap,
                    ts=_default_ts(request, now).astimezone(UTC),
                    test=_param(request, "test"),
                )
        except formats.FormatError as exc:
            raise ParseError(str(exc)) from exc
        job = _param(request, "job") or parsed.job
        if not job:
            raise ParseError('Name the job: ?job=<job id> (or X-Cabletrack-Job, or "job" in the JSON body).')
        try:
            result = collective_records_ingest(job_id=job, parsed=parsed, now=now)
        except UnknownJob as exc:
            raise NotFound(str(exc)) from exc
        except JobError as exc:  # an nccl-tests output naming hosts cabletrack does not know
            raise ParseError(str(exc)) from exc
        return Response(result.as_dict(), status=status.HTTP_200_OK)
