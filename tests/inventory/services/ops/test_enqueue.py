"""Services enqueue tasks by name: after commit, through ``OutboxTask``, from any process."""

import subprocess
import sys
from unittest import mock

import pytest
from kombu.exceptions import OperationalError

from inventory.models import OutboxMessage
from inventory.services.ops.enqueue import enqueue_now, enqueue_on_commit

pytestmark = pytest.mark.django_db


def test_the_task_is_sent_by_its_name_once_the_transaction_commits(django_capture_on_commit_callbacks):
    with mock.patch("inventory.tasks.label_batch_render_task.apply_async") as send:
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            enqueue_on_commit("inventory.label_batch_render", 7)
        send.assert_not_called()  # nothing leaves before the commit
        callbacks[0]()
    send.assert_called_once_with((7,), {})


def test_a_broker_outage_keeps_the_message_in_the_outbox():
    with mock.patch(
        "celery.contrib.django.task.DjangoTask.apply_async", side_effect=OperationalError("down")
    ):
        enqueue_now("inventory.retests_sweep", full=True)
    kept = OutboxMessage.objects.get()
    assert (kept.task_name, kept.args, kept.kwargs) == ("inventory.retests_sweep", [], {"full": True})


def test_a_process_that_never_imported_the_tasks_finds_them_by_name():
    """A web process imports services, never ``inventory.tasks``: the name still resolves."""
    code = (
        "import sys, django; django.setup();"
        "from inventory.services.ops.enqueue import _task;"
        "assert 'inventory.tasks' not in sys.modules;"
        "print(_task('inventory.label_batch_render').name)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "inventory.label_batch_render"
