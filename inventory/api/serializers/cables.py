"""API representations of cables (flat reads of their ends, writes that hand to a service),
links and traced paths."""

from decimal import Decimal

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from inventory.api.strict import StrictModelSerializer
from inventory.core.choices import (
    MANUAL_CABLE_STATUSES,
    CableKind,
    CableRole,
    CableStatus,
    ConnectorType,
    Polarity,
    Polish,
)
from inventory.core.decision import STATES
from inventory.core.validators import LABEL_RE, LABEL_RULE, end_fibre_count_problem
from inventory.db.compiled import CompiledRead
from inventory.models import Cable, CableEnd, Link
from inventory.models.base import HISTORY_REASON_MAX
from inventory.models.cables import END_PLACE_COLUMNS, cable_url
from inventory.selectors.decision import cable_decisions
from inventory.services.plant.cables import install_date_problem


def validate_label(value: str) -> str:
    if not LABEL_RE.fullmatch(value):
        raise serializers.ValidationError(f"Labels are {LABEL_RULE}")
    return value


def end_point(end: CableEnd) -> dict:
    if end.port_id:
        dev, name = end.port.device, end.port.name
    elif end.cage_id:
        dev = end.cage.device
        name = end.cage.name if end.connector == 1 else f"{end.cage.name}/{end.connector}"
    else:
        dev, name = None, None
    return {
        "side": end.side,
        "leg": end.leg,
        "label": end.label,
        "device": dev.name if dev else None,
        "rack": dev.rack.name if dev and dev.rack_id else None,
        "u": dev.position_u if dev else None,
        "termination": name,
        "connector_type": end.connector_type,
        "fibre_count": end.fibre_count,
        "pinned": end.pinned,
        "polish": end.polish,
    }


_END_COLUMNS = (
    "cable_id",
    "side",
    "leg",
    "label",
    "connector_type",
    "fibre_count",
    "pinned",
    "polish",
    "active",
    "connector",
    *END_PLACE_COLUMNS,
)


# The ids as one array on PostgreSQL, so the statement is compiled once (``db.compiled``).
_END_ROWS = CompiledRead(
    lambda cable_ids: (
        CableEnd.objects.filter(cable_id__any=cable_ids)
        .order_by("cable_id", "side", "leg")
        .values_list(*_END_COLUMNS)
    )
)


def end_points_by_cable(cable_ids) -> dict[int, list[tuple[bool, dict]]]:
    """Every end of these cables as ``(active, end_point dict)``, in one flat query.

    The same dicts as :func:`end_point`, without building five model instances per end (a page
    of 1,000 cables has 2,000 ends: that was most of the list's time).
    """
    out: dict[int, list[tuple[bool, dict]]] = {cid: [] for cid in cable_ids}
    rows = _END_ROWS(list(out)) if out else []
    for (
        cable_id,
        side,
        leg,
        label,
        connector_type,
        fibre_count,
        pinned,
        polish,
        active,
        connector,
        port_id,
        port_name,
        p_dev,
        p_rack,
        p_u,
        cage_id,
        cage_name,
        c_dev,
        c_rack,
        c_u,
    ) in rows:
        if port_id:
            dev, rack, u, name = p_dev, p_rack, p_u, port_name
        elif cage_id:
            dev, rack, u = c_dev, c_rack, c_u
            name = cage_name if connector == 1 else f"{cage_name}/{connector}"
        else:
            dev = rack = u = name = None
        out[cable_id].append(
            (
                active,
                {
                    "side": side,
                    "leg": leg,
                    "label": label,
                    "device": dev,
                    "rack": rack,
                    "u": u,
                    "termination": name,
                    "connector_type": connector_type,
                    "fibre_count": fibre_count,
                    "pinned": pinned,
                    "polish": polish,
                },
            )
        )
    return out


class CableListSerializer(serializers.ListSerializer):
    """Reads every end of the page in one query, and decides every cable's next step in a fixed
    number more (``selectors.decision.cable_decisions``), before the rows are rendered."""

    def to_representation(self, data):
        cables = list(data.all() if hasattr(data, "all") else data)
        ends = end_points_by_cable([c.pk for c in cables])
        decisions = cable_decisions(cables=cables)
        for c in cables:
            c._end_points = ends[c.pk]
            c._decision = decisions[c.pk]
        return super().to_representation(cables)


