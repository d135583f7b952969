"""Alert mail: who is told (the racks' teams), the notice's Message-ID, and the sender that
claims each notice before it goes out."""

from __future__ import annotations

import logging
import uuid
from datetime import datetime

from django.db.models import F, Q
from django.utils import timezone

from inventory.core.links import alert_url, cable_url
from inventory.core.mail import Addressee, automated_mail, mail_message_id
from inventory.core.mail_retry import CLAIM_LEASE, MAX_ATTEMPTS, SERVER_DOWN, retry_in
from inventory.models import Alert, AlertNotification, Device
from inventory.selectors.labels.facts import cable_ends_words
from inventory.selectors.plant.responsible import rack_teams, team_addressees

log = logging.getLogger(__name__)

# --- recipients -----------------------------------------------------------------------------------


def alert_recipients(*, devices: list[Device]) -> list[Addressee]:
    """The people responsible for the racks (rack team, else row team, else site team), each
    with why they are told (their team and the racks of this alert it looks after). Set-based:
    three queries whatever the number of devices."""
    return team_addressees(rack_teams(rack_ids={d.rack_id for d in devices if d.rack_id}))


def notice_message_id(alert: Alert, kind: str) -> str:
    return mail_message_id(f"alert-{alert.pk}-{kind}")


# --- mail -------------------------------------------------------------------------------------------


def alert_notice_body(alert: Alert) -> str:
    """The notice's text: what, how bad, what to do, and where each cable of the path runs (as its
    printed labels say it, so the reader can walk to it) with the link to its page."""
    segments = alert.evidence.get("segments", [])
    where = cable_ends_words(cable_ids=[s["cable_id"] for s in segments if s.get("cable_id")])
    path = [
        f"  {s['label']}: {where[s['cable_id']]}\n    {cable_url(s['label'])}"
        if s.get("cable_id") in where
        else f"  {s['label']}"
        for s in segments
    ]
    return "\n".join(
        [
            alert.summary,
            "",
            f"Severity: {alert.get_severity_display()}",
            f"Recommendation: {alert.recommendation}",
            "",
            "Path:" if path else "Path: none recorded",
            *path,
            "",
            f"Details: {alert_url(alert.pk)}",
        ]
    )


def alert_notifications_send(*, now: datetime, limit: int = 200) -> int:
    """Send unsent notices. Each is claimed first (a conditional UPDATE), so concurrent senders
    never both send it; a claim older than the lease is taken over (the sender died).

    Remaining window, documented: if the process dies after the SMTP server accepted the
    message and before ``sent_at`` is written, the notice goes again after the lease, with the
    same Message-ID.

    Backoff per notice: a failed send keeps its claim, with the lease set to run out when the
    notice's retry time comes (``core.mail_retry.retry_in``: 60 s, 120 s, 240 s ... by default), so
    no sender picks it up before then; every alert opened enqueues this sender, and without
    the backoff each run retried every unsent notice against a server that is down. A failure
    that says the server is unreachable also ends the run: the rest wait for the next one.
    After ``MAX_ATTEMPTS`` failed sends a notice is given up (its error stays on the row).
    """
    sent = 0
    pending = (
        AlertNotification.objects.filter(sent_at__isnull=True, attempts__lt=MAX_ATTEMPTS)
        .filter(Q(claimed_at__isnull=True) | Q(claimed_at__lt=now - CLAIM_LEASE))
        .select_related("alert")
        .order_by("created_at", "id")[:limit]
    )
    for n in pending:
        token = uuid.uuid4().hex
        won = AlertNotification.objects.filter(pk=n.pk, sent_at__isnull=True, claimed_at=n.claimed_at).update(
            claimed_at=now, claim_token=token, attempts=F("attempts") + 1
        )
        if not won:
            continue
        if not n.recipients:
            AlertNotification.objects.filter(pk=n.pk, claim_token=token).update(
                sent_at=now, error="no recipients: no team responsible for these racks"
            )
            continue
        a = n.alert
        body = n.body or alert_notice_body(a)
        msg = automated_mail(
            # The summary names modules as collectors report them: made one line (or the mail
            # library refuses the header and the notice is never delivered) and cut at a word.
            subject=n.subject or f"[cabletrack] {a.get_severity_display()}: {a.summary}",
            body=body,
            to=n.recipients,
            message_id=n.message_id,
            why=n.why,
        )
        try:
            msg.send(fail_silently=False)
        except Exception as exc:  # keep the claim until the retry time (see the docstring)
            retry_at = now + retry_in(n.attempts + 1)
            AlertNotification.objects.filter(pk=n.pk, claim_token=token).update(
                claimed_at=retry_at - CLAIM_LEASE, error=str(exc)[:300]
            )
            log.warning("alert notice %s not sent (retry after %s): %s", n.pk, retry_at, exc)
            if isinstance(exc, SERVER_DOWN):
                break
            continue
        AlertNotification.objects.filter(pk=n.pk, claim_token=token).update(sent_at=timezone.now(), error="")
        sent += 1
    return sent
