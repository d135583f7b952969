"""Telemetry side tables (per-lane gauges, FEC histograms, identities), the rollup queue and
``PortRollup``, the per-port per-bucket table the alert rules evaluate.

The hot table is ``TelemetrySample`` (``telemetry.py``). Everything here is keyed by port and
time like it, with no foreign-key constraint to ``Port`` (bulk COPY, retention deletes) and no
JSON per row.
"""

from __future__ import annotations

from django.db import models

from inventory.models.telemetry_fields import BigIntArrayField, FloatArrayField


class TelemetryLaneSample(models.Model):
    """Per-lane gauges of one sample (module DOM), lane 0 first; a list of one for a single value."""

    pk = models.CompositePrimaryKey("port_id", "ts")
    port = models.ForeignKey(  # the composite key (port, ...) serves port lookups: no 2nd index
        "inventory.Port", on_delete=models.DO_NOTHING, db_constraint=False, db_index=False, related_name="+"
    )
    ts = models.DateTimeField()
    rx_power_dbm = FloatArrayField(null=True)
    tx_power_dbm = FloatArrayField(null=True)
    bias_ma = FloatArrayField(null=True)

    class Meta:
        ordering = ["port_id", "ts"]

    def __str__(self) -> str:
        return f"lanes {self.port_id}@{self.ts:%Y-%m-%dT%H:%M:%S}"


class FecBinLayout(models.Model):
    """The symbol-error ranges of a FEC histogram's bins and the FEC's correction limit.

    ``bin_low[i]..bin_high[i]`` symbol errors per codeword fall in bin ``i`` (ethtool's
    ``bin_low``/``bin_high``; SONiC/mlxlink bins are one symbol count each). ``correction_limit``
    is the most symbol errors the FEC corrects per codeword (KP4 RS(544,514): 15; KR4: 7).
    Few distinct layouts exist, so each histogram row points at one.
    """

    bin_low = BigIntArrayField()
    bin_high = BigIntArrayField()
    correction_limit = models.PositiveSmallIntegerField()
    signature = models.CharField(max_length=400, unique=True, help_text="limit|lo-hi,lo-hi,...")

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.signature


class TelemetryHistogram(models.Model):
    """A FEC codeword histogram of one sample: cumulative codeword counts per bin."""

    pk = models.CompositePrimaryKey("port_id", "ts")
    port = models.ForeignKey(  # the composite key (port, ...) serves port lookups: no 2nd index
        "inventory.Port", on_delete=models.DO_NOTHING, db_constraint=False, db_index=False, related_name="+"
    )
    ts = models.DateTimeField()
    # Layouts are shared and never deleted; no per-row foreign-key trigger on the hot insert
    layout = models.ForeignKey(
        FecBinLayout, on_delete=models.PROTECT, related_name="+", db_constraint=False, db_index=False
    )
    counts = BigIntArrayField()

    class Meta:
        ordering = ["port_id", "ts"]

    def __str__(self) -> str:
        return f"hist {self.port_id}@{self.ts:%Y-%m-%dT%H:%M:%S}"


class PortObservation(models.Model):
    """What telemetry said about a port's module and neighbour, stored when it changes.

    A row is written at ``ts`` only when the identity or neighbour differs from the port's
    previous observation, so a collector repeating the EEPROM on every sample costs nothing.
    Empty strings mean "not reported in that sample" (the previous value still holds).
    """

    pk = models.CompositePrimaryKey("port_id", "ts")
    port = models.ForeignKey(  # the composite key (port, ...) serves port lookups: no 2nd index
        "inventory.Port", on_delete=models.DO_NOTHING, db_constraint=False, db_index=False, related_name="+"
    )
    ts = models.DateTimeField()
    module_vendor = models.CharField(max_length=100, blank=True)
    module_part = models.CharField(max_length=100, blank=True)
    module_serial = models.CharField(max_length=100, blank=True)
    neighbor_device = models.CharField(max_length=128, blank=True)
    neighbor_port = models.CharField(max_length=128, blank=True)

    class Meta:
        ordering = ["port_id", "ts"]

    def __str__(self) -> str:
        return f"seen {self.port_id}@{self.ts:%Y-%m-%dT%H:%M:%S}"