class NextStepActionSerializer(serializers.Serializer):
    key = serializers.ChoiceField(
        choices=["alert", "drain", "segment", "olts", "otdr", "qualification", "replace", "status"],
        help_text="alert: follow the open alert; drain: restore or extend the drain whose window "
        "ended (on its alert's page); segment: go to the failing segment; olts/otdr/"
        "qualification: record that test; replace: replace the cable; status: set ``status``.",
    )
    label = serializers.CharField(help_text="The button's words, e.g. 'Mark in production'")
    reason = serializers.CharField(help_text="Why this is the next step")
    url = serializers.CharField(allow_null=True, help_text="The page that takes the step")
    status = serializers.CharField(allow_null=True, help_text="For key 'status': the status it sets")


class FailureSerializer(serializers.Serializer):
    segment = serializers.CharField(help_text="The failing cable's label")
    text = serializers.CharField(help_text="Segment, figure and limit in words")
    figure = serializers.CharField(help_text="What was measured, e.g. '3.10 dB'")
    limit = serializers.CharField(help_text="What is allowed, e.g. '2.60 dB TIA-568.3 budget'")
    url = serializers.CharField(help_text="The failing segment's page, at its tests")
    own = serializers.BooleanField(
        help_text="The cable's own test (or a link's channel whose worst segment it is); false: "
        "another segment of a link through it (a trunk carrying several links whose own tests "
        "pass is not failed by it: its state is its own)"
    )


class NextStepSerializer(serializers.Serializer):
    """The one decision about the cable (``core.decision``): the same as its page and the lists."""

    state = serializers.ChoiceField(choices=list(STATES), help_text="The worst thing that applies")
    headline = serializers.CharField(help_text="What the first screen of the cable page says")
    reasons = serializers.ListField(child=serializers.CharField(), help_text="All the evidence, in words")
    step = NextStepActionSerializer(allow_null=True, help_text="The one next step; null when none")
    fails = FailureSerializer(many=True)
    blocking_alerts = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="Open alerts (warning level and above) that hold the cable out of production",
    )
    drained = serializers.CharField(
        allow_null=True,
        help_text="'drained, in maintenance until 16:30 UTC' while a link through it is drained",
    )
    drain_overdue = serializers.CharField(
        allow_null=True,
        help_text="'drained since 09:12, window ended 13:12 UTC: restore it or extend' when a drain of a "
        "link through it ran out of its window without a restore",
    )


class CableSerializer(StrictModelSerializer):
    vendor = serializers.CharField(source="vendor.name", read_only=True, default=None, allow_null=True)
    ends = serializers.SerializerMethodField()
    url = serializers.SerializerMethodField()
    next_step = serializers.SerializerMethodField()

    class Meta:
        model = Cable
        fields = [
            "id",
            "label",
            "kind",
            "role",
            "polarity",
            "length_m",
            "vendor",
            "part_number",
            "serial_a",
            "serial_b",
            "lot",
            "install_date",
            "status",
            "retest_due",
            "retired_at",
            "replaced_by",
            "notes",
            "ends",
            "url",
            "next_step",
        ]
        read_only_fields = fields
        list_serializer_class = CableListSerializer

    _PLAIN = ("label", "kind", "role", "polarity")

    def to_representation(self, instance):
        """DRF's generic field loop, unrolled: the same output at a fraction of the cost.

        Strings and ids go out as they are; dates, decimals and datetimes still go through
        their DRF fields so the formatting is DRF's. ``test_cables_api`` compares this with
        ``ModelSerializer.to_representation`` field for field.
        """
        fields = self.fields
        c = instance
        out = {"id": c.pk}
        for name in self._PLAIN:
            out[name] = getattr(c, name)
        length = c.length_m
        out["length_m"] = None if length is None else fields["length_m"].to_representation(length)
        out["vendor"] = c.vendor.name if c.vendor_id else None
        for name in ("part_number", "serial_a", "serial_b", "lot"):
            out[name] = getattr(c, name)
        day = c.install_date
        out["install_date"] = None if day is None else fields["install_date"].to_representation(day)
        out["status"] = c.status
        day = c.retest_due
        out["retest_due"] = None if day is None else fields["retest_due"].to_representation(day)
        at = c.retired_at
        out["retired_at"] = None if at is None else fields["retired_at"].to_representation(at)
        out["replaced_by"] = c.replaced_by_id
        out["notes"] = c.notes
        out["ends"] = self.get_ends(c)
        out["url"] = self.get_url(c)
        out["next_step"] = self.get_next_step(c)
        return out

    def get_ends(self, obj) -> list[dict]:
        ends = getattr(obj, "_end_points", None)
        if ends is None:
            ends = end_points_by_cable([obj.pk])[obj.pk]
        return [point for active, point in ends if active or obj.retired_at]

    def get_url(self, obj) -> str:
        return cable_url(obj.label)

    @extend_schema_field(NextStepSerializer)
    def get_next_step(self, obj) -> dict:
        decision = getattr(obj, "_decision", None)
        if decision is None:
            decision = cable_decisions(cables=[obj])[obj.pk]
        return decision.as_dict()


