import functools
from decimal import Decimal
from urllib.parse import quote

from django.db import models
from django.db.models import Q
from django.urls import get_script_prefix, reverse
from django.utils.http import RFC3986_SUBDELIMS
from simple_history.models import HistoricalRecords

from inventory.core.choices import CableKind, CableRole, CableStatus, ConnectorType, FecType, Polarity, Polish
from inventory.models.base import TimestampedModel, TrackedManager
from inventory.models.devices import Cage, Port, Vendor
from inventory.models.locations import Site


@functools.lru_cache(maxsize=8)
def _cable_url_prefix(script_prefix: str) -> str:
    return reverse("cable-page", kwargs={"label": "X"})[:-1]


def cable_url(label: str) -> str:
    """``/c/<label>``: what ``reverse("cable-page")`` gives, without resolving it per row.

    A list of 1,000 cables spent about 20 ms in ``reverse()``. Quoting is Django's own.
    """
    return _cable_url_prefix(get_script_prefix()) + quote(label, safe=RFC3986_SUBDELIMS + "/~:@")


#: Where a cable end plugs, as flat ``values_list`` columns (lists read these instead of building
#: port, cage, device and rack instances per end): the port's name, device, rack and U, or the
#: cage's.
END_PLACE_COLUMNS = (
    "port_id",
    "port__name",
    "port__device__name",
    "port__device__rack__name",
    "port__device__position_u",
    "cage_id",
    "cage__name",
    "cage__device__name",
    "cage__device__rack__name",
    "cage__device__position_u",
)


class Cable(TimestampedModel):
    """A physical cable with a stable label (printed on it, and in its QR code as ``/c/<label>``)."""

    label = models.CharField(max_length=64, unique=True)
    kind = models.CharField(max_length=8, choices=CableKind.choices)
    role = models.CharField(max_length=10, choices=CableRole.choices, default=CableRole.DIRECT)
    polarity = models.CharField(max_length=2, choices=Polarity.choices, blank=True)
    length_m = models.DecimalField(max_digits=7, decimal_places=2, null=True, blank=True)
    vendor = models.ForeignKey(Vendor, null=True, blank=True, on_delete=models.PROTECT, related_name="cables")
    part_number = models.CharField(max_length=100, blank=True)
    serial_a = models.CharField(max_length=100, blank=True, help_text="EEPROM serial, A end (DAC/ACC/AOC)")
    serial_b = models.CharField(max_length=100, blank=True, help_text="EEPROM serial, B end (DAC/ACC/AOC)")
    lot = models.CharField(max_length=40, blank=True)
    color = models.CharField(max_length=6, blank=True, help_text="Hex colour, e.g. ffeb3b")
    install_date = models.DateField(null=True, blank=True)
    status = models.CharField(max_length=14, choices=CableStatus.choices, default=CableStatus.PLANNED)
    retest_due = models.DateField(null=True, blank=True)  # indexed with id: cable_retest_id
    replaced_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="replaces"
    )
    retired_at = models.DateTimeField(null=True, blank=True)
    notes = models.TextField(blank=True)
    # Where the list's site filter finds the cable: the site of its first placed end (A, else the
    # lowest B leg whose device is in a rack), null while no end is placed. Derived, never typed:
    # ``cable_sites_refresh`` keeps it right after every write of ends, device racks and the
    # location tree. It leads the ``cable_site_*`` indexes, so a site's page in any offered order
    # is one index range however few of the plant's cables the site holds.
    site = models.ForeignKey(
        Site,
        null=True,
        blank=True,
        editable=False,
        on_delete=models.PROTECT,
        related_name="+",
        db_index=False,
    )

    objects = TrackedManager()
    # History is read per object (``id``, and a cable's ends by ``cable_id``) and by date; no query
    # looks history up by these columns, and each index on them cost every bulk write (a 5,000-cable
    # import: ~80 ms of index upkeep on the three history tables). See ``inventory.db.bulk``.
    history = HistoricalRecords(no_db_index=["label", "vendor", "replaced_by", "site"])

    class Meta:
        ordering = ["label"]
        constraints = [
            models.CheckConstraint(
                condition=Q(length_m__isnull=True) | Q(length_m__gt=0), name="cable_length_positive"
            ),
            models.CheckConstraint(
                condition=Q(retired_at__isnull=True) | Q(status=CableStatus.RETIRED),
                name="cable_retired_status",
            ),
        ]
        # Every sort the lists offer, with the id that breaks ties (``_ordering`` sorts by the
        # column, then pk): a page in any order is an index range, never a sort of the table.
        # A nullable column sorts its blanks last both ways; its descending order (``DESC NULLS
        # LAST``) has a PostgreSQL-only mirror of each index (migration 0033).
        # ``updated_at``: what changed since the last retest sweep (and ``?changed_since=``).
        indexes = [
            models.Index(fields=["status", "id"], name="cable_status_id"),
            models.Index(fields=["kind", "id"], name="cable_kind_id"),
            models.Index(fields=["length_m", "id"], name="cable_length_id"),
            models.Index(fields=["install_date", "id"], name="cable_installed_id"),
            models.Index(fields=["retest_due", "id"], name="cable_retest_id"),
            models.Index(fields=["updated_at"], name="cable_updated"),
            # The same sorts under the site filter (``CableFilter.by_site``).
            models.Index(fields=["site", "label", "id"], name="cable_site_label"),
            models.Index(fields=["site", "status", "id"], name="cable_site_status"),
            models.Index(fields=["site", "kind", "id"], name="cable_site_kind"),
            models.Index(fields=["site", "length_m", "id"], name="cable_site_length"),
            models.Index(fields=["site", "install_date", "id"], name="cable_site_installed"),
            models.Index(fields=["site", "retest_due", "id"], name="cable_site_retest"),
        ]

    def __str__(self) -> str:
        return self.label

    def get_absolute_url(self) -> str:
        return cable_url(self.label)

    @property
    def is_sealed(self) -> bool:
        return self.kind in CableKind.sealed()

    @property
    def is_fibre(self) -> bool:
        return self.kind in CableKind.fibre()


