"""``job_register``: a job's ranks on hosts and GPUs, and each GPU's NIC port from its server
model's GPU-to-NIC map (``GpuNicMap``, data). What a Slurm prolog or a Kubernetes operator posts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction

from inventory.models import CollectiveJob, Device, GpuNicMap, JobRank, Port


class JobError(ValueError):
    """The registration cannot be accepted as sent (a 400), with the reason."""


class JobConflict(JobError):
    """The job is registered already with another rank map (a 409)."""


@dataclass(frozen=True)
class RankSpec:
    rank: int
    host: str
    local_rank: int
    gpu: int
    pid: int | None = None


def ranks_from_hosts(
    *, hosts: list[str], tasks_per_node: int, visible_devices: list[int] | None
) -> list[RankSpec]:
    """Slurm's default block distribution: rank = host index x tasks per node + local rank, the
    local rank's GPU the local-rank-th of the visible devices (``CUDA_VISIBLE_DEVICES``)."""
    devices = visible_devices if visible_devices is not None else list(range(tasks_per_node))
    if len(devices) < tasks_per_node:
        raise JobError(
            f"Choose at least {tasks_per_node} visible_devices: it names {len(devices)} GPUs for {tasks_per_node} tasks per node"
        )
    return [
        RankSpec(rank=h * tasks_per_node + k, host=host, local_rank=k, gpu=devices[k])
        for h, host in enumerate(hosts)
        for k in range(tasks_per_node)
    ]


@transaction.atomic
def job_register(
    *,
    job_id: str,
    ranks: list[RankSpec],
    started_at: datetime,
    now: datetime,
    name: str = "",
    ended_at: datetime | None = None,
) -> tuple[CollectiveJob, bool]:
    """Register a job (or confirm it: the same rank map again changes only name and end time).
    Returns (job, created). Unknown hosts, duplicate ranks or GPUs are refused by name."""
    if not ranks:
        raise JobError("Choose at least one rank: a job needs one.")
    if len({r.rank for r in ranks}) != len(ranks):
        raise JobError("rank and job must make a unique set: a rank is named twice")
    if len({(r.host, r.gpu) for r in ranks}) != len(ranks):
        raise JobError("host and gpu must make a unique set: a GPU of a host is given to two ranks")
    if sorted(r.rank for r in ranks) != list(range(len(ranks))):
        raise JobError(f"ranks must make a unique set numbered 0..{len(ranks) - 1}, each once")
    names = {r.host for r in ranks}
    hosts = {d.name: d for d in Device.objects.filter(name__in=names, retired_at__isnull=True)}
    unknown = sorted(names - set(hosts))
    if unknown:
        raise JobError(f"No host named {', '.join(unknown[:10])}{' ...' if len(unknown) > 10 else ''}")
    nic = {
        (m.device_model, m.gpu): m
        for m in GpuNicMap.objects.filter(device_model__in={d.model for d in hosts.values()})
    }
    wanted = {
        (hosts[r.host].pk, nic[(hosts[r.host].model, r.gpu)].port_name)
        for r in ranks
        if (hosts[r.host].model, r.gpu) in nic
    }
    ports = {
        (p.device_id, p.name): p.pk
        for p in Port.objects.filter(
            device_id__in={d for d, _n in wanted}, name__in={n for _d, n in wanted}, retired_at__isnull=True
        ).only("id", "device_id", "name")
    }
    rows = []
    for r in ranks:
        d = hosts[r.host]
        m = nic.get((d.model, r.gpu))
        rows.append(
            JobRank(
                rank=r.rank,
                host=d,
                local_rank=r.local_rank,
                gpu=r.gpu,
                pid=r.pid,
                port_id=ports.get((d.pk, m.port_name)) if m else None,
                rail=m.rail if m else None,
            )
        )
    job = CollectiveJob.objects.select_for_update().filter(job_id=job_id).first()
    if job is not None:
        have = set(JobRank.objects.filter(job=job).values_list("rank", "host_id", "gpu"))
        if have != {(r.rank, r.host.pk, r.gpu) for r in rows}:
            raise JobConflict(f"job {job_id} is registered already with another rank map")
        pids = {r.rank: r.pid for r in rows if r.pid is not None}
        if pids:
            JobRank.objects.bulk_update(
                [
                    JobRank(pk=jr.pk, pid=pids[jr.rank])
                    for jr in JobRank.objects.filter(job=job, rank__in=list(pids))
                ],
                ["pid"],
            )
        job.name = name or job.name
        job.ended_at = ended_at or job.ended_at
        job.save(update_fields=["name", "ended_at"])
        return job, False
    job = CollectiveJob.objects.create(
        job_id=job_id,
        name=name,
        world_size=len(rows),
        started_at=started_at,
        ended_at=ended_at,
        registered_at=now,
    )
    for r in rows:
        r.job = job
    JobRank.objects.bulk_create(rows)
    return job, True
