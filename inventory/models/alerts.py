"""Alerts on links and ports, their mail notices, maintenance windows and per-port baselines."""

from datetime import datetime

from django.conf import settings
from django.db import models
from django.db.models import Q

from inventory.core.choices import (
    AlertRule,
    AlertState,
    RepairAction,
    RepairEnd,
    RepairOutcome,
    RepairSource,
    Severity,
)
from inventory.core.repairs import end_words, symptom_words, watching_words


class Alert(models.Model):
    """A finding on a link (or a port). Opens once, updates while it holds, resolves when it clears.

    ``key`` names the condition (``fec_degradation:link:42``, ``miswire:port:7``): at most one
    open alert per key is a database constraint, so a re-run or a concurrent run of the rule
    task can only update the open alert, never add a second one.
    """

    key = models.CharField(max_length=80)
    rule = models.CharField(max_length=20, choices=AlertRule.choices)
    severity = models.CharField(max_length=10, choices=Severity.choices)
    state = models.CharField(max_length=10, choices=AlertState.choices, default=AlertState.OPEN)
    link = models.ForeignKey(
        "inventory.Link", null=True, blank=True, on_delete=models.PROTECT, related_name="alerts"
    )
    port = models.ForeignKey(
        "inventory.Port", null=True, blank=True, on_delete=models.PROTECT, related_name="alerts"
    )
    cable = models.ForeignKey(
        "inventory.Cable",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="alerts",
        help_text="The suspect cable (first segment unless the evidence points elsewhere)",
    )
    cables = models.ManyToManyField(
        "inventory.Cable", blank=True, related_name="path_alerts", help_text="Every segment on the path"
    )
    opened_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    resolved_at = models.DateTimeField(null=True, blank=True)
    silenced = models.BooleanField(default=False, help_text="Found inside a maintenance window")
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # A replacement (a cable replaced, a module swapped) moves the open alerts of the links it
    # touches to the new part, "replaced, watching": ``watching_since`` the replacement, until the
    # rule's clean window passes clean (resolved) or the condition shows again (``returned_at``,
    # the alert naming the new part). ``moved_from``: the cable it was moved off, so that cable's
    # page says where its alerts went; ``replacement``: what was done, in words
    # (``core.repairs.repair_words``: "cable replacement (J-102 by R-102)"); ``watch_action`` and
    # ``watch_end``: the same as the repair's action and end, and ``watch_cable`` the label of the
    # cable whose end it was (on a link through a panel the two ends are two cables'), which the
    # short state reads ("cleaned at End B of J-101, watching": ``watching``). The label, as the
    # summary and ``replacement`` keep theirs: words every list reads without a join.
    moved_from = models.ForeignKey(
        "inventory.Cable", null=True, blank=True, on_delete=models.PROTECT, related_name="alerts_moved_away"
    )
    replacement = models.CharField(max_length=200, blank=True)
    watch_action = models.CharField(max_length=16, choices=RepairAction.choices, blank=True)
    watch_end = models.CharField(max_length=4, choices=RepairEnd.choices, blank=True)
    watch_cable = models.CharField(max_length=64, blank=True)
    watching_since = models.DateTimeField(null=True, blank=True)
    returned_at = models.DateTimeField(null=True, blank=True)
    summary = models.CharField(max_length=300)
    recommendation = models.CharField(max_length=500, blank=True)
    evidence = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-opened_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["key"], condition=Q(state=AlertState.OPEN), name="alert_one_open_per_key"
            ),
            models.CheckConstraint(
                condition=Q(state=AlertState.OPEN, resolved_at__isnull=True)
                | Q(state=AlertState.RESOLVED, resolved_at__isnull=False),
                name="alert_resolved_has_time",
            ),
        ]
        indexes = [
            models.Index(fields=["state", "severity"], name="alert_state_severity"),
            models.Index(fields=["key", "state"], name="alert_key_state"),
        ]

    def __str__(self) -> str:
        return f"{self.rule} {self.severity} {self.state}"

    @property
    def watching(self) -> str:
        """``cleaned at End B of J-101, watching`` while on watch after a repair or a replacement, else ""."""
        return (
            watching_words(self.watch_action, self.watch_end, self.watch_cable) if self.watching_since else ""
        )

    @property
    def figures_at(self) -> datetime:
        """When the figures in its summary and recommendation were measured: the last evaluation
        that rewrote them (its evidence history), else its opening. Not ``updated_at``: a
        condition that only holds keeps its alert open, and its last figures, with a newer one."""
        history = (self.evidence or {}).get("history") or []
        try:
            return datetime.fromisoformat(history[-1]["at"])
        except (IndexError, KeyError, TypeError, ValueError):
            return self.opened_at


