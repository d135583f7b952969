"""What a site of a given size needs: cores, memory, disk and write IOPS for the web, the Celery
workers and PostgreSQL, from the unit costs ``python -m bench capacity`` measures (CPU time per
sample ingested and rolled up, per reporting port judged by the alert rules, per page request;
bytes per raw sample, per rollup row and per cable) and stated assumptions. Pure arithmetic:
``docs/operator/capacity.md``'s tables are this module's output (``python -m tools.capacity``),
and a test checks them against it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

DAY = 86_400
PAGE = 8192  # PostgreSQL's page: the unit a write IOPS figure counts


@dataclass(frozen=True)
class UnitCosts:
    """Measured by ``python -m bench capacity`` (the ``unit: ...`` figures)."""

    ingest_web_us: float  # CPU µs per sample, gunicorn worker
    ingest_pg_us: float  # CPU µs per sample, its PostgreSQL backend
    rollup_worker_us: float  # CPU µs per sample, Celery worker
    rollup_pg_us: float
    alert_worker_us: float  # CPU µs per reporting port per evaluation run
    alert_pg_us: float
    page_web_ms: float  # CPU ms per page request (cable page and desk list mix)
    page_pg_ms: float
    raw_sample_bytes: float  # a raw FEC sample with its share of the indexes
    rollup_row_bytes: float
    cable_bytes: float  # everything else in the database, per cable
    web_rss_mb: float
    worker_rss_mb: float
    cables_per_gpu: float
    ports_per_gpu: float  # reporting (interface) ports

    @classmethod
    def from_bench(cls, results: list[dict]) -> UnitCosts:
        """From ``var/bench.json``'s ``results`` (or a snapshot of it)."""
        v = {r["name"]: r["value"] for r in results}
        return cls(
            ingest_web_us=v["unit: ingest, web CPU per sample"],
            ingest_pg_us=v["unit: ingest, PostgreSQL CPU per sample"],
            rollup_worker_us=v["unit: rollup, worker CPU per sample"],
            rollup_pg_us=v["unit: rollup, PostgreSQL CPU per sample"],
            alert_worker_us=v["unit: alert evaluation, worker CPU per reporting port per run"],
            alert_pg_us=v["unit: alert evaluation, PostgreSQL CPU per reporting port per run"],
            page_web_ms=v["unit: page request, web CPU-ms (cable page and desk list mix)"],
            page_pg_ms=v["unit: page request, PostgreSQL CPU-ms"],
            raw_sample_bytes=v["unit: disk per raw FEC sample (table and indexes)"],
            rollup_row_bytes=v["unit: disk per rollup row (table and indexes)"],
            cable_bytes=v["unit: disk per cable, the rest of the database"],
            web_rss_mb=v["unit: web worker RSS (production settings)"],
            worker_rss_mb=v["unit: Celery worker RSS"],
            cables_per_gpu=v["unit: cables per GPU (seeded plant)"],
            ports_per_gpu=v["unit: reporting ports per GPU (seeded plant)"],
        )


@dataclass(frozen=True)
class Assumptions:
    sample_interval_s: float = 10.0  # every reporting port sends one sample this often
    raw_retention_days: int = 14  # CABLETRACK_TELEMETRY_RAW_RETENTION_DAYS
    rollup_retention_days: int = 365  # CABLETRACK_TELEMETRY_ROLLUP_RETENTION_DAYS
    rollup_seconds: int = 60  # CABLETRACK_TELEMETRY_ROLLUP_SECONDS
    alert_every_s: float = 60.0  # CABLETRACK_ALERT_EVERY_S
    pages_per_s_per_1000_gpus: float = 1.0  # peak page requests (technicians and desk)
    utilisation: float = 0.5  # cores sized so the peak uses half of them
    free_space: float = 2.0  # disk sized at twice the data (WAL, vacuum, index rebuilds, growth)
    hot_raw_hours: float = 1.0  # raw samples the rollup and evidence pages read, kept in memory
    hot_rollup_hours: float = 1.0  # rollups the rules (15 minutes), charts and pages read most
    base_memory_gb: float = 2.0  # per role: the OS, PostgreSQL's own, a spare process
    # the alert evaluation's peak RSS per reporting port over a full 15-minute window: 5.3 GB at
    # 557,056 ports (131,072 GPUs), measured 2026-12-05 (performance history); it holds the
    # whole window at once, in one worker process
    alert_kb_per_port: float = 9.5


@dataclass(frozen=True)
class Role:
    cores: float
    memory_gb: float
    disk_gb: float = 0.0
    write_iops: float = 0.0


