"""Shared model machinery: history that bulk writes cannot bypass by accident."""

from __future__ import annotations

import contextlib
import contextvars

from django.db import models

# The length of a history row's change reason (``history_change_reason``, simple-history's
# default): a longer reason is refused by PostgreSQL, so what takes one from a person says so.
HISTORY_REASON_MAX = 100

_untracked_ok: contextvars.ContextVar[bool] = contextvars.ContextVar("untracked_ok", default=False)


class UntrackedWriteError(RuntimeError):
    """A mass update on a history-tracked model outside a sanctioned bulk writer."""


@contextlib.contextmanager
def sanctioned_bulk_write():
    """Allow ``QuerySet.update``/``bulk_update`` on tracked models inside this block.

    simple-history cannot see those calls, so a caller that uses them must write the
    history rows itself (see ``inventory.db.bulk``).
    """
    token = _untracked_ok.set(True)
    try:
        yield
    finally:
        _untracked_ok.reset(token)


class TrackedQuerySet(models.QuerySet):
    """Refuses mass writes that would change rows without a history record."""

    def update(self, **kwargs):
        if not _untracked_ok.get():
            raise UntrackedWriteError(
                f"{self.model.__name__}.objects.update() bypasses history; use a service "
                "or wrap a history-writing bulk writer in sanctioned_bulk_write()."
            )
        return super().update(**kwargs)

    def bulk_update(self, objs, fields, batch_size=None):
        if not _untracked_ok.get():
            raise UntrackedWriteError(
                f"{self.model.__name__}.objects.bulk_update() bypasses history; use a service "
                "or wrap a history-writing bulk writer in sanctioned_bulk_write()."
            )
        return super().bulk_update(objs, fields, batch_size=batch_size)

    def delete(self):
        if not _untracked_ok.get():
            raise UntrackedWriteError(f"{self.model.__name__} rows are retired, never deleted.")
        return super().delete()


TrackedManager = models.Manager.from_queryset(TrackedQuerySet)


class TimestampedModel(models.Model):
    created_at = models.DateTimeField(auto_now_add=True, db_index=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True
