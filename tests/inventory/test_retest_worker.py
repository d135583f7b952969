"""The retest sweep and its mail against a REAL Celery worker process and a real SMTP server.

PostgreSQL + Redis when ``DATABASE_URL``/``REDIS_URL`` are set, SQLite + the filesystem broker
otherwise. The worker gets the SMTP sink's port through ``EMAIL_URL``. Time is passed to the
tasks as an argument (frozen time does not reach another process).

    rack R-WA (team A: mailbox a@, alice, bob; lead lena)   rack R-WB (team B: mailbox b@, carol)
      4 jumpers: 2 due soon, 1 overdue, 1 overdue > 7 days      2 jumpers: due soon
"""

import contextlib
import threading
import time
from collections import Counter
from datetime import UTC, datetime, timedelta

import psutil
import pytest
from django.db import connection, transaction

from inventory.core.choices import DigestStatus
from inventory.models import ReminderDigest, RetestSweepRun
from inventory.tasks import reminders_dispatch_task, retests_sweep_task
from tests import factories as f
from tests.workers import Worker, wait_for

pytestmark = pytest.mark.worker

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=84)
EXPECTED = {
    "a@example.net": 1,
    "alice@example.net": 1,
    "bob@example.net": 1,
    "lena@example.net": 1,
    "b@example.net": 1,
    "carol@example.net": 1,
}


