"""Send a Celery task by its registered name, now or once the transaction commits.

Services ask for background work through these two functions instead of importing
``inventory.tasks`` (an entry point): the task is looked up in the Celery app's registry by the
explicit ``name=`` it was declared with, and published with ``apply_async``, so ``OutboxTask``
(a refused message is kept in the database outbox) and ``CELERY_TASK_ALWAYS_EAGER`` apply as
they do to ``.delay()``.
"""

from __future__ import annotations

from functools import partial

from django.db import transaction

from cabletrack.celery import app


def _task(task_name: str):
    if task_name not in app.tasks:
        # A web process has not imported the apps' tasks modules yet (a worker does at start):
        # the app's own discovery registers them, once.
        app.autodiscover_tasks(force=True)
    return app.tasks[task_name]


def enqueue_now(task_name: str, *args, **kwargs) -> None:
    """Publish the task at once (callers already past their commit, or with no transaction)."""
    _task(task_name).apply_async(args, kwargs)


def enqueue_on_commit(task_name: str, *args, **kwargs) -> None:
    """Publish the task once the current transaction commits (at once outside a transaction)."""
    transaction.on_commit(partial(enqueue_now, task_name, *args, **kwargs))