class AlertNotification(models.Model):
    """One mail notice about one alert. Claimed (a row) before it is sent, so it goes out once.

    The ``message_id`` is deterministic: if a sender dies after the SMTP server accepted the
    message but before ``sent_at`` was written, the retry after the claim lease carries the
    same Message-ID, which mail clients and most MTAs collapse into one.
    """

    alert = models.ForeignKey(Alert, on_delete=models.CASCADE, related_name="notifications")
    # "opened"; "drain-<drain id>-<window end>": a drain of the alert's link whose maintenance
    # window ended without a restore (``services.collectives.drain.drains_overdue_notify``).
    kind = models.CharField(max_length=40, default="opened")
    # Set for a notice that is not the alert's own (an overdue drain): the mail says these.
    subject = models.CharField(max_length=200, blank=True)
    body = models.TextField(blank=True)
    recipients = models.JSONField(default=list)
    # The mail's closing line: why its readers get it (``core.mail.why_line``), decided with them.
    why = models.TextField(blank=True)
    message_id = models.CharField(max_length=200, unique=True)
    created_at = models.DateTimeField()
    claimed_at = models.DateTimeField(null=True, blank=True)
    claim_token = models.CharField(max_length=40, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [models.UniqueConstraint(fields=["alert", "kind"], name="alert_notice_once")]
        indexes = [models.Index(fields=["sent_at"], name="alert_notice_unsent")]

    def __str__(self) -> str:
        return f"{self.kind} notice for alert {self.alert_id}"


class MaintenanceWindow(models.Model):
    """Silences alerts on chosen links, devices or racks for a time window.

    Findings inside a window are still recorded (``Alert.silenced``); they send no mail and do
    not change a cable's status.
    """

    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    reason = models.CharField(max_length=200)
    links = models.ManyToManyField("inventory.Link", blank=True)
    devices = models.ManyToManyField("inventory.Device", blank=True)
    racks = models.ManyToManyField("inventory.Rack", blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-starts_at"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(ends_at__gt=models.F("starts_at")), name="maintenance_range"
            )
        ]
        indexes = [models.Index(fields=["ends_at", "starts_at"], name="maintenance_active")]

    def __str__(self) -> str:
        return f"{self.reason} ({self.starts_at:%Y-%m-%d %H:%M}-{self.ends_at:%Y-%m-%d %H:%M})"


class LinkDrain(models.Model):
    """A link taken out of service from an alert ("drain") and put back ("restore"), recorded.

    The drain opens a maintenance window on the link (``window``: its start, its planned end),
    which silences the rules on that link while it is out; the restore ends the window. The
    safety verdict at the time (``safe``, ``reasons``) is kept; a drain the check refused is
    made only with an engineer's ``override_reason``, which is also written in the journal.
    Never deleted: the record of who took which link out, when, and for how long.
    """

    alert = models.ForeignKey(Alert, on_delete=models.PROTECT, related_name="drains")
    link = models.ForeignKey("inventory.Link", on_delete=models.PROTECT, related_name="drains")
    window = models.OneToOneField(MaintenanceWindow, on_delete=models.PROTECT, related_name="drain")
    drained_at = models.DateTimeField()
    drained_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    safe = models.BooleanField(help_text="What the safety check said when the link was drained")
    reasons = models.JSONField(default=list, blank=True, help_text="Why the check refused it (overridden)")
    override_reason = models.CharField(max_length=200, blank=True)
    restored_at = models.DateTimeField(null=True, blank=True)
    restored_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The last time its window was moved on ("extend"), and by whom.
    extended_at = models.DateTimeField(null=True, blank=True)
    extended_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-drained_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(safe=True) | ~Q(override_reason=""), name="linkdrain_unsafe_has_override"
            )
        ]
        indexes = [models.Index(fields=["link", "-drained_at"], name="linkdrain_link_at")]

    def __str__(self) -> str:
        return f"link {self.link_id} drained {self.drained_at:%Y-%m-%d %H:%M}"