class EndRefSerializer(serializers.Serializer):
    """A plug and where it goes: ``port`` id, or ``device`` + ``port_name`` (name or alias)."""

    port = serializers.IntegerField(required=False)
    device = serializers.CharField(required=False, max_length=100)
    port_name = serializers.CharField(required=False, max_length=128)
    label = serializers.CharField(required=False, allow_blank=True, default="", max_length=72)
    connector_type = serializers.ChoiceField(choices=ConnectorType.choices, required=False, allow_blank=True)
    fibre_count = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=32)
    pinned = serializers.BooleanField(required=False, allow_null=True, default=None)
    polish = serializers.ChoiceField(choices=Polish.choices, required=False, allow_blank=True)

    def validate(self, attrs):
        if "port" not in attrs and not ("device" in attrs and "port_name" in attrs):
            raise serializers.ValidationError("Give a port id, or device and port_name.")
        return attrs


@extend_schema_field(
    {
        "type": "string",
        "format": "decimal",
        # 0.01 to 99999.99 with at most two decimals (drf-spectacular's own pattern also allows 0)
        "pattern": r"^(?:0*[1-9]\d{0,4}(?:\.\d{0,2})?|0*\.(?:0[1-9]|[1-9]\d?))$",
        "nullable": True,
    }
)
class PositiveLengthField(serializers.DecimalField):
    """A cable length in metres, more than zero (the ``cable_length_positive`` constraint)."""


@extend_schema_field({"type": "string", "pattern": LABEL_RE.pattern, "maxLength": 64})
class LabelField(serializers.CharField):
    """A cable label; the schema carries its rule (``validators.LABEL_RE``)."""


class CableWriteSerializer(serializers.Serializer):
    label = LabelField(max_length=64, validators=[validate_label])
    kind = serializers.ChoiceField(choices=CableKind.choices)
    role = serializers.ChoiceField(choices=CableRole.choices, required=False)
    polarity = serializers.ChoiceField(choices=Polarity.choices, required=False, allow_blank=True, default="")
    length_m = PositiveLengthField(
        max_digits=7, decimal_places=2, required=False, allow_null=True, min_value=Decimal("0.01")
    )
    vendor = serializers.CharField(required=False, allow_blank=True, max_length=100)
    part_number = serializers.CharField(required=False, allow_blank=True, default="", max_length=100)
    serial_a = serializers.CharField(required=False, allow_blank=True, default="", max_length=100)
    serial_b = serializers.CharField(required=False, allow_blank=True, default="", max_length=100)
    lot = serializers.CharField(required=False, allow_blank=True, default="", max_length=40)
    install_date = serializers.DateField(required=False, allow_null=True)
    status = serializers.ChoiceField(
        choices=[(CableStatus.PLANNED, "Planned"), (CableStatus.INSTALLED, "Installed")], required=False
    )
    notes = serializers.CharField(required=False, allow_blank=True, default="")
    a = EndRefSerializer()
    # A ListField, not many=True: drf-spectacular documents its minItems/maxItems.
    b = serializers.ListField(child=EndRefSerializer(), min_length=1, max_length=8)

    def validate(self, attrs):
        """An MPO end gives its ``fibre_count`` (``end_fibre_count_problem``; a breakout's legs
        excepted), said at the end it is missing from, as DRF says a field's error."""
        errors: dict = {}
        ends = [("a", None, attrs["a"])] + [("b", i, end) for i, end in enumerate(attrs["b"])]
        for side, i, end in ends:
            problem = end_fibre_count_problem(
                connector_type=end.get("connector_type", ""),
                fibre_count=end.get("fibre_count"),
                breakout_leg=side == "b" and len(attrs["b"]) > 1,
            )
            if problem and i is None:
                errors[side] = {"fibre_count": [problem]}
            elif problem:
                errors.setdefault(side, {})[i] = {"fibre_count": [problem]}
        if errors:
            raise serializers.ValidationError(errors)
        return attrs


