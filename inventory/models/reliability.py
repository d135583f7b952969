"""Machinery that makes writes safe to retry: idempotency keys and the task outbox."""

from django.conf import settings
from django.db import models


class IdempotencyRecord(models.Model):
    """The first answer to an API write sent with an ``Idempotency-Key`` header.

    A retry with the same key (same user) gets this answer back instead of writing twice; the
    same key with a different request is refused (422). ``status_code`` is null while the first
    request is still running.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    method = models.CharField(max_length=8)
    path = models.CharField(max_length=2048)
    request_hash = models.CharField(max_length=64)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    content_type = models.CharField(max_length=100, blank=True)
    headers = models.JSONField(default=dict, blank=True)
    body = models.BinaryField(blank=True, default=b"")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "key"], name="idempotency_unique_user_key")]

    def __str__(self) -> str:
        return f"{self.user_id}:{self.key}"


class OutboxMessage(models.Model):
    """A task message the broker refused (Redis down): sent again by ``outbox_flush_task``.

    Written by ``cabletrack.celery.OutboxTask.apply_async`` when publishing fails, so work queued
    during a broker outage runs once the broker is back instead of being lost.
    """

    task_name = models.CharField(max_length=200)
    args = models.JSONField(default=list, blank=True)
    kwargs = models.JSONField(default=dict, blank=True)
    options = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True, db_index=True)

    class Meta:
        ordering = ["created_at"]

    def __str__(self) -> str:
        return f"{self.task_name}{tuple(self.args)}"
