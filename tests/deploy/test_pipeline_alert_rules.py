"""cabletrack's Prometheus rules, run by Prometheus' own rule engine (``promtool test rules``)
with two web replicas: each condition is one alert whatever the replica count; "pipeline
stalled" fires when the oldest waiting telemetry batch keeps ageing and stays quiet while the
queue drains; cabletrack down (every replica) and not scraped (no target) fire once."""

import re
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
  # Two web replicas of one cabletrack export the same database-wide gauges: one alert each.
  - interval: 1m
    input_series:
      # stalled: the oldest batch ages a minute every minute (both replicas report it)
      - series: cabletrack_telemetry_rollup_oldest_waiting_seconds{{job="cabletrack",instance="web-1:8000"}}
        values: 0+60x30
      - series: cabletrack_telemetry_rollup_oldest_waiting_seconds{{job="cabletrack",instance="web-2:8000"}}
        values: 0+60x30
      - series: cabletrack_telemetry_rollup_set_aside_ports{{job="cabletrack",instance="web-1:8000"}}
        values: 1+0x30
      - series: cabletrack_telemetry_rollup_set_aside_ports{{job="cabletrack",instance="web-2:8000"}}
        values: 1+0x30
      - series: up{{job="cabletrack",instance="web-1:8000"}}
        values: 1+0x30
      - series: up{{job="cabletrack",instance="web-2:8000"}}
        values: 1+0x30
    alert_rule_test:
      - eval_time: 12m
        alertname: CabletrackTelemetryPipelineStalled
        exp_alerts: []
      - eval_time: 20m
        alertname: CabletrackTelemetryPipelineStalled
        exp_alerts:
          - exp_labels: {{severity: page, job: cabletrack}}
            exp_annotations:
              summary: "Telemetry rollup stalled: the oldest batch has waited 20m 0s"
              description: "No rollup is written and no telemetry alert can fire while the queue does not drain. Check the Celery worker and beat, then /telemetry/pipeline/."
      - eval_time: 20m
        alertname: CabletrackTelemetryRollupSetAside
        exp_alerts:
          - exp_labels: {{severity: notify, job: cabletrack}}
            exp_annotations:
              summary: "1 port(s) set aside by the telemetry rollup"
              description: "Their rollup failed and is retried with backoff; the other ports are rolled up. The reason is on /telemetry/pipeline/ and GET /api/telemetry/pipeline/."
      - eval_time: 20m
        alertname: CabletrackDown
        exp_alerts: []
      - eval_time: 20m
        alertname: CabletrackNotScraped
        exp_alerts: []
  # The retest sweep could not date 2 cables, both replicas say so: one alert, after its hour.
  - interval: 1m
    input_series:
      - series: cabletrack_retest_sweep_set_aside_cables{{job="cabletrack",instance="web-1:8000"}}
        values: 2+0x90
      - series: cabletrack_retest_sweep_set_aside_cables{{job="cabletrack",instance="web-2:8000"}}
        values: 2+0x90
    alert_rule_test:
      - eval_time: 50m
        alertname: CabletrackRetestSweepSetAside
        exp_alerts: []
      - eval_time: 70m
        alertname: CabletrackRetestSweepSetAside
        exp_alerts:
          - exp_labels: {{severity: notify, job: cabletrack}}
            exp_annotations:
              summary: "2 cable(s) the retest sweep could not date"
              description: "The rest of the plant was swept; see /telemetry/pipeline/."
  # Busy but draining: batches never wait more than seconds; quiet.
  - interval: 1m
    input_series:
      - series: cabletrack_telemetry_rollup_oldest_waiting_seconds{{job="cabletrack",instance="web-1:8000"}}
        values: 5+0x30
      - series: cabletrack_telemetry_rollup_oldest_waiting_seconds{{job="cabletrack",instance="web-2:8000"}}
        values: 5+0x30
    alert_rule_test:
      - eval_time: 20m
        alertname: CabletrackTelemetryPipelineStalled
        exp_alerts: []
  # One replica down: the other serves, not a page. Both down: one CabletrackDown.
  - interval: 1m
    input_series:
      - series: up{{job="cabletrack",instance="web-1:8000"}}
        values: 0+0x30
      - series: up{{job="cabletrack",instance="web-2:8000"}}
        values: 1+0x9 0+0x20
    alert_rule_test:
      - eval_time: 8m
        alertname: CabletrackDown
        exp_alerts: []
      - eval_time: 15m
        alertname: CabletrackDown
        exp_alerts:
          - exp_labels: {{severity: page, job: cabletrack}}
            exp_annotations:
              summary: "cabletrack is down: no replica of job cabletrack answers /metrics"
              description: "Technicians' QR pages, telemetry ingest and every cabletrack alert stop with it. Check the web containers, then PostgreSQL and Redis."
  # Not scraped at all: no up series for the job.
  - interval: 1m
    input_series:
      - series: up{{job="node",instance="host-1:9100"}}
        values: 1+0x30
    alert_rule_test:
      - eval_time: 10m
        alertname: CabletrackNotScraped
        exp_alerts:
          - exp_labels: {{severity: page, job: cabletrack}}
            exp_annotations:
              summary: "cabletrack is not scraped: no target of job cabletrack"
              description: "Prometheus has no cabletrack target, so none of these rules can fire. Check the scrape configuration and service discovery."
"""


def test_the_rules_file_is_valid():
    out = subprocess.run([PROMTOOL, "check", "rules", str(RULES)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_one_alert_per_condition_with_two_replicas_and_down_fires(tmp_path):
    unit = tmp_path / "unit.yml"
    unit.write_text(UNIT.format(rules=RULES))
    out = subprocess.run([PROMTOOL, "test", "rules", str(unit)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_every_rule_is_run_with_two_replicas():
    """A rule added to the file without a two-replica case above fails here."""
    rules = set(re.findall(r"^\s*- alert: (\w+)", RULES.read_text(), flags=re.MULTILINE))
    tested = set(re.findall(r"alertname: (\w+)", UNIT))
    assert rules and rules - tested == set()
