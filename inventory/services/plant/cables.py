"""Cable writes: install, retire, replace, status changes. History is kept on every write."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from inventory.core.choices import CableKind, CableRole, CableStatus, ConnectorType, FieldNoteKind, PortKind
from inventory.core.decision import FIRST_TEST_DAY
from inventory.core.validators import same_port_problem
from inventory.core.words import human_date, word
from inventory.models import Cable, CableEnd, FieldNote, Port, Vendor
from inventory.models.base import HISTORY_REASON_MAX
from inventory.models.cables import MAX_LENGTH_M
from inventory.selectors.decision import blocking_alerts
from inventory.selectors.plant.loops import PlannedCable, PlannedEnd, loops_closed
from inventory.selectors.testing.facts import date_floor
from inventory.selectors.testing.gate import cable_gate_check, gate_message
from inventory.selectors.testing.latest import first_test_day
from inventory.services.plant import alert_moves, cable_sites
from inventory.services.plant import links as link_services

# DAC reach by lane rate (IEEE 802.3 CR/CR4/CR8 practice): past these a passive copper link
# may not train; it is a warning, not a refusal (vendors ship some longer DACs).
DAC_MAX_M = {25: Decimal("5"), 50: Decimal("5"), 100: Decimal("3"), 200: Decimal("2")}


@dataclass(frozen=True)
class EndSpec:
    """What one plug of a new cable is and where it goes."""

    port: Port
    connector_type: str = ""
    fibre_count: int | None = None
    pinned: bool | None = None
    polish: str = ""
    label: str = ""


def _termination(port: Port) -> dict:
    if port.cage_id:
        return {"cage_id": port.cage_id, "connector": port.connector, "port_id": None}
    return {"cage_id": None, "connector": None, "port_id": port.pk}


def _occupied(ports: list[Port]) -> set[int]:
    """Ports (by id) whose termination point already holds an active cable end."""
    cage_terms = {(p.cage_id, p.connector): p.pk for p in ports if p.cage_id}
    plain = {p.pk for p in ports if not p.cage_id}
    busy: set[int] = set()
    if plain:
        busy |= set(CableEnd.objects.filter(active=True, port_id__in=plain).values_list("port_id", flat=True))
    if cage_terms:
        rows = CableEnd.objects.filter(active=True, cage_id__in={c for c, _ in cage_terms}).values_list(
            "cage_id", "connector"
        )
        busy |= {cage_terms[r] for r in rows if r in cage_terms}
    return busy


def cable_warnings(*, kind: str, length_m: Decimal | None, ports: list[Port]) -> list[str]:
    """Things a technician should see but that do not block the install."""
    warnings = []
    if kind == CableKind.DAC and length_m is not None:
        lane_rates = []
        for p in ports:
            xcvr_speed = p.speed_gbps
            if xcvr_speed and p.lane_count:
                lane_rates.append(xcvr_speed // p.lane_count)
        if lane_rates:
            rate = max(lane_rates)
            limit = next((m for r, m in sorted(DAC_MAX_M.items()) if rate <= r), Decimal("2"))
            if length_m > limit:
                warnings.append(
                    f"A {length_m} m passive DAC at {rate}G per lane is past the usual {limit} m reach; use ACC or AOC."
                )
    return warnings


def _check_end_against_module(spec: EndSpec, cable_kind: str, errors: dict, key: str) -> None:
    port = spec.port
    if not port.cage_id:
        # A panel (or fixed) port is a receptacle with its own polish: an angled plug in a flat
        # port (or the reverse) leaves an air gap, as in a module.
        if spec.polish and port.polish and spec.polish != port.polish:
            errors[key] = f"{port}: the port is {port.polish}; an {spec.polish} plug would damage it."
        return
    xcvr = getattr(port.cage, "transceiver", None)
    if cable_kind in CableKind.sealed():
        if xcvr is not None:
            errors[key] = (
                f"{port}: cage {port.cage.name} holds module {xcvr.serial}; a {cable_kind} plugs into an empty cage."
            )
        return
    if xcvr is None:
        return
    m = xcvr.model
    if spec.connector_type and m.connector_type and spec.connector_type != m.connector_type:
        errors[key] = (
            f"{port}: module {m.part_number} ({m.pmd}) takes {m.connector_type}, not {spec.connector_type}."
        )
    elif spec.fibre_count and m.fibre_count and spec.fibre_count != m.fibre_count:
        errors[key] = f"{port}: module {m.part_number} takes MPO-{m.fibre_count}, not MPO-{spec.fibre_count}."
    elif spec.polish and m.polish and spec.polish != m.polish:
        errors[key] = f"{port}: module {m.part_number} is {m.polish}; an {spec.polish} plug would damage it."


@transaction.atomic
def cable_install(
    *,
    label: str,
    kind: str,
    a: EndSpec | list[EndSpec],
    b: list[EndSpec],
    role: str | None = None,
    polarity: str = "",
    length_m: Decimal | None = None,
    vendor: Vendor | None = None,
    part_number: str = "",
    serial_a: str = "",
    serial_b: str = "",
    lot: str = "",
    install_date: date | None = None,
    status: str | None = None,
    notes: str = "",
    color: str = "",
) -> tuple[Cable, list[str]]:
    """Record a cable from ``a`` to ``b`` (one end, or 2-8 breakout legs).

    ``a`` may list several ends too (a 2-to-2 trunk or harness): leg ``i`` of side A then
    pairs with leg ``i`` of side B.

    Refuses, writing nothing, a duplicate label, a port that is already cabled or retired, a
    breakout with the wrong leg count and a plug that does not fit the module in the cage.
    Returns the cable and any warnings (a DAC past its reach).
    """
    errors: dict[str, str] = {}
    a_legs = a if isinstance(a, list) else [a]
    a = a_legs[0]
    label = (label or "").strip()
    if not label:
        errors["label"] = "A cable needs a label."
    elif Cable.objects.filter(label=label).exists():
        errors["label"] = f"Cable label {label!r} is already in use."
    if kind not in CableKind.values:
        errors["kind"] = f"Unknown cable kind {kind!r}."
    if not b:
        errors["b"] = "A cable needs a B end."
    elif len(b) > 1 and not 2 <= len(b) <= 8:
        errors["b"] = "A breakout has 2 to 8 legs."
    if len(a_legs) > 1 and len(a_legs) != len(b):
        errors["a"] = "A cable with several A ends needs as many B ends (leg i pairs with leg i)."
    role = role or (CableRole.BREAKOUT if len(b) > 1 else CableRole.DIRECT)
    ports = [*[s.port for s in a_legs], *[s.port for s in b]]
    keys = [*(["a"] * len(a_legs)), *[f"b{i}" if len(b) > 1 else "b" for i in range(len(b))]]
    seen: set[int] = set()
    repeated: set[int] = set()
    for key, p in zip(keys, ports, strict=True):
        if p.pk in seen:  # said once, at the end that repeats the port
            errors.setdefault(key, same_port_problem(str(p)))
            repeated.add(p.pk)
        seen.add(p.pk)
    for key, p in zip(keys, ports, strict=True):
        if p.retired_at:
            errors.setdefault(key, f"{p} is retired.")
    busy = _occupied(ports) - repeated
    for key, p in zip(keys, ports, strict=True):
        if p.pk in busy:
            errors.setdefault(key, f"{p} is already cabled.")
    for spec in a_legs:
        _check_end_against_module(spec, kind, errors, "a")
    for i, spec in enumerate(b):
        _check_end_against_module(spec, kind, errors, f"b{i}" if len(b) > 1 else "b")
    if not errors:  # a path through panels that comes back into the cable: the plan import's check
        ends = [PlannedEnd.at("A", (i + 1) if len(a_legs) > 1 else 0, s.port) for i, s in enumerate(a_legs)]
        ends += [PlannedEnd.at("B", (i + 1) if len(b) > 1 else 0, s.port) for i, s in enumerate(b)]
        closed = loops_closed([PlannedCable(label, tuple(ends))])
        if closed:
            errors["path"] = closed[0]
    status = status or (CableStatus.INSTALLED if install_date else CableStatus.PLANNED)
    if problem := install_date_problem(install_date, planned=status == CableStatus.PLANNED):
        errors["install_date"] = problem
    if problem := length_problem(length_m):
        errors["length_m"] = problem
    if errors:
        raise ValidationError(errors)

    cable = Cable.objects.create(
        label=label,
        kind=kind,
        role=role,
        polarity=polarity,
        length_m=length_m,
        vendor=vendor,
        part_number=part_number,
        serial_a=serial_a,
        serial_b=serial_b,
        lot=lot,
        install_date=install_date,
        status=status,
        notes=notes,
        color=color,
    )
    default_type = ConnectorType.NONE if kind in CableKind.sealed() else ""
    ends = [("A", (i + 1) if len(a_legs) > 1 else 0, s) for i, s in enumerate(a_legs)]
    ends += [("B", (i + 1) if len(b) > 1 else 0, s) for i, s in enumerate(b)]
    try:
        with transaction.atomic():
            for side, leg, spec in ends:
                CableEnd.objects.create(
                    cable=cable,
                    side=side,
                    leg=leg,
                    label=spec.label or (f"{label}-{leg}" if leg else ""),
                    connector_type=spec.connector_type or default_type or _guess_connector(spec.port),
                    fibre_count=spec.fibre_count,
                    pinned=spec.pinned,
                    polish=spec.polish,
                    **_termination(spec.port),
                )
    except IntegrityError as exc:  # a concurrent install took the port between check and write
        raise ValidationError({"a": "A port of this cable was cabled by someone else just now."}) from exc
    cable_sites.cable_sites_refresh(cable_ids=[cable.pk])
    cable.refresh_from_db(fields=["site"])
    warnings = cable_warnings(kind=kind, length_m=length_m, ports=ports)
    link_services.links_refresh_for_ports(port_ids=[p.pk for p in ports])
    return cable, warnings


def _guess_connector(port: Port) -> str:
    if port.connector_type:
        return port.connector_type
    if port.cage_id:
        xcvr = getattr(port.cage, "transceiver", None)
        if xcvr:
            return xcvr.model.connector_type
    return ConnectorType.RJ45 if port.kind == PortKind.INTERFACE and not port.cage_id else ""


@transaction.atomic
def cable_retire(*, cable: Cable, reason: str = "", now: datetime | None = None, actor=None) -> Cable:
    """Retire a cable: its ends free their ports; its record and history stay. Its open faults
    and notes are settled by the retirement (by ``actor``): a retired cable never goes back into
    production, which is what settles a fault, and takes no more actions, so none could close them."""
    if cable.status == CableStatus.RETIRED:
        raise ValidationError({"status": f"{cable.label} is already retired."})
    now = now or timezone.now()
    affected = _ports_of(cable)
    for end in cable.ends.filter(active=True):
        end.active = False
        end.save(update_fields=["active"])
    cable.status = CableStatus.RETIRED
    cable.retired_at = now
    if reason:
        cable.notes = (cable.notes + "\n" if cable.notes else "") + f"Retired {now:%Y-%m-%d}: {reason}"
    # the whole reason is in the notes; the history row holds what fits its column
    cable._change_reason = (
        reason if len(reason) <= HISTORY_REASON_MAX else reason[: HISTORY_REASON_MAX - 1] + "…"
    ) or "retired"
    cable.save()
    FieldNote.objects.filter(cable=cable, closed_at__isnull=True).update(
        closed_at=now,
        closed_by=actor,
        close_reason=(f"the cable was retired: {reason}" if reason else "the cable was retired")[:200],
    )
    link_services.links_refresh_for_ports(port_ids=affected)
    return cable


def cable_set_status(
    *,
    cable: Cable,
    status: str,
    reason: str = "",
    now: datetime | None = None,
    override_reason: str = "",
    actor=None,
    install_date: date | None = None,
) -> Cable:
    """Set a cable's status. "In production" passes the test gate, and is refused while an alert
    of warning level or above is open on a link through the cable (``core.decision``) unless
    ``override_reason`` says why (the caller checks the role may: ``authz`` ``override_alert``);
    an override goes into the cable's journal. A planned cable going into the plant (installed,
    in production, degraded, faulty: the page, the API, the desk's bulk status, a fault report)
    records its install date, said in its history: ``install_date``, or the day of its first
    test, or today (``install_date_for``)."""
    if status not in CableStatus.values:
        raise ValidationError({"status": f"Unknown status {status!r}."})
    if status == CableStatus.RETIRED:
        return cable_retire(cable=cable, reason=reason, now=now, actor=actor)
    if cable.status == CableStatus.RETIRED:
        raise ValidationError({"status": f"{cable.label} is retired; install a new cable instead."})
    fields = ["status", "updated_at"]
    if cable.status == CableStatus.PLANNED and status != CableStatus.PLANNED:
        cable.install_date, why = install_date_for(cable=cable, day=install_date, now=now)
        fields.append("install_date")
        if why and len(reason) + len(why) + 2 <= HISTORY_REASON_MAX:  # never cut a person's reason
            reason = f"{reason}; {why}" if reason else why
    elif install_date is not None:
        raise ValidationError(
            {
                "install_date": "An install date is recorded when a planned cable goes in; "
                "edit the cable to change it."
            }
        )
    if status == CableStatus.IN_PRODUCTION and cable.status != CableStatus.IN_PRODUCTION:
        missing = cable_gate_check(cable=cable, now=now)
        if missing:
            raise ValidationError({"status": gate_message(cable, missing)})
        blocking = blocking_alerts(cable=cable)
        override_reason = (override_reason or "").strip()
        if blocking and not override_reason:
            raise ValidationError({"status": alert_block_message(cable, blocking)})
        if blocking:
            _journal_override(cable=cable, alerts=blocking, reason=override_reason, actor=actor, now=now)
    cable.status = status
    cable._change_reason = reason
    if getattr(actor, "pk", None) is not None:  # the history names who, in a request or not (a script)
        cable._history_user = actor
    cable.save(update_fields=fields)
    return cable


def install_date_for(*, cable: Cable, day: date | None, now: datetime | None = None) -> tuple[date, str]:
    """The day a planned cable went in, and, when the day is not the one given, where it comes
    from in words for its history: the one given; else the day of its first test (a test proves
    it was plugged in by then, and no test may be dated before the install date,
    ``services.testing.dates``); else today. Never a day still ahead."""
    today = timezone.localdate(now) if now is not None else timezone.localdate()
    first = first_test_day(cable.pk)
    if day is not None:
        if problem := install_date_problem(day, planned=False, now=now):
            raise ValidationError({"install_date": problem})
        if first is not None and day > first:
            raise ValidationError(
                {
                    "install_date": f"{cable.label} was first tested on {human_date(first)}: it was in by "
                    "then. Give that day or an earlier one."
                }
            )
        return day, ""
    if first is not None and first <= today:
        return first, f"installed on {FIRST_TEST_DAY}"
    return today, ""


def install_date_problem(day: date | None, *, planned: bool, now: datetime | None = None) -> str | None:
    """Why ``day`` cannot be the install date of a cable, or None: not before
    ``CABLETRACK_TEST_DATE_FLOOR`` (2000-01-01) whatever the status; a cable that is in (any
    status but planned) went in on a day already come; a planned one may carry the day it is
    planned for. A day ahead kept its retest due date past the calendar's end (9999-12-31), so
    the sweep never asked for it. Marking a cable installed, installing one (API, desk), editing
    one (API, desk) and the plan import all ask this one function."""
    if day is None:
        return None
    if day < (floor := date_floor()):
        # A year-1 install date gave one cable 2,025 years of service: its cohort's learned
        # failure rate (the forecast, the spares to order) fell to almost nothing.
        return f"{day.isoformat()} is before the earliest install date accepted ({floor.isoformat()})."
    if planned:
        return None
    today = timezone.localdate(now) if now is not None else timezone.localdate()
    if day > today:
        return f"{human_date(day)} is still ahead: mark a cable installed once it is in."
    return None


def length_problem(length_m: Decimal | None) -> str | None:
    """Why ``length_m`` cannot be a cable's length, or None: more than ``MAX_LENGTH_M``."""
    if length_m is not None and length_m > MAX_LENGTH_M:
        return f"At most {MAX_LENGTH_M} m, not {length_m}."
    return None


