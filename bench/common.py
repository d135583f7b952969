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


class MachineCpu:
    """Every process's CPU time on the machine during a block, read from ``/proc``, by role.

    The capacity bench's unit costs are the server processes' own CPU time; on the machine that
    runs the bench, the load generator (this process), PostgreSQL's shared processes (WAL writer,
    checkpointer), Redis, the kernel and other people's work take the same cores. Inside the
    block a thread reads every process's ``utime + stime`` every ``every`` seconds and
    ``/proc/stat``'s totals (idle, I/O wait, interrupts, time stolen by the hypervisor), so a
    throughput can be set against all the CPU that ran beside it. What the machine spent that no
    process reading accounts for is ``unattributed``: processes that started and ended between
    two readings (the bench's own servers, backends and workers live through the block: other
    people's short test and build processes). ``database``: the backends of this database are ours, those of
    other databases are other people's.
    """

    ROLES = (
        "web (gunicorn)",
        "Celery workers",
        "PostgreSQL backends, this database",
        "load generator (the bench process)",
        "other children of the bench",
        "PostgreSQL shared (WAL writer, checkpointer, ...)",
        "Redis",
        "other people's PostgreSQL backends",
        "other processes",
    )

    def __init__(self, database: str, every: float = 0.5):
        self.database = database
        self.every = every
        self.tick = os.sysconf("SC_CLK_TCK")
        self.first: dict[int, float] = {}
        self.last: dict[int, float] = {}
        self.role: dict[int, str] = {}
        self.stop = threading.Event()
        self.me = os.getpid()

    @staticmethod
    def _machine() -> list[int]:
        with open("/proc/stat") as fh:
            return [int(x) for x in fh.readline().split()[1:9]]

    def _classify(self, pid: int, ppid: int) -> str:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            return "other processes"
        if pid == self.me:
            return "load generator (the bench process)"
        if cmd.startswith("postgres:"):
            words = cmd.split(":")[-1].split()
            if len(words) >= 2 and words[1] == self.database:
                return "PostgreSQL backends, this database"
            if len(words) >= 2 and "(" in cmd:  # "user database host(port) state": a backend
                return "other people's PostgreSQL backends"
            return "PostgreSQL shared (WAL writer, checkpointer, ...)"
        if "/postgres " in cmd or cmd.startswith("redis-server"):
            return "PostgreSQL shared (WAL writer, checkpointer, ...)" if "postgres" in cmd else "Redis"
        if self._descends(ppid):
            if "gunicorn" in cmd:
                return "web (gunicorn)"
            if "celery" in cmd:
                return "Celery workers"
            return "other children of the bench"
        return "other processes"

    def _descends(self, pid: int) -> bool:
        for _ in range(20):
            if pid == self.me:
                return True
            if pid <= 1:
                return False
            try:
                with open(f"/proc/{pid}/stat") as fh:
                    pid = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                return False
        return False

    def _scan(self, *, initial: bool = False) -> None:
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            pid = int(name)
            try:
                with open(f"/proc/{pid}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            cpu = (int(fields[11]) + int(fields[12])) / self.tick
            if pid not in self.role:
                self.role[pid] = self._classify(pid, int(fields[1]))
                self.first[pid] = cpu if initial else 0.0  # a process new since the start: from 0
            self.last[pid] = cpu

    def _run(self) -> None:
        while not self.stop.wait(self.every):
            self._scan()

    def __enter__(self) -> MachineCpu:
        self._scan(initial=True)
        self.machine0 = self._machine()
        self.t0 = time.perf_counter()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()
        self._scan()
        self.wall = time.perf_counter() - self.t0
        m = [b - a for a, b in zip(self.machine0, self._machine(), strict=True)]
        user, nice, system, idle, iowait, irq, softirq, steal = (x / self.tick for x in m)
        self.by_role = dict.fromkeys(self.ROLES, 0.0)
        for pid, cpu in self.last.items():
            self.by_role[self.role[pid]] += cpu - self.first.get(pid, 0.0)
        self.idle, self.iowait, self.interrupts, self.steal = idle, iowait, irq + softirq, steal
        self.busy = user + nice + system + irq + softirq
        self.cores = os.cpu_count() or 1
        self.unattributed = max(0.0, self.busy - self.interrupts - sum(self.by_role.values()))

    def ours(self, *roles: str) -> float:
        return sum(self.by_role[r] for r in roles)

    def table(self, per: float = 0.0, unit: str = "") -> str:
        """The CPU seconds by role (and per unit of work, when ``per`` is given), the machine's
        idle, I/O wait, interrupt and stolen time, against cores x wall time."""
        lines = [
            f"    CPU over {self.wall:.1f} s x {self.cores} cores = {self.wall * self.cores:.1f} core-s:"
        ]
        rows = [*self.by_role.items(), ("interrupts (kernel, not in any process)", self.interrupts)]
        rows += [("unattributed (processes that came and went between readings)", self.unattributed)]
        rows += [("stolen by the hypervisor", self.steal), ("idle", self.idle), ("I/O wait", self.iowait)]
        for name, s in rows:
            extra = f"  {1e6 * s / per:8.2f} µs/{unit}" if per and s else ""
            lines.append(f"      {name:<52} {s:7.2f} s {100 * s / (self.wall * self.cores):5.1f} %{extra}")
        return "\n".join(lines)
