"""``collective_records_ingest``: store a batch of collective timings for a registered job.

Per item, as the telemetry ingest: a record whose time is too far ahead (``future_ts``) or older
than the raw retention (``too_old``), whose rank cannot be placed on a GPU (``unknown_rank``), or
that repeats a stored record with other values (``conflict``) is refused by itself with its
index; a record posted again is a ``duplicate`` and stored once; the others are kept. Set-based:
a fixed handful of queries per batch whatever its size.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import transaction

from inventory.conf import app_settings
from inventory.core.collectives.formats import RANK_BY_GPU, Op, Parsed
from inventory.core.telemetry.decode import ItemError
from inventory.models import CollectiveJob, CollectiveRecord, Communicator, CommunicatorRank, JobRank
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

    # Communicators: one read, one insert of the new ones, one re-read.
    names = {op.comm: op for _i, op in ops}
    Communicator.objects.bulk_create(
        [
            Communicator(job=job, comm_id=c, name=op.comm_name, n_ranks=op.n_ranks, n_nodes=op.n_nodes)
            for c, op in names.items()
        ],
        ignore_conflicts=True,
    )
    comms = {c.comm_id: c for c in Communicator.objects.filter(job=job, comm_id__in=list(names))}

    # Ranks: the communicator's rank -> the job's rank (and so the host, GPU and NIC port).
    ranks = list(
        JobRank.objects.filter(job=job)
        .select_related("host")
        .only("id", "rank", "host_id", "gpu", "pid", "host__name")
    )
    by_rank = {r.rank: r for r in ranks}
    by_gpu = {(r.host.name, r.gpu): r for r in ranks}
    by_pid = {(r.host.name, r.pid): r for r in ranks if r.pid is not None}
    known = {
        (cid, rank): jr
        for cid, rank, jr in CommunicatorRank.objects.filter(communicator__in=comms.values()).values_list(
            "communicator_id", "rank", "job_rank_id"
        )
    }
    new_members: dict[tuple[int, int], int] = {}
    good: list[tuple[int, Op, Communicator]] = []
    for i, op in ops:
        comm = comms[op.comm]
        if op.rank == RANK_BY_GPU:  # named by host and GPU only: its job rank is its rank
            jr = by_gpu.get((op.host, op.gpu))
            if jr is None:
                out.errors.append(
                    ItemError(i, "unknown_rank", f"GPU {op.gpu} of {op.host} runs no rank of job {job_id}")
                )
                continue
            op.rank = jr.rank
        if op.rank >= 0 and (comm.pk, op.rank) not in known and (comm.pk, op.rank) not in new_members:
            jr = None
            if op.host is not None and op.gpu is not None:
                jr = by_gpu.get((op.host, op.gpu))
            elif op.host is not None and op.pid is not None and (op.host, op.pid) in by_pid:
                jr = by_pid[(op.host, op.pid)]
            elif comm.n_ranks == job.world_size:
                jr = by_rank.get(op.rank)
            if jr is None:
                out.errors.append(
                    ItemError(
                        i,
                        "unknown_rank",
                        f"rank {op.rank} of communicator {op.comm} ({op.host or '?'} pid {op.pid}) is on no "
                        "registered GPU: register the ranks' pids, or post host and gpu with each record",
                    )
                )
                continue
            new_members[(comm.pk, op.rank)] = jr.pk
        good.append((i, op, comm))
    if new_members:
        CommunicatorRank.objects.bulk_create(
            [CommunicatorRank(communicator_id=c, rank=r, job_rank_id=j) for (c, r), j in new_members.items()],
            ignore_conflicts=True,
        )

    # Repeats: within the batch and against the stored records (one read).
    def key(op: Op, comm: Communicator) -> tuple:
        return (comm.pk, op.rank, op.seq, op.coll)

    def values(op: Op) -> tuple:
        return (op.msg_bytes, round(op.exec_us, 3))

    stored = {
        (c, r, s, k): (m, round(x, 3))
        for c, r, s, k, m, x in CollectiveRecord.objects.filter(
            communicator_id__in=[c.pk for c in comms.values()], seq__in={op.seq for _i, op, _c in good}
        ).values_list("communicator_id", "rank", "seq", "coll", "msg_bytes", "exec_us")
    }
    rows = []
    for i, op, comm in good:
        k = key(op, comm)
        if k in stored:
            if stored[k] == values(op):
                out.duplicates += 1
            else:
                out.errors.append(
                    ItemError(
                        i, "conflict", f"operation {op.seq} of rank {op.rank} was stored with other values"
                    )
                )
            continue
        stored[k] = values(op)
        rows.append(
            CollectiveRecord(
                communicator=comm,
                rank=op.rank,
                coll=op.coll,
                seq=op.seq,
                msg_bytes=op.msg_bytes,
                exec_us=op.exec_us,
                busbw_gbs=op.busbw_gbs,
                algbw_gbs=op.algbw_gbs,
                ts=op.ts,
                source=op.source,
            )
        )
    CollectiveRecord.objects.bulk_create(rows, batch_size=5000, ignore_conflicts=True)
    out.stored = len(rows)
    return out
