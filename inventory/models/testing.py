"""Test records: OLTS (power meter) and OTDR per fibre, end-face inspection, link qualification."""

from django.conf import settings
from django.db import models
from simple_history.models import HistoricalRecords

from inventory.core.choices import Direction, ReferenceMethod, TestKind, Verdict
from inventory.models.cables import Cable, CableEnd, Link
from inventory.models.devices import Port


class CableTest(models.Model):
    """One test session on a cable (or a whole link), with its verdict against its budget."""

    # db_index=False: test_latest (cable, kind, -tested_at) leads with the cable (a million rows
    # at 131,072 GPUs; a second index on the same column only slowed every insert).
    cable = models.ForeignKey(Cable, on_delete=models.PROTECT, related_name="tests", db_index=False)
    link = models.ForeignKey(Link, null=True, blank=True, on_delete=models.PROTECT, related_name="tests")
    kind = models.CharField(max_length=14, choices=TestKind.choices)
    tested_at = models.DateTimeField()
    technician = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    instrument = models.CharField(max_length=100, blank=True)
    instrument_serial = models.CharField(max_length=64, blank=True)
    calibration_date = models.DateField(null=True, blank=True)
    reference_method = models.CharField(max_length=1, choices=ReferenceMethod.choices, blank=True)
    launch_condition = models.CharField(
        max_length=40, blank=True, help_text="Multi-mode: e.g. encircled flux"
    )
    wavelength_nm = models.PositiveIntegerField(null=True, blank=True)
    loss_db = models.FloatField(null=True, blank=True, help_text="Worst fibre")
    budget_db = models.FloatField(null=True, blank=True)
    margin_db = models.FloatField(null=True, blank=True)
    verdict = models.CharField(max_length=8, choices=Verdict.choices, default=Verdict.UNKNOWN)
    # Written with the test's fibre results (which never change after): the production gate
    # asks it of every cable's latest OLTS, and counting 10 million results for that took 4 s.
    fibres_passed = models.PositiveSmallIntegerField(
        null=True, blank=True, editable=False, help_text="OLTS: distinct fibres with a passing result"
    )
    is_baseline = models.BooleanField(default=False)
    warnings = models.JSONField(default=list, blank=True)
    details = models.JSONField(default=dict, blank=True)
    notes = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    history = HistoricalRecords()

    class Meta:
        ordering = ["-tested_at"]
        indexes = [
            models.Index(fields=["cable", "kind", "-tested_at"], name="test_latest"),
            models.Index(fields=["created_at"], name="test_created"),  # the retest sweep's "since"
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.cable_id} {self.tested_at:%Y-%m-%d}"


class FibreResult(models.Model):
    """One fibre at one wavelength in one direction."""

    # db_index=False: fibre_result_unique leads with the test (8.5 million rows at 131,072 GPUs).
    test = models.ForeignKey(CableTest, on_delete=models.CASCADE, related_name="fibres", db_index=False)
    fibre = models.PositiveSmallIntegerField(help_text="Fibre / MPO position, 1-based")
    wavelength_nm = models.PositiveIntegerField()
    direction = models.CharField(max_length=4, choices=Direction.choices, default=Direction.A_TO_B)
    reference_dbm = models.FloatField(null=True, blank=True)
    measured_dbm = models.FloatField(null=True, blank=True)
    loss_db = models.FloatField()
    reflectance_db = models.FloatField(null=True, blank=True)
    verdict = models.CharField(max_length=8, choices=Verdict.choices, default=Verdict.UNKNOWN)

    class Meta:
        ordering = ["test_id", "fibre", "wavelength_nm"]
        constraints = [
            models.UniqueConstraint(
                fields=["test", "fibre", "wavelength_nm", "direction"], name="fibre_result_unique"
            )
        ]

    def __str__(self) -> str:
        return f"fibre {self.fibre} @{self.wavelength_nm} nm: {self.loss_db} dB"


