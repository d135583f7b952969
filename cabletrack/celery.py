"""The Celery app, configured from Django settings (``CELERY_*``).

Every task publishes through ``OutboxTask``: if the broker refuses the message (Redis down),
the message is written to the database outbox (``inventory.OutboxMessage``) instead of being
lost, and ``outbox_flush_task`` (beat, every 30 s) sends it once the broker is back. Work
queued during an outage therefore runs after it; the tasks are idempotent, so a message that
was in fact delivered and is sent again does no harm.
"""

import logging
import os
import uuid

from celery import Celery
from celery.contrib.django.task import DjangoTask
from kombu.exceptions import OperationalError

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cabletrack.settings")

log = logging.getLogger("cabletrack.outbox")

try:  # the redis client raises its own errors through some kombu paths
    from redis.exceptions import RedisError as _RedisError
except ImportError:  # pragma: no cover
    _RedisError = OperationalError

BROKER_ERRORS = (OperationalError, _RedisError, ConnectionError, TimeoutError)
KEPT_OPTIONS = ("queue", "priority", "countdown", "expires")


class OutboxTask(DjangoTask):
    def apply_async(self, args=None, kwargs=None, task_id=None, producer=None, link=None, link_error=None,
                    shadow=None, _outbox=True, **options):  # fmt: skip
        try:
            return super().apply_async(
                args, kwargs, task_id=task_id, producer=producer, link=link, link_error=link_error,
                shadow=shadow, **options,
            )  # fmt: skip
        except BROKER_ERRORS as exc:
            if not _outbox or self.app.conf.task_always_eager:
                raise
            from inventory.models import OutboxMessage  # late: this module loads before Django's apps

            kept = {
                k: v for k, v in options.items() if k in KEPT_OPTIONS and isinstance(v, str | int | float)
            }
            OutboxMessage.objects.create(
                task_name=self.name,
                args=list(args or []),
                kwargs=dict(kwargs or {}),
                options=kept,
                error=str(exc),
            )
            log.warning("broker unavailable, %s kept in the outbox: %s", self.name, exc)
            return self.AsyncResult(task_id or str(uuid.uuid4()))


app = Celery("cabletrack", task_cls=OutboxTask)
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
