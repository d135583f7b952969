"""Writes for the phone page's one-tap actions (report a fault, mark re-seated/cleaned, mark in
production) and the journal of every cable, module, device and rack."""

from __future__ import annotations

import logging
from datetime import datetime

from django.core.exceptions import ValidationError
from django.core.mail import EmailMessage
from django.db import transaction
from django.utils import timezone

from inventory.core.choices import CableStatus, FieldNoteKind
from inventory.core.links import cable_url, mail_domain
from inventory.core.safetext import one_line
from inventory.core.words import human_when, word
from inventory.models import Cable, Device, FieldNote, Rack, Transceiver
from inventory.selectors.plant.responsible import cable_teams, team_addresses
from inventory.services.plant.cables import cable_set_status

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

    The mail goes out after the commit (a rolled-back report mails nobody). Its Message-ID is
    derived from the note, so a resend is recognisable as the same notice.
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
    cable_set_status(cable=locked, status=status, reason=f"fault reported by {by}: {seen}"[:100])
    recipients = team_addresses(cable_teams(cable=locked))
    note = FieldNote.objects.create(
        cable=locked,
        kind=FieldNoteKind.FAULT,
        text=seen,
        status_before=before,
        status_after=status,
        at=now,
        actor=actor,
        notified=recipients,
    )
    if recipients:
        transaction.on_commit(lambda: _send_fault_notice(note.pk))
    return note


def fault_notice(note: FieldNote) -> EmailMessage:
    cable = note.cable
    url = cable_url(cable.label)
    who = note.actor.get_username() if note.actor else "a technician"
    body = (
        f"{who} reported a fault on cable {cable.label} on {human_when(note.at)} UTC.\n\n"
        f"What was seen: {note.text}\n"
        f"Status: {word(note.status_before, 'status') or '?'} -> {word(note.status_after, 'status')}\n\n"
        f"Open the cable: {url}\n"
    )
    host = mail_domain()
    return EmailMessage(
        subject=one_line(f"[cabletrack] Fault on {cable.label}: {note.get_status_after_display()}"),
        body=body,
        to=note.notified,
        headers={"Message-ID": f"<fault-{note.pk}@{host}>"},
    )


def _send_fault_notice(note_id: int) -> None:
    note = FieldNote.objects.select_related("cable", "actor").get(pk=note_id)
    try:
        fault_notice(note).send()
    except Exception:  # the fault is recorded; a mail server outage must not turn it into an error page
        log.exception("fault notice for note %s could not be sent", note_id)


@transaction.atomic
def cable_serviced(
    *, cable: Cable, kind: str, text: str = "", actor=None, now: datetime | None = None
) -> FieldNote:
    """Record that the cable's connectors were re-seated and/or cleaned."""
    if kind not in SERVICE_KINDS:
        raise ValidationError({"kind": "Choose re-seated, cleaned, or both."})
    locked = _locked(cable)
    if locked.status == CableStatus.RETIRED:
        raise ValidationError({"__all__": f"{locked.label} is retired."})
    return FieldNote.objects.create(
        cable=locked,
        kind=kind,
        text=(text or "").strip(),
        status_before=locked.status,
        status_after=locked.status,
        at=now or timezone.now(),
        actor=actor,
    )


# --- the journal: notes on any cable, module, device or rack, and closing open entries ----------

JOURNAL_KINDS = (FieldNoteKind.NOTE, FieldNoteKind.FAULT, FieldNoteKind.SERVICE)


@transaction.atomic
def journal_add(
    *, target, kind: str = FieldNoteKind.NOTE, text: str, actor=None, now: datetime | None = None
) -> FieldNote:
    """Add a journal entry (a note, a fault seen, a service action done) to a cable, module,
    device or rack. A fault on a cable goes through ``cable_fault_report`` (it changes the
    cable's status and tells its team); here it is an observation only."""
    text = (text or "").strip()
    errors = {}
    if not text:
        errors["text"] = "Write what you saw or did."
    elif len(text) > 2000:
        errors["text"] = "Keep it under 2,000 characters."
    if kind not in JOURNAL_KINDS:
        errors["kind"] = "Choose a note, a fault seen or a service action."
    if errors:
        raise ValidationError(errors)
    field = {Cable: "cable", Transceiver: "transceiver", Device: "device", Rack: "rack"}.get(type(target))
    if field is None:
        raise ValidationError({"__all__": "A journal entry is about a cable, a module, a device or a rack."})
    status = target.status if isinstance(target, Cable) else ""
    return FieldNote.objects.create(
        **{field: target},
        kind=kind,
        text=text,
        status_before=status,
        status_after=status,
        at=now or timezone.now(),
        actor=actor,
        closed_at=(now or timezone.now()) if kind == FieldNoteKind.SERVICE else None,
        closed_by=actor if kind == FieldNoteKind.SERVICE else None,
    )


@transaction.atomic
def journal_close(
    *, entry: FieldNote, actor=None, reason: str = "", now: datetime | None = None
) -> FieldNote:
    """Settle an open fault or note: it leaves the top of the page and stays in the history."""
    locked = FieldNote.objects.select_for_update().get(pk=entry.pk)
    if locked.closed_at is not None:
        raise ValidationError({"__all__": "This entry is already closed."})
    locked.closed_at = now or timezone.now()
    locked.closed_by = actor
    locked.close_reason = (reason or "").strip()[:200]
    locked.save(update_fields=["closed_at", "closed_by", "close_reason"])
    return locked


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
