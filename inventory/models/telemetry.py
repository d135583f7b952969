"""Telemetry: a narrow sample table keyed (port, ts), rollups, and the port state the rules use."""

from django.db import models


class TelemetrySample(models.Model):
    """One sample of one port. Narrow on purpose: COPY-friendly, no JSON per row."""

    pk = models.CompositePrimaryKey("port_id", "ts")
    port = models.ForeignKey(
        "inventory.Port", on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )
    ts = models.DateTimeField()
    fec_corrected_cw = models.BigIntegerField(null=True)
    fec_uncorrectable_cw = models.BigIntegerField(null=True)
    fec_corrected_bits = models.BigIntegerField(null=True)
    fec_symbol_errors = models.BigIntegerField(null=True)
    rx_bits = models.DecimalField(
        max_digits=20, decimal_places=0, null=True, help_text="Unsigned 64-bit counter"
    )
    pre_fec_ber = models.FloatField(null=True)
    post_fec_ber = models.FloatField(null=True)
    link_down_events = models.BigIntegerField(null=True)
    temperature_c = models.FloatField(null=True)

    class Meta:
        ordering = ["port_id", "ts"]

    def __str__(self) -> str:
        return f"{self.port_id}@{self.ts:%Y-%m-%dT%H:%M:%S}"


class Alert(models.Model):
    """A finding on a link. Opens once, updates while it holds, resolves when it clears."""

    rule = models.CharField(max_length=20)
    severity = models.CharField(max_length=10)
    state = models.CharField(max_length=10, default="open")
    link = models.ForeignKey(
        "inventory.Link", null=True, blank=True, on_delete=models.PROTECT, related_name="alerts"
    )
    port = models.ForeignKey(
        "inventory.Port", null=True, blank=True, on_delete=models.PROTECT, related_name="alerts"
    )
    cable = models.ForeignKey(
        "inventory.Cable", null=True, blank=True, on_delete=models.PROTECT, related_name="alerts"
    )
    opened_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    resolved_at = models.DateTimeField(null=True, blank=True)
    silenced = models.BooleanField(default=False)
    summary = models.CharField(max_length=300)
    recommendation = models.CharField(max_length=300, blank=True)
    evidence = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-opened_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["rule", "port"], condition=models.Q(state="open"), name="alert_one_open_per_rule_port"
            )
        ]

    def __str__(self) -> str:
        return f"{self.rule} {self.severity} {self.state}"


class MaintenanceWindow(models.Model):
    """Silences alerts on chosen links, devices or racks for a time window."""

    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    reason = models.CharField(max_length=200)
    links = models.ManyToManyField("inventory.Link", blank=True)
    devices = models.ManyToManyField("inventory.Device", blank=True)
    racks = models.ManyToManyField("inventory.Rack", blank=True)
    created_by = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-starts_at"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(ends_at__gt=models.F("starts_at")), name="maintenance_range"
            )
        ]

    def __str__(self) -> str:
        return f"{self.reason} ({self.starts_at:%Y-%m-%d %H:%M}-{self.ends_at:%Y-%m-%d %H:%M})"


class ForecastSnapshot(models.Model):
    """The nightly forecast, one per day (idempotent)."""

    day = models.DateField(unique=True)
    computed_at = models.DateTimeField()
    annual_failure_rate = models.FloatField()
    payload = models.JSONField(default=dict)

    class Meta:
        ordering = ["-day"]

    def __str__(self) -> str:
        return f"forecast {self.day}"