class PortTelemetryState(models.Model):
    """One row per port that reported: its last sample time, the last module identity and
    neighbour seen, and the module's own DOM thresholds (read from its EEPROM).

    ``identity_seen_at`` is the time of the latest sample that carried an identity, neighbour
    or thresholds (written by the ingest); ``last_ts`` the latest sample of any kind (written
    by the rollup task, off the ingest path). Empty strings: never reported.

    No index but the key: the rollup rewrites the row of every port it rolls up, and an update
    that changes no indexed column can stay on its page (HOT) without an entry in any index.
    """

    port = models.OneToOneField(
        "inventory.Port", primary_key=True, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )
    last_ts = models.DateTimeField(null=True, blank=True)
    module_vendor = models.CharField(max_length=100, blank=True)
    module_part = models.CharField(max_length=100, blank=True)
    module_serial = models.CharField(max_length=100, blank=True)
    neighbor_device = models.CharField(max_length=128, blank=True)
    neighbor_port = models.CharField(max_length=128, blank=True)
    identity_seen_at = models.DateTimeField(null=True, blank=True)
    rx_power_low_warn_dbm = models.FloatField(null=True, blank=True)
    rx_power_low_alarm_dbm = models.FloatField(null=True, blank=True)
    temperature_high_warn_c = models.FloatField(null=True, blank=True)
    # The module's own judgement as it last reported it (core.telemetry.dom): every threshold
    # (``<quantity>_<level>`` -> value) and alarm/warning flag (-> On), and the last reading set
    # aside as "sensor suspect" (reasons and values; None once a believable reading follows).
    # (nullable: the rollup's SQL creates state rows without them)
    module_thresholds = models.JSONField(null=True, blank=True)
    module_flags = models.JSONField(null=True, blank=True)
    dom_suspect = models.JSONField(null=True, blank=True)
    dom_suspect_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["port_id"]

    def __str__(self) -> str:
        return f"state {self.port_id}"


class TelemetryIngestBatch(models.Model):
    """The rollup queue: one row per stored batch, naming the ports it touched and its time span.

    Append-only and cheap for the ingest path: one row per request and rollup shard its ports
    fall in (port id modulo ``CABLETRACK_TELEMETRY_ROLLUP_SHARDS``), not one per port. A rollup
    run holds its shard's lock, claims the shard's rows, recomputes the touched ports' buckets
    from ``min_ts`` and deletes the rows in the same transaction: a crash or a retry leaves them
    for the next run, and recomputing is idempotent.
    """

    received_at = models.DateTimeField()
    min_ts = models.DateTimeField()
    max_ts = models.DateTimeField()
    port_ids = BigIntArrayField()
    # The rollup shard the row's ports belong to (``rollup_queue.shard_of``): each shard is
    # rolled up by one run at a time, so shards run side by side without sharing a port.
    shard = models.PositiveSmallIntegerField(default=0, db_default=0, help_text="Rollup shard of its ports")
    # Set aside (``services/telemetry/rollup_queue.py``): ports whose recompute failed, with the
    # error, how often it failed and when to try again. Database defaults: the ingest inserts
    # fresh rows with raw SQL naming only the columns above.
    attempts = models.PositiveIntegerField(default=0, db_default=0, help_text="Failed recomputes")
    last_error = models.TextField(blank=True, default="", db_default="", help_text="Why the last one failed")
    next_attempt_at = models.DateTimeField(null=True, blank=True, help_text="Not taken again before this")

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"batch {self.pk} ({len(self.port_ids or [])} ports)"


