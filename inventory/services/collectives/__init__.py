"""Collective timings: ``jobs`` (registration: ranks on GPUs, GPUs on NIC ports), ``ingest``
(timing records), ``evaluate`` (the ``tail_latency_spike`` rule and its suspect links), ``drain``
(safe to drain, and the recorded drain and restore of an alert's link)."""

from inventory.services.collectives.drain import (
    DrainConflict,
    drain_panel,
    drain_verdict,
    drains_overdue_notify,
    link_drain,
    link_drain_extend,
    link_restore,
)
from inventory.services.collectives.evaluate import SpikeReport, collectives_evaluate, spike_key
from inventory.services.collectives.ingest import (
    CollectiveIngestResult,
    UnknownJob,
    collective_records_ingest,
)
from inventory.services.collectives.jobs import (
    JobConflict,
    JobError,
    RankSpec,
    job_register,
    ranks_from_hosts,
)

__all__ = [
    "CollectiveIngestResult",
    "DrainConflict",
    "JobConflict",
    "JobError",
    "RankSpec",
    "SpikeReport",
    "UnknownJob",
    "collective_records_ingest",
    "collectives_evaluate",
    "drain_panel",
    "drain_verdict",
    "drains_overdue_notify",
    "job_register",
    "link_drain",
    "link_drain_extend",
    "link_restore",
    "ranks_from_hosts",
    "spike_key",
]
