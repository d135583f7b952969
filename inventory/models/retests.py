"""Retest scheduling and reminder mail: policies, triggers, sent-log claims, digests, preferences.

The due dates themselves live on ``Cable.retest_due`` and ``Link.retest_due`` (date columns swept
by a periodic task). Everything here is bookkeeping around them: what interval applies
(``RetestPolicy``), what shortened it (``RetestTrigger``), who was told what and when
(``RetestReminder`` rows, claimed before a mail goes out, and the ``ReminderDigest`` that carries
them), and how each person wants to be told (``UserProfile``).
"""

from django.conf import settings
from django.db import models
from django.db.models import Q

from inventory.core.choices import (
    CableKind,
    DigestStatus,
    ReminderKind,
    ReminderMode,
    RetestTriggerReason,
    Weekday,
)


class RetestPolicy(models.Model):
    """A retest rule for a site, a medium (cable kind), a link class, or any mix of them.

    Blank scope fields match everything; the most specific matching policy that sets a value
    wins (site beats medium beats link class). ``Site.retest_interval_days`` counts as a
    site-wide policy; ``settings.CABLETRACK_RETEST_*`` are the defaults below all of them.
    """

    site = models.ForeignKey(
        "inventory.Site", null=True, blank=True, on_delete=models.CASCADE, related_name="retest_policies"
    )
    kind = models.CharField(
        max_length=8, choices=CableKind.choices, blank=True, help_text="Medium; blank = any"
    )
    link_class = models.CharField(max_length=40, blank=True, help_text="Link class; blank = any")
    interval_days = models.PositiveIntegerField(null=True, blank=True)
    shorten_days = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="After a failed test, fault report, re-seat or loss increase: retest within this many days.",
    )
    accept_telemetry = models.BooleanField(
        null=True,
        blank=True,
        help_text="Accept a clean telemetry record over the interval as the retest of a live link "
        "(default: no, a physical retest is required).",
    )
    notes = models.CharField(max_length=200, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "retest policies"
        ordering = ["site__name", "kind", "link_class"]
        constraints = [
            models.UniqueConstraint(
                fields=["site", "kind", "link_class"],
                name="retest_policy_unique_scope",
                nulls_distinct=False,
            ),
            models.CheckConstraint(
                condition=Q(interval_days__isnull=True) | Q(interval_days__gte=1),
                name="retest_policy_interval_positive",
            ),
        ]

    def __str__(self) -> str:
        scope = " / ".join(
            s for s in (str(self.site) if self.site_id else "", self.kind, self.link_class) if s
        )
        return f"retest policy ({scope or 'everywhere'})"


class RetestTrigger(models.Model):
    """Something that brings a cable's retest forward: a fault report, a re-seat, a finding.

    Failed tests and ``loss_increase`` alerts are read from their own tables; this table holds
    the events that have no other record (and any the other features choose to log here).
    """

    cable = models.ForeignKey("inventory.Cable", on_delete=models.PROTECT, related_name="retest_triggers")
    reason = models.CharField(max_length=16, choices=RetestTriggerReason.choices)
    occurred_at = models.DateTimeField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    note = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-occurred_at"]
        indexes = [models.Index(fields=["cable", "-occurred_at"], name="retest_trigger_latest")]

    def __str__(self) -> str:
        return f"{self.get_reason_display()} on {self.cable_id} at {self.occurred_at:%Y-%m-%d}"


class ReminderDigest(models.Model):
    """One mail to one recipient, carrying any number of claimed reminders.

    Lifecycle: ``pending`` (open: the sweep may still add reminders until ``send_after``) ->
    ``sending`` (claimed by one worker, with a lease) -> ``sent``; or ``retry`` after a
    transient SMTP error, ``failed`` after a permanent one, ``cleared`` if every reminder in it
    was resolved (retested) before it went out. ``message_id`` is fixed at creation, so every
    attempt carries the same Message-ID.
    """

    recipient = models.EmailField()
    message_id = models.CharField(max_length=200, unique=True)
    status = models.CharField(max_length=10, choices=DigestStatus.choices, default=DigestStatus.PENDING)
    created_at = models.DateTimeField()
    send_after = models.DateTimeField(help_text="The recipient's chosen digest time")
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    sent_at = models.DateTimeField(null=True, blank=True)
    subject = models.CharField(max_length=250, blank=True)
    last_error = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["recipient"], condition=Q(status="pending"), name="digest_one_open_per_recipient"
            )
        ]
        indexes = [models.Index(fields=["status", "send_after"], name="digest_due")]

    def __str__(self) -> str:
        return f"digest to {self.recipient} ({self.status})"


class RetestReminder(models.Model):
    """The sent-log claim: one row per (recipient, cable, due date, kind), inserted before sending.

    The unique constraint is the guarantee: a concurrent sweep, a redelivered task or a retry
    cannot claim the same reminder again, so it can ride in at most one digest.
    """

    recipient = models.EmailField()
    cable = models.ForeignKey("inventory.Cable", on_delete=models.PROTECT, related_name="retest_reminders")
    due_date = models.DateField()
    kind = models.CharField(max_length=10, choices=ReminderKind.choices)
    digest = models.ForeignKey(ReminderDigest, on_delete=models.PROTECT, related_name="reminders")
    claimed_at = models.DateTimeField()

    class Meta:
        ordering = ["digest_id", "cable_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["recipient", "cable", "due_date", "kind"], name="reminder_once_per_due"
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.cable_id} due {self.due_date} -> {self.recipient}"


class RetestSweepRun(models.Model):
    """One run of the daily sweep; a run that started but never finished is re-enqueued."""

    day = models.DateField(unique=True)
    started_at = models.DateTimeField()
    watermark = models.DateTimeField(
        null=True, blank=True, help_text="Wall-clock start: the next run recomputes what changed after it"
    )
    full = models.BooleanField(default=False)
    finished_at = models.DateTimeField(null=True, blank=True)
    cables_changed = models.PositiveIntegerField(default=0)
    reminders_claimed = models.PositiveIntegerField(default=0)
    set_aside = models.JSONField(
        default=list, blank=True, help_text="Cables whose due date could not be decided: [{cable, reason}]"
    )

    class Meta:
        ordering = ["-day"]

    def __str__(self) -> str:
        return f"retest sweep {self.day}"


class UserProfile(models.Model):
    """A person's own settings: how and when retest reminders reach them."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile")
    reminder_mode = models.CharField(
        max_length=10, choices=ReminderMode.choices, default=ReminderMode.IMMEDIATE
    )
    digest_weekday = models.PositiveSmallIntegerField(
        choices=Weekday.choices, default=Weekday.MONDAY, help_text="For weekly digests"
    )
    digest_hour = models.PositiveSmallIntegerField(default=7, help_text="Hour of day (UTC) for digests")

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(digest_hour__gte=0, digest_hour__lte=23), name="profile_digest_hour_range"
            ),
            models.CheckConstraint(
                condition=Q(digest_weekday__gte=0, digest_weekday__lte=6), name="profile_digest_weekday_range"
            ),
        ]

    def __str__(self) -> str:
        return f"profile of {self.user}"
