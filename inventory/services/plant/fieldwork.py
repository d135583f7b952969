"""Writes for the phone page's one-tap actions (report a fault, mark re-seated/cleaned, mark
installed, mark in production). The journal itself: ``services.journal``."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import date, datetime

from django.core.exceptions import ValidationError
from django.core.mail import EmailMultiAlternatives
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from inventory.core.choices import CableStatus, FieldNoteKind, RepairEnd
from inventory.core.links import cable_url
from inventory.core.mail import automated_mail, mail_message_id, why_line
from inventory.core.mail_retry import CLAIM_LEASE, MAX_ATTEMPTS, SERVER_DOWN, retry_in
from inventory.core.repairs import SERVICE_ACTION, journal_words
from inventory.core.words import human_when, word
from inventory.models import Alert, Cable, FieldNote, Repair
from inventory.selectors.alerts.repairs import cable_service_alerts
from inventory.selectors.labels.facts import cable_ends_words
from inventory.selectors.plant.responsible import cable_teams, team_addressees
from inventory.services.journal import journal_write
from inventory.services.plant.cables import cable_set_status
from inventory.services.repairs import repair_record

log = logging.getLogger(__name__)

FAULT_STATUSES = (CableStatus.DEGRADED, CableStatus.FAULTY)
SERVICE_KINDS = (FieldNoteKind.RESEATED, FieldNoteKind.CLEANED, FieldNoteKind.RESEATED_CLEANED)


def _locked(cable: Cable) -> Cable:
    return Cable.objects.select_for_update().get(pk=cable.pk)


@transaction.atomic
def cable_fault_report(
    *, cable: Cable, seen: str, status: str, actor=None, now: datetime | None = None
) -> FieldNote:
    """Record what a technician saw, mark the cable degraded or faulty and tell its team.

    The mail goes out after the commit (a rolled-back report mails nobody), in this request:
    SMTP needs no broker. The note is claimed for it in the same transaction, so if the mail
    server does not take it (or this process dies first) :func:`fault_notices_send` tries again
    later; the returned note carries the outcome of that first send (:func:`fault_notice_told`).
    The Message-ID is derived from the note, so a resend is recognisable as the same notice.
    """
    now = now or timezone.now()
    errors = {}
    seen = (seen or "").strip()
    if not seen:
        errors["seen"] = "Say what you saw (e.g. 'link light off', 'jacket crushed at U12')."
    if status not in FAULT_STATUSES:
        errors["status"] = "Choose degraded (still works) or faulty (does not work)."
    if errors:
        raise ValidationError(errors)
    locked = _locked(cable)
    if locked.status == CableStatus.RETIRED:
        raise ValidationError({"__all__": f"{locked.label} is retired; report the fault on its replacement."})
    before = locked.status
    by = actor.get_username() if actor else "someone"
    cable_set_status(cable=locked, status=status, reason=f"fault reported by {by}: {seen}"[:100], actor=actor)
    recipients = [t.address for t in team_addressees(cable_teams(cable=locked))]
    note = FieldNote.objects.create(
        cable=locked,
        kind=FieldNoteKind.FAULT,
        text=seen,
        status_before=before,
        status_after=status,
        at=now,
        actor=actor,
        notified=recipients,
        notice_next_at=timezone.now() + CLAIM_LEASE if recipients else None,
        notice_attempts=1 if recipients else 0,
    )
    if recipients:
        transaction.on_commit(lambda: _fault_notice_try(note, now=timezone.now()))
    return note


def fault_notice(note: FieldNote) -> EmailMultiAlternatives:
    """The fault notice to the addresses told when it was reported, closing with why they get it
    (the teams that look after the cable's racks now, as far as they are among them)."""
    cable = note.cable
    url = cable_url(cable.label)
    who = note.actor.get_username() if note.actor else "a technician"
    where = cable_ends_words(cable_ids=[cable.pk]).get(cable.pk, "")
    body = (
        f"{who} reported a fault on cable {cable.label} on {human_when(note.at)} UTC.\n\n"
        f"Where: {where}\n"
        f"What was seen: {note.text}\n"
        f"Status: {word(note.status_before, 'status') or '?'} -> {word(note.status_after, 'status')}\n\n"
        f"Open the cable: {url}\n"
    )
    told = {a.lower() for a in note.notified}
    why = why_line(t for t in team_addressees(cable_teams(cable=cable)) if t.address.lower() in told)
    return automated_mail(
        subject=f"[cabletrack] Fault on {cable.label}: {note.get_status_after_display()}",
        body=body,
        to=note.notified,
        message_id=mail_message_id(f"fault-{note.pk}"),
        why=why,
    )


def _fault_notice_try(note: FieldNote, *, now: datetime) -> Exception | None:
    """Send a notice this caller has claimed, once; record the outcome on the row and on
    ``note``. Returns the failure, if any.

    A failed send is kept for a retry after the alert notices' backoff (``core.mail_retry.retry_in``)
    and given up after ``MAX_ATTEMPTS`` (its error stays on the row, and is logged as an error).
    """
    try:
        fault_notice(note).send(fail_silently=False)
    except (
        Exception
    ) as exc:  # the fault is recorded; a mail server outage must not turn it into an error page
        error = f"{type(exc).__name__}: {exc}"[:300]
        given_up = note.notice_attempts >= MAX_ATTEMPTS
        fields = {
            "notice_next_at": None if given_up else now + retry_in(note.notice_attempts),
            "notice_error": error,
        }
        if given_up:
            log.error(
                "fault notice for note %s not sent, given up after %s attempts: %s",
                note.pk,
                note.notice_attempts,
                error,
            )
        else:
            log.warning(
                "fault notice for note %s not sent (retry after %s): %s",
                note.pk,
                fields["notice_next_at"],
                error,
            )
        failure: Exception | None = exc
    else:
        fields = {"notice_sent_at": now, "notice_next_at": None, "notice_error": ""}
        failure = None
    FieldNote.objects.filter(pk=note.pk, notice_sent_at__isnull=True).update(**fields)
    for name, value in fields.items():
        setattr(note, name, value)
    return failure


def fault_notices_send(*, now: datetime, limit: int = 200) -> int:
    """Send the fault notices that are due: those the mail server did not take, after their
    backoff, and those whose reporting process died before sending (after ``CLAIM_LEASE``).
    The periodic sweep; returns how many went out.

    Each is claimed first (a conditional UPDATE on its due time), so concurrent sweeps never
    both send it. As for alert notices, a process dying after the server took the mail and
    before ``notice_sent_at`` is written sends it again after the lease, with the same
    Message-ID. A failure that says the server is unreachable ends the run.
    """
    sent = 0
    due = (
        FieldNote.objects.filter(notice_next_at__lte=now, notice_sent_at__isnull=True)
        .select_related("cable", "actor")
        .order_by("notice_next_at", "id")[:limit]
    )
    for note in due:
        won = FieldNote.objects.filter(
            pk=note.pk, notice_next_at=note.notice_next_at, notice_sent_at__isnull=True
        ).update(notice_next_at=now + CLAIM_LEASE, notice_attempts=F("notice_attempts") + 1)
        if not won:
            continue
        note.notice_attempts += 1
        failure = _fault_notice_try(note, now=now)
        if failure is None:
            sent += 1
        elif isinstance(failure, SERVER_DOWN):
            break
    return sent


def fault_notice_told(note: FieldNote) -> tuple[bool, str]:
    """Who the fault report's notice told, in words for the reporter, and whether that is all
    well (False: the notice did not reach the mail server, and the sentence says what happens
    next). Reads the delivery recorded on ``note``."""
    if not note.notified:
        return True, "Told: nobody (no team is responsible for these racks)."
    to = ", ".join(note.notified)
    if note.notice_sent_at is not None:
        return True, f"Told: {to}."
    if note.notice_next_at is None:
        return False, f"The notice to {to} could not be sent ({note.notice_error}); tell them yourself."
    if not note.notice_error:
        return True, f"The notice to {to} is being sent."
    return False, (
        f"The notice to {to} could not be sent yet: the mail server did not take it. "
        f"It is retried automatically (next try {human_when(note.notice_next_at)} UTC)."
    )


@dataclass(frozen=True)
class ServiceRepair:
    """A re-seat or cleaning as the repair of one open alert: the repair, and whether it is new
    or the same one recorded moments ago."""

    alert: Alert
    repair: Repair
    created: bool


@dataclass(frozen=True)
class Serviced:
    """A re-seat or cleaning recorded: its kind, and its repair on each open alert it was
    recorded against (most severe first; none without an open alert)."""

    kind: str
    repairs: tuple[ServiceRepair, ...] = ()


@transaction.atomic
def cable_serviced(
    *,
    cable: Cable,
    kind: str,
    text: str = "",
    end: str = RepairEnd.NA,
    actor=None,
    now: datetime | None = None,
) -> Serviced:
    """Record that the cable's connectors were re-seated and/or cleaned, in its journal.

    With open alerts (warning or worse) on links through the cable
    (``selectors.alerts.repairs.cable_service_alerts``), it is a repair of each of them: the end
    cleaned or re-seated is this cable's, and every one of those alerts' links runs through it.
    Recorded through the one repair service (``services.repairs.repair_record``, at ``end`` of
    this cable), so each alert watches after it and learns from it; the cable's journal has one
    entry naming the alerts it was new on ("for alerts #9 and #12")."""
    if kind not in SERVICE_KINDS:
        raise ValidationError({"kind": "Choose re-seated, cleaned, or both."})
    locked = _locked(cable)
    if locked.status == CableStatus.RETIRED:
        raise ValidationError({"__all__": f"{locked.label} is retired."})
    now = now or timezone.now()
    alerts = cable_service_alerts(locked)
    if alerts:
        action, where = SERVICE_ACTION[kind], end or RepairEnd.NA
        done = []
        for alert in alerts:
            repair, created = repair_record(
                alert=alert,
                action=action,
                end=where,
                cable=locked.label,
                note=text,
                actor=actor,
                now=now,
                journal=False,
            )
            done.append(ServiceRepair(alert, repair, created))
        new = [d.alert.pk for d in done if d.created]
        if new:  # a double tap records nothing new, and writes nothing twice
            journal_write(
                cable_ids=[locked.pk],
                kind=kind,
                text=journal_words(
                    action=action,
                    end=where,
                    cable=locked.label,
                    alert_id=new,
                    note=text,
                    done=FieldNoteKind(kind).label.lower(),
                ),
                actor=actor,
                now=now,
            )
        return Serviced(kind, tuple(done))
    FieldNote.objects.create(
        cable=locked,
        kind=kind,
        text=(text or "").strip(),
        status_before=locked.status,
        status_after=locked.status,
        at=now,
        actor=actor,
    )
    return Serviced(kind)


def cable_mark_in_production(
    *, cable: Cable, actor=None, now: datetime | None = None, override_reason: str = ""
) -> Cable:
    """Put a cable into production through the test gate and the open-alert check (an override
    with a reason, where the role allows it); its open faults are settled by it."""
    now = now or timezone.now()
    with transaction.atomic():
        locked = _locked(cable)
        by = actor.get_username() if actor else "someone"
        cable_set_status(
            cable=locked,
            status=CableStatus.IN_PRODUCTION,
            reason=f"marked in production by {by}" + (" over an open alert" if override_reason else ""),
            now=now,
            override_reason=override_reason,
            actor=actor,
        )
        FieldNote.objects.filter(cable=locked, closed_at__isnull=True, kind=FieldNoteKind.FAULT).update(
            closed_at=now, closed_by=actor, close_reason="the cable passed the production gate"
        )
    return locked


def cable_mark_installed(
    *, cable: Cable, actor=None, install_date: date | None = None, now: datetime | None = None
) -> Cable:
    """A planned cable pulled and plugged in: installed, on ``install_date`` (today by default),
    with who did it in its history."""
    with transaction.atomic():
        locked = _locked(cable)
        if locked.status != CableStatus.PLANNED:
            raise ValidationError(
                {"status": f"{locked.label} is {word(locked.status, 'status').lower()}, not planned."}
            )
        by = actor.get_username() if actor else "someone"
        return cable_set_status(
            cable=locked,
            status=CableStatus.INSTALLED,
            reason=f"marked installed by {by}",
            now=now,
            actor=actor,
            install_date=install_date,
        )
