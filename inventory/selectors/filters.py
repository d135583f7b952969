"""FilterSets shared by the HTML lists and the API lists."""

from datetime import UTC

import django_filters
from django import forms
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from inventory.core.choices import (
    AlertRule,
    AlertState,
    CableKind,
    CableStatus,
    DeviceRole,
    Severity,
    TransceiverStatus,
)
from inventory.models import Alert, Cable, CableEnd, Cage, Device, Port, Rack, Site, Transceiver
from inventory.selectors.decision import has_open_alert
from inventory.selectors.plant.cable_ends import cables_in_rack
from inventory.selectors.retests.overdue import retest_overdue


class StrictNullBooleanField(forms.NullBooleanField):
    """A yes/no filter value that refuses what it cannot read.

    Django's NullBooleanField reads anything unknown (``?passed=maybe``) as "no filter", so a
    typo silently lists everything; here it is a 400 naming the accepted words."""

    TRUE = {"true", "1", "yes", "on"}
    FALSE = {"false", "0", "no", "off"}

    def to_python(self, value):
        if value in (None, "") or isinstance(value, bool):
            return None if value == "" else value
        word = str(value).strip().lower()
        if word in self.TRUE:
            return True
        if word in self.FALSE:
            return False
        raise ValidationError("Use true or false.", code="invalid")

    def validate(self, value):
        pass


class StrictBooleanFilter(django_filters.BooleanFilter):
    field_class = StrictNullBooleanField

    def __init__(self, *args, **kwargs):
        # A plain text widget: the select widgets read unknown words as "unset" before the
        # field could refuse them (the HTML lists render their own selects).
        kwargs.setdefault("widget", forms.TextInput)
        super().__init__(*args, **kwargs)


class UtcIsoDateTimeField(django_filters.fields.IsoDateTimeField):
    """An ISO 8601 time, turned into UTC here: PostgreSQL refuses offsets past +-15:59 (a 500 the
    fuzzer found with ``?changed_since=...-17:06``), and a time that leaves the calendar when
    moved to UTC is a 400."""

    def to_python(self, value):
        value = super().to_python(value)
        if value is None:
            return None
        try:
            return value.astimezone(UTC)
        except (OverflowError, ValueError):
            raise ValidationError("That time is out of range.", code="invalid") from None


class UtcIsoDateTimeFilter(django_filters.IsoDateTimeFilter):
    field_class = UtcIsoDateTimeField


class StrictFilterSet(django_filters.FilterSet):
    """The API's base FilterSet: model boolean fields get the strict yes/no filter."""

    FILTER_DEFAULTS = {
        **django_filters.FilterSet.FILTER_DEFAULTS,
        models.BooleanField: {"filter_class": StrictBooleanFilter},
        models.NullBooleanField: {"filter_class": StrictBooleanFilter},
        models.DateTimeField: {"filter_class": UtcIsoDateTimeFilter},
    }


class CableFilter(StrictFilterSet):
    q = django_filters.CharFilter(method="search", label="Search")
    site = django_filters.CharFilter(method="by_site", label="Site")
    rack = django_filters.CharFilter(method="by_rack", label="Rack")
    # distinct=False: both are the cable's own columns, so no row can repeat. django-filter's
    # default (True) made every filtered list a SELECT DISTINCT over all columns (300 ms).
    status = django_filters.MultipleChoiceFilter(choices=CableStatus.choices, distinct=False)
    kind = django_filters.MultipleChoiceFilter(choices=CableKind.choices, distinct=False)
    vendor = django_filters.CharFilter(field_name="vendor__name", lookup_expr="iexact")
    retest_overdue = StrictBooleanFilter(method="by_overdue", label="Retest overdue")
    has_open_alert = StrictBooleanFilter(method="by_alert", label="Has open alert")
    changed_since = UtcIsoDateTimeFilter(field_name="updated_at", lookup_expr="gte")

    class Meta:
        model = Cable
        fields = [
            "q",
            "site",
            "rack",
            "status",
            "kind",
            "vendor",
            "retest_overdue",
            "has_open_alert",
            "changed_since",
        ]

    def search(self, qs, name, value):
        return qs.filter(
            Q(label__icontains=value) | Q(serial_a__icontains=value) | Q(serial_b__icontains=value)
        )

    @property
    def within_site(self) -> bool:
        """Whether the rows are one site's (``?site=``): the lists then sort by the site first,
        which only the ``cable_site_*`` indexes serve (``cable_list_queryset``, the API's
        ``CableViewSet.filter_queryset``)."""
        return bool(self.is_bound and self.is_valid() and self.form.cleaned_data.get("site"))

    def by_site(self, qs, name, value):
        # The cable's own column (``Cable.site``, the site of its first placed end), so a sorted
        # page is a range of a ``cable_site_*`` index however few of the plant's cables are in
        # this site. An EXISTS through the ends probed every cable in sort order until it filled
        # the page: 100,000 probes (1.3 s) when the newest cables were in another site. The ids
        # as an array (``site_id = ANY(...)``), not ``site_id = 5``: an equality makes the site
        # a constant of the ORDER BY, which may then be served by the primary key walked
        # backwards through every other site's cables (``-status`` under ``?status=``).
        sites = Site.objects.filter(Q(slug=value) | Q(name=value)).order_by("pk").values_list("pk", flat=True)
        return qs.filter(site_id__any=list(sites))

    def by_rack(self, qs, name, value):
        # The rack's cables first (``cables_in_rack``), then the page sorts only those.
        return qs.filter(pk__any=cables_in_rack(Device.objects.filter(rack__name=value).values("pk")))

    def by_overdue(self, qs, name, value):
        today = timezone.localdate()
        cond = retest_overdue(today)
        return qs.filter(cond) if value else qs.exclude(cond)

    def by_alert(self, qs, name, value):
        # The decision's open alerts (suspect, on the path, on a link through it): one meaning.
        cond = has_open_alert()
        return qs.filter(cond) if value else qs.exclude(cond)


