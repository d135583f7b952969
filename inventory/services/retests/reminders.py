"""Retest reminder mail: claimed in the database before sending, so never sent twice.

How "never twice" holds
-----------------------
1. **Claim.** The sweep inserts one ``RetestReminder`` row per (recipient, cable, due date,
   kind) with ``ON CONFLICT DO NOTHING`` against a unique constraint. A concurrent sweep, a
   redelivered task or tomorrow's sweep cannot claim the same reminder again. Each row is
   attached, in the same transaction, to the recipient's one open (``pending``) digest.
2. **Lease.** A sender takes a digest with one conditional ``UPDATE ... SET status='sending'
   WHERE status IN ('pending','retry')``: exactly one worker wins; the others do nothing. The
   digest's Message-ID was fixed when it was created, so every attempt carries the same one.
3. **Record.** After the SMTP server accepts the message (250 to DATA) the digest is marked
   ``sent``. Transient SMTP errors (4xx, connection refused or dropped) put it in ``retry`` with
   exponential backoff; permanent ones (5xx) in ``failed``, shown in the admin.

The one window SMTP leaves: the server accepted the message and the worker died before step 3
committed. Nothing on our side can know whether the server kept it. The dispatcher finds the
digest still ``sending`` after its lease and sends it again, with the same Message-ID, so a
recipient (or a mail system that deduplicates on Message-ID) can recognise the copy. We choose
at-least-once in that window (a reminder that might be lost matters more than a possible
duplicate of it); ``tests/inventory/test_retest_worker.py`` reproduces the window with a real
worker killed by SIGKILL after the server took the mail, and shows the copy and its Message-ID.
"""

from __future__ import annotations

import hashlib
import logging
import smtplib
import socket
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.mail import EmailMultiAlternatives
from django.db import IntegrityError, connection, transaction
from django.db.models import F, Q
from django.template.loader import render_to_string
from django.utils import timezone

from inventory.conf import app_settings
from inventory.core.choices import DigestStatus, ReminderKind, ReminderMode
from inventory.core.links import site_url
from inventory.core.mail import automated_mail, mail_message_id, why_line
from inventory.core.mail_retry import retry_in
from inventory.core.words import and_list
from inventory.models import ReminderDigest, RetestReminder, RetestSweepRun, Team, UserProfile
from inventory.selectors.plant.responsible import address_teams
from inventory.selectors.retests import worklist as retest_selectors
from inventory.services.ops.enqueue import enqueue_on_commit
from inventory.services.retests import due as retest_services

log = logging.getLogger(__name__)


class TransientSendError(Exception):
    """The SMTP server could not take the mail now; try again after ``retry_in`` seconds."""

    def __init__(self, message: str, retry_in: int):
        super().__init__(message)
        self.retry_in = retry_in


@dataclass(frozen=True)
class Recipient:
    email: str
    mode: str = ReminderMode.IMMEDIATE
    weekday: int = 0
    hour: int = 7


def next_digest_time(*, now: datetime, mode: str, weekday: int, hour: int) -> datetime:
    """When a recipient's digest goes out: now, the next ``hour`` o'clock, or the next ``weekday``."""
    if mode == ReminderMode.IMMEDIATE:
        return now
    local = timezone.localtime(now)
    at = local.replace(hour=hour, minute=0, second=0, microsecond=0)
    if mode == ReminderMode.WEEKLY:
        at += timedelta(days=(weekday - at.weekday()) % 7)
        if at < local:
            at += timedelta(days=7)
    elif at < local:
        at += timedelta(days=1)
    return at


def _team_recipients() -> tuple[dict[int, list[Recipient]], dict[int, Recipient | None]]:
    """Per team: its mailbox and members (with their preferences); and its lead. Three queries."""
    profiles = {
        p.user_id: p
        for p in UserProfile.objects.all().only("user_id", "reminder_mode", "digest_weekday", "digest_hour")
    }

    def person(user) -> Recipient | None:
        if user is None or not user.email or not user.is_active:
            return None
        p = profiles.get(user.pk)
        if p is None:
            return Recipient(email=user.email.lower())
        return Recipient(
            email=user.email.lower(), mode=p.reminder_mode, weekday=p.digest_weekday, hour=p.digest_hour
        )

    members: dict[int, list[Recipient]] = {}
    leads: dict[int, Recipient | None] = {}
    for team in Team.objects.select_related("lead").prefetch_related("members"):
        people = [Recipient(email=team.email.lower())] if team.email else []
        people += [r for r in (person(u) for u in team.members.all()) if r is not None]
        seen: set[str] = set()
        members[team.pk] = [r for r in people if not (r.email in seen or seen.add(r.email))]
        leads[team.pk] = person(team.lead)
    return members, leads


