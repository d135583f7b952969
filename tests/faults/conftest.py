"""Fixtures for the fault tests: PRIVATE servers (never the shared 5432/6379), the test process's
cache and Celery app pointed at them, and real worker processes that use them.

Every fault test is marked ``fault``; ``make test`` runs them after the rest, in one process.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import psutil
import pytest
from django.db import connection

from cabletrack.celery import app
from tests.faults.servers import PrivatePostgres, PrivateRedis
from tests.smtp import free_port
from tests.workers import ROOT, Worker, queue_name, wait_for

# A short visibility timeout so that a message of a killed worker comes back within seconds;
# the hard time limit stays below it (settings refuse the opposite).
VISIBILITY_S = 10
BROKER_ENV = {
    "CELERY_VISIBILITY_TIMEOUT": str(VISIBILITY_S),
    "CELERY_UNACKED_RESTORE_INTERVAL": "1",
    "CELERY_UNACKED_RESTORE_THROTTLE": "1",
    "CELERY_TASK_TIME_LIMIT": str(VISIBILITY_S - 2),
    "CELERY_TASK_SOFT_TIME_LIMIT": str(VISIBILITY_S - 4),
}


@pytest.fixture
def server_dir():
    """A temp dir the ``postgres`` user can enter too (initdb refuses root)."""
    with tempfile.TemporaryDirectory(prefix="ct-fault-") as d:
        os.chmod(d, 0o755)  # noqa: S103 - a private temp dir, read by the postgres user
        yield Path(d)


def _installed(program: str, found: bool) -> None:
    """The fault tests drive real servers. Outside CI a machine without them (a newcomer's, with only
    Python and make) skips these tests, saying what to install; under CI a skip fails the run."""
    if not found:
        hint = f"{program} is not installed (Debian: apt-get install -y {program})"
        if os.environ.get("CI") == "true":
            pytest.fail(hint + "; CI needs it")
        pytest.skip(hint)


@pytest.fixture
def private_redis(server_dir):
    _installed("redis-server", shutil.which("redis-server") is not None)
    redis = PrivateRedis(server_dir).start()
    yield redis
    redis.stop()


@pytest.fixture
def private_pg(server_dir):
    _installed(
        "postgresql",
        bool(glob.glob("/usr/lib/postgresql/*/bin/initdb")) or shutil.which("initdb") is not None,
    )
    pg = PrivatePostgres(server_dir).init().start()
    yield pg
    pg.stop()


@pytest.fixture
def on_private_redis(private_redis, settings):
    """This test process's cache and Celery broker are the private Redis (as in production:
    one Redis for both), with the short visibility timeout the workers use too."""
    settings.CACHES = {
        "default": {
            **settings.CACHES["default"],
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": private_redis.url,
            "OPTIONS": {"IGNORE_EXCEPTIONS": True, "SOCKET_CONNECT_TIMEOUT": 1, "SOCKET_TIMEOUT": 1},
        }
    }
    conf = app.conf
    saved = (conf.broker_url, conf.broker_write_url, conf.broker_read_url, conf.broker_transport_options)
    options = {
        **(conf.broker_transport_options or {}),
        "visibility_timeout": VISIBILITY_S,
        "socket_connect_timeout": 1,
        "socket_timeout": 2,
    }
    _reset_pools()
    conf.broker_url = conf.broker_write_url = conf.broker_read_url = private_redis.url
    conf.broker_transport_options = options
    # A message carries the time limits of the process that sent it (Celery binds them to the
    # task classes from the sender's settings): the workers' short limits must be ours too.
    limits = {t: (t.time_limit, t.soft_time_limit) for t in app.tasks.values()}
    for t in limits:
        t.time_limit, t.soft_time_limit = (
            int(BROKER_ENV["CELERY_TASK_TIME_LIMIT"]),
            int(BROKER_ENV["CELERY_TASK_SOFT_TIME_LIMIT"]),
        )
        t._exec_options = None
    yield private_redis
    for t, (hard, soft) in limits.items():
        t.time_limit, t.soft_time_limit, t._exec_options = hard, soft, None
    _reset_pools()
    conf.broker_url, conf.broker_write_url, conf.broker_read_url, conf.broker_transport_options = saved


def _reset_pools() -> None:
    """Drop the Celery app's cached connections so the next publish uses the current broker."""
    with contextlib.suppress(Exception):
        app.pool.force_close_all()
    app._pool = None
    app.amqp._producer_pool = None


@pytest.fixture
def fault_workers(on_private_redis, transactional_db):
    """Start real Celery worker processes on the private Redis (broker and cache) and the test
    database; every one still running at the end is stopped."""
    started: list[Worker] = []

    def start(extra_env: dict | None = None, concurrency: int = 1) -> Worker:
        env = {
            "REDIS_URL": on_private_redis.url,
            "CELERY_BROKER_URL": on_private_redis.url,
            "CELERY_TASK_DEFAULT_QUEUE": queue_name(),
            **BROKER_ENV,
            **(extra_env or {}),
        }
        worker = Worker(concurrency=concurrency, env=env).start()
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


def kill_tree(worker: Worker) -> None:
    """SIGKILL the worker's main process first, then its pool: nothing is acked or requeued by
    the dying worker, so only the broker's visibility timeout brings the message back."""
    main = psutil.Process(worker.proc.pid)
    children = main.children(recursive=True)
    for p in [main, *children]:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.kill()
    worker.proc.wait(timeout=10)
    psutil.wait_procs(children, timeout=10)


