from urllib.parse import quote

from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.http import RFC3986_SUBDELIMS
from simple_history.models import HistoricalRecords

from inventory.core.choices import ConnectorType, DeviceRole, Fabric, FormFactor, Polish, PortKind
from inventory.core.names import NAME_RULE
from inventory.core.validators import validate_name
from inventory.models.base import TimestampedModel, TrackedManager
from inventory.models.locations import Rack, name_page_url


def device_url(name: str) -> str:
    """``/d/<name>``, the device page (``locations.name_page_url``)."""
    return name_page_url("device-page", name)


def port_url(device: str, port: str) -> str:
    """``/d/<device>/p/<port>``, the port page; port names keep their slashes (Ethernet1/1)."""
    return device_url(device) + "/p/" + quote(port, safe=RFC3986_SUBDELIMS + "/~:@")


class Vendor(TimestampedModel):
    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=100, unique=True)

    objects = TrackedManager()
    history = HistoricalRecords()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Device(TimestampedModel):
    """A GPU node, switch, storage box or patch panel.

    ``name`` is the hostname collectors report. Identity is the position (rack + U) and the
    asset tag or serial: hostnames change, so old names stay resolvable as port aliases.
    """

    name = models.CharField(max_length=100, unique=True, validators=[validate_name], help_text=NAME_RULE)
    role = models.CharField(max_length=20, choices=DeviceRole.choices)
    rack = models.ForeignKey(Rack, null=True, blank=True, on_delete=models.PROTECT, related_name="devices")
    position_u = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Lowest U occupied.")
    height_u = models.PositiveSmallIntegerField(default=1)
    vendor = models.ForeignKey(
        Vendor, null=True, blank=True, on_delete=models.PROTECT, related_name="devices"
    )
    model = models.CharField(max_length=100, blank=True)
    serial = models.CharField(max_length=100, blank=True)
    asset_tag = models.CharField(max_length=100, null=True, blank=True, unique=True)
    retired_at = models.DateTimeField(null=True, blank=True)

    objects = TrackedManager()
    history = HistoricalRecords()

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["rack", "position_u"],
                condition=Q(rack__isnull=False, position_u__isnull=False, retired_at__isnull=True),
                name="device_unique_rack_position",
            ),
            models.CheckConstraint(condition=Q(height_u__gte=1), name="device_height_positive"),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return device_url(self.name)


class Cage(TimestampedModel):
    """A physical socket on a device (OSFP, QSFP-DD, RJ45, ...).

    A module plugs into a cage; a cable end plugs into one of the module's connectors (or,
    for DAC/AOC, into the cage itself, connector 1).
    """

    device = models.ForeignKey(Device, on_delete=models.PROTECT, related_name="cages")
    name = models.CharField(max_length=50)
    index = models.PositiveSmallIntegerField(help_text="Physical order on the faceplate.")
    form_factor = models.CharField(max_length=10, choices=FormFactor.choices)
    lanes = models.PositiveSmallIntegerField(default=8)

    objects = TrackedManager()
    history = HistoricalRecords()

    class Meta:
        ordering = ["device__name", "index"]
        constraints = [
            models.UniqueConstraint(fields=["device", "name"], name="cage_unique_name"),
            models.UniqueConstraint(fields=["device", "index"], name="cage_unique_index"),
        ]

    def __str__(self) -> str:
        return f"{self.device.name} {self.name}"


