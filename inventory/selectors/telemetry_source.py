"""Where the rule engine's rollups come from: the ingest side's per-port rollup table."""

from __future__ import annotations

from datetime import datetime

import numpy as np


def read_rollups(*, start: datetime, end: datetime):
    from .rule_inputs import RollupRows

    return RollupRows(port_id=np.zeros(0, np.int64), bucket_start=np.zeros(0), seconds=np.zeros(0))


def fec_series(*, port_ids: list[int], start: datetime, end: datetime, bucket_s: float) -> dict[int, list]:
    """Per port, per ``bucket_s`` from ``start``: (corrected codewords/s, pre-FEC BER) or Nones."""
    return {}


def latest_identity(*, port_ids: list[int]) -> dict[int, dict]:
    """Per port, the latest module identity and neighbour seen:
    ``{"module_serial", "neighbor_device", "neighbor_port", "ts"}``."""
    return {}


def port_stats(*, start: datetime, end: datetime, port_ids: list[int] | None = None) -> dict[int, dict]:
    """Per port over [start, end): corrected/uncorrectable codewords per second, pre-FEC BER
    (from bits), worst pre-FEC BER, mean temperature."""
    return {}