@dataclass(frozen=True)
class Sizing:
    gpus: int
    cables: int
    ports: int
    samples_per_s: float
    pages_per_s: float
    web: Role
    workers: Role
    postgres: Role


def _cores(cpu_s_per_s: float, a: Assumptions) -> float:
    """Cores to hold ``cpu_s_per_s`` at the assumed utilisation, at least one, to the half."""
    return max(1.0, math.ceil(2 * cpu_s_per_s / a.utilisation) / 2)


def size(gpus: int, u: UnitCosts, a: Assumptions = Assumptions()) -> Sizing:  # noqa: B008 - frozen default
    ports = round(gpus * u.ports_per_gpu)
    cables = round(gpus * u.cables_per_gpu)
    sps = ports / a.sample_interval_s
    pps = gpus / 1000 * a.pages_per_s_per_1000_gpus
    judged = ports / a.alert_every_s  # ports judged per second

    web_cpu = sps * u.ingest_web_us / 1e6 + pps * u.page_web_ms / 1e3
    web_cores = _cores(web_cpu, a)
    worker_cpu = sps * u.rollup_worker_us / 1e6 + judged * u.alert_worker_us / 1e6
    worker_cores = _cores(worker_cpu, a)
    pg_cpu = (
        sps * (u.ingest_pg_us + u.rollup_pg_us) / 1e6
        + pps * u.page_pg_ms / 1e3
        + judged * u.alert_pg_us / 1e6
    )
    gb = 1e9
    raw = sps * DAY * a.raw_retention_days * u.raw_sample_bytes
    buckets_per_s = ports / a.rollup_seconds
    rollups = buckets_per_s * DAY * a.rollup_retention_days * u.rollup_row_bytes
    plant = cables * u.cable_bytes
    hot = (
        sps * 3600 * a.hot_raw_hours * u.raw_sample_bytes
        + buckets_per_s * 3600 * a.hot_rollup_hours * u.rollup_row_bytes
        + plant
    )
    # written per second: the raw rows, and each bucket rewritten by every rollup run that sees
    # a new sample of it; twice (WAL, then the table)
    rewrites = a.rollup_seconds / a.sample_interval_s
    written = 2 * (sps * u.raw_sample_bytes + buckets_per_s * rewrites * u.rollup_row_bytes)
    return Sizing(
        gpus=gpus,
        cables=cables,
        ports=ports,
        samples_per_s=sps,
        pages_per_s=pps,
        # gunicorn: two sync workers per core
        web=Role(web_cores, a.base_memory_gb + 2 * web_cores * u.web_rss_mb / 1000),
        workers=Role(
            worker_cores,
            a.base_memory_gb + worker_cores * u.worker_rss_mb / 1000 + ports * a.alert_kb_per_port / 1e6,
        ),
        postgres=Role(
            _cores(pg_cpu, a),
            a.base_memory_gb + hot / gb,
            disk_gb=a.free_space * (raw + rollups + plant) / gb,
            write_iops=written / PAGE,
        ),
    )


def two_core_rates(u: UnitCosts) -> dict[str, float]:
    """What the unit costs predict on a machine with two free cores, for comparison with the rates
    the same bench run measured: ingest alone (web and backend on the two cores), one rollup
    worker (the worker waits for its backend: their costs add up on one core's time line), and two
    rollup workers (both cores)."""
    ingest = 2e6 / (u.ingest_web_us + u.ingest_pg_us)
    one = 1e6 / (u.rollup_worker_us + u.rollup_pg_us)
    return {"ingest": ingest, "rollup_1": one, "rollup_2": 2 * one}


def table(sizes: list[int], u: UnitCosts, a: Assumptions = Assumptions()) -> str:  # noqa: B008
    """The capacity page's table, in Markdown."""
    rows = [
        "| GPUs | reporting ports | samples/s | pages/s | web cores / memory | worker cores / memory "
        "| PostgreSQL cores / memory | PostgreSQL disk | PostgreSQL write IOPS |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for gpus in sizes:
        s = size(gpus, u, a)
        rows.append(
            f"| {gpus:,} | {s.ports:,} | {s.samples_per_s:,.0f} | {s.pages_per_s:,.0f} "
            f"| {s.web.cores:g} / {s.web.memory_gb:.0f} GB | {s.workers.cores:g} / {s.workers.memory_gb:.0f} GB "
            f"| {s.postgres.cores:g} / {s.postgres.memory_gb:.0f} GB | {_disk(s.postgres.disk_gb)} "
            f"| {s.postgres.write_iops:,.0f} |"
        )
    return "\n".join(rows)


def _disk(gb: float) -> str:
    return f"{gb / 1000:,.1f} TB" if gb >= 1000 else f"{gb:,.0f} GB"