class Port(TimestampedModel):
    """A termination point that is not a cage connector, or a logical port.

    * ``interface``: a logical port as the device and its telemetry name it. It lives in a
      cage (``cage``), exits through one module connector (``connector``, 1-based) and uses
      lanes ``lane_start .. lane_start + lane_count - 1`` of the cage. Fixed copper ports
      (RJ45) have no cage and take the cable directly.
    * ``front`` / ``rear``: patch-panel or cassette ports. A rear port has ``positions``
      (fibre groups); each front port maps to one rear position (``PortMapping``).

    Receptacle properties (``connector_type``, ``fibre_count``, ``pinned``, ``polish``)
    describe the fixed side a plug mates with; for cage interfaces they come from the module.
    """

    device = models.ForeignKey(Device, on_delete=models.PROTECT, related_name="ports")
    name = models.CharField(max_length=64)
    kind = models.CharField(max_length=10, choices=PortKind.choices, default=PortKind.INTERFACE)
    fabric = models.CharField(max_length=12, choices=Fabric.choices, default=Fabric.ETHERNET)
    cage = models.ForeignKey(Cage, null=True, blank=True, on_delete=models.PROTECT, related_name="ports")
    connector = models.PositiveSmallIntegerField(null=True, blank=True)
    lane_start = models.PositiveSmallIntegerField(default=0)
    lane_count = models.PositiveSmallIntegerField(default=1)
    speed_gbps = models.PositiveIntegerField(null=True, blank=True)
    positions = models.PositiveSmallIntegerField(default=1, help_text="Rear ports: fibre groups it carries.")
    connector_type = models.CharField(max_length=5, choices=ConnectorType.choices, blank=True)
    fibre_count = models.PositiveSmallIntegerField(null=True, blank=True)
    pinned = models.BooleanField(null=True, blank=True, help_text="Receptacle side is pinned (male).")
    polish = models.CharField(max_length=3, choices=Polish.choices, blank=True)
    retired_at = models.DateTimeField(null=True, blank=True)

    objects = TrackedManager()
    history = HistoricalRecords()

    class Meta:
        ordering = ["device__name", "kind", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["device", "name"],
                condition=Q(retired_at__isnull=True),
                name="port_unique_name_active",
            ),
            models.CheckConstraint(
                condition=Q(cage__isnull=True) | Q(connector__isnull=False), name="port_cage_needs_connector"
            ),
            models.CheckConstraint(condition=Q(lane_count__gte=1), name="port_lane_count_positive"),
        ]
        indexes = [models.Index(fields=["cage", "connector"], name="port_cage_connector")]

    def __str__(self) -> str:
        return f"{self.device.name}:{self.name}"

    def get_absolute_url(self) -> str:
        return port_url(self.device.name, self.name)


class PortAlias(models.Model):
    """Every name a port has had, dated. A port's canonical name is an alias too.

    A collector's (device, name) resolves through this table: ``Ethernet1/1``, ``swp3s1``,
    ``mlx5_3``, ``ibp3s0``, an InfiniBand port GUID. At any moment a name is unique per device.
    """

    port = models.ForeignKey(Port, on_delete=models.PROTECT, related_name="aliases")
    device = models.ForeignKey(Device, on_delete=models.PROTECT, related_name="port_aliases")
    name = models.CharField(max_length=128)
    source = models.CharField(max_length=32, blank=True, help_text="Who uses this name: sonic, mlx5, ib, ...")
    valid_from = models.DateTimeField(default=timezone.now)
    valid_to = models.DateTimeField(null=True, blank=True)

    history = HistoricalRecords()

    class Meta:
        ordering = ["device_id", "name", "-valid_from"]
        verbose_name_plural = "port aliases"
        constraints = [
            models.UniqueConstraint(
                fields=["device", "name"], condition=Q(valid_to__isnull=True), name="alias_unique_current"
            ),
            models.CheckConstraint(
                condition=Q(valid_to__isnull=True) | Q(valid_to__gt=models.F("valid_from")),
                name="alias_valid_range",
            ),
        ]
        indexes = [models.Index(fields=["device", "name"], name="alias_lookup")]

    def __str__(self) -> str:
        return f"{self.name} -> {self.port_id}"


class PortMapping(models.Model):
    """A patch panel or cassette maps each front port to a position of a rear port."""

    front_port = models.OneToOneField(Port, on_delete=models.PROTECT, related_name="rear_mapping")
    rear_port = models.ForeignKey(Port, on_delete=models.PROTECT, related_name="front_mappings")
    rear_position = models.PositiveSmallIntegerField(default=1)

    history = HistoricalRecords()

    class Meta:
        ordering = ["rear_port_id", "rear_position"]
        constraints = [
            models.UniqueConstraint(
                fields=["rear_port", "rear_position"], name="mapping_unique_rear_position"
            )
        ]

    def __str__(self) -> str:
        return f"{self.front_port_id} -> {self.rear_port_id}#{self.rear_position}"
