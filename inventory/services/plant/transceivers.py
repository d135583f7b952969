"""Module moves: install, remove, swap, fail, RMA. Every move is a dated placement row."""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models.functions import Upper
from django.utils import timezone

from inventory.core.choices import CableKind, PlacementEnd, RmaOutcome, TransceiverStatus
from inventory.db import bulk
from inventory.models import CableEnd, Cage, RmaCase, Transceiver, TransceiverModel, TransceiverPlacement
from inventory.services.plant import alert_moves
from inventory.services.plant.cables import stale_edit_message


def _locked(xcvr: Transceiver) -> Transceiver:
    return Transceiver.objects.select_for_update().select_related("model").get(pk=xcvr.pk)


@transaction.atomic
def transceiver_install(
    *, transceiver: Transceiver, cage: Cage, actor=None, now: datetime | None = None
) -> Transceiver:
    """Put a module into an empty cage."""
    now = now or timezone.now()
    xcvr = _locked(transceiver)
    errors = {}
    if xcvr.status in (TransceiverStatus.FAILED, TransceiverStatus.RMA, TransceiverStatus.RETIRED):
        errors["transceiver"] = (
            f"Module {xcvr.serial} is {xcvr.get_status_display().lower()} and cannot be installed."
        )
    elif xcvr.cage_id:
        errors["transceiver"] = f"Module {xcvr.serial} is already installed in {xcvr.cage}."
    occupant = Transceiver.objects.filter(cage=cage).first()
    if occupant:
        errors["cage"] = f"{cage} already holds module {occupant.serial}."
    if xcvr.model.form_factor != cage.form_factor:
        errors["cage"] = f"A {xcvr.model.form_factor} module does not fit a {cage.form_factor} cage."
    sealed = CableEnd.objects.filter(active=True, cage=cage, cable__kind__in=CableKind.sealed()).exists()
    if sealed:
        errors["cage"] = f"{cage} is occupied by a DAC/ACC/AOC plug."
    if errors:
        raise ValidationError(errors)
    xcvr.cage = cage
    xcvr.status = TransceiverStatus.INSTALLED
    xcvr.stock_site = None
    xcvr._change_reason = f"installed in {cage}"
    xcvr.save()
    TransceiverPlacement.objects.create(transceiver=xcvr, cage=cage, installed_at=now, installed_by=actor)
    return xcvr


@transaction.atomic
def transceiver_remove(
    *,
    transceiver: Transceiver,
    reason: str = PlacementEnd.REMOVED,
    actor=None,
    notes: str = "",
    now: datetime | None = None,
) -> Transceiver:
    """Take a module out of its cage: to spares, or as failed."""
    now = now or timezone.now()
    xcvr = _locked(transceiver)
    if not xcvr.cage_id:
        raise ValidationError({"transceiver": f"Module {xcvr.serial} is not installed."})
    placement = TransceiverPlacement.objects.select_for_update().get(
        transceiver=xcvr, removed_at__isnull=True
    )
    placement.removed_at = now
    placement.end_reason = reason
    placement.removed_by = actor
    placement.notes = notes
    placement.save()
    site = xcvr.cage.device.rack.row.room.site if xcvr.cage.device.rack_id else None
    xcvr.cage = None
    xcvr.status = TransceiverStatus.FAILED if reason == PlacementEnd.FAILED else TransceiverStatus.SPARE
    xcvr.stock_site = site if xcvr.status == TransceiverStatus.SPARE else None
    xcvr._change_reason = f"removed ({reason})"
    xcvr.save()
    return xcvr


@transaction.atomic
def transceiver_swap(
    *,
    cage: Cage,
    new: Transceiver,
    old_failed: bool = False,
    actor=None,
    notes: str = "",
    now: datetime | None = None,
) -> tuple[Transceiver | None, Transceiver]:
    """Replace whatever module sits in ``cage`` by ``new``; the old one goes to spare or failed."""
    now = now or timezone.now()
    old = Transceiver.objects.filter(cage=cage).first()
    if old is not None and old.pk == new.pk:
        raise ValidationError({"transceiver": f"Module {new.serial} is already in {cage}."})
    if old is not None:
        old = transceiver_remove(
            transceiver=old,
            reason=PlacementEnd.FAILED if old_failed else PlacementEnd.SWAPPED,
            actor=actor,
            notes=notes,
            now=now,
        )
    installed = transceiver_install(transceiver=new, cage=cage, actor=actor, now=now)
    alert_moves.alerts_follow_module(
        cage=cage,
        old_serial=old.serial if old is not None else "",
        new_serial=installed.serial,
        now=now,
        actor=actor,
        notes=notes,
    )
    return old, installed


