"""Label batches: large print jobs rendered by a worker, downloaded when ready."""

import uuid

from django.conf import settings
from django.db import models
from django.urls import reverse

from inventory.core.choices import LabelBatchStatus, LabelKind


class LabelBatch(models.Model):
    """A print job. The selection is resolved to ids when it is created, so the file holds
    exactly what the user asked for then; the worker renders it to ``MEDIA_ROOT/labels/``
    (outside every web root), served only through a login-checked view as an attachment.
    ``updated_at`` is the worker's heartbeat: a sweep re-enqueues batches whose worker died.
    """

    uid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    description = models.CharField(max_length=200, blank=True)
    kind = models.CharField(max_length=5, choices=LabelKind.choices, default=LabelKind.CABLE)
    stock = models.CharField(max_length=20)
    fmt = models.CharField(max_length=3, default="pdf")
    cable_ids = models.JSONField(default=list, blank=True)
    rack_ids = models.JSONField(default=list, blank=True)
    total = models.PositiveIntegerField(default=0, help_text="Labels in the batch")
    done = models.PositiveIntegerField(default=0, help_text="Labels rendered so far")
    status = models.CharField(max_length=8, choices=LabelBatchStatus.choices, default=LabelBatchStatus.QUEUED)
    file = models.FileField(upload_to="labels/", blank=True, max_length=200)
    error = models.TextField(blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "label batches"
        indexes = [models.Index(fields=["status", "updated_at"], name="labelbatch_status")]
        permissions = [
            ("print_labels", "Can print labels for any selection (racks, rows, batches)"),
            ("print_cable_label", "Can print the labels of a single cable"),
        ]

    def __str__(self) -> str:
        return f"labels {self.uid} ({self.status})"

    def get_absolute_url(self) -> str:
        return reverse("label-batch", kwargs={"uid": self.uid})

    @property
    def percent(self) -> int:
        return 100 if not self.total else min(100, round(100 * self.done / self.total))

    @property
    def filename(self) -> str:
        return f"labels-{self.created_at:%Y%m%d-%H%M%S}-{str(self.uid)[:8]}.{self.fmt}"