class CableUpdateSerializer(StrictModelSerializer):
    """Editable facts of a cable. Status moves through its own endpoints (gate, retire)."""

    # As at install: a length of 0 said "Refused: the values break cable_length_positive", no field.
    length_m = PositiveLengthField(
        max_digits=7, decimal_places=2, required=False, allow_null=True, min_value=Decimal("0.01")
    )

    class Meta:
        model = Cable
        fields = [
            "length_m",
            "part_number",
            "serial_a",
            "serial_b",
            "lot",
            "install_date",
            "notes",
            "polarity",
        ]

    def validate_install_date(self, value):
        """A cable that is in went in on a day already come (``cables.install_date_problem``)."""
        cable = self.instance
        if cable is not None and value != cable.install_date:
            problem = install_date_problem(value, planned=cable.status == CableStatus.PLANNED)
            if problem:
                raise serializers.ValidationError(problem)
        return value


class StatusSerializer(serializers.Serializer):
    # Only the states a person sets: ``tested``/``in_production`` come from the test gate.
    status = serializers.ChoiceField(choices=[(s.value, s.label) for s in MANUAL_CABLE_STATUSES])
    # What the cable's history row holds (PostgreSQL refused a longer one as "out of range").
    reason = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=HISTORY_REASON_MAX
    )
    install_date = serializers.DateField(
        required=False,
        allow_null=True,
        default=None,
        help_text="A planned cable marked installed: the day it went in (today when left out).",
    )


class RetireSerializer(serializers.Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)


class LinkSerializer(StrictModelSerializer):
    a = serializers.CharField(source="a_port.__str__", read_only=True)
    b = serializers.CharField(source="b_port.__str__", read_only=True)
    cables = serializers.SerializerMethodField()

    class Meta:
        model = Link
        fields = [
            "id",
            "a_port",
            "b_port",
            "a",
            "b",
            "pmd",
            "fec",
            "speed_gbps",
            "lanes",
            "lane_rate_gbaud",
            "loss_budget_db",
            "link_class",
            "path_ok",
            "path_problems",
            "retest_due",
            "active",
            "cables",
        ]
        read_only_fields = fields

    def get_cables(self, obj) -> list[str]:
        return [s.cable.label for s in obj.segments.all()]


def trace_as_dict(trace) -> dict:
    def point(p):
        return None if p is None else {"device": p.device, "rack": p.rack, "u": p.u, "name": p.name}

    return {
        "start": point(trace.start),
        "far": point(trace.far),
        "far_port": trace.far_port_id,
        "complete": trace.complete,
        "ok": trace.verdict.ok,
        "problems": trace.verdict.problems,
        "notes": trace.verdict.notes,
        "segments": [
            {
                "cable": s.label,
                "kind": s.kind,
                "role": s.role,
                "polarity": s.polarity,
                "status": s.status,
                "from": point(s.near),
                "to": point(s.far),
                "from_leg": s.near_leg,
                "to_leg": s.far_leg,
            }
            for s in trace.segments
        ],
    }
