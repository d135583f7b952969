from django.conf import settings
from django.db import models
from django.db.models import Q
from simple_history.models import HistoricalRecords

from inventory.core.choices import (
    ConnectorType,
    FormFactor,
    PlacementEnd,
    Polish,
    RmaOutcome,
    TransceiverStatus,
)
from inventory.models.base import TimestampedModel, TrackedManager
from inventory.models.devices import Cage, Vendor


class TransceiverModel(TimestampedModel):
    """A module part number: what it is, what it plugs into and what plugs into it."""

    vendor = models.ForeignKey(Vendor, on_delete=models.PROTECT, related_name="transceiver_models")
    part_number = models.CharField(max_length=100)
    form_factor = models.CharField(max_length=10, choices=FormFactor.choices)
    pmd = models.CharField(max_length=40, help_text="e.g. 400GBASE-DR4, 2x400G-DR4, NDR-SR4")
    speed_gbps = models.PositiveIntegerField()
    lanes = models.PositiveSmallIntegerField()
    lane_rate_gbps = models.PositiveSmallIntegerField(help_text="Nominal: 25, 50, 100, 200")
    logical_ports = models.PositiveSmallIntegerField(default=1, help_text="2 for twin-port modules")
    connector_type = models.CharField(max_length=5, choices=ConnectorType.choices)
    connector_count = models.PositiveSmallIntegerField(default=1)
    fibre_count = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Per connector")
    polish = models.CharField(max_length=3, choices=Polish.choices, blank=True)
    pinned = models.BooleanField(default=True, help_text="Module MPO receptacles are normally pinned")
    wavelength_nm = models.PositiveIntegerField(null=True, blank=True)
    single_mode = models.BooleanField(default=True)
    reach_m = models.PositiveIntegerField(null=True, blank=True)

    objects = TrackedManager()
    history = HistoricalRecords()

    class Meta:
        ordering = ["vendor__name", "part_number"]
        constraints = [models.UniqueConstraint(fields=["vendor", "part_number"], name="xcvr_model_unique")]

    def __str__(self) -> str:
        return f"{self.vendor} {self.part_number} ({self.pmd})"


class Transceiver(TimestampedModel):
    """One physical module. ``cage`` is where it sits now (denormalised from its placements)."""

    model = models.ForeignKey(TransceiverModel, on_delete=models.PROTECT, related_name="units")
    serial = models.CharField(max_length=100)
    firmware = models.CharField(max_length=50, blank=True)
    date_code = models.CharField(max_length=20, blank=True, help_text="Manufacturing lot / date code")
    status = models.CharField(
        max_length=10, choices=TransceiverStatus.choices, default=TransceiverStatus.SPARE
    )
    cage = models.OneToOneField(
        Cage, null=True, blank=True, on_delete=models.PROTECT, related_name="transceiver"
    )
    stock_site = models.ForeignKey(
        "inventory.Site",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="spares",
        help_text="Where a spare is kept",
    )
    acquired_on = models.DateField(null=True, blank=True)

    objects = TrackedManager()
    history = HistoricalRecords()

    class Meta:
        ordering = ["serial"]
        constraints = [
            models.UniqueConstraint(fields=["model", "serial"], name="xcvr_unique_serial"),
            models.CheckConstraint(
                condition=Q(cage__isnull=True) | Q(status=TransceiverStatus.INSTALLED),
                name="xcvr_cage_iff_installed",
            ),
        ]
        indexes = [
            models.Index(fields=["serial"], name="xcvr_serial"),
            models.Index(fields=["status", "id"], name="xcvr_status_id"),  # the list's status sort
            # Spares, failed and RMA'd modules: a small slice the forecast reads (the installed
            # million are left out of the index).
            models.Index(
                fields=["status", "stock_site"],
                condition=~models.Q(status="installed"),
                name="xcvr_status_not_installed",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.model.part_number} s/n {self.serial}"


class TransceiverPlacement(models.Model):
    """A period a module spent in a cage. Open while ``removed_at`` is null."""

    transceiver = models.ForeignKey(Transceiver, on_delete=models.PROTECT, related_name="placements")
    cage = models.ForeignKey(Cage, on_delete=models.PROTECT, related_name="placements")
    installed_at = models.DateTimeField()
    removed_at = models.DateTimeField(null=True, blank=True)
    end_reason = models.CharField(max_length=10, choices=PlacementEnd.choices, blank=True)
    installed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    removed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    notes = models.TextField(blank=True)

    history = HistoricalRecords()

    class Meta:
        ordering = ["-installed_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["cage"], condition=Q(removed_at__isnull=True), name="placement_one_open_per_cage"
            ),
            models.UniqueConstraint(
                fields=["transceiver"],
                condition=Q(removed_at__isnull=True),
                name="placement_one_open_per_unit",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.transceiver} in {self.cage_id} from {self.installed_at:%Y-%m-%d}"


class RmaCase(TimestampedModel):
    """A module (or sealed cable) sent back to its vendor, and what the vendor found."""

    transceiver = models.ForeignKey(
        Transceiver, null=True, blank=True, on_delete=models.PROTECT, related_name="rma_cases"
    )
    cable = models.ForeignKey(
        "inventory.Cable", null=True, blank=True, on_delete=models.PROTECT, related_name="rma_cases"
    )
    reference = models.CharField(max_length=100, blank=True)
    opened_at = models.DateTimeField()
    closed_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(max_length=10, choices=RmaOutcome.choices, default=RmaOutcome.PENDING)
    notes = models.TextField(blank=True)

    history = HistoricalRecords()

    class Meta:
        ordering = ["-opened_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(transceiver__isnull=False) | Q(cable__isnull=False), name="rma_has_subject"
            )
        ]

    def __str__(self) -> str:
        return f"RMA {self.reference or self.pk} ({self.get_outcome_display()})"
