"""Fixtures for the fault tests: PRIVATE servers (never the shared 5432/6379), the test process's
cache and Celery app pointed at them, and real worker processes that use them.

Every fault test is marked ``fault``; ``make test`` runs them after the rest, in one process.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import psutil
import pytest

from cabletrack.celery import app
from tests.faults.servers import PrivatePostgres, PrivateRedis
from tests.workers import Worker, queue_name

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


@pytest.fixture
def private_redis(server_dir):
    redis = PrivateRedis(server_dir).start()
    yield redis
    redis.stop()


@pytest.fixture
def private_pg(server_dir):
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
    yield private_redis
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
