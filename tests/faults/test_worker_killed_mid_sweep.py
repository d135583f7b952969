"""A Celery worker SIGKILLed in the middle of the retest sweep: the broker redelivers the unacked
message after its visibility timeout, a new worker runs the sweep again, and every recipient
gets exactly one reminder mail (no duplicate claim, digest or mail).

Private Redis (broker and cache) with a 10 s visibility timeout; the test database; a real SMTP
server on loopback. The sweep claims reminders recipient by recipient (sorted by address), one
transaction each. The test holds carol's digest slot in an open transaction (as a concurrent
sweep would), so the worker blocks there with a@, alice@, b@ and bob@ already committed; then
the whole worker is killed and the slot released.

    rack R-FA (team A: mailbox a@, alice, bob; lead lena)   rack R-FB (team B: mailbox b@, carol)
      4 jumpers: 2 due soon, 1 overdue, 1 overdue > 7 days      2 jumpers: due soon
"""

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection, transaction

from inventory.core.choices import DigestStatus
from inventory.models import ReminderDigest, RetestReminder, RetestSweepRun
from inventory.tasks import retests_sweep_task
from tests import factories as f
from tests.faults.conftest import kill_tree
from tests.workers import wait_for

pytestmark = [pytest.mark.fault, pytest.mark.worker, pytest.mark.postgres]

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=84)
RECIPIENTS = [
    "a@example.net",
    "alice@example.net",
    "b@example.net",
    "bob@example.net",
    "carol@example.net",
    "lena@example.net",
]


class _Rollback(Exception):
    pass


@pytest.fixture
def plant(transactional_db):
    f.two_team_retest_plant("F", T0)


def _worker_waits_on_a_lock() -> bool:
    with connection.cursor() as cur:
        cur.execute("SELECT pg_stat_clear_snapshot()")  # a fresh view inside the open transaction
        cur.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND query ILIKE %s",
            ["%inventory_reminderdigest%"],
        )
        return cur.fetchone()[0] > 0


def _settled() -> bool:
    return ReminderDigest.objects.count() == len(RECIPIENTS) and all(
        s == DigestStatus.SENT for s in ReminderDigest.objects.values_list("status", flat=True)
    )


def test_sigkill_mid_sweep_then_redelivery_mails_each_recipient_once(plant, smtp_sink, fault_workers):
    worker = fault_workers(smtp_sink.env)
    try:
        with transaction.atomic():
            # carol's open digest, uncommitted: the sweep's insert for carol waits on it.
            ReminderDigest.objects.create(
                recipient="carol@example.net", message_id="<held-by-the-test>", created_at=NOW, send_after=NOW
            )
            retests_sweep_task.delay(NOW.isoformat())
            wait_for(_worker_waits_on_a_lock, timeout=45)
            kill_tree(worker)
            raise _Rollback
    except _Rollback:
        pass

    # Mid-sweep: the first recipients' claims are committed, nothing was mailed, the run is open.
    committed = set(RetestReminder.objects.values_list("recipient", flat=True))
    assert committed == {"a@example.net", "alice@example.net", "b@example.net", "bob@example.net"}
    assert smtp_sink.messages() == []
    assert RetestSweepRun.objects.get().finished_at is None
    claims_before = RetestReminder.objects.count()

    # No dispatcher, no second enqueue: only the broker's redelivery brings the sweep back.
    second = fault_workers(smtp_sink.env)
    wait_for(lambda: "inventory.retests_sweep[" in second.log.read_text(), timeout=40)
    wait_for(_settled, timeout=40)
    wait_for(lambda: len(smtp_sink.messages()) >= len(RECIPIENTS), timeout=20)
    second.stop()

    assert Counter(m.to for m in smtp_sink.messages()) == dict.fromkeys(RECIPIENTS, 1)
    assert len({m.message_id for m in smtp_sink.messages()}) == len(RECIPIENTS)
    assert sorted(ReminderDigest.objects.values_list("recipient", "attempts")) == [(r, 1) for r in RECIPIENTS]
    run = RetestSweepRun.objects.get()
    assert run.finished_at is not None
    # The redelivered sweep claimed only what the killed one had not: no claim twice.
    keys = list(RetestReminder.objects.values_list("recipient", "cable_id", "due_date", "kind"))
    assert len(keys) == len(set(keys)) > claims_before
    assert "escalated" in smtp_sink.to("lena@example.net")[0].subject
