"""The Prometheus path, against recorded Prometheus answers served on loopback.

``tests/data/prometheus/*.json`` are ``query_range`` bodies recorded from a real Prometheus
(see ``record.py`` there) holding the counters of ``prometheus_scenario``. The same counters
also go through ``POST /api/telemetry/``, into a twin topology, so the two paths are judged
by the same rollup and rule run side by side::

    REST:        [gpu-r eth0]--J-R0--[leaf-r Ethernet0]   [gpu-r eth1]--J-R1--[leaf-r Ethernet4]
    Prometheus:  [gpu-p eth0]--J-P0--[leaf-p Ethernet0]   [gpu-p eth1]--J-P1--[leaf-p Ethernet4]

Link 1's leaf receiver degrades for the last 12 minutes; link 0 stays healthy.
"""

from __future__ import annotations

import json
import threading
import urllib.parse
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from inventory.core.choices import CableStatus, DeviceRole, TokenKind
from inventory.models import Alert, Cable, SyncRun, TelemetryLaneSample, TelemetrySample
from inventory.services import alerts as alert_services
from inventory.services.telemetry.prometheus_pull import telemetry_pull_prometheus
from inventory.services.telemetry.rollup import telemetry_rollup
from tests import factories as f
from tests.inventory.services.telemetry.prometheus_scenario import (
    BASELINE_END,
    DEGRADING_PULLS,
    END,
    RX_POWER_LANES,
    SONIC_MAPPING,
    degrading_counters,
)
from tests.paths import TEST_DATA

DATA = TEST_DATA / "prometheus"


