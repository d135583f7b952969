"""The "pipeline stalled" alert, run by Prometheus' own rule engine (``promtool test rules``):
it fires when the oldest waiting telemetry batch keeps ageing, and stays quiet while the queue
drains, however busy."""

import shutil
import subprocess
from pathlib import Path

import pytest

RULES = Path(__file__).resolve().parents[2] / "deploy" / "prometheus" / "cabletrack-alerts.yml"
PROMTOOL = shutil.which("promtool")
pytestmark = pytest.mark.skipif(PROMTOOL is None, reason="promtool (Prometheus 2.x) is not installed")

UNIT = """
rule_files: [{rules}]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      # stalled: the oldest batch ages a minute every minute
      - series: cabletrack_telemetry_rollup_oldest_waiting_seconds{{instance="stalled"}}
        values: 0+60x30
      # busy but draining: batches never wait more than seconds
      - series: cabletrack_telemetry_rollup_oldest_waiting_seconds{{instance="busy"}}
        values: 5+0x30
      - series: cabletrack_telemetry_rollup_set_aside_ports{{instance="busy"}}
        values: 1+0x30
    alert_rule_test:
      - eval_time: 12m
        alertname: CabletrackTelemetryPipelineStalled
        exp_alerts: []
      - eval_time: 20m
        alertname: CabletrackTelemetryPipelineStalled
        exp_alerts:
          - exp_labels: {{severity: page, instance: stalled}}
            exp_annotations:
              summary: "Telemetry rollup stalled: the oldest batch has waited 20m 0s"
              description: "No rollup is written and no telemetry alert can fire while the queue does not drain. Check the Celery worker and beat, then /telemetry/pipeline/."
      - eval_time: 20m
        alertname: CabletrackTelemetryRollupSetAside
        exp_alerts:
          - exp_labels: {{severity: notify, instance: busy}}
            exp_annotations:
              summary: "1 port(s) set aside by the telemetry rollup"
              description: "Their rollup failed and is retried with backoff; the other ports are rolled up. The reason is on /telemetry/pipeline/ and GET /api/telemetry/pipeline/."
"""


def test_the_rules_file_is_valid():
    out = subprocess.run([PROMTOOL, "check", "rules", str(RULES)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_stalled_alert_fires_on_a_queue_that_stops_draining_only(tmp_path):
    unit = tmp_path / "unit.yml"
    unit.write_text(UNIT.format(rules=RULES))
    out = subprocess.run([PROMTOOL, "test", "rules", str(unit)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
