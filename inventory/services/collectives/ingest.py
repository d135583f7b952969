"""``collective_records_ingest``: store a batch of collective timings for a registered job.

Per item, as the telemetry ingest: a record whose time is too far ahead (``future_ts``) or older
than the raw retention (``too_old``), whose rank cannot be placed on a GPU (``unknown_rank``), or
that repeats a stored record with other values (``conflict``) is refused by itself with its
index; a record posted again is a ``duplicate`` and stored once; the others are kept. Set-based:
a fixed handful of queries per batch whatever its size; the rows are written, and repeats judged,
by ``ingest_store`` (one COPY on PostgreSQL).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cached_property

from django.db import transaction

from inventory.conf import app_settings
from inventory.core.collectives.formats import RANK_BY_GPU, Op, Parsed
from inventory.core.telemetry.decode import ItemError
from inventory.models import CollectiveJob, Communicator, CommunicatorRank, JobRank
from inventory.services.collectives.ingest_store import records_store
from inventory.services.collectives.jobs import RankSpec, job_register


class UnknownJob(LookupError):
    """The job is not registered (``POST /api/jobs/`` first)."""


@dataclass
class CollectiveIngestResult:
    received: int = 0
    stored: int = 0
    duplicates: int = 0
    errors: list[ItemError] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "received": self.received,
            "stored": self.stored,
            "duplicates": self.duplicates,
            "rejected": len(self.errors),
            "errors": [e.as_dict() for e in sorted(self.errors, key=lambda e: e.index)],
        }


def _job_from_devices(job_id: str, parsed: Parsed, now: datetime) -> CollectiveJob:
    """An nccl-tests run says itself where each rank ran ("# Using devices"): register it."""
    seen: dict[str, int] = {}
    specs = []
    for rank, host, pid, device in sorted(parsed.devices):
        specs.append(RankSpec(rank=rank, host=host, local_rank=seen.get(host, 0), gpu=device, pid=pid))
        seen[host] = seen.get(host, 0) + 1
    first = min((op.ts for _i, op in parsed.ops), default=now)
    job, _created = job_register(job_id=job_id, ranks=specs, started_at=first, now=now, name="nccl-tests")
    return job


class _JobRanks:
    """The job's ranks by rank, by (host, GPU) and by (host, pid): (job rank id, rank), read once
    and only when a record must be placed (a batch whose communicators' members are all known
    reads none)."""

    def __init__(self, job: CollectiveJob):
        self.job = job

    @cached_property
    def _rows(self) -> list[tuple[int, int, int, int | None, str]]:
        return list(
            JobRank.objects.filter(job=self.job).values_list("id", "rank", "gpu", "pid", "host__name")
        )

    @cached_property
    def by_rank(self) -> dict[int, tuple[int, int]]:
        return {rank: (pk, rank) for pk, rank, _g, _p, _h in self._rows}

    @cached_property
    def by_gpu(self) -> dict[tuple[str, int], tuple[int, int]]:
        return {(host, gpu): (pk, rank) for pk, rank, gpu, _p, host in self._rows}

    @cached_property
    def by_pid(self) -> dict[tuple[str, int], tuple[int, int]]:
        return {(host, pid): (pk, rank) for pk, rank, _g, pid, host in self._rows if pid is not None}


def _communicators(job: CollectiveJob, ops: list[tuple[int, Op]]) -> dict[str, tuple[int, int]]:
    """comm id -> (primary key, number of ranks) of the batch's communicators, the new ones
    created (one read; an insert and a re-read only when some are new)."""
    names = {op.comm: op for _i, op in ops}  # a new one is described by its last record

    def read() -> dict[str, tuple[int, int]]:
        return {
            c: (pk, n)
            for c, pk, n in Communicator.objects.filter(job=job, comm_id__in=list(names)).values_list(
                "comm_id", "id", "n_ranks"
            )
        }

    comms = read()
    if len(comms) < len(names):
        Communicator.objects.bulk_create(
            [
                Communicator(job=job, comm_id=c, name=op.comm_name, n_ranks=op.n_ranks, n_nodes=op.n_nodes)
                for c, op in names.items()
                if c not in comms
            ],
            ignore_conflicts=True,
        )
        comms = read()
    return comms


@transaction.atomic
def collective_records_ingest(*, job_id: str, parsed: Parsed, now: datetime) -> CollectiveIngestResult:
    out = CollectiveIngestResult(received=parsed.received, errors=list(parsed.errors))
    job = CollectiveJob.objects.filter(job_id=job_id).first()
    if job is None:
        if not parsed.devices:
            raise UnknownJob(f"job {job_id!r} is not registered: POST /api/jobs/ first (hosts and ranks)")
        job = _job_from_devices(job_id, parsed, now)
    latest = now + timedelta(seconds=app_settings.telemetry_max_future_seconds)
    earliest = now - timedelta(days=app_settings.telemetry_raw_retention_days)
    ops: list[tuple[int, Op]] = []
    for i, op in parsed.ops:
        if op.ts > latest:
            out.errors.append(
                ItemError(i, "future_ts", f"ts {op.ts.isoformat()} is ahead of the server's clock")
            )
        elif op.ts < earliest:
            out.errors.append(
                ItemError(i, "too_old", f"ts {op.ts.isoformat()} is older than the raw retention")
            )
        else:
            ops.append((i, op))
    if not ops:
        return out
    comms = _communicators(job, ops)

    # Ranks: the communicator's rank -> the job's rank (and so the host, GPU and NIC port).
    ranks = _JobRanks(job)
    known = set(
        CommunicatorRank.objects.filter(communicator_id__in=[pk for pk, _n in comms.values()]).values_list(
            "communicator_id", "rank"
        )
    )
    new_members: dict[tuple[int, int], int] = {}
    good: list[tuple[int, Op, int]] = []
    for i, op in ops:
        cpk, n_ranks = comms[op.comm]
        if op.rank == RANK_BY_GPU:  # named by host and GPU only: its job rank is its rank
            placed = ranks.by_gpu.get((op.host, op.gpu))
            if placed is None:
                out.errors.append(
                    ItemError(i, "unknown_rank", f"GPU {op.gpu} of {op.host} runs no rank of job {job_id}")
                )
                continue
            op.rank = placed[1]
        if op.rank >= 0 and (cpk, op.rank) not in known and (cpk, op.rank) not in new_members:
            placed = None
            if op.host is not None and op.gpu is not None:
                placed = ranks.by_gpu.get((op.host, op.gpu))
            elif op.host is not None and op.pid is not None and (op.host, op.pid) in ranks.by_pid:
                placed = ranks.by_pid[(op.host, op.pid)]
            elif n_ranks == job.world_size:
                placed = ranks.by_rank.get(op.rank)
            if placed is None:
                out.errors.append(
                    ItemError(
                        i,
                        "unknown_rank",
                        f"rank {op.rank} of communicator {op.comm} ({op.host or '?'} pid {op.pid}) is on no "
                        "registered GPU: register the ranks' pids, or post host and gpu with each record",
                    )
                )
                continue
            new_members[(cpk, op.rank)] = placed[0]
        good.append((i, op, cpk))
    if new_members:
        CommunicatorRank.objects.bulk_create(
            [CommunicatorRank(communicator_id=c, rank=r, job_rank_id=j) for (c, r), j in new_members.items()],
            ignore_conflicts=True,
        )
    out.stored, duplicates, errors = records_store(good)
    out.duplicates += duplicates
    out.errors += errors
    return out