class PortRollup(models.Model):
    """Per-port, per-bucket telemetry summary: THE table the alert rules read.

    Key ``(port, bucket)``; ``bucket`` is the bucket's start (UTC, aligned to
    ``CABLETRACK_TELEMETRY_ROLLUP_SECONDS``, 60 s by default) and ``seconds`` its width.
    Counter fields are **increases within the bucket** with Prometheus ``increase()``
    semantics: a drop is a counter reset (the new value counts from zero), never negative;
    out-of-order samples are sorted first and never counted as resets; increases are between
    consecutive samples, the interval being attributed to the bucket of its later sample.
    Null means "not reported in this bucket". Gauges are the min/max/last of the bucket's
    samples as named. Recomputed idempotently from raw samples (``telemetry_rollup``).
    """

    pk = models.CompositePrimaryKey("port_id", "bucket")
    port = models.ForeignKey(  # the composite key (port, ...) serves port lookups: no 2nd index
        "inventory.Port", on_delete=models.DO_NOTHING, db_constraint=False, db_index=False, related_name="+"
    )
    bucket = models.DateTimeField(help_text="Bucket start (UTC)")
    seconds = models.PositiveIntegerField(default=60, help_text="Bucket width")
    samples = models.PositiveIntegerField(default=0, help_text="Raw samples in the bucket")
    covered_s = models.FloatField(
        default=0, help_text="Seconds covered by sample-to-sample intervals ending in this bucket"
    )
    resets = models.PositiveIntegerField(default=0, help_text="Counter resets detected (any counter)")
    # FEC counters (increases)
    fec_corrected_cw = models.BigIntegerField(null=True, help_text="Corrected codewords")
    fec_uncorrectable_cw = models.BigIntegerField(null=True, help_text="Uncorrectable codewords")
    fec_corrected_bits = models.BigIntegerField(null=True, help_text="Corrected bits (pre-FEC bit errors)")
    fec_symbol_errors = models.BigIntegerField(null=True, help_text="FEC corrected symbols (SONiC/ethtool)")
    ib_symbol_errors = models.BigIntegerField(null=True, help_text="InfiniBand SymbolErrorCounter (PHY)")
    line_bits = models.FloatField(
        null=True, help_text="covered_s x lanes x lane signalling rate (the BER denominator)"
    )
    pre_fec_ber = models.FloatField(
        null=True,
        help_text="fec_corrected_bits / line_bits when both are known, else the mean reported gauge",
    )
    pre_fec_ber_max = models.FloatField(null=True, help_text="Highest reported pre-FEC BER gauge")
    post_fec_ber_max = models.FloatField(null=True, help_text="Highest reported post-FEC BER gauge")
    # FEC histogram tail (increases), judged against the layout's correction limit
    # No index: nothing reads rollups by layout, and layouts are never deleted (as
    # ``TelemetryHistogram.layout``); it only cost each rewrite of a bucket an index entry
    hist_layout = models.ForeignKey(
        FecBinLayout,
        null=True,
        on_delete=models.PROTECT,
        related_name="+",
        db_constraint=False,
        db_index=False,
    )
    fec_correction_limit = models.PositiveSmallIntegerField(
        null=True, help_text="Symbols the FEC corrects per codeword (from the histogram layout)"
    )
    hist_cw_warn = models.BigIntegerField(
        null=True,
        help_text="Codewords in bins whose low edge is at least 40% and below 80% of the limit (KP4: 6-11)",
    )
    hist_cw_crit = models.BigIntegerField(
        null=True, help_text="Codewords in bins whose low edge is at least 80% of the limit (KP4: 12-15)"
    )
    hist_max_bin_high = models.PositiveSmallIntegerField(
        null=True, help_text="High edge of the highest bin that gained codewords"
    )
    # PFC, link
    pfc_pause_rx = models.BigIntegerField(null=True, help_text="PFC pause frames received")
    pfc_pause_tx = models.BigIntegerField(null=True, help_text="PFC pause frames sent")
    pfc_pause_duration_us = models.BigIntegerField(null=True, help_text="Time paused, microseconds")
    link_down_events = models.BigIntegerField(null=True, help_text="Link-down events")
    link_error_recovery = models.BigIntegerField(null=True, help_text="Link error recoveries")
    speed_gbps_min = models.FloatField(null=True, help_text="Lowest link speed reported in the bucket (Gb/s)")
    link_width_min = models.PositiveSmallIntegerField(
        null=True, help_text="Fewest lanes in use reported in the bucket"
    )
    # module DOM gauges
    rx_power_min_dbm = FloatArrayField(null=True, help_text="Per lane: lowest Rx power in the bucket")
    tx_power_min_dbm = FloatArrayField(null=True, help_text="Per lane: lowest Tx power in the bucket")
    rx_power_min_any_dbm = models.FloatField(null=True, help_text="Lowest Rx power of any lane")
    temperature_max_c = models.FloatField(null=True, help_text="Highest module temperature")
    # identity last seen at or before the bucket's end
    module_vendor = models.CharField(max_length=100, blank=True)
    module_part = models.CharField(max_length=100, blank=True)
    module_serial = models.CharField(max_length=100, blank=True)
    neighbor_device = models.CharField(max_length=128, blank=True)
    neighbor_port = models.CharField(max_length=128, blank=True)
    computed_at = models.DateTimeField()

    class Meta:
        ordering = ["port_id", "bucket"]
        indexes = [models.Index(fields=["bucket"], name="port_rollup_bucket")]

    def __str__(self) -> str:
        return f"rollup {self.port_id}@{self.bucket:%Y-%m-%dT%H:%M}"
