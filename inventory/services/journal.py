"""The journal of every cable, module, device and rack: what people saw and did there.

* ``journal_add``: one entry from the "Add a note" form (a note, a fault seen, work done).
* ``journal_close``: settle an open fault or note (it leaves the top of the page).
* ``journal_write``: one entry on each of a few cables at once, written by another action in its
  own transaction (a repair recorded on an alert, a drain or restore of a link): one query.

Imports only models, core and selectors, so every service may write to the journal (the repair
service, the drain) without an import cycle through the cable services.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from inventory.core.choices import FieldNoteKind
from inventory.core.decision import fault_settled
from inventory.models import Cable, CableTest, Device, FieldNote, Rack, Transceiver
from inventory.selectors.testing.gate import cable_gated

JOURNAL_KINDS = (FieldNoteKind.NOTE, FieldNoteKind.FAULT, FieldNoteKind.SERVICE)
MAX_TEXT = 2000
#: An entry without text, in the words of the fault and swap forms (the journal form says it too).
TEXT_REQUIRED = (
    "Write what you saw or did (a loose door hinge, a cleaned connector, where): it goes on the record."
)


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
        errors["text"] = TEXT_REQUIRED
    elif len(text) > MAX_TEXT:
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


def journal_write(
    *,
    cable_ids: Iterable[int] = (),
    device_ids: Iterable[int] = (),
    kind: str,
    text: str,
    actor=None,
    now: datetime,
) -> list[FieldNote]:
    """One entry of ``kind`` saying ``text`` on each cable of ``cable_ids`` and each device of
    ``device_ids`` (each once), by ``actor`` at ``now``: one insert, in the caller's transaction.
    What an action writes is done, not open: it goes straight to the history, closed."""
    who = actor if getattr(actor, "is_authenticated", False) else None
    targets = [{"cable_id": pk} for pk in dict.fromkeys(cable_ids)]
    targets += [{"device_id": pk} for pk in dict.fromkeys(device_ids)]
    return FieldNote.objects.bulk_create(
        FieldNote(
            **t,
            kind=kind,
            text=text.strip()[:MAX_TEXT],
            at=now,
            actor=who,
            closed_at=now,
            closed_by=who,
        )
        for t in targets
    )


@transaction.atomic
def journal_close(
    *, entry: FieldNote, actor=None, reason: str = "", now: datetime | None = None
) -> FieldNote:
    """Settle an open fault or note: it leaves the top of the page and stays in the history.

    A fault on a cable the production gate tests is settled by a test after its report
    (``core.decision.fault_settled``), not by closing it: closing it first would let the cable
    back into production on the tests from before the fault."""
    locked = FieldNote.objects.select_for_update().get(pk=entry.pk)
    if locked.closed_at is not None:
        raise ValidationError({"__all__": "This entry is already closed."})
    if locked.kind == FieldNoteKind.FAULT and locked.cable_id is not None:
        cable = locked.cable
        last = CableTest.objects.filter(cable_id=cable.pk).aggregate(m=Max("tested_at"))["m"]
        if cable_gated(cable) and not fault_settled(locked.at, last):
            raise ValidationError(
                {
                    "__all__": f"{cable.label}'s fault is settled by a test after the repair, not by closing it: "
                    "record the test; when the cable goes back into production, the fault closes."
                }
            )
    locked.closed_at = now or timezone.now()
    locked.closed_by = actor
    locked.close_reason = (reason or "").strip()[:200]
    locked.save(update_fields=["closed_at", "closed_by", "close_reason"])
    return locked