@transaction.atomic
def transceiver_rma_open(
    *, transceiver: Transceiver, reference: str = "", now: datetime | None = None
) -> RmaCase:
    now = now or timezone.now()
    xcvr = _locked(transceiver)
    if xcvr.cage_id:
        raise ValidationError({"transceiver": "Remove the module before sending it for RMA."})
    xcvr.status = TransceiverStatus.RMA
    xcvr.save()
    return RmaCase.objects.create(transceiver=xcvr, reference=reference, opened_at=now)


@transaction.atomic
def rma_close(*, case: RmaCase, outcome: str, now: datetime | None = None) -> RmaCase:
    """Record the vendor's finding. 'No trouble found' returns the module to spares."""
    if outcome not in (RmaOutcome.CONFIRMED, RmaOutcome.NO_TROUBLE_FOUND):
        raise ValidationError({"outcome": "An RMA closes as confirmed or no trouble found."})
    case.outcome = outcome
    case.closed_at = now or timezone.now()
    case.save()
    if case.transceiver_id:
        xcvr = _locked(case.transceiver)
        xcvr.status = (
            TransceiverStatus.RETIRED if outcome == RmaOutcome.CONFIRMED else TransceiverStatus.SPARE
        )
        if xcvr.status == TransceiverStatus.SPARE and xcvr.stock_site_id is None:
            # Back on the shelf where it came out of service, so the site counts it as on hand
            # (the spares forecast would otherwise tell the site to order what it holds).
            xcvr.stock_site = _last_site(xcvr)
        xcvr._change_reason = f"RMA closed ({outcome})"
        xcvr.save()
    return case


def _last_site(xcvr: Transceiver):
    """The site of the module's last placement (None when it was never placed in a rack)."""
    last = (
        TransceiverPlacement.objects.filter(transceiver=xcvr, cage__device__rack__isnull=False)
        .select_related("cage__device__rack__row__room__site")
        .order_by("-installed_at")
        .first()
    )
    return last.cage.device.rack.row.room.site if last else None


# --- desk forms ---------------------------------------------------------------------------

TRANSCEIVER_EDITABLE = ("serial", "firmware", "date_code", "stock_site", "acquired_on")


def _duplicate_serial(*, model, serial: str, exclude_pk=None) -> Transceiver | None:
    qs = Transceiver.objects.filter(model__vendor_id=model.vendor_id, serial__iexact=serial)
    if exclude_pk:
        qs = qs.exclude(pk=exclude_pk)
    return qs.select_related("model", "cage__device").first()


def _duplicate_message(dup: Transceiver) -> str:
    where = f"in {dup.cage}" if dup.cage_id else dup.get_status_display().lower()
    return f"Serial {dup.serial} is already recorded for {dup.model.vendor.name} {dup.model.part_number} ({where})."


def serial_problem(*, model, serial: str, exclude_pk=None) -> str | None:
    """Why a module of ``model`` cannot carry ``serial``: its vendor already has it, whatever
    the case (the reconciliation and the swap form find a module by serial that way). The desk
    forms and the API ask this one function."""
    dup = _duplicate_serial(model=model, serial=serial, exclude_pk=exclude_pk)
    return _duplicate_message(dup) if dup else None


@transaction.atomic
def transceiver_create(
    *,
    model,
    serial: str,
    firmware: str = "",
    date_code: str = "",
    stock_site=None,
    acquired_on=None,
    actor=None,
) -> Transceiver:
    """Record a new module as a spare. Refuses a serial its vendor already has."""
    serial = (serial or "").strip()
    if not serial:
        raise ValidationError({"serial": "A module needs its serial number (printed on its label)."})
    if problem := serial_problem(model=model, serial=serial):
        raise ValidationError({"serial": problem})
    xcvr = Transceiver(
        model=model,
        serial=serial,
        firmware=firmware,
        date_code=date_code,
        stock_site=stock_site,
        acquired_on=acquired_on,
        status=TransceiverStatus.SPARE,
    )
    xcvr._change_reason = "recorded"
    xcvr.save()
    return xcvr


