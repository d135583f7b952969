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
