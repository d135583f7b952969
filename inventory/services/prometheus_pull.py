"""The Prometheus path: pull windowed series and ingest them like a collector's POST."""

from __future__ import annotations

from datetime import datetime, timedelta

import orjson
from django.conf import settings

from ..integrations.prometheus import prometheus_pull


def telemetry_pull_prometheus(
    *, now: datetime, url: str | None = None, mapping: dict | None = None, window: timedelta | None = None
):
    """Pull the last window from Prometheus and ingest it; returns the ingest result.

    Idempotent: the window overlaps the last run on purpose, and samples already stored
    (same port, same timestamp, same values) are not stored twice.
    """
    from ..services.telemetry import telemetry_ingest
    from ..telemetry.decode import decode_json

    url = url or settings.CABLETRACK_PROMETHEUS_URL
    mapping = mapping if mapping is not None else settings.CABLETRACK_PROMETHEUS_MAPPING
    window = window or timedelta(seconds=settings.CABLETRACK_PROMETHEUS_WINDOW_SECONDS)
    pulled = prometheus_pull(
        url=url, mapping=mapping, now=now, window=window, step=settings.CABLETRACK_PROMETHEUS_STEP_SECONDS
    )
    body = orjson.dumps({"samples": pulled.samples})
    decoded = decode_json(
        body, now=now, max_future=timedelta(seconds=300), max_samples=max(1, len(pulled.samples))
    )
    return telemetry_ingest(decoded=decoded, now=now)
