"""The evidence for the one decision about a cable (``core.decision``), gathered set-based.

``cable_decisions`` reads it for a page of cables (the desk list, the API) in a fixed number of
queries; the cable page, which has read most of it already for its panels, hands what it has to
``cable_evidence`` directly. Both build the evidence with the same functions and decide with
``core.decision.cable_decide``: one answer everywhere.
"""

from inventory.selectors.decision.cables import (
    alert_fact,
    alerted_cable_ids,
    blocking_alerts,
    cable_decisions,
    cable_decisions_by_id,
    cable_evidence,
    cable_holds,
    cables_under_watch,
    fail_facts,
    has_open_alert,
    link_words,
    step_with_url,
)

__all__ = [
    "alert_fact",
    "alerted_cable_ids",
    "blocking_alerts",
    "cable_decisions",
    "cable_decisions_by_id",
    "cable_evidence",
    "cable_holds",
    "cables_under_watch",
    "fail_facts",
    "has_open_alert",
    "link_words",
    "step_with_url",
]