def alert_block_message(cable: Cable, alerts: list) -> str:
    """The refusal a user reads while an alert holds the cable out of production."""
    named = "; ".join(
        f"#{a.id} {word(a.severity, 'severity').lower()} {word(a.rule, 'rule').lower()}" for a in alerts[:3]
    )
    return (
        f"{cable.label} cannot go into production while an alert is open on a link through it ({named}). "
        "Follow the alert's recommendation; it resolves once its rule's clean window passes."
    )


def _journal_override(*, cable: Cable, alerts: list, reason: str, actor, now: datetime | None) -> None:
    now = now or timezone.now()
    named = ", ".join(
        f"#{a.id} {word(a.severity, 'severity').lower()} {word(a.rule, 'rule').lower()}" for a in alerts
    )
    FieldNote.objects.create(
        cable=cable,
        kind=FieldNoteKind.NOTE,
        text=f"Put in production over open alert {named}: {reason}"[:2000],
        status_before=cable.status,
        status_after=CableStatus.IN_PRODUCTION,
        at=now,
        actor=actor,
        closed_at=now,
        closed_by=actor,
        close_reason="override recorded",
    )


def _ports_of(cable: Cable) -> list[int]:
    """Logical and panel ports at this cable's ends (for link refresh)."""
    ids: list[int] = []
    for end in cable.ends.filter(active=True):
        if end.port_id:
            ids.append(end.port_id)
        elif end.cage_id:
            ids.extend(
                Port.objects.filter(cage_id=end.cage_id, connector=end.connector).values_list("pk", flat=True)
            )
    return ids