class OtdrTrace(models.Model):
    """The parsed Bellcore/Telcordia SR-4731 file behind an OTDR test; the original is kept.

    One file is one fibre at one wavelength; a test session holds one trace per file. The
    original is stored under a generated name (never the uploader's) outside the web roots.
    """

    test = models.ForeignKey(CableTest, on_delete=models.CASCADE, related_name="traces")
    fibre = models.PositiveSmallIntegerField(default=1)
    file = models.FileField(upload_to="sor/%Y/%m/", max_length=200)
    original_name = models.CharField(max_length=255)
    sha256 = models.CharField(max_length=64, db_index=True)
    sor_version = models.CharField(max_length=8)
    make = models.CharField(max_length=64, blank=True)
    model = models.CharField(max_length=64, blank=True)
    serial = models.CharField(max_length=64, blank=True)
    measured_at = models.DateTimeField(null=True, blank=True)
    wavelength_nm = models.FloatField(null=True, blank=True)
    pulse_width_ns = models.FloatField(null=True, blank=True)
    index_of_refraction = models.FloatField(null=True, blank=True)
    fibre_length_m = models.FloatField(null=True, blank=True)
    fibre_length_source = models.CharField(
        max_length=16, blank=True, help_text="summary (the file's KeyEvents summary), end event or last event"
    )
    fibre_start_offset_m = models.FloatField(
        null=True,
        blank=True,
        help_text="Where the fibre under test starts: negative, the launch lead before it (0 m is its start)",
    )
    has_event_table = models.BooleanField(
        default=True, help_text="False: a trace-only file (the instrument stored no KeyEvents block)"
    )
    total_loss_db = models.FloatField(null=True, blank=True)
    orl_db = models.FloatField(null=True, blank=True)
    checksum_ok = models.BooleanField(null=True)
    checksum_convention = models.CharField(max_length=100, blank=True)
    events = models.JSONField(default=list)
    trace = models.JSONField(default=list, help_text="Decimated (distance m, dB) points for the plot")

    class Meta:
        ordering = ["test_id", "fibre", "wavelength_nm"]

    def __str__(self) -> str:
        return f"{self.original_name} ({self.sor_version})"


class Inspection(models.Model):
    """End-face inspection (IEC 61300-3-35) and cleaning of one connector end."""

    cable_end = models.ForeignKey(
        CableEnd, null=True, blank=True, on_delete=models.PROTECT, related_name="inspections"
    )
    port = models.ForeignKey(
        Port, null=True, blank=True, on_delete=models.PROTECT, related_name="inspections"
    )
    test = models.ForeignKey(
        CableTest, null=True, blank=True, on_delete=models.CASCADE, related_name="inspections"
    )
    inspected_at = models.DateTimeField()
    technician = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    passed = models.BooleanField()
    zones = models.JSONField(
        default=dict, blank=True, help_text="Per IEC 61300-3-35 zone: pass/fail, defects"
    )
    cleaned = models.BooleanField(default=False)
    photo = models.FileField(upload_to="inspections/%Y/%m/", blank=True, max_length=200)

    history = HistoricalRecords()

    class Meta:
        ordering = ["-inspected_at"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(cable_end__isnull=False) | models.Q(port__isnull=False),
                name="inspection_has_target",
            )
        ]

    def __str__(self) -> str:
        return f"inspection {'pass' if self.passed else 'fail'} {self.inspected_at:%Y-%m-%d}"


class InstrumentMapping(models.Model):
    """A CSV column mapping for one instrument's export, confirmed once and reused."""

    instrument = models.CharField(max_length=100, unique=True)
    mapping = models.JSONField(help_text="Our field -> the export's column header")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["instrument"]

    def __str__(self) -> str:
        return self.instrument


class CableTestLatest(models.Model):
    """Each cable's latest OLTS, OTDR and qualification test, one row per cable that has any,
    with the number of fibres its OLTS must cover.

    Derived from ``CableTest`` and kept with it: every writer of tests (the OLTS, OTDR and
    qualification services, the admin, the demo seed) calls
    ``inventory.services.testing.latest_table.cable_test_latest_refresh`` in its transaction.
    The production gate and the link verdicts of a whole site read it (``verdict_table``):
    finding the latest of each kind among 1.2 million tests at 131,072 GPUs had been a sort of
    every test on every report. Latest means the greatest (``tested_at``, id), as
    ``selectors.testing.latest`` has it; ``*_test_id`` is that test's id (the tie-break, and
    where to read the rest of it).
    """

    cable = models.OneToOneField(
        Cable, primary_key=True, on_delete=models.CASCADE, related_name="latest_tests", editable=False
    )
    olts_test_id = models.BigIntegerField(null=True)
    olts_at = models.DateTimeField(null=True)
    olts_verdict = models.CharField(max_length=8, null=True)
    olts_loss_db = models.FloatField(null=True)
    olts_fibres_passed = models.PositiveSmallIntegerField(null=True)
    otdr_test_id = models.BigIntegerField(null=True)
    otdr_at = models.DateTimeField(null=True)
    otdr_verdict = models.CharField(max_length=8, null=True)
    qualification_test_id = models.BigIntegerField(null=True)
    qualification_at = models.DateTimeField(null=True)
    qualification_verdict = models.CharField(max_length=8, null=True)
    # How many fibres its OLTS must cover (``facts.fibres_in_use`` of its ends), for the same
    # gate: the ends' connectors and fibre counts are written with the cable, before any test,
    # and change after only through the admin's cable form, which refreshes this row.
    # Aggregating 900,000 ends on every report had cost 2.3 s at 131,072 GPUs.
    fibres_in_use = models.PositiveSmallIntegerField(default=1)

    def __str__(self) -> str:
        return f"latest tests of cable {self.cable_id}"