def waiting_backend_port() -> int | None:
    """The client port of a session of this database waiting on a row lock (a stuck task)."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT client_port FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
        )
        row = cur.fetchone()
    return row[0] if row else None


def owner_of(workers: list[Worker], client_port: int) -> Worker | None:
    """The worker whose process tree holds the database connection from ``client_port``."""
    for w in workers:
        main = psutil.Process(w.proc.pid)
        for p in [main, *main.children(recursive=True)]:
            with contextlib.suppress(psutil.NoSuchProcess):
                if any(c.laddr and c.laddr.port == client_port for c in p.net_connections(kind="tcp")):
                    return w
    return None


def stuck_worker(workers: list[Worker], timeout: float = 20) -> Worker:
    """The worker whose task waits on a row lock now. Asked again until the answer holds: past
    its soft time limit a stuck task gives up, its connection closes, and its retry (on either
    worker, with a new connection) waits again."""

    def find() -> Worker | None:
        port = waiting_backend_port()
        return owner_of(workers, port) if port else None

    return wait_for(find, timeout=timeout)


class Site:
    """cabletrack served by gunicorn (production settings) on a private PostgreSQL cluster and a
    private Redis; ``token`` is a collector's ingest token, ``ports`` the names of ``device``'s
    ports; ``plan_token`` an engineer's token, for cable-plan imports between gpu-pg ethN and
    spine-pg Ethernet(N+1)/1 (see ``seed_private``)."""

    def __init__(self, pg: PrivatePostgres, url: str, seed: dict):
        self.pg, self.url = pg, url
        self.token, self.plan_token = seed["token"], seed["plan_token"]
        self.device, self.ports = seed["device"], seed["ports"]

    def sql(self, statement: str) -> list[tuple]:
        return self.pg.sql(statement, db="ct")


def _load_schema(pg: PrivatePostgres) -> None:
    """The schema of the migrated test database, copied with pg_dump (seconds; ``migrate`` from
    scratch takes half a minute on a busy 2-core box). Without PostgreSQL tests, migrate."""
    from django.db import connection

    pg.sql("CREATE DATABASE ct")
    target = pg.url("ct")
    s = connection.settings_dict
    if connection.vendor != "postgresql":
        env = {**os.environ, "DATABASE_URL": target}
        subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
        return
    source = [
        "-h", s["HOST"] or "127.0.0.1", "-p", str(s["PORT"] or 5432), "-U", s["USER"], "--no-owner",
        "--no-privileges", s["NAME"],
    ]  # fmt: skip
    env = {**os.environ, "PGPASSWORD": s.get("PASSWORD") or ""}
    schema = subprocess.run(["pg_dump", "--schema-only", *source], env=env, check=True, capture_output=True)
    applied = subprocess.run(
        ["pg_dump", "--data-only", "-t", "django_migrations", *source],
        env=env,
        check=True,
        capture_output=True,
    )
    for dump in (schema.stdout, applied.stdout):
        subprocess.run(
            ["psql", "-q", "-X", "-v", "ON_ERROR_STOP=1", target], input=dump, check=True, capture_output=True
        )


def site_env(pg_url: str, redis_url: str, server_dir: Path) -> dict:
    """The environment of cabletrack in production settings on private servers."""
    return {
        **os.environ,
        "DATABASE_URL": pg_url,
        "REDIS_URL": redis_url,
        "DJANGO_DEBUG": "false",
        "DJANGO_SECRET_KEY": "fault-test-" + "k" * 40,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "DJANGO_SECURE_SSL_REDIRECT": "false",
        "CABLETRACK_VAR_DIR": str(server_dir / "var"),
        "LOG_LEVEL": "WARNING",
    }


def seed_site(env: dict) -> dict:
    seeded = subprocess.run(
        [sys.executable, "-m", "tests.faults.seed_private"],
        cwd=ROOT, env={**env, "DJANGO_SETTINGS_MODULE": "cabletrack.settings"},
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return json.loads(seeded.stdout.strip().splitlines()[-1])


@contextlib.contextmanager
def serving(env: dict, server_dir: Path):
    """gunicorn (two workers) with ``env``; yields its base URL."""
    port = free_port()
    log = (server_dir / "gunicorn.log").open("w")
    web = subprocess.Popen(
        [
            sys.executable, "-m", "gunicorn", "cabletrack.wsgi:application", "-b", f"127.0.0.1:{port}",
            "-w", "2", "--timeout", "30", "--graceful-timeout", "5",
        ],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_http(f"{url}/healthz", web, server_dir / "gunicorn.log")
        yield url
    finally:
        web.terminate()
        try:
            web.wait(15)
        except subprocess.TimeoutExpired:
            web.kill()
            web.wait()
        log.close()


@pytest.fixture
def private_site(transactional_db, private_pg, private_redis, server_dir):
    _load_schema(private_pg)
    env = site_env(private_pg.url("ct"), private_redis.url, server_dir)
    seed = seed_site(env)
    with serving(env, server_dir) as url:
        yield Site(private_pg, url, seed)


def _wait_http(url: str, proc: subprocess.Popen, log: Path, timeout: float = 60) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"web server exited: {log.read_text()[-2000:]}")
        with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=2) as r:
            if r.status == 200:
                return
        time.sleep(0.2)
    raise RuntimeError(f"web server not serving within {timeout}s: {log.read_text()[-2000:]}")