# The longest length ``Cable.length_m`` holds (7 digits, 2 of them decimals): 99999.99 m. A longer
# one, stored, broke every read of the cable (its page, the lists, the alert rules' run); every
# way a length comes in (the API, the forms, the plan import, the NetBox sync) refuses it.
_LENGTH = Cable._meta.get_field("length_m")
MAX_LENGTH_M = (Decimal(10) ** _LENGTH.max_digits - 1).scaleb(-_LENGTH.decimal_places)


class CableEnd(models.Model):
    """One plug of a cable and where it is plugged in.

    Side A has one end (``leg`` 0). Side B has one end too, or 2-8 legs (breakout), each with
    its own label. The plug carries the connector; it terminates either on a cage connector
    (a module's connector, or the cage itself for DAC/AOC) or on a port (panel front/rear,
    fixed RJ45). ``active`` goes false when the cable is retired, freeing the port.
    """

    cable = models.ForeignKey(Cable, on_delete=models.PROTECT, related_name="ends")
    side = models.CharField(max_length=1, choices=[("A", "A"), ("B", "B")])
    leg = models.PositiveSmallIntegerField(default=0)
    label = models.CharField(max_length=72, blank=True, help_text="Leg label on breakouts")
    connector_type = models.CharField(max_length=5, choices=ConnectorType.choices)
    fibre_count = models.PositiveSmallIntegerField(null=True, blank=True)
    pinned = models.BooleanField(null=True, blank=True)
    polish = models.CharField(max_length=3, choices=Polish.choices, blank=True)
    cage = models.ForeignKey(Cage, null=True, blank=True, on_delete=models.PROTECT, related_name="cable_ends")
    connector = models.PositiveSmallIntegerField(null=True, blank=True)
    port = models.ForeignKey(Port, null=True, blank=True, on_delete=models.PROTECT, related_name="cable_ends")
    active = models.BooleanField(default=True)

    objects = TrackedManager()
    history = HistoricalRecords(no_db_index=["cage", "port"])  # read by cable_id (see Cable.history)

    class Meta:
        ordering = ["cable_id", "side", "leg"]
        constraints = [
            models.UniqueConstraint(fields=["cable", "side", "leg"], name="cable_end_unique"),
            models.UniqueConstraint(
                fields=["cage", "connector"],
                condition=Q(active=True, cage__isnull=False),
                name="cable_end_one_per_connector",
            ),
            models.UniqueConstraint(
                fields=["port"], condition=Q(active=True, port__isnull=False), name="cable_end_one_per_port"
            ),
            models.CheckConstraint(
                condition=(Q(cage__isnull=False, connector__isnull=False, port__isnull=True))
                | Q(cage__isnull=True, connector__isnull=True, port__isnull=False)
                | Q(cage__isnull=True, connector__isnull=True, port__isnull=True),
                name="cable_end_one_termination",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.cable_id}{self.side}{self.leg or ''}"


class Link(TimestampedModel):
    """A channel: the logical port pair at its two ends, its PMD and FEC, over a traced path."""

    a_port = models.ForeignKey(Port, on_delete=models.PROTECT, related_name="links_a")
    b_port = models.ForeignKey(Port, on_delete=models.PROTECT, related_name="links_b")
    pmd = models.CharField(max_length=40, blank=True)
    fec = models.CharField(max_length=6, choices=FecType.choices, default=FecType.KP4)
    speed_gbps = models.PositiveIntegerField(null=True, blank=True)
    lanes = models.PositiveSmallIntegerField(null=True, blank=True)
    lane_rate_gbaud = models.FloatField(
        null=True, blank=True, help_text="Signalling rate per lane, e.g. 53.125"
    )
    loss_budget_db = models.FloatField(null=True, blank=True, help_text="Channel insertion-loss limit")
    link_class = models.CharField(
        max_length=40, blank=True, help_text="Rule thresholds are configurable per class"
    )
    path_ok = models.BooleanField(default=True)
    path_problems = models.JSONField(default=list, blank=True)
    retest_due = models.DateField(null=True, blank=True, db_index=True)
    active = models.BooleanField(default=True)

    objects = TrackedManager()
    history = HistoricalRecords(no_db_index=["a_port", "b_port", "retest_due"])  # see Cable.history

    class Meta:
        ordering = ["a_port_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["a_port", "b_port"], condition=Q(active=True), name="link_unique_pair"
            ),
            models.CheckConstraint(condition=Q(a_port__lt=models.F("b_port")), name="link_ports_ordered"),
        ]
        indexes = [models.Index(fields=["updated_at"], name="link_updated")]  # the retest sweep

    def __str__(self) -> str:
        return f"link {self.a_port_id}<->{self.b_port_id}"


class LinkSegment(models.Model):
    """The cables a link runs over, in order from its A port."""

    link = models.ForeignKey(Link, on_delete=models.CASCADE, related_name="segments")
    seq = models.PositiveSmallIntegerField()
    cable = models.ForeignKey(Cable, on_delete=models.PROTECT, related_name="link_segments")

    class Meta:
        ordering = ["link_id", "seq"]
        constraints = [models.UniqueConstraint(fields=["link", "seq"], name="segment_unique_seq")]

    def __str__(self) -> str:
        return f"{self.link_id}#{self.seq}: {self.cable_id}"
