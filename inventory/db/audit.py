"""Who did it: every history row names the user and, for API calls, the token they used.

simple-history fills ``history_user`` from the request (DRF copies the token's user onto the
Django request once it authenticates). This adds the token to ``history_change_reason``
(``via token ct_AbCdEf12 (collector-1); <reason>``) so a write made by a collector's or a
script's token is told apart from the same user at the keyboard. The writers that keep history
themselves (the sanctioned bulk writer ``inventory.db.bulk``, the retest due-date recompute)
apply the same rule to the history rows they write, through :func:`attributed`.
"""

from __future__ import annotations

from django.dispatch import receiver
from simple_history.models import HistoricalRecords
from simple_history.signals import pre_create_historical_record

from inventory.models import ApiToken

TOKEN_MARK = "via token "  # noqa: S105 - a text marker, not a secret
REASON_MAX = 100  # simple-history's history_change_reason length


def current_request():
    return getattr(HistoricalRecords.context, "request", None)


def current_token():
    auth = getattr(current_request(), "auth", None)
    return auth if isinstance(auth, ApiToken) else None


def current_user():
    user = getattr(current_request(), "user", None)
    return user if user is not None and user.is_authenticated else None


def reason_with_actor(reason: str | None) -> str | None:
    """``reason`` marked with the token of the request under way, if any (once: a reason marked
    already, as a write deferred to after the commit carries it, is left as it is)."""
    token = current_token()
    if token is None or (reason or "").startswith(TOKEN_MARK):
        return reason
    mark = f"{TOKEN_MARK}{token.prefix} ({token.name})"
    text = f"{mark}; {reason}" if reason else mark
    return text[:REASON_MAX]


def attributed(actor, reason: str | None):
    """Who and why for a history row written outside simple-history: ``actor`` when given, else
    the user of the request under way (none in a periodic task), and the reason marked with the
    request's token. Work deferred to after the commit (``transaction.on_commit``) calls this when
    it is scheduled and keeps the answer: by the time it runs the request may be over, and the
    change is still the one its user caused."""
    return (actor if actor is not None else current_user()), reason_with_actor(reason)


def token_of(reason: str | None) -> str | None:
    """The token prefix a history reason names, if any."""
    if reason and reason.startswith(TOKEN_MARK):
        return reason[len(TOKEN_MARK) :].split(" ", 1)[0].rstrip(";")
    return None


@receiver(pre_create_historical_record, dispatch_uid="inventory.db.audit.token")
def _mark_token(sender, history_instance, **kwargs):
    history_instance.history_change_reason = reason_with_actor(history_instance.history_change_reason)
