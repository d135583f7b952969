"""``drain_verdict``: the one decision whether taking a link out of service is safe, read by the
alert page and ``GET /api/alerts/<id>/drain/`` alike."""

from __future__ import annotations

from datetime import datetime

from inventory.selectors.collectives.drain import DrainVerdict, drain_check
from inventory.services.alerts.evaluate import rule_config


def drain_verdict(*, link_id: int, now: datetime) -> DrainVerdict:
    """Safe to drain ``link_id`` now? The minimum uplink share is the rule profile's
    ``drain_min_uplink_share`` (``CABLETRACK_ALERT_RULES``), 75% by default."""
    return drain_check(
        link_id=link_id, now=now, min_uplink_share=rule_config().default.drain_min_uplink_share
    )
