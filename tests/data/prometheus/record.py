"""Record the Prometheus HTTP API responses the Prometheus-pull tests serve.

Not run by the tests. It writes the scraped series (the counters a node_exporter ethtool
collector, or a site's SONiC exporter, would have exposed every 10 s) as OpenMetrics with
timestamps, backfills them into a real Prometheus TSDB (``promtool tsdb
create-blocks-from openmetrics``), starts that Prometheus on loopback, sends it exactly the
queries ``inventory.core.interop.prometheus`` sends, and saves each response body verbatim.

    apt-get install prometheus     # Debian's prometheus + promtool (2.42 was used)
    python tests/data/prometheus/record.py

The counter shapes are the ones ``tests/inventory/services/test_alerts_replay.py`` replays
through ``POST /api/telemetry/``: 400G links at a pre-FEC BER of 5e-9, and on one receiver
(leaf-p Ethernet4, the far end of link 1) a climb to 400x for the last 12 minutes.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent.parent))

from tests.inventory.services.telemetry.prometheus_scenario import (  # noqa: E402
    DEGRADING_PULLS,
    END,
    MAPPED_PULLS,
    SONIC_MAPPING,
    degrading_counters,
    sonic_series,
)

ETHTOOL = {
    "fec_corrected_bits": "rx_corrected_bits_phy",
    "fec_corrected_codewords": "rx_fec_corrected_blocks_phy",
    "fec_uncorrectable_codewords": "rx_fec_uncorrectable_blocks_phy",
    "rx_bits": "rx_bits_phy",
    "link_down_events": "link_down_events_phy",
}


def openmetrics_degrading() -> str:
    lines: dict[str, list[str]] = {}
    for (device, port), rows in degrading_counters().items():
        for ts, fields in rows:
            for fld, stat in ETHTOOL.items():
                name = f"node_ethtool_{stat}"
                lines.setdefault(name, []).append(
                    f'{name}{{device="{port}",instance="{device}:9100",job="node"}} {fields[fld]} {ts:.3f}'
                )
    return "".join(f"# TYPE {n} gauge\n" + "\n".join(v) + "\n" for n, v in lines.items())


def openmetrics_sonic() -> str:
    lines: dict[str, list[str]] = {}
    for name, labels, points in sonic_series():
        lab = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
        lines.setdefault(name, []).extend(f"{name}{{{lab}}} {v} {ts:.3f}" for ts, v in points)
    return "".join(f"# TYPE {n} gauge\n" + "\n".join(v) + "\n" for n, v in lines.items())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    from inventory.core.interop.prometheus import DEFAULT_MAPPING, query_params

    work = Path(tempfile.mkdtemp(prefix="prom-record-"))
    try:
        om = work / "series.om"
        om.write_text(openmetrics_degrading() + openmetrics_sonic() + "# EOF\n")
        data = work / "data"
        subprocess.run(
            ["promtool", "tsdb", "create-blocks-from", "openmetrics", str(om), str(data)], check=True
        )
        port = free_port()
        proc = subprocess.Popen(
            [
                "prometheus",
                f"--config.file={work / 'prometheus.yml'}",
                f"--storage.tsdb.path={data}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--storage.tsdb.retention.time=100y",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        (work / "prometheus.yml").write_text("global:\n  scrape_interval: 10s\nscrape_configs: []\n")
        try:
            base = f"http://127.0.0.1:{port}"
            for _ in range(100):
                try:
                    urllib.request.urlopen(f"{base}/-/ready", timeout=1)  # noqa: S310 - loopback
                    break
                except OSError:
                    time.sleep(0.2)

            def record(name: str, mapping: dict, end: float, window: float, step: int = 60) -> None:
                q = query_params({**DEFAULT_MAPPING, **mapping}, end=end, window=window, step=step)
                url = f"{base}/api/v1/query_range?{urllib.parse.urlencode(q)}"
                try:
                    with urllib.request.urlopen(url, timeout=10) as resp:  # noqa: S310 - loopback
                        status, body = resp.status, resp.read()
                except urllib.error.HTTPError as exc:
                    status, body = exc.code, exc.read()
                (HERE / name).write_bytes(body)
                print(name, status, len(body), "bytes")

            for name, end, window in DEGRADING_PULLS:
                record(name, {}, end, window)
            for name, end, window in MAPPED_PULLS:
                record(name, SONIC_MAPPING, end, window)
            # A query Prometheus refuses: one point a second over a year is past its
            # 11,000-points-per-series limit (HTTP 400, "status": "error").
            record("error-too-many-points.json", {}, END, 365 * 86400, step=1)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cabletrack.settings")
    import django

    django.setup()
    main()
