"""The journal of a cable, module, device or rack: open entries first, then the latest."""

from __future__ import annotations

from django.db.models import Case, Q, Value, When

from inventory.core.choices import FieldNoteKind
from inventory.core.validators import is_whole_number
from inventory.db.compiled import CompiledRead
from inventory.models import Cable, Device, FieldNote, Rack, Transceiver

TARGET_FIELD = {Cable: "cable", Transceiver: "transceiver", Device: "device", Rack: "rack"}
# URL name of each target kind, for the add-a-note form: ``/journal/<target>/<key>/add``.
TARGET_KEYS = {"cable": "cable", "module": "transceiver", "device": "device", "rack": "rack"}
OPEN_KINDS = (FieldNoteKind.FAULT, FieldNoteKind.NOTE)


def _open_q() -> Q:
    return Q(closed_at__isnull=True, kind__in=OPEN_KINDS)


def _journal_read(field: str, limit: int) -> CompiledRead:
    return CompiledRead(
        lambda pk: (
            FieldNote.objects.filter(**{f"{field}_id": pk})
            .select_related("actor", "closed_by")
            .annotate(open_first=Case(When(_open_q(), then=Value(1)), default=Value(0)))
            .order_by("-open_first", "-at", "-id")[:limit]
        )
    )


_READS: dict[tuple[str, int], CompiledRead] = {}


def journal_for(target, *, limit: int = 50) -> dict:
    """``open``: faults and notes not yet settled, newest first; ``entries``: the open ones and
    the latest others, ``limit`` in all, newest first. One query: open entries sort first, so
    an old open fault is never pushed out by newer closed entries."""
    field = TARGET_FIELD[type(target)]
    read = _READS.get((field, limit))
    if read is None:
        read = _READS[(field, limit)] = _journal_read(field, limit)
    rows = read(target.pk)
    entries = sorted(rows, key=lambda n: (n.at, n.pk), reverse=True)
    return {
        "open": [n for n in entries if n.open_first],
        "entries": entries,
        "target_kind": _kind_of(target),
        "target_key": _key_of(target),
    }


def _kind_of(target) -> str:
    return {Cable: "cable", Transceiver: "module", Device: "device", Rack: "rack"}[type(target)]


def _key_of(target) -> str:
    if isinstance(target, Cable):
        return target.label
    if isinstance(target, Rack):
        return target.name
    return str(target.pk)


def journal_target(*, kind: str, key: str):
    """The object a ``/journal/<kind>/<key>/...`` URL names, or None."""
    if kind == "cable":
        return Cable.objects.filter(label=key).first()
    if kind == "rack":
        return Rack.objects.filter(name=key).first()
    if not is_whole_number(key):
        return None
    model = {"module": Transceiver, "device": Device}.get(kind)
    return model.objects.filter(pk=int(key)).first() if model else None