def _at(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


class RecordedPrometheus:
    """Serves recorded bodies for ``/api/v1/query_range`` on 127.0.0.1.

    ``by_end`` picks a recording by the query's ``end`` (how they were recorded); ``queue``
    answers in order instead (for a worker whose window ends at the real clock). Each answer
    is ``(HTTP status, body bytes, content type)``. Every query is kept in ``queries``.
    """

    def __init__(self):
        self.by_end: dict[float, tuple[int, bytes, str]] = {}
        self.queue: list[tuple[int, bytes, str]] = []
        self.queries: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's naming
                parts = urllib.parse.urlsplit(self.path)
                q = {k: v[0] for k, v in urllib.parse.parse_qs(parts.query).items()}
                outer.queries.append({"path": parts.path, **q})
                answer = outer.queue.pop(0) if outer.queue else outer.by_end.get(float(q.get("end", "nan")))
                if parts.path != "/api/v1/query_range" or answer is None:
                    answer = (404, b"404 page not found\n", "text/plain; charset=utf-8")
                status, body, ctype = answer
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @staticmethod
    def recording(name: str) -> tuple[int, bytes, str]:
        body = (DATA / name).read_bytes()
        status = 200 if json.loads(body).get("status") == "success" else 400
        return status, body, "application/json"


NOT_READY = (503, b"Service Unavailable", "text/plain; charset=utf-8")  # Prometheus still starting


@pytest.fixture
def prometheus():
    server = RecordedPrometheus()
    for name, end, _ in DEGRADING_PULLS:
        server.by_end[end] = server.recording(name)
    server.thread.start()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def _twin_scene(gpu: str, leaf: str, labels: tuple[str, str], u: int) -> None:
    _, g = f.twin_port_device(gpu, role=DeviceRole.GPU_NODE, u=u, names=lambda c, k: f"eth{2 * c + k}")
    _, s = f.twin_port_device(leaf, u=u + 20, names=lambda c, k: f"Ethernet{4 * (2 * c + k)}")
    for label, a, b in ((labels[0], g[0], s[0]), (labels[1], g[1], s[1])):
        c = f.jumper(label, a, b)
        c.status = CableStatus.IN_PRODUCTION
        c.save()


@pytest.fixture
def scenes(db):
    _twin_scene("gpu-r", "leaf-r", ("J-R0", "J-R1"), u=1)
    _twin_scene("gpu-p", "leaf-p", ("J-P0", "J-P1"), u=3)


def _rest_samples(until: float, since: float = float("-inf")) -> list[dict]:
    """The scenario's counters as a collector posts them, every 10 s, for gpu-r / leaf-r."""
    out = []
    for (device, port), rows in degrading_counters("gpu-r", "leaf-r").items():
        out += [
            f.telemetry_sample(device, port, _at(ts), **fields) for ts, fields in rows if since <= ts < until
        ]
    return out


def _roll(now: datetime) -> None:
    while telemetry_rollup(now=now).remaining:
        pass


def _signature(alert: Alert) -> tuple:
    return alert.rule, alert.severity, tuple(alert.cables.values_list("label", flat=True))


def test_a_degrading_link_raises_the_same_alert_through_prometheus_as_through_rest_and_a_healthy_one_stays_quiet(
    scenes, prometheus, user_with_role
):
    client = f.api_token_client(user_with_role("collector"), TokenKind.INGEST)

    def post(samples):
        r = client.post(
            "/api/telemetry/", data=json.dumps({"samples": samples}), content_type="application/json"
        )
        assert r.status_code == 200, r.content
        assert r.json()["rejected"] == 0

    (first, end1, window1), (second, end2, window2) = DEGRADING_PULLS
    # The healthy part, evaluated (the rule run learns each receiver's baseline) ...
    post(_rest_samples(until=BASELINE_END))
    pulled = telemetry_pull_prometheus(
        now=_at(end1), url=prometheus.url, mapping={}, window=timedelta(seconds=window1), step=60
    )
    assert pulled.ok and pulled.rejected == 0 and pulled.stored == 4 * 19
    _roll(_at(BASELINE_END))
    alert_services.alerts_evaluate(now=_at(BASELINE_END))
    assert not Alert.objects.exists()
    # ... then the climb. The second window overlaps the first: the overlap is not stored twice.
    post(_rest_samples(since=BASELINE_END, until=END + 1))
    again = telemetry_pull_prometheus(
        now=_at(end2), url=prometheus.url, mapping={}, window=timedelta(seconds=window2), step=60
    )
    assert again.ok and again.duplicates == 4 * 4 and again.stored == 4 * 12
    _roll(_at(END))
    alert_services.alerts_evaluate(now=_at(END))

    alerts = {a.cables.values_list("label", flat=True).get(): a for a in Alert.objects.all()}
    assert set(alerts) == {"J-R1", "J-P1"}  # the healthy links J-R0 and J-P0 stay quiet
    rest, prom = alerts["J-R1"], alerts["J-P1"]
    assert _signature(rest) == ("fec_degradation", rest.severity, ("J-R1",))
    assert _signature(prom) == ("fec_degradation", rest.severity, ("J-P1",))
    assert "gpu-p:eth1" in prom.summary and "leaf-p:Ethernet4" in prom.summary
    assert Cable.objects.get(label="J-P1").status == CableStatus.DEGRADED
    assert Cable.objects.get(label="J-P0").status == CableStatus.IN_PRODUCTION
    # It asked for node_exporter's ethtool series at the configured step, over its window.
    q = prometheus.queries[-1]
    assert q["path"] == "/api/v1/query_range" and q["step"] == "60"
    assert "node_ethtool_rx_fec_corrected_blocks_phy" in q["query"]
    # ... in node_exporter's spelling too (rx -> received); the recording holds none of those
    assert "node_ethtool_received_fec_corrected_blocks_phy" in q["query"]
    assert float(q["end"]) - float(q["start"]) == window2
    runs = list(SyncRun.objects.filter(source=f"prometheus:{prometheus.url}").order_by("started_at"))
    assert [r.error for r in runs] == ["", ""]
    assert [r.summary["stored"] for r in runs] == [76, 48]


@pytest.fixture
def sonic_site(db):
    _, g = f.twin_port_device("gpu-s", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    _, s = f.twin_port_device("leaf-s", u=20, names=lambda c, k: f"Ethernet{4 * (2 * c + k)}")
    f.jumper("J-S0", g[0], s[0])
    f.jumper("J-S1", g[1], s[1])
    return s[:2]  # Ethernet0 and Ethernet4


def test_a_site_mapping_reads_its_own_metric_and_label_names_and_per_lane_power(sonic_site, prometheus):
    prometheus.by_end[END] = prometheus.recording("sonic-mapped.json")
    report = telemetry_pull_prometheus(
        now=_at(END), url=prometheus.url, mapping=SONIC_MAPPING, window=timedelta(minutes=5), step=60
    )
    assert report.ok and report.rejected == 0
    assert report.stored == 2 * 6  # two interfaces, six steps
    # The switch-wide total has no interface label: skipped and said so, not guessed.
    assert len(report.skipped) == 1 and "no host or interface label" in report.skipped[0]
    q = prometheus.queries[-1]["query"]
    assert "sonic_transceiver_rx_power_dbm" in q and "node_ethtool" not in q
    for port in sonic_site:
        rows = TelemetrySample.objects.filter(port=port).order_by("ts")
        assert rows.count() == 6
        last = rows.last()
        assert last.ts == _at(END)
        assert last.fec_corrected_cw == 1_500 * 600 and last.rx_bits == int(50e9 * 600)
        assert last.temperature_c == pytest.approx(41.5)
        lanes = TelemetryLaneSample.objects.get(port=port, ts=_at(END))
        assert lanes.rx_power_dbm == pytest.approx(RX_POWER_LANES)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (NOT_READY, "HTTP 503 without a JSON body: 'Service Unavailable'"),
        ("error-too-many-points.json", "HTTP 400, bad_data): exceeded maximum resolution of 11,000 points"),
        ("unreachable", "is not reachable"),
    ],
)
def test_prometheus_trouble_is_reported_not_raised(scenes, prometheus, answer, expected):
    url = prometheus.url
    if answer == "unreachable":
        prometheus.httpd.shutdown()
        prometheus.httpd.server_close()
    else:
        prometheus.queue.append(answer if isinstance(answer, tuple) else prometheus.recording(answer))
    report = telemetry_pull_prometheus(
        now=_at(END), url=url, mapping={}, window=timedelta(minutes=15), step=60
    )
    assert not report.ok and expected in report.error
    assert report.stored == 0 and not TelemetrySample.objects.exists()
    run = SyncRun.objects.get()
    assert run.source == f"prometheus:{url}" and expected in run.error


