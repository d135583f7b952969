"""Unit costs for the capacity page, and the rollup on one against two Celery worker processes.

``docs/operator/capacity.md`` is computed (``inventory.core.capacity``) from the figures this
prints, named ``unit: ...``:

- **Ingest**: FEC-counter samples posted through ``POST /api/telemetry/`` to gunicorn (two sync
  workers, 5,000 samples a batch, the telemetry bench's bodies): CPU-ms per sample of the web
  workers and of their PostgreSQL backends (each process's own CPU time, read from the OS, so
  other work on a shared machine does not count).
- **Rollup**: the same queue rows rolled up by real Celery worker processes (``-c 1`` each, on
  a private queue of the Redis at ``REDIS_URL``), first one worker, then two, from the same
  queue: wall time from the kick to an empty queue (samples/s), and the CPU-ms per sample of
  the workers and their backends (the one-worker run).
- **Alert evaluation**: one run of every rule over the window holding those samples (in this
  process): CPU per reporting port per run, of this process and of its backend. Then the same
  through real worker processes: the rules as one task on one worker, and as two alert shards
  (``CABLETRACK_ALERT_SHARDS``) on two, wall time of a steady run each.
- **Pages**: ``/c/<label>`` and the desk list through gunicorn with production settings: CPU-ms
  per request of the web worker and of its backend, and its RSS.
- **Disk**: bytes per raw sample and per rollup row (tables with their indexes), and bytes of
  everything else (the plant, its tests and history) per cable.

The shards are the unit of parallelism: a shard is rolled up by one worker at a time, so two
workers need at least two shards (``CABLETRACK_TELEMETRY_ROLLUP_SHARDS``, 2 by default).
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta

import psutil

from bench.common import ROOT, Http, MachineCpu, WebServer, make_token

NEEDS = ("postgresql", "redis")
QUEUE = "bench-capacity"
SAMPLES_PER_PORT = 12  # two minutes at one sample per 10 s


def _cpu(pids) -> dict[int, float]:
    out = {}
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            t = psutil.Process(pid).cpu_times()
            out[pid] = t.user + t.system
    return out


def _spent(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds spent between two readings (a process new since ``before`` counts from 0)."""
    return sum(v - before.get(pid, 0.0) for pid, v in after.items())


def _backends() -> list[int]:
    """This database's PostgreSQL backends other than this process's own."""
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return [r[0] for r in cur.fetchall()]


def _database() -> str:
    from django.db import connection

    return connection.settings_dict["NAME"]


#: Roles that run beside a throughput on the bench machine and are not the bench's work.
OTHERS = ("other people's PostgreSQL backends", "other processes")


def _ours(machine: MachineCpu) -> float:
    """CPU seconds of everything the bench ran: its servers and workers, their backends, the load
    generator, PostgreSQL's shared processes and Redis, and the kernel's interrupts."""
    return sum(v for k, v in machine.by_role.items() if k not in OTHERS) + machine.interrupts


def _for_this_machine(
    report, name: str, machine: MachineCpu, samples: int, measured: float, lanes: float, cost_us: float
) -> None:
    """What a cost per sample predicts for this machine in this run, against the rate measured:
    the cores other people's work (processes and backends, those too short-lived to be read
    included) and the hypervisor left, at most ``lanes`` of them (one worker and its backend
    take turns on one core), divided by ``cost_us``, everything of ours a sample cost (servers,
    load generator, PostgreSQL's shared processes, Redis, the kernel's interrupts). The page's
    production figures count the servers only; here the bench's client and the shared services
    take the same two cores."""
    others = machine.ours(*OTHERS) + machine.unattributed + machine.steal
    left = min(lanes, (machine.wall * machine.cores - others) / machine.wall)
    predicted = left * 1e6 / cost_us
    report(f"check: {name}, everything of ours per sample", cost_us, "µs")
    report(f"check: {name}, cores left by other work", left, "cores")
    report(f"check: {name}, predicted for this machine", predicted, "samples/s")
    report(f"check: {name}, measured / predicted", measured / predicted, "ratio", "0.75-1.25")


def _tree(pid: int) -> list[int]:
    with contextlib.suppress(psutil.Error):
        main = psutil.Process(pid)
        return [pid, *(c.pid for c in main.children(recursive=True))]
    return []


def _size(pattern: str) -> int:
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute(
            "SELECT coalesce(sum(pg_total_relation_size(oid)), 0) FROM pg_class "
            "WHERE relkind = 'r' AND relname LIKE %s",
            [pattern],
        )
        return int(cur.fetchone()[0])


