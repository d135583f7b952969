"""Readable change history: who, when, what changed from what to what."""

from __future__ import annotations

from inventory.db.audit import token_of
from inventory.db.compiled import CompiledRead
from inventory.models import Cable, CableEnd, Transceiver, TransceiverPlacement

TYPE = {"+": "created", "~": "changed", "-": "deleted"}
SKIP = {"updated_at", "created_at"}


def _entries(records, subject: str) -> list[dict]:
    out = []
    prev_by_id: dict = {}
    for rec in sorted(records, key=lambda r: (r.history_date, r.history_id)):
        prev = prev_by_id.get(rec.id)
        changes = []
        if prev is not None:
            delta = rec.diff_against(prev, excluded_fields=SKIP)
            changes = [{"field": c.field, "old": _plain(c.old), "new": _plain(c.new)} for c in delta.changes]
            if not changes:
                prev_by_id[rec.id] = rec
                continue
        user = rec.history_user
        out.append(
            {
                "when": rec.history_date.isoformat(),
                "who": user.get_username() if user else None,
                "what": TYPE.get(rec.history_type, rec.history_type),
                "subject": subject,
                "reason": rec.history_change_reason or "",
                "token": token_of(rec.history_change_reason),
                "changes": changes,
            }
        )
        prev_by_id[rec.id] = rec
    return out


def _plain(value):
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


_CABLE_HISTORY = CompiledRead(lambda pk: Cable.history.filter(id=pk).select_related("history_user"))
_END_HISTORY = CompiledRead(lambda pk: CableEnd.history.filter(cable_id=pk).select_related("history_user"))


def history_for(obj) -> list[dict]:
    """History of a cable (with its ends) or a transceiver (with its placements), newest first."""
    entries: list[dict] = []
    if isinstance(obj, Cable):
        entries += _entries(_CABLE_HISTORY(obj.pk), f"cable {obj.label}")
        entries += _entries(_END_HISTORY(obj.pk), f"cable {obj.label} end")
    elif isinstance(obj, Transceiver):
        entries += _entries(obj.history.select_related("history_user"), f"module {obj.serial}")
        placements = TransceiverPlacement.history.filter(transceiver_id=obj.pk).select_related("history_user")
        entries += _entries(placements, f"module {obj.serial} placement")
    else:
        entries += _entries(obj.history.select_related("history_user"), str(obj))
    entries.sort(key=lambda e: e["when"], reverse=True)
    return entries
