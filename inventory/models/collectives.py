"""Collective timings: jobs, their ranks on GPUs, communicators and one row per operation.

A rank maps to (host, GPU) from the job's registration (what a Slurm prolog or a Kubernetes
operator posts), the GPU to its NIC port from the server model's ``GpuNicMap`` (data, not code),
the NIC port to its link and cables from the plant.
"""

from django.db import models
from django.db.models import Q


class GpuNicMap(models.Model):
    """Which NIC port (by its name on the device) and rail serve GPU ``gpu`` of a server model.

    ``device_model`` is ``Device.model`` (``SYS-821GE-TNHR``, ``DGX H100``): every node of that
    model shares the map. On a DGX H100 the ``mlx5_N`` names do not follow the GPU order; the
    map holds the interface's recorded port name, which its aliases resolve.
    """

    device_model = models.CharField(max_length=100)
    gpu = models.PositiveSmallIntegerField(help_text="CUDA/NVML device index on the host")
    port_name = models.CharField(max_length=64, help_text="The NIC port's recorded name on the node")
    rail = models.PositiveSmallIntegerField(help_text="Rail number (1-based, as the leaves are named)")

    class Meta:
        ordering = ["device_model", "gpu"]
        constraints = [
            models.UniqueConstraint(fields=["device_model", "gpu"], name="gpunicmap_unique_gpu"),
        ]

    def __str__(self) -> str:
        return f"{self.device_model} GPU{self.gpu} -> {self.port_name} (rail {self.rail})"


class CollectiveJob(models.Model):
    """A job as its launcher registered it (``POST /api/jobs/``)."""

    job_id = models.CharField(max_length=100, unique=True, help_text="Scheduler's id (SLURM_JOB_ID)")
    name = models.CharField(max_length=200, blank=True)
    world_size = models.PositiveIntegerField()
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    registered_at = models.DateTimeField()

    class Meta:
        ordering = ["-started_at", "-id"]

    def __str__(self) -> str:
        return f"job {self.job_id}"


class JobRank(models.Model):
    """One rank of a job: on which host and GPU it runs, and the NIC port that GPU uses."""

    job = models.ForeignKey(CollectiveJob, on_delete=models.CASCADE, related_name="ranks")
    rank = models.PositiveIntegerField()
    host = models.ForeignKey("inventory.Device", on_delete=models.PROTECT, related_name="+")
    local_rank = models.PositiveSmallIntegerField()
    gpu = models.PositiveSmallIntegerField()
    pid = models.PositiveIntegerField(null=True, blank=True)
    port = models.ForeignKey(
        "inventory.Port",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The GPU's NIC port (None when the server model has no GPU-to-NIC map)",
    )
    rail = models.PositiveSmallIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["job_id", "rank"]
        constraints = [
            models.UniqueConstraint(fields=["job", "rank"], name="jobrank_unique_rank"),
            models.UniqueConstraint(fields=["job", "host", "gpu"], name="jobrank_unique_gpu"),
        ]

    def __str__(self) -> str:
        return f"{self.job.job_id} rank {self.rank}"


class Communicator(models.Model):
    """An NCCL communicator of a job (the Inspector's ``header.id``), or an nccl-tests run."""

    job = models.ForeignKey(CollectiveJob, on_delete=models.CASCADE, related_name="communicators")
    comm_id = models.CharField(max_length=64, help_text="NCCL commHash (0x...) or the run's name")
    name = models.CharField(max_length=128, blank=True)
    n_ranks = models.PositiveIntegerField()
    n_nodes = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["job_id", "comm_id"]
        constraints = [models.UniqueConstraint(fields=["job", "comm_id"], name="communicator_unique")]

    def __str__(self) -> str:
        return self.name or self.comm_id


class CommunicatorRank(models.Model):
    """Communicator rank -> job rank (a communicator of a subset of ranks numbers them anew)."""

    communicator = models.ForeignKey(Communicator, on_delete=models.CASCADE, related_name="members")
    rank = models.PositiveIntegerField()
    job_rank = models.ForeignKey(JobRank, on_delete=models.CASCADE, related_name="+")

    class Meta:
        ordering = ["communicator_id", "rank"]
        constraints = [
            models.UniqueConstraint(fields=["communicator", "rank"], name="commrank_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.communicator_id}:{self.rank}"


class CollectiveRecord(models.Model):
    """One operation of one communicator as one rank saw it (``rank`` -1: the whole
    communicator, as nccl-tests reports it). Keyed (communicator, rank, seq, coll): a record
    posted again is stored once."""

    communicator = models.ForeignKey(Communicator, on_delete=models.CASCADE, related_name="records")
    rank = models.IntegerField()
    coll = models.CharField(max_length=32)
    seq = models.BigIntegerField(help_text="Operation sequence number (coll_sn)")
    msg_bytes = models.BigIntegerField()
    exec_us = models.FloatField()
    busbw_gbs = models.FloatField(null=True, blank=True)
    algbw_gbs = models.FloatField(null=True, blank=True)
    ts = models.DateTimeField(help_text="When the operation ended")
    source = models.CharField(max_length=16)

    class Meta:
        ordering = ["communicator_id", "seq", "rank"]
        constraints = [
            models.UniqueConstraint(fields=["communicator", "rank", "seq", "coll"], name="collrecord_unique"),
            models.CheckConstraint(condition=Q(exec_us__gte=0), name="collrecord_exec_nonneg"),
        ]
        indexes = [models.Index(fields=["ts", "communicator"], name="collrecord_ts")]

    def __str__(self) -> str:
        return f"{self.coll} #{self.seq} rank {self.rank}"