@transaction.atomic
def cable_replace(
    *, old: Cable, new_label: str, reason: str = "", now: datetime | None = None, actor=None, **overrides
) -> Cable:
    """Replace a cable by a new one on the same ports: the old is retired and points to the new;
    the open alerts of its links move to the new one, each recording the replacement (by
    ``actor``) as its repair."""
    now = now or timezone.now()
    ends = list(old.ends.filter(active=True).select_related("port", "cage"))
    if not ends:
        raise ValidationError({"label": f"{old.label} has no active ends to replace."})
    ports = []
    for e in ends:
        if e.port_id:
            ports.append((e, e.port))
        else:
            port = (
                Port.objects.filter(cage_id=e.cage_id, connector=e.connector).order_by("lane_start").first()
            )
            if port is None:
                raise ValidationError({"label": f"{old.label} end {e.side} has no port to move to."})
            ports.append((e, port))
    moving = alert_moves.alerts_on_cable(cable=old)  # read before the retirement ends its links
    cable_retire(cable=old, reason=reason or f"replaced by {new_label}", now=now, actor=actor)

    def spec(e, p):
        return EndSpec(
            port=p,
            connector_type=e.connector_type,
            fibre_count=e.fibre_count,
            pinned=e.pinned,
            polish=e.polish,
        )

    a = next(spec(e, p) for e, p in ports if e.side == "A")
    b = [spec(e, p) for e, p in sorted(ports, key=lambda x: x[0].leg) if e.side == "B"]
    fields = dict(
        kind=old.kind,
        role=old.role,
        polarity=old.polarity,
        length_m=old.length_m,
        vendor=old.vendor,
        part_number=old.part_number,
        install_date=now.date(),
        status=CableStatus.INSTALLED,
    )
    fields.update(overrides)
    new, _ = cable_install(label=new_label, a=a, b=b, **fields)
    old.replaced_by = new
    old._change_reason = f"replaced by {new.label}"
    old.save(update_fields=["replaced_by", "updated_at"])
    alert_moves.alerts_follow_cable(moving=moving, old=old, new=new, now=now, actor=actor, reason=reason)
    return new


