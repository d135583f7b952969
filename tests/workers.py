"""A real Celery worker process for tests, on the test database and the configured broker.

Each pytest-xdist worker gets its own queue, so parallel test processes never take each
other's messages (this works on Redis and on the filesystem broker alike).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from django.db import connection

from cabletrack.celery import app

ROOT = Path(__file__).resolve().parent.parent


def queue_name() -> str:
    return f"ct-test-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-{os.getpid()}"


def database_url() -> str:
    s = connection.settings_dict
    if connection.vendor == "postgresql":
        auth = s["USER"] + (f":{s['PASSWORD']}" if s.get("PASSWORD") else "")
        return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"
    return f"sqlite:///{s['NAME']}"


class Worker:
    _started = 0  # workers made by this test process: each gets its own node name and log

    def __init__(self, *, concurrency: int = 1, env: dict | None = None):
        Worker._started += 1
        self.name = f"{queue_name()}-{Worker._started}"
        self.queue = queue_name()
        self.concurrency = concurrency
        self.extra_env = env or {}
        self.proc: subprocess.Popen | None = None
        self.log = Path(os.environ.get("CABLETRACK_VAR_DIR", ROOT / "var")) / f"{self.name}.log"

    def start(self) -> Worker:
        env = os.environ.copy()
        env.update(
            {
                "DATABASE_URL": database_url(),
                "DJANGO_SETTINGS_MODULE": "cabletrack.settings",
                # what the worker's tasks enqueue (a rollup's shard tasks) stays on this queue
                "CELERY_TASK_DEFAULT_QUEUE": self.queue,
                **self.extra_env,
            }
        )
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self._logfile = self.log.open("w")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "cabletrack",
                "worker",
                "-Q",
                self.queue,
                "-c",
                str(self.concurrency),
                "--pool=prefork",
                "--loglevel=INFO",
                "-n",
                f"{self.name}@%h",
            ],
            cwd=ROOT,
            env=env,
            stdout=self._logfile,
            stderr=subprocess.STDOUT,
        )
        app.conf.task_default_queue = self.queue
        self._wait_ready()
        return self

    def _wait_ready(self, timeout: float = 60) -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"worker exited: {self.log.read_text()[-2000:]}")
            if "ready." in self.log.read_text():
                return
            time.sleep(0.2)
        raise RuntimeError(f"worker not ready in {timeout}s: {self.log.read_text()[-2000:]}")

    def stop(self, sig: int | None = None) -> None:
        if self.proc and self.proc.poll() is None:
            if sig is None:
                self.proc.terminate()
            else:
                self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        app.conf.task_default_queue = "celery"
        self._logfile.close()


def wait_for(predicate, timeout: float = 30, interval: float = 0.2):
    """Poll until ``predicate()`` is truthy; return its value or fail the test."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout}s")