def _count(table: str) -> int:
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute(f"SELECT count(*) FROM {table}")  # noqa: S608 - a table name of ours
        return int(cur.fetchone()[0])


class _Workers:
    """``n`` Celery worker processes (``-c 1``) on the bench queue, production's broker settings."""

    def __init__(self, n: int, env: dict | None = None):
        self.n = n
        self.extra_env = env or {}
        self.procs: list[subprocess.Popen] = []
        self.logs: list = []

    def __enter__(self) -> _Workers:
        env = {
            **os.environ,
            "CELERY_TASK_DEFAULT_QUEUE": QUEUE,
            "DJANGO_SETTINGS_MODULE": "cabletrack.settings",
            **self.extra_env,
        }
        for i in range(self.n):
            log = tempfile.NamedTemporaryFile("w+", prefix=f"bench-worker-{i}-", suffix=".log")  # noqa: SIM115
            self.logs.append(log)
            self.procs.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "celery",
                        "-A",
                        "cabletrack",
                        "worker",
                        "-Q",
                        QUEUE,
                        "-c",
                        "1",
                        "--pool=prefork",
                        "--loglevel=INFO",
                        "-n",
                        f"bench-{i}@%h",
                    ],
                    cwd=ROOT,
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )  # fmt: skip
            )
        deadline = time.time() + 90
        for proc, log in zip(self.procs, self.logs, strict=True):
            while "ready." not in open(log.name).read():  # noqa: SIM115, PTH123
                if proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"bench worker did not start: {open(log.name).read()[-1500:]}")  # noqa: SIM115, PTH123
                time.sleep(0.2)
        return self

    def succeeded(self, task: str) -> int:
        """How many runs of ``task`` the workers' logs say succeeded."""
        done = re.compile(rf"{re.escape(task)}\[[^\]]+\] succeeded")
        return sum(len(done.findall(open(log.name).read())) for log in self.logs)  # noqa: SIM115, PTH123

    def pids(self) -> list[int]:
        return [p for proc in self.procs for p in _tree(proc.pid)]

    def peak_rss_mb(self) -> float:
        from bench.common import rss_peak_mb

        return max((rss_peak_mb(p) for p in self.pids()), default=float("nan"))

    def __exit__(self, *exc) -> None:
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for log in self.logs:
            log.close()


def _purge() -> None:
    import redis

    redis.Redis.from_url(os.environ["REDIS_URL"]).delete(QUEUE)


def _rollup_with(workers: int, queued: list[dict], samples: int, since: datetime) -> dict:
    """Roll the queue rows ``queued`` up with ``workers`` worker processes, from no rollups."""
    from cabletrack.celery import app
    from inventory.models import PortRollup, TelemetryIngestBatch

    PortRollup.objects.filter(bucket__gte=since).delete()
    TelemetryIngestBatch.objects.all().delete()
    TelemetryIngestBatch.objects.bulk_create([TelemetryIngestBatch(**row) for row in queued])
    _purge()
    with _Workers(workers) as w, MachineCpu(_database()) as machine:
        before = _cpu(w.pids()) | _cpu(_backends())
        t = time.perf_counter()
        app.send_task("inventory.telemetry_rollup", queue=QUEUE)
        # the workers' backends come and go with their tasks: read them while they run (what a
        # backend spends after the last reading, at most 0.1 s of its life, is not counted)
        seen: dict[int, float] = {}
        while TelemetryIngestBatch.objects.exists():
            seen.update(_cpu(_backends()))
            time.sleep(0.1)
        elapsed = time.perf_counter() - t
        seen.update(_cpu(_backends()))
        after = _cpu(w.pids())
        worker_s = _spent(before, after)
        pg_s = _spent(before, seen)
        print(
            f"  {workers} worker(s): {elapsed:.1f} s; CPU s by worker process "
            f"{ {p: round(v - before.get(p, 0), 2) for p, v in after.items()} }, "
            f"by backend { {p: round(v - before.get(p, 0), 2) for p, v in seen.items()} }",
            flush=True,
        )
        rss = w.peak_rss_mb()
    print(machine.table(samples, "sample"), flush=True)
    return {
        "machine": machine,
        "rate": samples / elapsed,
        "worker_us": 1e6 * worker_s / samples,
        "pg_us": 1e6 * pg_s / samples,
        "rss": rss,
    }