def message_id_for(*, recipient: str, digest_pk: int) -> str:
    """Deterministic: the same digest always carries the same Message-ID, attempt after attempt."""
    token = hashlib.sha256(f"{recipient}|{digest_pk}|{settings.SECRET_KEY}".encode()).hexdigest()[:20]
    return mail_message_id(f"retest-digest-{digest_pk}.{token}")


def _open_digest(recipient: Recipient, now: datetime) -> ReminderDigest:
    """The recipient's pending digest, locked; created if there is none (race-safe)."""
    for _ in range(3):
        digest = (
            ReminderDigest.objects.select_for_update()
            .filter(recipient=recipient.email, status=DigestStatus.PENDING)
            .first()
        )
        if digest is not None:
            return digest
        try:
            with transaction.atomic():
                digest = ReminderDigest.objects.create(
                    recipient=recipient.email,
                    message_id=f"<unset-{recipient.email}-{now.timestamp()}>",
                    created_at=now,
                    send_after=next_digest_time(
                        now=now, mode=recipient.mode, weekday=recipient.weekday, hour=recipient.hour
                    ),
                )
                digest.message_id = message_id_for(recipient=recipient.email, digest_pk=digest.pk)
                digest.save(update_fields=["message_id"])
                return digest
        except IntegrityError:  # a concurrent sweep opened one first: use theirs
            continue
    raise RuntimeError(f"could not open a digest for {recipient.email}")


def _insert_claims(*, recipient: str, keys: list[tuple], digest_id: int, now: datetime) -> int:
    """Insert the claims, skipping any that exist (the unique constraint decides). Returns how
    many were new. One statement on PostgreSQL (arrays through ``unnest``), ``executemany`` on
    SQLite: no model instance per row."""
    table = connection.ops.quote_name(RetestReminder._meta.db_table)
    cols = "recipient, cable_id, due_date, kind, digest_id, claimed_at"
    with connection.cursor() as cur:
        if connection.vendor == "postgresql":
            cur.execute(
                f"INSERT INTO {table} ({cols}) SELECT %s, c, d, k, %s, %s "  # noqa: S608 - table and column names from model _meta, quoted; values are parameters
                "FROM unnest(%s::bigint[], %s::date[], %s::text[]) AS t(c, d, k) "
                "ON CONFLICT DO NOTHING",
                [
                    recipient,
                    digest_id,
                    now,
                    [k[0] for k in keys],
                    [k[1] for k in keys],
                    [str(k[2]) for k in keys],
                ],
            )
            return cur.rowcount
        stamp = connection.ops.adapt_datetimefield_value(now)
        before = connection.connection.total_changes
        cur.executemany(
            f"INSERT OR IGNORE INTO {table} ({cols}) VALUES (%s, %s, %s, %s, %s, %s)",  # noqa: S608 - table and column names from model _meta, quoted; values are parameters
            [(recipient, c, d.isoformat(), str(k), digest_id, stamp) for c, d, k in keys],
        )
        return connection.connection.total_changes - before


@dataclass(frozen=True)
class ClaimResult:
    claimed: int
    digests_ready: list[int]


def _crossings(*, since_day: date, today: date, remind: timedelta, escalate_after: int) -> list[tuple]:
    """The due-date ranges whose reminder changed between two sweep days: due soon (entered the
    window), overdue (passed the date), escalated (overdue past ``escalate_after`` days)."""
    escalate = timedelta(days=escalate_after)
    return [
        (since_day + remind + timedelta(days=1), today + remind),
        (since_day, today - timedelta(days=1)),
        (since_day - escalate + timedelta(days=1), today - escalate),
    ]


