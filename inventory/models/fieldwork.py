"""What technicians record at the rack that is not a test: faults seen, re-seating, cleaning."""

from django.conf import settings
from django.db import models

from inventory.core.choices import CableStatus, FieldNoteKind
from inventory.models.cables import Cable


class FieldNote(models.Model):
    """One dated observation or action on a cable, by a person. Append-only: never edited."""

    cable = models.ForeignKey(Cable, on_delete=models.PROTECT, related_name="field_notes")
    kind = models.CharField(max_length=16, choices=FieldNoteKind.choices)
    text = models.TextField(blank=True, help_text="What was seen or done")
    status_before = models.CharField(max_length=14, choices=CableStatus.choices, blank=True)
    status_after = models.CharField(max_length=14, choices=CableStatus.choices, blank=True)
    at = models.DateTimeField()
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    notified = models.JSONField(default=list, blank=True, help_text="Addresses the notice went to")

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["cable", "-at"], name="fieldnote_cable_at")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} on {self.cable_id} {self.at:%Y-%m-%d %H:%M}"
