"""Where the documentation explains a page or an API error: one table, read by the "?" in every
page's header and by the API's error answers (``help``), so both send people to the same place.

A topic is a page of the documentation site (``docs/``, built by ``make docs``), with an optional
``#anchor``; ``docs_url`` makes it a link under ``CABLETRACK_DOCS_URL``. A test builds the site
and checks that every topic here is a page it has, so a moved page fails the build, not a user.
"""

from __future__ import annotations

from inventory.conf import app_settings

HOME = ""

# Page (URL name) -> documentation topic. Pages not named here link to the documentation's home.
PAGE_TOPICS: dict[str, str] = {
    "home": "technician/",
    "search": "technician/#search",
    "cable-page": "technician/#the-cable-page",
    "rack-page": "technician/#the-rack-page",
    "rack-list": "technician/tasks/#find-a-rack",
    "device-page": "technician/#devices-and-ports",
    "port-page": "technician/#devices-and-ports",
    "transceiver-detail": "technician/#devices-and-ports",
    "cable-test-olts": "technician/tests/",
    "cable-test-otdr": "technician/tests/",
    "cable-inspect": "technician/tests/",
    "test-import": "technician/tests/",
    "commissioning-report": "technician/tests/",
    "cable-fault": "technician/tasks/#report-a-fault",
    "cable-serviced": "technician/tasks/#re-seat-or-clean",
    "cable-swap": "technician/tasks/#swap-a-module",
    "cable-replace": "technician/tasks/#replace-a-cable",
    "cable-set-status": "technician/#the-cable-page",
    "journal-add": "technician/#the-journal",
    "labels-print": "technician/labels/",
    "label-batch": "technician/labels/",
    "label-batch-status": "technician/labels/",
    "retests-plan": "technician/retests/",
    "reminder-preferences": "technician/retests/",
    "alert-list": "engineer/alerts/",
    "alert-detail": "engineer/alerts/",
    "maintenance": "engineer/alerts/#maintenance",
    "telemetry-pipeline": "integrator/telemetry/",
    "reconciliation": "engineer/alerts/#reconciliation",
    "reconciliation-preview": "engineer/alerts/#reconciliation",
    "reconciliation-apply": "engineer/alerts/#reconciliation",
    "sync-conflicts": "engineer/netbox/",
    "forecast": "engineer/forecast/",
    "vendor-compare": "engineer/alerts/#alert-pages",
    "repair-report": "engineer/alerts/#the-report",
    "impact-report": "engineer/impact/#the-monthly-report",
    "rack-bringup": "engineer/alerts/#wiring-validation",
    "cable-list": "engineer/",
    "cable-create": "engineer/",
    "cable-edit": "engineer/",
    "cable-import": "engineer/#import-a-cable-plan",
    "transceiver-list": "engineer/",
    "transceiver-create": "engineer/",
    "transceiver-edit": "engineer/",
    "profile": "integrator/api/#tokens",
}

# API answers whose fix the documentation explains: status -> topic; the telemetry endpoint's own.
API_STATUS_TOPICS: dict[int, str] = {
    400: "integrator/api/#errors",
    401: "integrator/api/#tokens",
    403: "operator/security/#roles-and-what-they-may-do",
    409: "integrator/api/#retries-and-concurrent-writes",
    412: "integrator/api/#retries-and-concurrent-writes",
    413: "integrator/api/#limits",
    415: "integrator/api/#errors",
    428: "integrator/api/#retries-and-concurrent-writes",
    429: "integrator/api/#limits",
}
TELEMETRY_TOPIC = "integrator/telemetry/"
CSRF_TOPIC = "integrator/api/#authentication"


def docs_url(topic: str, *, absolute: bool = False) -> str:
    """The link to ``topic`` under ``CABLETRACK_DOCS_URL``; ``absolute`` for answers read away
    from the site (API clients): a relative docs URL is joined to ``CABLETRACK_BASE_URL``."""
    base = app_settings.docs_url
    if not base.endswith("/"):
        base += "/"
    if absolute and base.startswith("/"):
        base = app_settings.base_url + base
    return base + topic


def page_help(url_name: str | None) -> str:
    return docs_url(PAGE_TOPICS.get(url_name or "", HOME))


def api_help(status: int, path: str, detail: str = "") -> str | None:
    """The link an API error of this status on this path carries, or None (no documented fix).
    A session's write without its CSRF token is a 403 too, but no role would let it through:
    its fix is how a session (or a token) authenticates."""
    if path.startswith("/api/telemetry/") and status in (400, 413, 415, 422):
        return docs_url(TELEMETRY_TOPIC, absolute=True)
    if status == 403 and detail.startswith("CSRF Failed"):
        return docs_url(CSRF_TOPIC, absolute=True)
    topic = API_STATUS_TOPICS.get(status)
    return docs_url(topic, absolute=True) if topic else None