def reminders_claim(
    *, now: datetime, cable_ids: list[int] | None = None, since_day: date | None = None
) -> ClaimResult:
    """Claim every reminder that is due and not yet claimed, into per-recipient digests.

    Set-based: one worklist query for the cables due within the reminder window, one query for
    the claims that already exist, then per recipient one transaction with a bulk insert.
    Returns the digests ready to send now (the caller enqueues them after commit).

    Incremental when ``since_day`` (the last finished sweep's day) is given: only the cables of
    ``cable_ids`` (their facts changed) and those whose date crossed a reminder threshold since
    that day (three ranges on the ``cable_retest_id`` index) are read, so the daily run costs
    what changed, not every overdue cable of the plant. Anything else was claimed before.
    """
    today = timezone.localdate(now)
    remind = timedelta(days=app_settings.retest_remind_days)
    escalate_after = app_settings.retest_escalate_days
    only = None
    if since_day is not None and cable_ids is not None:
        ranges = _crossings(since_day=since_day, today=today, remind=remind, escalate_after=escalate_after)
        only = retest_selectors.cables_due_between(ranges) | set(cable_ids)
    items = retest_selectors.retest_due_owners(until=today + remind, only=only)
    if not items:
        return ClaimResult(0, [])
    members, leads = _team_recipients()
    wanted: dict[Recipient, set[tuple[int, object, str]]] = defaultdict(set)
    escalate_before = today - timedelta(days=escalate_after)
    for cable_id, due, team_id in items:
        if team_id is None:
            continue
        kind = ReminderKind.OVERDUE if due < today else ReminderKind.DUE_SOON
        for r in members.get(team_id, ()):
            wanted[r].add((cable_id, due, kind))
        lead = leads.get(team_id)
        if lead is not None and due <= escalate_before:
            wanted[lead].add((cable_id, due, ReminderKind.ESCALATION))
    # Claims already made for these due dates (a range, not a list of ids: no parameter limit);
    # incrementally, the claims of the few cables read (by cable, in chunks).
    existing: set[tuple] = set()
    if only is None:
        existing.update(
            RetestReminder.objects.filter(
                due_date__gte=min(due for _, due, _ in items), due_date__lte=today + remind
            ).values_list("recipient", "cable_id", "due_date", "kind")
        )
    else:
        ids = sorted({cable_id for cable_id, _, _ in items})
        for start in range(0, len(ids), 5000):
            existing.update(
                RetestReminder.objects.filter(cable_id__in=ids[start : start + 5000]).values_list(
                    "recipient", "cable_id", "due_date", "kind"
                )
            )
    claimed = 0
    for recipient, keys in sorted(wanted.items(), key=lambda kv: kv[0].email):
        new = sorted(k for k in keys if (recipient.email, *k) not in existing)
        if not new:
            continue
        with transaction.atomic():
            digest = _open_digest(recipient, now)
            made = _insert_claims(recipient=recipient.email, keys=new, digest_id=digest.pk, now=now)
        claimed += made
    # Ready: every open digest of these recipients whose time has come, not only the ones this
    # run added to. A run killed after some recipients' claims committed (and before it enqueued
    # anything) is redelivered; it finds those claims made and must still send their digests.
    ready = ReminderDigest.objects.filter(
        status=DigestStatus.PENDING, send_after__lte=now, recipient__in=sorted({r.email for r in wanted})
    ).values_list("pk", flat=True)
    return ClaimResult(claimed=claimed, digests_ready=sorted(ready))


@dataclass(frozen=True)
class SweepResult:
    cables_changed: int
    links_changed: int
    reminders_claimed: int
    digests_ready: list[int]


