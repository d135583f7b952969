"""Telemetry: a narrow sample table keyed (port, ts), rollups, and the port state the rules use."""

from django.db import models

from inventory.models.telemetry_fields import UnsignedCounterField


class TelemetrySample(models.Model):
    """One sample of one port: the hot table. Narrow on purpose (COPY-friendly, no JSON per row).

    Key ``(port, ts)``. Counters are cumulative since the device's last clear and may reset;
    they are unsigned 64-bit and stored offset (``UnsignedCounterField``), so reads return the
    device's value and SQL comparisons/differences on the stored column stay valid.
    Per-lane gauges live in ``TelemetryLaneSample``, the FEC histogram in
    ``TelemetryHistogram`` and module/neighbour identity in ``PortObservation`` (side tables,
    written only when a sample carries them).

    ``ib_symbol_errors`` is InfiniBand's ``SymbolErrorCounter`` (PHY symbol errors), kept apart
    from ``fec_symbol_errors`` (SONiC/ethtool FEC symbols corrected).
    """

    pk = models.CompositePrimaryKey("port_id", "ts")
    port = models.ForeignKey(  # the composite key (port, ...) serves port lookups: no 2nd index
        "inventory.Port", on_delete=models.DO_NOTHING, db_constraint=False, db_index=False, related_name="+"
    )
    ts = models.DateTimeField()
    fec_corrected_cw = UnsignedCounterField(null=True)
    fec_uncorrectable_cw = UnsignedCounterField(null=True)
    fec_corrected_bits = UnsignedCounterField(null=True)
    fec_symbol_errors = UnsignedCounterField(null=True)
    rx_bits = UnsignedCounterField(null=True)
    ib_symbol_errors = UnsignedCounterField(null=True)
    pfc_pause_rx = UnsignedCounterField(null=True)
    pfc_pause_tx = UnsignedCounterField(null=True)
    pfc_pause_duration_us = UnsignedCounterField(null=True)
    link_down_events = UnsignedCounterField(null=True)
    link_error_recovery = UnsignedCounterField(null=True)
    pre_fec_ber = models.FloatField(null=True)
    post_fec_ber = models.FloatField(null=True)
    temperature_c = models.FloatField(null=True)
    voltage_v = models.FloatField(null=True)
    # the link as trained (a link running below its recorded speed or lanes is degraded)
    speed_gbps = models.FloatField(null=True)
    link_width = models.PositiveSmallIntegerField(null=True)

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