@pytest.fixture
def plant(transactional_db, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    f.two_team_retest_plant("W", T0)


def settled() -> bool:
    open_states = [DigestStatus.PENDING, DigestStatus.SENDING, DigestStatus.RETRY]
    return (
        ReminderDigest.objects.exists() and not ReminderDigest.objects.filter(status__in=open_states).exists()
    )


def kill_tree(worker: Worker) -> None:
    """SIGKILL the worker and its pool processes: no shutdown handler runs, nothing is acked."""
    main = psutil.Process(worker.proc.pid)
    for p in [*main.children(recursive=True), main]:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.kill()
    worker.proc.wait(timeout=10)


def start_worker(sink, concurrency: int = 1) -> Worker:
    """A worker that mails the sink and sends the tasks it enqueues to its own test queue."""
    from tests.workers import queue_name

    env = {**sink.env, "CELERY_TASK_DEFAULT_QUEUE": queue_name()}
    return Worker(concurrency=concurrency, env=env).start()


def counts(sink) -> Counter:
    return Counter(m.to for m in sink.messages())


def _sweep_twice_and_settle(worker) -> None:
    retests_sweep_task.delay(NOW.isoformat())
    retests_sweep_task.delay(NOW.isoformat())
    wait_for(lambda: worker.log.read_text().count("inventory.retests_sweep[") >= 4, timeout=60)
    wait_for(settled, timeout=60)


def _sweeps_waiting() -> int:
    """Backends waiting for a lock on the sweep's run table (the sweeps' first read)."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
            "WHERE c.relname = %s AND NOT l.granted",
            [RetestSweepRun._meta.db_table],
        )
        return cur.fetchone()[0]


def test_two_sweeps_queued_together_mail_each_recipient_once(plant, smtp_sink):
    """Two sweeps queued at once on a two-process worker (they may still run one after the other:
    the test below makes them overlap on PostgreSQL)."""
    worker = start_worker(smtp_sink, concurrency=2)
    try:
        _sweep_twice_and_settle(worker)
        wait_for(lambda: sum(counts(smtp_sink).values()) >= len(EXPECTED), timeout=30)
    finally:
        worker.stop()
    assert counts(smtp_sink) == EXPECTED


@pytest.mark.postgres  # the lock that holds both sweeps at the gate is PostgreSQL's
def test_two_concurrent_sweeps_mail_each_recipient_once(plant, smtp_sink):
    """The race made to happen: the test locks the sweep's run table, so both sweeps (two worker
    processes) block on their first read; once both are seen waiting in ``pg_locks`` the lock is
    released and they claim and mail at the same moment. Each recipient still gets one mail."""
    worker = start_worker(smtp_sink, concurrency=2)
    try:
        with transaction.atomic(), connection.cursor() as cur:
            cur.execute(f"LOCK TABLE {RetestSweepRun._meta.db_table} IN ACCESS EXCLUSIVE MODE")
            retests_sweep_task.delay(NOW.isoformat())
            retests_sweep_task.delay(NOW.isoformat())
            wait_for(lambda: _sweeps_waiting() >= 2, timeout=60)
        wait_for(settled, timeout=60)
        wait_for(lambda: sum(counts(smtp_sink).values()) >= len(EXPECTED), timeout=30)
        time.sleep(2)  # a duplicate would arrive now
    finally:
        worker.stop()
    assert counts(smtp_sink) == EXPECTED
    lead = smtp_sink.to("lena@example.net")[0]
    assert "escalated" in lead.subject
    assert lead.links == ["http://127.0.0.1:8000/c/J-R-WA-3"]
    subjects = {m.to: m.subject for m in smtp_sink.messages()}
    assert subjects["alice@example.net"] == "[cabletrack] Retests: 2 overdue, 2 due soon"
    assert subjects["carol@example.net"] == "[cabletrack] Retests: 0 overdue, 2 due soon"
    assert ReminderDigest.objects.filter(status=DigestStatus.SENT).count() == len(EXPECTED)


def test_a_worker_killed_mid_send_is_recovered_by_the_database_sweep(plant, smtp_sink):
    """SIGKILL while the server holds the DATA, before it accepts; a new worker and the
    dispatcher finish the job: every recipient gets exactly one mail."""
    arrived, release = threading.Event(), threading.Event()
    first = {"to": None}

    def gate(envelope):
        if first["to"] is None:
            first["to"] = envelope.rcpt_tos[0]
            arrived.set()
            release.wait(30)
            return "451 4.3.0 connection lost"  # never accepted: the client died before 250
        return None

    smtp_sink.on_data = gate
    worker = start_worker(smtp_sink)
    try:
        retests_sweep_task.delay(NOW.isoformat())
        assert arrived.wait(60), worker.log.read_text()[-2000:]
        kill_tree(worker)
        release.set()
    finally:
        worker.stop()
    stuck = ReminderDigest.objects.get(recipient=first["to"])
    assert stuck.status == DigestStatus.SENDING

    worker = start_worker(smtp_sink)
    try:
        # Within the lease the dispatcher leaves it alone; after it, the work is re-enqueued.
        reminders_dispatch_task.delay((NOW + timedelta(minutes=6)).isoformat())
        wait_for(settled, timeout=90)
        wait_for(lambda: sum(counts(smtp_sink).values()) >= len(EXPECTED), timeout=30)
    finally:
        worker.stop()
    assert counts(smtp_sink) == EXPECTED
    stuck.refresh_from_db()
    assert stuck.status == DigestStatus.SENT
    assert stuck.attempts == 2


def test_the_smtp_window_accepted_then_killed_sends_a_copy_with_the_same_message_id(plant, smtp_sink):
    """The one window SMTP leaves: the server took the mail, the worker died before recording it.
    Documented behaviour: after the lease the digest is sent again, with the SAME Message-ID."""
    victim = {"to": None, "worker": None}

    def accept_then_kill(envelope):
        if victim["to"] is None:
            victim["to"] = envelope.rcpt_tos[0]
            smtp_sink.keep(envelope)  # the server has taken responsibility for the message...
            kill_tree(victim["worker"])  # ...and the client dies before it reads the 250
        return None

    smtp_sink.on_data = accept_then_kill
    worker = victim["worker"] = start_worker(smtp_sink)
    try:
        retests_sweep_task.delay(NOW.isoformat())
        wait_for(lambda: victim["to"] is not None, timeout=60)
        wait_for(lambda: worker.proc.poll() is not None, timeout=10)
    finally:
        worker.stop()
    smtp_sink.on_data = None
    worker = start_worker(smtp_sink)
    try:
        reminders_dispatch_task.delay((NOW + timedelta(minutes=6)).isoformat())
        wait_for(settled, timeout=90)
        wait_for(lambda: sum(counts(smtp_sink).values()) >= len(EXPECTED) + 1, timeout=30)
    finally:
        worker.stop()
    got = counts(smtp_sink)
    assert got == {**EXPECTED, victim["to"]: 2}
    copies = smtp_sink.to(victim["to"])
    digest = ReminderDigest.objects.get(recipient=victim["to"])
    assert copies[0].message_id == copies[1].message_id == digest.message_id
    assert len({m.message_id for m in smtp_sink.messages()}) == len(
        EXPECTED
    )  # dedup by Message-ID: once each