def retests_sweep(*, now: datetime, full: bool = False) -> SweepResult:
    """The daily sweep: recompute due dates (set-based), then claim due reminders.

    Incremental by default: only the cables whose facts changed since the last finished run
    (see ``retest_changed_cables``); everything on the first run, after a policy or structure
    change, or when ``full`` (the on-demand sweep). Recorded in ``RetestSweepRun`` for the day:
    a run that started and never finished (the worker died) is re-enqueued by
    :func:`reminders_dispatch`. Safe to run any number of times.
    """
    today = timezone.localdate(now)
    wall = timezone.now()  # compared with auto_now stamps, which are wall-clock too
    previous = (
        RetestSweepRun.objects.filter(finished_at__isnull=False, watermark__isnull=False)
        .order_by("-watermark")
        .first()
    )
    cable_ids = None
    if not full and previous is not None:
        cable_ids = retest_services.retest_changed_cables(since=previous.watermark, today=today)
    run, _ = RetestSweepRun.objects.get_or_create(day=today, defaults={"started_at": now})
    RetestSweepRun.objects.filter(pk=run.pk).update(
        started_at=now, finished_at=None, watermark=wall, full=cable_ids is None
    )
    recomputed = retest_services.retest_due_recompute(now=now, cable_ids=cable_ids)
    claim = reminders_claim(
        now=now, cable_ids=cable_ids, since_day=previous.day if cable_ids is not None else None
    )
    RetestSweepRun.objects.filter(pk=run.pk).update(
        finished_at=now,
        cables_changed=recomputed.cables_changed,
        reminders_claimed=claim.claimed,
        set_aside=[{"cable": pk, "reason": why} for pk, why in recomputed.set_aside],
    )
    return SweepResult(
        cables_changed=recomputed.cables_changed,
        links_changed=recomputed.links_changed,
        reminders_claimed=claim.claimed,
        digests_ready=claim.digests_ready,
    )


def retests_sweep_request() -> None:
    """Ask for a full sweep now (the admin action, the page's button, the API), after commit."""
    enqueue_on_commit("inventory.retests_sweep", full=True)


def _is_permanent(exc: BaseException) -> bool:
    """5xx replies are permanent; 4xx, refused or dropped connections and timeouts are not."""
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        codes = [code for code, _ in exc.recipients.values()]
        return bool(codes) and all(c >= 500 for c in codes)
    if isinstance(exc, smtplib.SMTPResponseException):
        return exc.smtp_code >= 500
    if isinstance(exc, smtplib.SMTPServerDisconnected | ConnectionError | socket.timeout | TimeoutError):
        return False
    return isinstance(exc, smtplib.SMTPException)


def _render(digest: ReminderDigest, content: retest_selectors.DigestContent, today) -> EmailMultiAlternatives:
    overdue = content.count(ReminderKind.OVERDUE) + content.count(ReminderKind.ESCALATION)
    soon = content.count(ReminderKind.DUE_SOON)
    escalated = content.count(ReminderKind.ESCALATION)
    subject = f"[cabletrack] Retests: {overdue} overdue, {soon} due soon"
    if escalated:
        subject += f" ({escalated} escalated: overdue more than {app_settings.retest_escalate_days} days)"
    why, led = address_teams(address=digest.recipient, escalated=bool(escalated))
    ctx = {
        "digest": digest,
        "escalated": escalated,
        "lead_of": and_list(led),
        "content": content,
        "today": today,
        "subject": subject,
        "worklist_url": site_url("/retests/"),
        "settings_url": site_url("/profile/reminders/"),
        "escalate_days": app_settings.retest_escalate_days,
    }
    text = render_to_string("inventory/email/retest_digest.txt", ctx)
    html = render_to_string("inventory/email/retest_digest.html", ctx)
    return automated_mail(
        subject=subject,
        body=text,
        html=html,
        to=[digest.recipient],
        message_id=digest.message_id,
        why=why_line(why),
    )


