"""The capacity model and its page: the sizing arithmetic on costs whose answer is known by
hand, and ``docs/operator/capacity.md``'s tables equal to what the model makes of the committed
benchmark snapshot (an edited figure or a changed model without a rewritten page fails)."""

from __future__ import annotations

import dataclasses

import pytest

from inventory.core.capacity import Assumptions, UnitCosts, size
from tools import capacity as page

ZERO = UnitCosts(
    ingest_web_us=0, ingest_pg_us=0, rollup_worker_us=0, rollup_pg_us=0, alert_worker_us=0, alert_pg_us=0,
    page_web_ms=0, page_pg_ms=0, raw_sample_bytes=0, rollup_row_bytes=0, cable_bytes=0, web_rss_mb=0,
    worker_rss_mb=0, cables_per_gpu=0, ports_per_gpu=1,
)  # fmt: skip


def test_one_cpu_second_per_second_needs_two_cores_at_half_load_and_samples_follow_ports_and_interval():
    u = dataclasses.replace(ZERO, rollup_worker_us=10_000)  # 100 samples/s x 10 ms = 1 CPU-s/s
    s = size(1000, u)
    assert (s.ports, s.samples_per_s) == (1000, 100)
    assert s.workers.cores == 2.0
    assert s.web.cores == s.postgres.cores == 1.0  # nothing to do still takes one core
    assert size(1000, u, Assumptions(sample_interval_s=20)).workers.cores == 1.0


def test_raw_disk_is_rate_times_retention_times_bytes_with_the_free_space():
    u = dataclasses.replace(ZERO, raw_sample_bytes=100)
    s = size(1000, u)  # 100 samples/s, 14 days, 100 bytes, twice
    assert s.postgres.disk_gb == pytest.approx(2 * 100 * 86_400 * 14 * 100 / 1e9)
    assert size(1000, u, Assumptions(raw_retention_days=28)).postgres.disk_gb == pytest.approx(
        2 * s.postgres.disk_gb
    )
    # written twice (WAL and table), in 8 kB pages
    assert s.postgres.write_iops == pytest.approx(2 * 100 * 100 / 8192)


def test_the_capacity_page_shows_what_the_model_makes_of_the_snapshot():
    text = page.PAGE.read_text()
    assert page.page_block(text) == page.generated()
    for gpus in ("4,096", "32,768", "131,072", "500,000"):
        assert f"| {gpus} |" in text
