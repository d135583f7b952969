"""The Prometheus path: pull windowed series and ingest them like a collector's POST.

Every run is recorded as a ``SyncRun`` (source ``prometheus:<url>``): what was pulled, stored,
already there, rejected or skipped, or the error that stopped it. A Prometheus that is down,
refuses the query or answers garbage is reported there and in the log; the periodic task does
not fail, and the next run simply tries again (the window overlaps the last one).
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta

import orjson
from django.utils import timezone

from inventory.conf import app_settings
from inventory.core.interop.prometheus import PrometheusError, prometheus_pull
from inventory.core.telemetry.decode import decode_json
from inventory.models import SyncRun
from inventory.services.telemetry.ingest import telemetry_ingest

log = logging.getLogger(__name__)


@dataclass
class PullReport:
    url: str
    series: int = 0
    samples: int = 0
    stored: int = 0
    duplicates: int = 0
    rejected: int = 0
    rejections: list[dict] = field(default_factory=list)  # the first few, as the ingest says them
    skipped: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error

    def as_dict(self) -> dict:
        return asdict(self)


def telemetry_pull_prometheus(
    *,
    now: datetime,
    url: str | None = None,
    mapping: dict | None = None,
    window: timedelta | None = None,
    step: int | None = None,
) -> PullReport:
    """Pull the window ending at ``now`` from Prometheus, ingest it, record the run.

    Idempotent: the window overlaps the last run on purpose, and samples already stored
    (same port, same timestamp, same values) are counted as duplicates, not stored twice.
    Never raises for Prometheus trouble: the report (and its ``SyncRun``) carries the error.
    """
    url = url if url is not None else app_settings.prometheus_url
    mapping = mapping if mapping is not None else app_settings.prometheus_mapping
    window = window or timedelta(seconds=app_settings.prometheus_window_seconds)
    step = step or app_settings.prometheus_step_seconds
    report = PullReport(url=url)
    started = timezone.now()
    try:
        pulled = prometheus_pull(url=url, mapping=mapping, now=now, window=window, step=step)
    except PrometheusError as exc:
        report.error = str(exc)
        log.warning("Prometheus pull failed: %s", exc)
    else:
        report.series, report.samples = pulled.series, len(pulled.samples)
        report.skipped, report.warnings = pulled.skipped[:20], pulled.warnings[:20]
        if pulled.samples:
            body = orjson.dumps({"samples": pulled.samples})
            decoded = decode_json(
                body,
                now=now,
                max_future=timedelta(seconds=300),
                max_samples=len(pulled.samples),
                max_age=timedelta(days=app_settings.telemetry_raw_retention_days),
            )
            result = telemetry_ingest(decoded=decoded, now=now)
            report.stored, report.duplicates, report.rejected = (
                result.stored,
                result.duplicates,
                result.rejected,
            )
            report.rejections = [e.as_dict() for e in result.errors[:20]]
        if report.skipped or report.rejected:
            log.info(
                "Prometheus pull: %s series skipped, %s samples rejected",
                len(pulled.skipped),
                report.rejected,
            )
    summary = report.as_dict()
    error = summary.pop("error")
    SyncRun.objects.create(
        source=f"prometheus:{url}"[:200],
        site="",
        started_at=started,
        finished_at=timezone.now(),
        summary=summary,
        error=error,
    )
    return report
