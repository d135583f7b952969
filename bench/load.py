"""Load test (issue 8): technicians browsing and recording tests while collectors post telemetry.

The product is served as in production (README "Production stack"): ``collectstatic``, then
gunicorn with ``DJANGO_DEBUG=false`` and 4 sync workers (``--timeout 60``), and a Celery worker
draining the rollups the telemetry queues. ``--max-requests`` is off here (production recycles
workers every 2,000 requests) so that the memory figure shows real growth, not recycling.

Locust (as its own process, ``bench/locustfile.py``) runs ``BENCH_LOAD_USERS`` technicians
(default 50: cable page, rack page, cable list and search, recording an insertion-loss test
through the API) and ``BENCH_LOAD_COLLECTORS`` collectors (default 4, a batch of
``BENCH_LOAD_BATCH`` ports every ~5 s) for ``BENCH_LOAD_SECONDS`` (default 150 s).

Reported: error rate, p50/p95 per request type, and the web workers' memory growth (the sum of
their resident memory after a 15 s warm-up against the end of the run). Targets: < 0.1 % errors,
p95 < 200 ms, memory growth < 10 %.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import ROOT, free_port, rss_mb

WARMUP_S = 15
LOAD_SECRET_KEY = "load-test-" + "x" * 50  # the server's key; sessions are signed with it

# What this benchmark needs of the machine (bench/__main__.py skips it, saying so, without).
NEEDS = ("redis",)  # gunicorn with production settings and a Celery worker on a real broker


def _plan(technicians: int, collectors: int, batch: int) -> dict:
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
    from django.contrib.auth.models import Group
    from django.contrib.sessions.backends.db import SessionStore
    from django.test import override_settings

    from bench.common import make_token
    from inventory.core.choices import CableKind, CableStatus, PortKind
    from inventory.core.optics.trace_checks import wavelengths_for
    from inventory.models import Cable, Port, Rack, Team

    sessions, tokens = [], []
    # Technicians record tests only in the sites their teams look after (a 403 otherwise, which
    # is what every upload of the load test got until they were put in those teams)
    teams = list(Team.objects.filter(sites__isnull=False).distinct())
    for i in range(10):  # ten technicians' accounts, shared by the simulated users
        user, _ = get_user_model().objects.get_or_create(username=f"load-tech-{i}")
        user.groups.add(Group.objects.get(name="technician"))
        user.teams.add(*teams)
        # The session is signed, and its auth hash salted, with the SECRET_KEY of the server
        # under test (production settings), and names the backend the server authenticates with;
        # otherwise every page would answer with the login page.
        with override_settings(SECRET_KEY=LOAD_SECRET_KEY):
            session = SessionStore()
            session[SESSION_KEY] = str(user.pk)
            session[BACKEND_SESSION_KEY] = "inventory.access.backends.PermissionsBackend"
            session[HASH_SESSION_KEY] = user.get_session_auth_hash()
            session.save()
        sessions.append(session.session_key)
        tokens.append(make_token(f"load-tech-{i}", role="technician"))
    live = Cable.objects.exclude(status=CableStatus.RETIRED).order_by("pk")
    labels = list(live.values_list("label", flat=True)[:5000])
    # Each fibre with a wavelength its medium is tested at (850 nm multi-mode, 1310 nm single-mode):
    # a 1310 nm power-meter reading on a multi-mode cable is refused, rightly, and is not load.
    fibre = [
        [label, wavelengths_for(kind)[0]]
        for label, kind in live.filter(kind__in=CableKind.fibre()).values_list("label", "kind")[:2000]
    ]
    ports = list(
        Port.objects.filter(kind=PortKind.INTERFACE, retired_at__isnull=True)
        .order_by("pk")
        .values_list("device__name", "name")[: collectors * batch]
    )
    return {
        "technicians": technicians,
        "collectors": collectors,
        "batch": batch,
        "session_cookie": settings.SESSION_COOKIE_NAME,
        "sessions": sessions,
        "tech_tokens": tokens,
        "ingest_token": make_token("load-collector", role="collector", kind="ingest"),
        "labels": labels,
        "fibres": fibre,
        "racks": list(Rack.objects.values_list("name", flat=True)),
        "list_pages": max(1, live.count() // 50),
        "ports": [list(p) for p in ports],
    }


def _prod_env(static_root: str) -> dict:
    return {
        **os.environ,
        "DJANGO_DEBUG": "false",
        "DJANGO_SECRET_KEY": LOAD_SECRET_KEY,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DJANGO_STATIC_ROOT": static_root,
        # plain HTTP on loopback: no redirect to HTTPS (a TLS proxy does that in production)
        "DJANGO_SECURE_SSL_REDIRECT": "false",
    }


def _workers(master: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(master)], capture_output=True, text=True, check=False)
    return [int(p) for p in out.stdout.split()]


def _rss_total(master: int) -> float:
    return sum(rss_mb(p) for p in _workers(master))


def _wait_up(port: int, proc: subprocess.Popen) -> None:
    import http.client

    deadline = time.time() + 90
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("gunicorn exited")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.3)
    raise RuntimeError("gunicorn did not come up")


def _stop(proc: subprocess.Popen | None) -> None:
    if proc and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def run(report) -> None:
    seconds = int(os.environ.get("BENCH_LOAD_SECONDS", "150"))
    technicians = int(os.environ.get("BENCH_LOAD_USERS", "50"))
    collectors = int(os.environ.get("BENCH_LOAD_COLLECTORS", "4"))
    batch = int(os.environ.get("BENCH_LOAD_BATCH", "200"))
    workers = int(os.environ.get("BENCH_LOAD_WEB_WORKERS", "4"))
    plan = _plan(technicians, collectors, batch)
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="ct-load-") as tmp:
        tmp_path = Path(tmp)
        plan_file = tmp_path / "plan.json"
        plan_file.write_text(json.dumps(plan))
        env = _prod_env(str(tmp_path / "static"))
        subprocess.run([py, "manage.py", "collectstatic", "--noinput", "-v0"], cwd=ROOT, env=env, check=True)
        port = free_port()
        web = celery = None
        try:
            web = subprocess.Popen(
                [py, "-m", "gunicorn", "cabletrack.wsgi", "-b", f"127.0.0.1:{port}", "-w", str(workers)]
                + ["--timeout", "60", "--log-level", "warning"],
                cwd=ROOT,
                env=env,
            )
            celery = subprocess.Popen(
                [py, "-m", "celery", "-A", "cabletrack", "worker", "-c", "1", "--loglevel=WARNING"]
                + ["-n", f"load-{port}@%h", "--without-mingle", "--without-gossip"],
                cwd=ROOT,
                env=env,
            )
            _wait_up(port, web)
            locust = subprocess.Popen(
                [py, "-m", "locust", "-f", str(ROOT / "bench" / "locustfile.py"), "--headless"]
                + ["-u", str(technicians + collectors), "-r", "20", "-t", f"{seconds}s"]
                + ["--host", f"http://127.0.0.1:{port}", "--csv", str(tmp_path / "load")]
                + ["--only-summary", "--loglevel", "WARNING", "--stop-timeout", "10"],
                cwd=ROOT,
                env={**os.environ, "CABLETRACK_LOAD_PLAN": str(plan_file)},
            )
            time.sleep(WARMUP_S)
            rss_start = _rss_total(web.pid)
            peak = rss_start
            while locust.poll() is None:
                time.sleep(2)
                peak = max(peak, _rss_total(web.pid))
            rss_end = _rss_total(web.pid)
            load1 = os.getloadavg()[0]
        finally:
            _stop(web)
            _stop(celery)
        rows = list(csv.DictReader(open(tmp_path / "load_stats.csv")))  # noqa: SIM115
    total = next(r for r in rows if r["Name"] == "Aggregated")
    requests, failures = int(total["Request Count"]), int(total["Failure Count"])
    report(f"load: {technicians} technicians + {collectors} collectors, {seconds} s", requests, "requests")
    report("load: throughput", float(total["Requests/s"]), "req/s")
    report("load: error rate", 100 * failures / max(requests, 1), "%", "< 0.1 %")
    for r in rows:
        if r["Name"] == "Aggregated":
            continue
        name = f"{r['Type']} {r['Name']}" if not r["Name"].startswith(("POST", "GET")) else r["Name"]
        report(f"load: {name}: p50", float(r["50%"]), "ms")
        report(f"load: {name}: p95", float(r["95%"]), "ms", "< 200 ms")
    report("load: all requests: p95", float(total["95%"]), "ms", "< 200 ms")
    report("load: web workers' memory after warm-up", rss_start, "MB")
    report("load: web workers' memory growth", 100 * (rss_end - rss_start) / rss_start, "%", "< 10 %")
    report("load: web workers' memory peak", peak, "MB")
    report("load: load average (1 min) at the end", load1, "")