@transaction.atomic
def transceiver_update(
    *, transceiver: Transceiver, expected_updated_at: datetime | None = None, **fields
) -> Transceiver:
    """Change a module's descriptive fields, refusing an edit over someone else's newer change."""
    unknown = set(fields) - set(TRANSCEIVER_EDITABLE)
    if unknown:
        raise ValidationError(
            {"__all__": f"These fields cannot be edited here: {', '.join(sorted(unknown))}."}
        )
    xcvr = _locked(transceiver)
    if expected_updated_at is not None and xcvr.updated_at != expected_updated_at:
        raise ValidationError({"__all__": stale_edit_message(xcvr)})
    if "serial" in fields:
        fields["serial"] = (fields["serial"] or "").strip()
        if not fields["serial"]:
            raise ValidationError({"serial": "A module needs its serial number."})
        if problem := serial_problem(model=xcvr.model, serial=fields["serial"], exclude_pk=xcvr.pk):
            raise ValidationError({"serial": problem})
    changed = [k for k, v in fields.items() if getattr(xcvr, k) != v]
    for k in changed:
        setattr(xcvr, k, fields[k])
    if changed:
        xcvr._change_reason = "edited"
        xcvr.save()
    return xcvr


# --- many new modules at once (telemetry reconciliation) ----------------------------------


def transceivers_install_new(
    *, rows: list[tuple[Cage, TransceiverModel, str]], actor=None, reason: str, now: datetime | None = None
) -> list[Transceiver]:
    """Record new modules already sitting in their cages: one ``(cage, model, serial)`` per row.

    The same rules as ``transceiver_create`` + ``transceiver_install`` (serial unique per
    vendor, an empty cage of the module's form factor, no DAC/ACC/AOC plug in it), checked
    set-based, then written with the sanctioned bulk writer: the modules and their open
    placements, each with a history row naming ``actor`` and ``reason``. All or nothing: any
    broken rule raises ``ValidationError`` with one message per row (``{"cage:<id>": [...]}``)
    and writes nothing. Call it inside a transaction that holds the cages' row locks.
    """
    now = now or timezone.now()
    if not rows:
        return []
    cage_ids = [c.pk for c, _, _ in rows]
    errors: dict[str, str] = {}
    if len(set(cage_ids)) != len(cage_ids):
        raise ValidationError({"__all__": "A cage is named twice."})
    occupied = dict(Transceiver.objects.filter(cage_id__in=cage_ids).values_list("cage_id", "serial"))
    plugged = set(
        CableEnd.objects.filter(
            active=True, cage_id__in=cage_ids, cable__kind__in=CableKind.sealed()
        ).values_list("cage_id", flat=True)
    )
    serials = {(m.vendor_id, s.strip().upper()) for _, m, s in rows}
    taken = {
        (v, s.upper())
        for v, s in Transceiver.objects.annotate(up=Upper("serial"))
        .filter(model__vendor_id__in={v for v, _ in serials}, up__in={s for _, s in serials})
        .values_list("model__vendor_id", "serial")
    }
    seen: set[tuple[int, str]] = set()
    for cage, model, serial in rows:
        key = f"cage:{cage.pk}"
        serial = (serial or "").strip()
        vs = (model.vendor_id, serial.upper())
        if not serial:
            errors[key] = "A module needs its serial number."
        elif cage.pk in occupied:
            errors[key] = f"{cage} already holds module {occupied[cage.pk]}."
        elif cage.pk in plugged:
            errors[key] = f"{cage} is occupied by a DAC/ACC/AOC plug."
        elif model.form_factor != cage.form_factor:
            errors[key] = f"A {model.form_factor} module does not fit a {cage.form_factor} cage."
        elif vs in taken or vs in seen:
            errors[key] = f"Serial {serial} is already recorded for {model.vendor.name}."
        seen.add(vs)
    if errors:
        raise ValidationError({k: [v] for k, v in errors.items()})
    units = bulk.bulk_insert(
        Transceiver,
        [
            Transceiver(model=m, serial=s.strip(), status=TransceiverStatus.INSTALLED, cage=c)
            for c, m, s in rows
        ],
        actor=actor,
        reason=reason,
        now=now,
    )
    bulk.bulk_insert(
        TransceiverPlacement,
        [
            TransceiverPlacement(transceiver=u, cage=c, installed_at=now, installed_by=actor, notes=reason)
            for u, (c, _, _) in zip(units, rows, strict=True)
        ],
        actor=actor,
        reason=reason,
        now=now,
    )
    return units
