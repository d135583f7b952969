import functools
from urllib.parse import quote

from django.conf import settings
from django.db import models
from django.urls import get_script_prefix, reverse
from django.utils.http import RFC3986_SUBDELIMS
from simple_history.models import HistoricalRecords

from inventory.core.names import NAME_RULE, url_segment
from inventory.core.validators import validate_name
from inventory.models.base import TimestampedModel, TrackedManager


@functools.lru_cache(maxsize=16)
def _name_page_prefix(route: str, script_prefix: str) -> str:
    return reverse(route, kwargs={"name": "X"})[:-1]


def name_page_urls(route: str, names) -> list[str]:
    """The pages of named things (``rack-page``: ``/r/<name>``, ``device-page``: ``/d/<name>``) as
    ``reverse`` writes them, without resolving a URL per name: each name as the ``name`` path
    converter writes it (``core.names.url_segment``), quoted as Django quotes. The racks page of a
    131,072-GPU site links 5,120 racks; ``{% url %}`` for each was three quarters of its 480 ms."""
    prefix = _name_page_prefix(route, get_script_prefix())
    return [prefix + quote(url_segment(name), safe=RFC3986_SUBDELIMS + "~:@") for name in names]


def name_page_url(route: str, name: str) -> str:
    """One named thing's page (``name_page_urls``)."""
    return name_page_urls(route, (name,))[0]


def rack_url(name: str) -> str:
    """``/r/<name>``, the rack page (``name_page_url``)."""
    return name_page_url("rack-page", name)


class Team(TimestampedModel):
    """A group of people responsible for part of the plant (reminders, alerts go to them)."""

    name = models.CharField(max_length=100, unique=True)
    email = models.EmailField(blank=True, help_text="Team mailbox; members are also mailed.")
    lead = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="teams_led"
    )
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="teams")

    history = HistoricalRecords()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Site(TimestampedModel):
    name = models.CharField(max_length=100, unique=True, validators=[validate_name])
    slug = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    team = models.ForeignKey(Team, null=True, blank=True, on_delete=models.SET_NULL, related_name="sites")
    retest_interval_days = models.PositiveIntegerField(
        null=True, blank=True, help_text="Overrides the default 90-day retest interval for this site."
    )

    objects = TrackedManager()
    history = HistoricalRecords()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Room(TimestampedModel):
    """A hall or room within a site."""

    site = models.ForeignKey(Site, on_delete=models.PROTECT, related_name="rooms")
    name = models.CharField(max_length=100, validators=[validate_name])

    objects = TrackedManager()
    history = HistoricalRecords()

    class Meta:
        ordering = ["site__name", "name"]
        constraints = [models.UniqueConstraint(fields=["site", "name"], name="room_unique_per_site")]

    def __str__(self) -> str:
        return f"{self.site} / {self.name}"


class Row(TimestampedModel):
    room = models.ForeignKey(Room, on_delete=models.PROTECT, related_name="rows")
    name = models.CharField(max_length=50, validators=[validate_name])
    team = models.ForeignKey(Team, null=True, blank=True, on_delete=models.SET_NULL, related_name="rows")

    objects = TrackedManager()
    history = HistoricalRecords()

    class Meta:
        ordering = ["room__name", "name"]
        constraints = [models.UniqueConstraint(fields=["room", "name"], name="row_unique_per_room")]

    def __str__(self) -> str:
        return f"{self.room} / row {self.name}"


class Rack(TimestampedModel):
    """A rack. Its name is globally unique: it is printed on labels as ``/r/<name>`` (a "/" in
    it travels as ``%252F``: ``core.names``)."""

    row = models.ForeignKey(Row, on_delete=models.PROTECT, related_name="racks")
    name = models.CharField(max_length=64, unique=True, validators=[validate_name], help_text=NAME_RULE)
    u_height = models.PositiveSmallIntegerField(default=48)
    position = models.PositiveSmallIntegerField(default=0, help_text="Order along the row (walk order).")
    team = models.ForeignKey(Team, null=True, blank=True, on_delete=models.SET_NULL, related_name="racks")

    objects = TrackedManager()
    history = HistoricalRecords()

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(u_height__gte=1, u_height__lte=60), name="rack_u_height_range"
            )
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return rack_url(self.name)