@pytest.mark.parametrize(
    ("mapping", "expected"),
    [
        (
            {"series": {"sonic_port_fec_x": "fec_corected"}},
            "unknown telemetry field(s): sonic_port_fec_x -> fec_corected",
        ),
        ({"device_regex": "(["}, "'device_regex' is not a regular expression"),
        ({"port_label": ["ifname"]}, "Unknown Prometheus mapping key(s): port_label"),
    ],
)
def test_a_malformed_mapping_is_a_clear_error_before_any_query(db, prometheus, mapping, expected):
    report = telemetry_pull_prometheus(
        now=_at(END), url=prometheus.url, mapping=mapping, window=timedelta(minutes=15), step=60
    )
    assert expected in report.error
    assert prometheus.queries == []


@pytest.fixture
def prometheus_worker(transactional_db, prometheus):
    """A real Celery worker configured, through its environment, to pull from ``prometheus``."""
    from tests.workers import Worker

    worker = Worker(
        env={
            "CABLETRACK_PROMETHEUS_URL": prometheus.url,
            "CABLETRACK_PROMETHEUS_WINDOW_SECONDS": "900",
            "CABLETRACK_PROMETHEUS_STEP_SECONDS": "60",
        }
    ).start()
    yield worker
    worker.stop()


def test_the_pull_task_on_a_real_worker_ingests_and_survives_an_unavailable_prometheus(
    prometheus, prometheus_worker
):
    from inventory.tasks import prometheus_pull_task
    from tests.workers import wait_for

    _twin_scene("gpu-p", "leaf-p", ("J-P0", "J-P1"), u=3)
    _, last, _ = DEGRADING_PULLS[-1]
    prometheus.queue += [NOT_READY, prometheus.recording(DEGRADING_PULLS[-1][0])]
    prometheus_pull_task.delay()
    failed = wait_for(lambda: SyncRun.objects.filter(error__contains="HTTP 503").first(), timeout=60)
    assert failed.summary["stored"] == 0
    prometheus_pull_task.delay()  # the same worker, the next period
    ok = wait_for(lambda: SyncRun.objects.filter(error="").first(), timeout=60)
    assert ok.summary["stored"] == 4 * 16 and ok.summary["rejected"] == 0
    assert TelemetrySample.objects.filter(ts=_at(last)).count() == 4
    assert not prometheus.queue
