"""How every mail the product sends by itself is retried: reminder digests, alert notices and
fault notices. One policy, so a mail server that is down is treated alike whatever the mail.

A failed send waits ``retry_in(attempts)`` (``CABLETRACK_REMINDER_RETRY_BASE_SECONDS``,
doubling, capped at ``CABLETRACK_REMINDER_RETRY_MAX_SECONDS``); a notice is given up after
``MAX_ATTEMPTS``; a claim older than ``CLAIM_LEASE`` is taken over (its sender died); a failure
in ``SERVER_DOWN`` says the server is unreachable, so a sweep stops trying the rest.
"""

from __future__ import annotations

import smtplib
from datetime import timedelta

from inventory.conf import app_settings

CLAIM_LEASE = timedelta(minutes=10)
MAX_ATTEMPTS = 5
# Failures that say the mail server is unreachable, not that this one message is refused.
SERVER_DOWN = (ConnectionError, TimeoutError, smtplib.SMTPConnectError, smtplib.SMTPServerDisconnected)


def retry_in(attempts: int) -> timedelta:
    """How long a mail waits after its ``attempts``-th failed send."""
    base = app_settings.reminder_retry_base_seconds
    cap = app_settings.reminder_retry_max_seconds
    return timedelta(seconds=min(cap, base * 2 ** max(0, attempts - 1)))
