"""Shared bench helpers: a real web server process, HTTP timing, percentiles, memory."""

from __future__ import annotations

import contextlib
import http.client
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    k = max(0, min(len(s) - 1, round(q / 100 * (len(s) - 1))))
    return s[k]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_peak_mb(pid: int) -> float:
    """Peak resident set size (VmHWM) of a process, in MB."""
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class WebServer:
    """gunicorn serving cabletrack on loopback (one sync worker unless told otherwise)."""

    def __init__(self, *, workers: int = 1, threads: int = 1, env: dict | None = None):
        self.port = free_port()
        self.workers = workers
        self.threads = threads
        self.env = {**os.environ, **(env or {})}
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> WebServer:
        cmd = [
            sys.executable,
            "-m",
            "gunicorn",
            "cabletrack.wsgi",
            "-b",
            f"127.0.0.1:{self.port}",
            "-w",
            str(self.workers),
            "--threads",
            str(self.threads),
            "--timeout",
            "300",
            "--log-level",
            "warning",
        ]
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=self.env)
        deadline = time.time() + 60
        while time.time() < deadline:
            with contextlib.suppress(OSError):
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                conn.request("GET", "/healthz")
                if conn.getresponse().status == 200:
                    return self
            time.sleep(0.2)
        raise RuntimeError("gunicorn did not come up")

    def worker_pids(self) -> list[int]:
        out = subprocess.run(["pgrep", "-P", str(self.proc.pid)], capture_output=True, text=True, check=False)
        return [int(p) for p in out.stdout.split()]

    def peak_rss_mb(self) -> float:
        return max((rss_peak_mb(p) for p in self.worker_pids()), default=float("nan"))

    def __exit__(self, *exc) -> None:
        if self.proc:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()


class Http:
    """A keep-alive HTTP client that times each request."""

    def __init__(self, port: int, token: str | None = None):
        self.port = port
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
        h = {**self.headers, **(headers or {})}
        t = time.perf_counter()
        try:
            self.conn.request(method, path, body=body, headers=h)
            resp = self.conn.getresponse()
            data = resp.read()
        except (http.client.HTTPException, OSError):
            self.conn.close()
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
            self.conn.request(method, path, body=body, headers=h)
            resp = self.conn.getresponse()
            data = resp.read()
        return resp.status, data, (time.perf_counter() - t) * 1000


def make_token(username: str = "bench", role: str = "engineer", kind: str = "full") -> str:
    """Create a user with ``role`` and an API token of ``kind``; returns the raw token."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from inventory.models import ApiToken
    from inventory.models.accounts import hash_token

    user, _ = get_user_model().objects.get_or_create(username=username)
    user.groups.add(Group.objects.get(name=role))
    raw = ApiToken.generate()
    ApiToken.objects.create(
        user=user, name=f"bench {kind}", kind=kind, key_hash=hash_token(raw), prefix=raw[:8]
    )
    return raw


def post_all(
    port: int, token: str, path: str, bodies: list[bytes], threads: int = 2, *, whole: bool = False
) -> tuple[float, int]:
    """POST every body to ``path`` from ``threads`` clients; (seconds, items stored). A status
    other than 200 fails the run; with ``whole``, so does a batch with rejected items."""
    q: queue.Queue = queue.Queue()
    for b in bodies:
        q.put(b)
    stored = [0]
    errors: list = []
    lock = threading.Lock()

    def worker():
        http = Http(port, token)
        while True:
            try:
                body = q.get_nowait()
            except queue.Empty:
                return
            status, data, _ = http.request(
                "POST", path, body=body, headers={"Content-Type": "application/json"}
            )
            if status != 200:
                errors.append((status, data[:300]))
                return
            answer = orjson.loads(data)
            if whole and answer.get("rejected"):
                errors.append((status, data[:300]))
                return
            with lock:
                stored[0] += answer["stored"]

    t = time.perf_counter()
    ts = [threading.Thread(target=worker) for _ in range(threads)]
    for th in ts:
        th.start()
    for th in ts:
        th.join()
    elapsed = time.perf_counter() - t
    if errors:
        raise RuntimeError(f"{path}: {errors[0]}")
    return elapsed, stored[0]