class PortBaseline(models.Model):
    """What is normal for one port's receiver: the yardstick of the relative rules.

    Learnt from healthy windows (slow moving average in log space for BER and rates, in dB for
    power); frozen while an alert on the port is open so a degradation is never learnt as normal.
    """

    port = models.OneToOneField(
        "inventory.Port", primary_key=True, on_delete=models.CASCADE, related_name="baseline"
    )
    pre_fec_ber = models.FloatField(null=True, blank=True)
    cw_rate = models.FloatField(null=True, blank=True, help_text="Corrected codewords per second")
    rx_power_dbm = models.JSONField(null=True, blank=True, help_text="Per lane")
    first_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["port_id"]

    def __str__(self) -> str:
        return f"baseline of port {self.port_id}"


class Repair(models.Model):
    """What a technician did about an alert, and whether it held (issue 35, "repairs that learn").

    Recorded in two taps from the alert page (or ``POST /api/alerts/<id>/repairs/``): the action
    and the end. What the alert showed at that moment is kept with it (``symptoms``, a compact key
    such as ``one+rx``: one direction or both, low receive power, high transmit bias, high
    temperature; ``symptom_end``: the link end whose receiver saw it), with the site and the
    module model, so outcomes can be counted per symptom, site and model. ``outcome`` is judged
    by the telemetry that follows (``core.repairs.repair_outcome``, run by the
    ``inventory.repairs_judge`` task): pending, then fixed or came back. Rows are never deleted.
    """

    alert = models.ForeignKey(Alert, on_delete=models.PROTECT, related_name="repairs")
    rule = models.CharField(max_length=20, choices=AlertRule.choices, help_text="The alert's rule")
    action = models.CharField(max_length=16, choices=RepairAction.choices)
    end = models.CharField(max_length=4, choices=RepairEnd.choices, default=RepairEnd.NA)
    cable = models.ForeignKey(
        "inventory.Cable",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="repairs",
        help_text="The cable whose end it was done at (End A of J-100), as the alert page named it; "
        "empty for both ends of a link over several cables, or where not recorded",
    )
    note = models.CharField(max_length=300, blank=True)
    source = models.CharField(
        max_length=8,
        choices=RepairSource.choices,
        default=RepairSource.ALERT,
        help_text="Recorded on the alert, or by the replace-cable or swap-module form",
    )
    done_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    done_at = models.DateTimeField()
    symptoms = models.CharField(max_length=40, help_text="Compact key: one|both, then +rx, +bias, +temp")
    symptom_end = models.CharField(max_length=4, blank=True, help_text="The link end whose receiver saw it")
    site = models.ForeignKey(
        "inventory.Site", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    module_model = models.ForeignKey(
        "inventory.TransceiverModel", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    vendor = models.ForeignKey(
        "inventory.Vendor",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The module's vendor (a sealed cable's own vendor when no module)",
    )
    outcome = models.CharField(max_length=10, choices=RepairOutcome.choices, default=RepairOutcome.PENDING)
    judged_at = models.DateTimeField(null=True, blank=True, help_text="When the outcome became known")
    outcome_reason = models.CharField(max_length=200, blank=True)

    @property
    def symptom_words(self) -> str:
        """What the alert showed, in words ("one direction, low receive power")."""
        return symptom_words(self.symptoms)

    @property
    def where(self) -> str:
        """Where it was done, as the alert page named it: "End A of J-100" (read ``cable`` with it)."""
        return end_words(self.end, self.cable.label if self.cable_id else "")

    class Meta:
        ordering = ["-done_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(outcome=RepairOutcome.PENDING, judged_at__isnull=True)
                | (~Q(outcome=RepairOutcome.PENDING) & Q(judged_at__isnull=False)),
                name="repair_judged_has_time",
            )
        ]
        indexes = [
            models.Index(fields=["outcome"], name="repair_pending", condition=Q(outcome="pending")),
            models.Index(fields=["rule", "symptoms", "action"], name="repair_rule_symptoms"),
            models.Index(fields=["judged_at"], name="repair_judged_at"),
        ]

    def __str__(self) -> str:
        return f"{self.action} at {self.end} on alert {self.alert_id}: {self.outcome}"