class TransceiverFilter(StrictFilterSet):
    q = django_filters.CharFilter(method="search", label="Search")
    status = django_filters.MultipleChoiceFilter(choices=TransceiverStatus.choices, distinct=False)
    vendor = django_filters.CharFilter(field_name="model__vendor__name", lookup_expr="iexact")
    part_number = django_filters.CharFilter(field_name="model__part_number")
    device = django_filters.CharFilter(field_name="cage__device__name")
    rack = django_filters.CharFilter(field_name="cage__device__rack__name")
    site = django_filters.CharFilter(field_name="cage__device__rack__row__room__site__slug")

    class Meta:
        model = Transceiver
        fields = ["q", "status", "vendor", "part_number", "device", "rack", "site"]

    def search(self, qs, name, value):
        return qs.filter(Q(serial__icontains=value) | Q(model__part_number__icontains=value))


class DeviceFilter(StrictFilterSet):
    role = django_filters.MultipleChoiceFilter(choices=DeviceRole.choices, distinct=False)
    rack = django_filters.CharFilter(field_name="rack__name")
    site = django_filters.CharFilter(field_name="rack__row__room__site__slug")
    name = django_filters.CharFilter(lookup_expr="icontains")

    class Meta:
        model = Device
        fields = ["role", "rack", "site", "name"]


class PortFilter(StrictFilterSet):
    device = django_filters.CharFilter(field_name="device__name")
    name = django_filters.CharFilter(method="by_name", label="Name or alias")

    class Meta:
        model = Port
        fields = ["device", "kind", "fabric", "name"]

    def by_name(self, qs, name, value):
        return qs.filter(Q(name=value) | Q(aliases__name=value, aliases__valid_to__isnull=True)).distinct()


class AlertFilter(StrictFilterSet):
    """The alert list, page (``/alerts/``) and API (``/api/alerts/``) alike.

    Open alerts unless the query names a state (``?state=`` lists every state). ``rack`` matches
    an alert whose path touches the rack anywhere: either end of its link, its port, or an end of
    any cable it names (a segment through a patch panel in another rack counts), as ``cable``
    matches any segment of the path.
    """

    state = django_filters.ChoiceFilter(choices=AlertState.choices, empty_label="Any")
    rule = django_filters.MultipleChoiceFilter(choices=AlertRule.choices, distinct=False)
    severity = django_filters.MultipleChoiceFilter(choices=Severity.choices, distinct=False)
    silenced = StrictBooleanFilter()
    acknowledged = StrictBooleanFilter(field_name="acknowledged_at", lookup_expr="isnull", exclude=True)
    rack = django_filters.CharFilter(method="by_rack", label="Rack")
    cable = django_filters.CharFilter(method="by_cable", label="Cable")
    link = django_filters.NumberFilter(field_name="link_id")
    opened_after = UtcIsoDateTimeFilter(field_name="opened_at", lookup_expr="gte")

    class Meta:
        model = Alert
        fields = [
            "state",
            "rule",
            "severity",
            "silenced",
            "acknowledged",
            "rack",
            "cable",
            "link",
            "opened_after",
        ]

    def filter_queryset(self, queryset):
        qs = super().filter_queryset(queryset)
        if "state" not in self.data:
            qs = qs.filter(state=AlertState.OPEN)
        return qs

    @staticmethod
    def _on_path(cables) -> Q:
        """Alerts whose suspect cable or any path segment is one of ``cables`` (a semi-join)."""
        segments = Alert.cables.through.objects.filter(alert_id=OuterRef("pk"), cable_id__in=cables)
        return Q(cable_id__in=cables) | Q(Exists(segments))

    def by_rack(self, qs, name, value):
        # Semi-joins (no row multiplication, so no DISTINCT over the list).
        racks = Rack.objects.filter(name=value).values("pk")
        ports = Port.objects.filter(device__rack__in=racks).values("pk")
        cages = Cage.objects.filter(device__rack__in=racks).values("pk")
        cables = CableEnd.objects.filter(Q(port_id__in=ports) | Q(cage_id__in=cages)).values("cable_id")
        return qs.filter(
            Q(link__a_port_id__in=ports)
            | Q(link__b_port_id__in=ports)
            | Q(port_id__in=ports)
            | self._on_path(cables)
        )

    def by_cable(self, qs, name, value):
        return qs.filter(self._on_path(Cable.objects.filter(label=value).values("pk")))
