"""PostgreSQL: a bulk load's server work running beside the Python that builds the next rows.

One connection runs one statement at a time, and a load that writes table after table waits on
itself: while PostgreSQL parses a COPY or copies its history rows, the Python that builds the
next table waits for the statement to return, and while that Python runs, the server idles. On
two cores the 131,072-GPU demo seed spent about 100 s in Python and 90 s in the server, one
after the other (190 s).

Inside ``writes_in_background()`` the writes handed to ``submit`` (the bulk writer's COPY and
history statement) run on one writer thread that drives the same connection: psycopg lets one
statement at a time through, so everything still happens in the caller's one transaction, in
the order it was asked for. ``bulk.allocate_ids`` takes its ids from the sequences through a
second connection (sequences are not transactional), so a caller gets its primary keys at once
and builds the next table while the last one is still being written.

What keeps the result the same as without the writer: every statement the calling thread sends
through Django waits first for the writer's queue to empty (an execute wrapper), so a read sees
every row written before it, and the index builds and checks at the end of a load run after the
last row. A failed write is raised in the calling thread at its next statement, or on leaving
the block, and the writes queued after it are dropped (a later ``submit`` raises it again);
the transaction then rolls back whole.
On SQLite, or outside the block, ``submit`` runs the write at once.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable

from django.db import connection, connections

#: A write to run on a raw psycopg cursor of the caller's connection.
Job = Callable[[object], None]

_local = threading.local()


class _Writer:
    def __init__(self, wrapper) -> None:
        self.raw = wrapper.connection  # the psycopg connection of the caller's Django connection
        self.errors = wrapper.wrap_database_errors  # psycopg's errors as Django's (IntegrityError...)
        self.jobs: queue.Queue[Job | None] = queue.Queue()
        self.error: BaseException | None = None
        self.cancelled = False
        self.thread = threading.Thread(target=self._run, name="bulk-writer", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            job = self.jobs.get()
            try:
                if job is None:
                    return
                if self.error is None and not self.cancelled:
                    with self.errors, self.raw.cursor() as cur:
                        job(cur)
            except BaseException as exc:  # noqa: BLE001 - raised again in the calling thread
                self.error = exc
            finally:
                self.jobs.task_done()

    def drain(self) -> None:
        """Wait until every write handed over so far has run; raise the first that failed, here
        and at every later call: the transaction is lost, and a caller that caught the error and
        went on must not have its later writes dropped in silence."""
        self.jobs.join()
        if self.error is not None:
            raise self.error

    def stop(self, *, cancel: bool) -> None:
        self.cancelled = self.cancelled or cancel
        self.jobs.put(None)
        self.thread.join()


def _writer() -> _Writer | None:
    return getattr(_local, "writer", None)


def active() -> bool:
    """True inside ``writes_in_background()`` on this thread."""
    return _writer() is not None


def submit(job: Job) -> None:
    """Run ``job(cursor)`` on the writer thread (inside the block), else now on this thread."""
    w = _writer()
    if w is None:
        with connection.cursor() as cur:
            job(cur.cursor)
        return
    if w.error is not None:
        raise w.error  # an earlier write failed: this one would never be written
    w.jobs.put(job)


@contextlib.contextmanager
def side_cursor():
    """A cursor on the block's second connection (for sequences only), else on the ordinary one."""
    side = getattr(_local, "side", None)
    with (side or connection).cursor() as cur:
        yield cur


@contextlib.contextmanager
def writes_in_background():
    """The block's bulk writes run on a writer thread beside this one (PostgreSQL, inside a
    transaction; elsewhere the block runs as is). See the module's docstring."""
    if connection.vendor != "postgresql" or not connection.in_atomic_block or active():
        yield
        return
    connection.ensure_connection()
    wrapper = connections[connection.alias]
    side = type(wrapper)(dict(wrapper.settings_dict), wrapper.alias)  # same database, own session
    writer = _Writer(wrapper)
    _local.writer, _local.side = writer, side

    def wait_for_writes(execute, sql, params, many, context):
        writer.drain()
        return execute(sql, params, many, context)

    failed = True
    try:
        with connection.execute_wrapper(wait_for_writes):
            yield
            writer.drain()
        failed = False
    finally:
        _local.writer = _local.side = None
        writer.stop(cancel=failed)
        side.close()
