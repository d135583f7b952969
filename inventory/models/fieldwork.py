"""The journal: what people record about a cable, module, device or rack that is not a test.

Faults seen, notes and service actions (re-seating, cleaning), each with its author and time.
An entry is about exactly one thing (a database constraint). Faults and notes stay *open* (shown
near the top of their object's page) until someone closes them or the cable passes the
production gate; service actions are done when recorded. Entries are never edited; closing one
only records when and by whom.
"""

from django.conf import settings
from django.db import models

from inventory.core.choices import CableStatus, FieldNoteKind
from inventory.models.cables import Cable

# The things a journal entry can be about (one of these foreign keys is set).
JOURNAL_TARGETS = ("cable", "transceiver", "device", "rack")


class FieldNote(models.Model):
    """One dated journal entry on a cable, module, device or rack, by a person."""

    cable = models.ForeignKey(
        Cable, null=True, blank=True, on_delete=models.PROTECT, related_name="field_notes"
    )
    transceiver = models.ForeignKey(
        "inventory.Transceiver", null=True, blank=True, on_delete=models.PROTECT, related_name="journal"
    )
    device = models.ForeignKey(
        "inventory.Device", null=True, blank=True, on_delete=models.PROTECT, related_name="journal"
    )
    rack = models.ForeignKey(
        "inventory.Rack", null=True, blank=True, on_delete=models.PROTECT, related_name="journal"
    )
    kind = models.CharField(max_length=16, choices=FieldNoteKind.choices)
    text = models.TextField(blank=True, help_text="What was seen or done")
    status_before = models.CharField(max_length=14, choices=CableStatus.choices, blank=True)
    status_after = models.CharField(max_length=14, choices=CableStatus.choices, blank=True)
    at = models.DateTimeField()
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    notified = models.JSONField(default=list, blank=True, help_text="Addresses the notice is for")
    # The fault notice's delivery (a fault report with recipients): claimed at creation, sent
    # after the commit, retried by the periodic sweep when the mail server did not take it.
    notice_sent_at = models.DateTimeField(
        null=True, blank=True, help_text="When the mail server took the fault notice"
    )
    notice_next_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the unsent fault notice is (next) tried; empty once sent or given up",
    )
    notice_attempts = models.PositiveSmallIntegerField(default=0)
    notice_error = models.CharField(max_length=300, blank=True, help_text="Why the last send failed")
    closed_at = models.DateTimeField(null=True, blank=True, help_text="When the fault or note was settled")
    closed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    close_reason = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [
            models.Index(fields=["cable", "-at"], name="fieldnote_cable_at"),
            models.Index(fields=["transceiver", "-at"], name="fieldnote_module_at"),
            models.Index(fields=["device", "-at"], name="fieldnote_device_at"),
            models.Index(fields=["rack", "-at"], name="fieldnote_rack_at"),
            models.Index(fields=["notice_next_at"], name="fieldnote_notice_due"),
        ]
        constraints = [
            models.CheckConstraint(
                name="fieldnote_one_target",
                condition=(
                    models.Q(
                        cable__isnull=False, transceiver__isnull=True, device__isnull=True, rack__isnull=True
                    )
                    | models.Q(
                        cable__isnull=True, transceiver__isnull=False, device__isnull=True, rack__isnull=True
                    )
                    | models.Q(
                        cable__isnull=True, transceiver__isnull=True, device__isnull=False, rack__isnull=True
                    )
                    | models.Q(
                        cable__isnull=True, transceiver__isnull=True, device__isnull=True, rack__isnull=False
                    )
                ),
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.at:%Y-%m-%d %H:%M}"

    @property
    def is_open(self) -> bool:
        return self.closed_at is None and self.kind in (FieldNoteKind.FAULT, FieldNoteKind.NOTE)