# --- edits from the desk forms ------------------------------------------------------------

CABLE_EDITABLE = (
    "polarity",
    "length_m",
    "vendor",
    "part_number",
    "serial_a",
    "serial_b",
    "lot",
    "install_date",
    "notes",
)
STALE_EDIT = (
    "This record was changed since you opened it (by {who} at {when}). Reload it and make your change again."
)


def stale_edit_message(obj) -> str:
    last = obj.history.select_related("history_user").order_by("-history_date", "-history_id").first()
    who = last.history_user.get_username() if last and last.history_user else "someone else"
    when = f"{obj.updated_at:%Y-%m-%d %H:%M:%S} UTC"
    return STALE_EDIT.format(who=who, when=when)


@transaction.atomic
def cable_update(
    *, cable: Cable, expected_updated_at: datetime | None = None, reason: str = "edited", **fields
) -> tuple[Cable, list[str]]:
    """Change a cable's descriptive fields (not its label, kind or ends).

    ``expected_updated_at`` is the ``updated_at`` the editor saw: when the row has changed
    since, nothing is written and the editor is told (optimistic concurrency).
    """
    unknown = set(fields) - set(CABLE_EDITABLE)
    if unknown:
        raise ValidationError(
            {"__all__": f"These fields cannot be edited here: {', '.join(sorted(unknown))}."}
        )
    locked = Cable.objects.select_for_update().get(pk=cable.pk)
    if expected_updated_at is not None and locked.updated_at != expected_updated_at:
        raise ValidationError({"__all__": stale_edit_message(locked)})
    if locked.status == CableStatus.RETIRED:
        raise ValidationError({"__all__": f"{locked.label} is retired and cannot be edited."})
    if fields.get("length_m") is not None and fields["length_m"] <= 0:
        raise ValidationError({"length_m": "A length must be more than 0 m."})
    if "install_date" in fields and fields["install_date"] != locked.install_date:
        problem = install_date_problem(fields["install_date"], planned=locked.status == CableStatus.PLANNED)
        if problem:
            raise ValidationError({"install_date": problem})
    changed = [k for k, v in fields.items() if getattr(locked, k) != v]
    for k in changed:
        setattr(locked, k, fields[k])
    if changed:
        locked._change_reason = reason
        locked.save()
    ports = list(Port.objects.filter(pk__in=_ports_of(locked)))
    return locked, cable_warnings(kind=locked.kind, length_m=locked.length_m, ports=ports)


@transaction.atomic
def cables_set_status(*, cables: list[Cable], status: str, reason: str = "") -> list[Cable]:
    """Set the status of a selection (a page of the desk list), all or nothing."""
    if status not in CableStatus.values:
        raise ValidationError({"status": f"Unknown status {status!r}."})
    retired = [c.label for c in cables if c.status == CableStatus.RETIRED and status != CableStatus.RETIRED]
    if retired:
        raise ValidationError({"status": f"Retired cables cannot change status: {', '.join(retired[:10])}."})
    return [cable_set_status(cable=c, status=status, reason=reason) for c in cables if c.status != status]