def alerts_with(workers: int) -> float:
    """Seconds from the rule task's start to the end of its last shard's run, with ``workers``
    worker processes and as many alert shards (one worker: the rules as one task). The first run
    learns the baselines; the second, timed, is the steady cost."""
    from cabletrack.celery import app

    _purge()
    env = {"CABLETRACK_ALERT_SHARDS": str(workers)}
    task = "inventory.alerts_evaluate_shard" if workers > 1 else "inventory.alerts_evaluate"
    with _Workers(workers, env=env) as w:
        elapsed = 0.0
        for run in (1, 2):
            t = time.perf_counter()
            app.send_task("inventory.alerts_evaluate", queue=QUEUE)
            while w.succeeded(task) < run * workers:
                if any(p.poll() is not None for p in w.procs):
                    raise RuntimeError("a bench worker stopped during the alert evaluation")
                time.sleep(0.05)
            elapsed = time.perf_counter() - t
        print(
            f"  alert evaluation, {workers} worker(s): {elapsed:.1f} s; peak RSS {w.peak_rss_mb():.0f} MB",
            flush=True,
        )
    return elapsed


def _pages(report) -> None:
    """CPU per page request through gunicorn with production settings (``bench.pages``' setup)."""
    from django.conf import settings
    from django.test import override_settings

    from bench.load import LOAD_SECRET_KEY, _prod_env
    from bench.pages import _session_cookie, _timed
    from inventory.models import Cable

    labels = list(Cable.objects.order_by("pk").values_list("label", flat=True)[:20_000])
    rng = random.Random(5)
    paths = [f"/c/{x}" for x in rng.sample(labels, min(200, len(labels)))]
    paths += [f"/cables/?page={rng.randint(1, 20)}" for _ in range(50)]
    rng.shuffle(paths)
    with tempfile.TemporaryDirectory() as static:
        env = _prod_env(static)
        subprocess.run(
            [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"], cwd=ROOT, env=env, check=True
        )
        with override_settings(SECRET_KEY=LOAD_SECRET_KEY if LOAD_SECRET_KEY else settings.SECRET_KEY):
            headers = {"Cookie": _session_cookie("bench-capacity")}
        with WebServer(env=env) as web:
            http = Http(web.port)
            _timed(http, paths[:30], headers)  # warm up: imports, compiled reads, caches
            before = _cpu(web.worker_pids()) | _cpu(_backends())
            _timed(http, paths, headers)
            web_s = _spent(before, _cpu(web.worker_pids()))
            pg_s = _spent(before, _cpu(_backends()))
            rss = web.peak_rss_mb()
    report("unit: page request, web CPU-ms (cable page and desk list mix)", 1000 * web_s / len(paths), "ms")
    report("unit: page request, PostgreSQL CPU-ms", 1000 * pg_s / len(paths), "ms")
    report("unit: web worker RSS (production settings)", rss, "MB")


def run(report) -> None:
    from django.db import connection
    from django.utils import timezone

    from bench.telemetry import _bodies, _cleanup, _ports, _post_all, _vacuum
    from inventory.core.choices import PortKind
    from inventory.models import Cable, Port, PortRollup, TelemetryIngestBatch
    from inventory.services.alerts import alerts_evaluate

    gpus = int(os.environ.get("BENCH_GPUS", "4096"))
    report("capacity bench: load average (1 min) at start", os.getloadavg()[0], "")
    cables = Cable.objects.count()
    reporting = Port.objects.filter(kind=PortKind.INTERFACE, retired_at__isnull=True).count()
    report("unit: cables per GPU (seeded plant)", cables / gpus, "cables")
    report("unit: reporting ports per GPU (seeded plant)", reporting / gpus, "ports")

    ports = _ports(40_000)
    # the samples end a minute ago: inside the alert rules' windows when they are judged below
    base = (datetime.now(UTC) - timedelta(minutes=3)).replace(second=0, microsecond=0)
    _cleanup(base - timedelta(hours=1))
    token = make_token("bench-capacity", role="collector", kind="ingest")
    total = len(ports) * SAMPLES_PER_PORT
    try:
        # --- ingest: web and PostgreSQL CPU per sample ---------------------------------------
        with WebServer(workers=2, env={"CELERY_TASK_DEFAULT_QUEUE": QUEUE}) as web:
            warm, _ = _bodies("fec", ports[:5000], 5000, base - timedelta(minutes=30))
            _post_all(web.port, token, warm, threads=1)
            TelemetryIngestBatch.objects.all().delete()
            bodies, rows = _bodies("fec", ports, total, base)
            with MachineCpu(_database()) as machine:
                before = _cpu(web.worker_pids()) | _cpu(_backends())
                elapsed, stored = _post_all(web.port, token, bodies)
                web_s = _spent(before, _cpu(web.worker_pids()))
                pg_s = _spent(before, _cpu(_backends()))
            print(machine.table(stored, "sample"), flush=True)
        if stored != len(rows):
            raise RuntimeError(f"stored {stored} of {len(rows)}")
        report("capacity bench: FEC samples ingested", stored, "samples")
        report("ingest FEC counters, 2 web workers (HTTP)", stored / elapsed, "samples/s")
        report("unit: ingest, web CPU per sample", 1e6 * web_s / stored, "µs")
        report("unit: ingest, PostgreSQL CPU per sample", 1e6 * pg_s / stored, "µs")
        _for_this_machine(
            report, "ingest", machine, stored, stored / elapsed, 2, 1e6 * _ours(machine) / stored
        )
        _vacuum()

        # --- rollup: one worker process, then two, from the same queue ----------------------
        queued = [
            {k: v for k, v in row.items() if k != "id"}
            for row in TelemetryIngestBatch.objects.order_by("id").values()
        ]
        one = _rollup_with(1, queued, stored, base)
        _vacuum()
        two = _rollup_with(2, queued, stored, base)
        report("rollup, 1 Celery worker process", one["rate"], "samples/s")
        report("rollup, 2 Celery worker processes (2 shards)", two["rate"], "samples/s")
        report("rollup, 2 workers / 1 worker", two["rate"] / one["rate"], "ratio", "> 1 (2 cores, shared)")
        report("unit: rollup, worker CPU per sample", one["worker_us"], "µs")
        report("unit: rollup, PostgreSQL CPU per sample", one["pg_us"], "µs")
        report("unit: Celery worker RSS", one["rss"], "MB")
        # the same costs with two workers side by side: a cost per sample that holds when the work
        # is spread is what the capacity page may multiply
        report("rollup, 2 workers: worker CPU per sample", two["worker_us"], "µs")
        report("rollup, 2 workers: PostgreSQL CPU per sample", two["pg_us"], "µs")
        # two workers predicted from what a sample cost with one: what spreading the work must keep
        one_us = 1e6 * _ours(one["machine"]) / stored
        _for_this_machine(report, "rollup, 1 worker", one["machine"], stored, one["rate"], 1, one_us)
        _for_this_machine(report, "rollup, 2 workers", two["machine"], stored, two["rate"], 2, one_us)

        # --- alert evaluation over the window holding those samples --------------------------
        connection.ensure_connection()
        backend = connection.connection.info.backend_pid
        alerts_evaluate(now=timezone.now())  # the first run learns the baselines: not the steady cost
        before = _cpu([os.getpid(), backend])
        alerts_evaluate(now=timezone.now())
        after = _cpu([os.getpid(), backend])
        app_s, pg_s = (after[p] - before[p] for p in (os.getpid(), backend))
        report(
            "unit: alert evaluation, worker CPU per reporting port per run", 1e6 * app_s / len(ports), "µs"
        )
        report(
            "unit: alert evaluation, PostgreSQL CPU per reporting port per run", 1e6 * pg_s / len(ports), "µs"
        )
        # the rules as one task, then as two shards on two worker processes
        one_s, two_s = alerts_with(1), alerts_with(2)
        report("alert evaluation, 1 Celery worker process", one_s, "s")
        report("alert evaluation, 2 worker processes (2 alert shards)", two_s, "s")
        report("alert evaluation, 1 worker / 2 workers", one_s / two_s, "ratio", "> 1 (2 cores, shared)")

        # --- disk ----------------------------------------------------------------------------
        raw = _size("inventory_telemetrysample%")
        raw_rows = _count("inventory_telemetrysample")
        report("unit: disk per raw FEC sample (table and indexes)", raw / max(raw_rows, 1), "bytes")
        rollup = _size("inventory_portrollup")
        report(
            "unit: disk per rollup row (table and indexes)",
            rollup / max(PortRollup.objects.count(), 1),
            "bytes",
        )
        with connection.cursor() as cur:
            cur.execute("SELECT pg_database_size(current_database())")
            whole = int(cur.fetchone()[0])
        telemetry = sum(
            _size(p)
            for p in (
                "inventory_telemetry%",
                "inventory_portrollup",
                "inventory_portobservation",
                "inventory_porttelemetrystate",
            )
        )
        report(
            "unit: disk per cable, the rest of the database", (whole - telemetry) / max(cables, 1), "bytes"
        )
    finally:
        _cleanup(base - timedelta(hours=1))
        PortRollup.objects.filter(bucket__gte=base - timedelta(hours=1)).delete()
        _purge()

    _pages(report)
    report("capacity bench: load average (1 min) at the end", os.getloadavg()[0], "")


if __name__ == "__main__":
    sys.exit("run through the runner: python -m bench capacity")
