"""The shipped Grafana dashboard against a real Prometheus scraping two cabletrack web processes.

Debian's ``prometheus`` is started on loopback with a temporary config and data directory,
scraping ``/metrics`` of two gunicorn processes (two web replicas, as the production section
recommends) on the same test database, with a bearer credentials file as the README's scrape
config says. Every PromQL expression of ``deploy/grafana/cabletrack-dashboard.json`` must
answer data, without error, for a GPU rack, a leaf rack and All, and a patch rack's filter
finds the uplink through it::

    GPU-R              LEAF-R                  PATCH-R           SPINE-R
    [gpu-g eth0]--J-0--[leaf-l Ethernet1/1]                                   healthy
    [gpu-g eth1]--J-1--[leaf-l Ethernet1/2]                                   degraded, alert open
                       [leaf-l Ethernet2/1]--J-U1--[pp-p1]==T-1==[pp-p2]--J-U2--[spine-s Ethernet1/1]
    EMPTY-R: no devices (still listed by the rack variable)

Outside CI a missing ``/usr/bin/prometheus`` skips this test with the reason; under CI it fails.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from inventory.core.choices import AlertState, DeviceRole
from inventory.models import Alert, PortBaseline, Rack
from inventory.services import alerts as alert_services
from tests import factories as f
from tests.workers import ROOT, database_url

pytestmark = pytest.mark.django_db(transaction=True)

DASHBOARD = ROOT / "deploy" / "grafana" / "cabletrack-dashboard.json"
TOKEN = "scrape-secret-two-replicas"  # noqa: S105 - a test's own scrape token


def prometheus_binary() -> str:
    path = shutil.which("prometheus") or (
        "/usr/bin/prometheus" if Path("/usr/bin/prometheus").exists() else None
    )
    if path is None:
        reason = "prometheus is not installed (apt-get install -y prometheus)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"{reason}; CI needs it")
        pytest.skip(reason)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, proc: subprocess.Popen, log: Path, timeout: float = 90) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url}: process exited: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:  # noqa: S310 - loopback
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"{url} not serving within {timeout}s: {log.read_text()[-2000:]}")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def plant():
    now = timezone.now().replace(second=0, microsecond=0)
    gpu_rack, leaf_rack = f.RackFactory(name="GPU-R"), f.RackFactory(name="LEAF-R")
    f.RackFactory(name="EMPTY-R")
    _, gpu = f.twin_port_device(
        "gpu-g", rack=gpu_rack, role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}"
    )
    _, leaf = f.twin_port_device("leaf-l", rack=leaf_rack, u=30)
    _, spine = f.twin_port_device("spine-s", rack=f.RackFactory(name="SPINE-R"), role=DeviceRole.SPINE)
    _, rear1, fronts1 = f.patch_panel("pp-p1", rack=f.RackFactory(name="PATCH-R"), u=40)
    _, rear2, fronts2 = f.patch_panel("pp-p2", rack=Rack.objects.get(name="SPINE-R"), u=40)
    f.jumper("J-0", gpu[0], leaf[0])
    f.jumper("J-1", gpu[1], leaf[1])
    f.jumper("J-U1", leaf[2], fronts1[0], polarity="A")
    f.trunk("T-1", rear1[0], rear2[0])
    f.jumper("J-U2", fronts2[0], spine[0])
    start = now - timedelta(minutes=20)
    for p in (gpu[0], gpu[1], leaf[0], leaf[2], spine[0]):
        f.rollups(p, start, 20)
    f.rollups(leaf[1], start, 20, ber=1e-4, fec_uncorrectable_cw=120)
    for p in (gpu[0], gpu[1], leaf[0], leaf[1]):  # baselines learned while healthy, 1 dB above now
        PortBaseline.objects.create(port=p, rx_power_dbm=[-1.0] * 4, first_at=start, updated_at=start)
    alert_services.alerts_evaluate(now=now)
    assert Alert.objects.filter(state=AlertState.OPEN, link__isnull=False).exists()


@pytest.fixture
def prometheus(plant, tmp_path):
    """Two cabletrack web processes and a Prometheus scraping both; yields ``query(expr)``."""
    binary = prometheus_binary()
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "DJANGO_SETTINGS_MODULE": "cabletrack.settings",
        "CABLETRACK_METRICS_TOKEN": TOKEN,
        "LOG_LEVEL": "WARNING",
    }
    procs: list[subprocess.Popen] = []
    try:
        targets = []
        for n in (1, 2):
            port, log = free_port(), tmp_path / f"web{n}.log"
            procs.append(
                subprocess.Popen(
                    [
                        sys.executable, "-m", "gunicorn", "cabletrack.wsgi:application",
                        "-b", f"127.0.0.1:{port}", "-w", "1", "--timeout", "60",
                    ],
                    cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT,
                )
            )  # fmt: skip
            wait_http(f"http://127.0.0.1:{port}/healthz", procs[-1], log)
            targets.append(f"127.0.0.1:{port}")
        token_file = tmp_path / "cabletrack.token"
        token_file.write_text(TOKEN + "\n")
        config = tmp_path / "prometheus.yml"
        config.write_text(
            # 3 s to answer: in a run under load (two test workers on two cores) a minute of
            # 1 s scrapes never counted both replicas; a loaded replica gets time to answer
            "global:\n  scrape_interval: 3s\n  scrape_timeout: 3s\n"
            "scrape_configs:\n"
            "  - job_name: cabletrack\n"
            "    metrics_path: /metrics\n"
            "    authorization:\n"
            "      type: Bearer\n"
            f"      credentials_file: {token_file}\n"
            "    static_configs:\n"
            f"      - targets: {json.dumps(targets)}\n"
        )
        port, log = free_port(), tmp_path / "prometheus.log"
        procs.append(
            subprocess.Popen(
                [
                    binary, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
                    f"--web.listen-address=127.0.0.1:{port}",
                ],
                stdout=log.open("w"), stderr=subprocess.STDOUT,
            )
        )  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        wait_http(f"{base}/-/ready", procs[-1], log)

        def query(expr: str) -> list[dict]:
            url = f"{base}/api/v1/query?{urllib.parse.urlencode({'query': expr})}"
            try:
                with urllib.request.urlopen(url, timeout=10) as r:  # noqa: S310 - loopback
                    body = json.loads(r.read())
            except urllib.error.HTTPError as exc:
                body = json.loads(exc.read())
            assert body["status"] == "success", f"{expr}: {body.get('errorType')}: {body.get('error')}"
            return body["data"]["result"]

        deadline = time.time() + 60
        while time.time() < deadline:
            scraped = query("count by (instance) (cabletrack_link_info)")
            if len(scraped) == 2:
                break
            time.sleep(0.5)
        else:
            raise AssertionError(f"Prometheus did not scrape both replicas: {log.read_text()[-2000:]}")
        query.url = base
        yield query
    finally:
        for proc in reversed(procs):
            stop(proc)


def dashboard_exprs() -> list[tuple[str, str]]:
    doc = json.loads(DASHBOARD.read_text())
    return [(p["title"], t["expr"]) for p in doc["panels"] for t in p.get("targets", [])]


def test_every_dashboard_query_answers_for_a_gpu_rack_a_leaf_rack_and_all_with_two_replicas(prometheus):
    doc = json.loads(DASHBOARD.read_text())
    (rack_var,) = doc["templating"]["list"]
    exprs = dashboard_exprs()
    assert len(exprs) >= 7
    # Grafana's value of $rack for one rack is its name; for All, the variable's allValue.
    for choice in ("GPU-R", "LEAF-R", rack_var["allValue"]):
        for title, expr in exprs:
            result = prometheus(expr.replace("$rack", choice))
            assert result, f"{title!r} answers nothing for rack {choice!r}: {expr}"
    # The rack drop-down lists every rack, linked or not.
    metric = rack_var["query"].removeprefix("label_values(").split(",")[0]
    listed = {r["metric"]["rack"] for r in prometheus(metric)}
    assert listed == set(Rack.objects.values_list("name", flat=True))
    # A rack filter finds every link touching the rack: the uplink through the patch rack.
    worst = dict(exprs)["Worst links by pre-FEC BER (with their cable labels)"]
    cables = {r["metric"]["cable"] for r in prometheus(worst.replace("$rack", "PATCH-R"))}
    assert cables == {"J-U1,T-1,J-U2"}
    gpu = {r["metric"]["cable"] for r in prometheus(worst.replace("$rack", "GPU-R"))}
    assert gpu == {"J-0", "J-1"}
    by_rack = dict(exprs)["Open alerts by rack"]
    alerts = {r["metric"]["rack"]: float(r["value"][1]) for r in prometheus(by_rack.replace("$rack", ".*"))}
    on_j1 = Alert.objects.filter(state=AlertState.OPEN, link__segments__cable__label="J-1").count()
    assert on_j1 >= 1
    assert alerts == {"GPU-R": on_j1, "LEAF-R": on_j1, "PATCH-R": 0.0, "SPINE-R": 0.0}  # not doubled
    # Two replicas are scraped, and nothing is counted twice.
    assert len(prometheus('count by (instance) (up{job="cabletrack"} == 1)')) == 2
    by_severity = dict(exprs)["Open link alerts by severity (selected racks)"]
    open_alerts = sum(float(r["value"][1]) for r in prometheus(by_severity.replace("$rack", ".*")))
    assert (
        open_alerts == Alert.objects.filter(state=AlertState.OPEN, silenced=False, link__isnull=False).count()
    )
    # The stat panels follow the rack selection: the degraded-link alerts are in GPU-R, not SPINE-R.
    assert sum(float(r["value"][1]) for r in prometheus(by_severity.replace("$rack", "SPINE-R"))) == 0
    assert sum(float(r["value"][1]) for r in prometheus(by_severity.replace("$rack", "GPU-R"))) == open_alerts
    degraded = dict(exprs)["Degraded cables (in the selected racks)"]
    # Rx power beside its baseline, PFC both ways: one series per link end in the rack.
    rx = [(t["expr"]) for p in doc["panels"] if p["title"].startswith("Rx power") for t in p["targets"]]
    assert (
        len(prometheus(rx[0].replace("$rack", "GPU-R"))) == 4
        and len(prometheus(rx[1].replace("$rack", "GPU-R"))) == 4
    )
    pfc = [(t["legendFormat"]) for p in doc["panels"] if p["title"].startswith("PFC") for t in p["targets"]]
    assert [x.rsplit(" ", 1)[1] for x in pfc] == ["sent", "received"]
    assert float(prometheus(degraded.replace("$rack", "SPINE-R"))[0]["value"][1]) == 0