def reminder_digest_send(*, digest_id: int, now: datetime) -> str:
    """Send one digest if this caller wins its lease. Returns what happened.

    Raises :class:`TransientSendError` after a transient SMTP failure (the digest is then in
    ``retry`` with its next attempt time); the task retries after ``retry_in`` seconds and the
    dispatcher would pick it up anyway.
    """
    lease = timedelta(seconds=app_settings.reminder_lease_seconds)
    won = (
        ReminderDigest.objects.filter(
            pk=digest_id, status__in=[DigestStatus.PENDING, DigestStatus.RETRY], send_after__lte=now
        )
        .filter(Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now))
        .update(status=DigestStatus.SENDING, lease_until=now + lease, attempts=F("attempts") + 1)
    )
    if not won:
        return "not mine"
    digest = ReminderDigest.objects.get(pk=digest_id)
    today = timezone.localdate(now)
    content = retest_selectors.digest_content(digest=digest, today=today, now=now)
    if not content.lines:
        ReminderDigest.objects.filter(pk=digest_id).update(status=DigestStatus.CLEARED, lease_until=None)
        return "cleared"
    msg = _render(digest, content, today)
    try:
        msg.send(fail_silently=False)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"[:2000]
        max_attempts = app_settings.reminder_max_attempts
        if _is_permanent(exc) or digest.attempts >= max_attempts:
            ReminderDigest.objects.filter(pk=digest_id).update(
                status=DigestStatus.FAILED, last_error=error, lease_until=None, subject=msg.subject
            )
            log.warning("retest digest %s to %s failed permanently: %s", digest_id, digest.recipient, error)
            return "failed"
        wait = int(retry_in(digest.attempts).total_seconds())
        ReminderDigest.objects.filter(pk=digest_id).update(
            status=DigestStatus.RETRY,
            last_error=error,
            lease_until=None,
            next_attempt_at=now + timedelta(seconds=wait),
            subject=msg.subject,
        )
        raise TransientSendError(error, wait) from exc
    # The server accepted the message: record it. (Dying right here is the documented window.)
    ReminderDigest.objects.filter(pk=digest_id).update(
        status=DigestStatus.SENT, sent_at=now, lease_until=None, subject=msg.subject, last_error=""
    )
    return "sent"


@dataclass(frozen=True)
class DispatchResult:
    digests: list[int]
    resweep: bool


def reminders_dispatch(*, now: datetime) -> DispatchResult:
    """The database sweep that finishes unfinished work (run every few minutes by beat).

    * a digest still ``sending`` past its lease (the worker died) goes back to ``retry``;
    * every digest whose time has come (``pending`` past its send time, ``retry`` past its next
      attempt) is returned for sending: a lost or deleted broker message costs nothing;
    * today's sweep, if it started and did not finish within the lease, is to be run again.
    Sending a digest twice is harmless: the lease lets one sender through.
    """
    lease = timedelta(seconds=app_settings.reminder_lease_seconds)
    ReminderDigest.objects.filter(status=DigestStatus.SENDING, lease_until__lt=now).update(
        status=DigestStatus.RETRY,
        next_attempt_at=now,
        lease_until=None,
        last_error="lease expired: the sender died mid-send; sending again with the same Message-ID",
    )
    ids = list(
        ReminderDigest.objects.filter(
            Q(status=DigestStatus.PENDING, send_after__lte=now)
            | Q(status=DigestStatus.RETRY, next_attempt_at__lte=now)
        )
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    resweep = RetestSweepRun.objects.filter(
        day=timezone.localdate(now), finished_at__isnull=True, started_at__lt=now - lease
    ).exists()
    return DispatchResult(digests=ids, resweep=resweep)


def digest_resend(*, digest_id: int, now: datetime) -> bool:
    """Admin: put a failed digest back in line (same Message-ID). True if it was failed."""
    return bool(
        ReminderDigest.objects.filter(pk=digest_id, status=DigestStatus.FAILED).update(
            status=DigestStatus.RETRY, next_attempt_at=now, attempts=0
        )
    )


def user_profile_update(*, user, reminder_mode: str, digest_weekday: int, digest_hour: int) -> UserProfile:
    """Save a person's reminder preferences (validated by the form and the model constraints)."""
    errors = {}
    if reminder_mode not in ReminderMode.values:
        errors["reminder_mode"] = f"Unknown mode {reminder_mode!r}."
    if not 0 <= int(digest_weekday) <= 6:
        errors["digest_weekday"] = "Pick a day of the week."
    if not 0 <= int(digest_hour) <= 23:
        errors["digest_hour"] = "An hour from 0 to 23."
    if errors:
        raise ValidationError(errors)
    profile, _ = UserProfile.objects.update_or_create(
        user=user,
        defaults={
            "reminder_mode": reminder_mode,
            "digest_weekday": digest_weekday,
            "digest_hour": digest_hour,
        },
    )
    return profile
