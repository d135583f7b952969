"""End-face inspections (IEC 61300-3-35) of a cable end or a port, with an optional photo."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime

from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from inventory.conf import app_settings
from inventory.core.choices import TestKind, Verdict
from inventory.models import Cable, CableEnd, CableTest, Inspection, Port
from inventory.services.testing.dates import test_date_problem

IEC_ZONES = ("core", "cladding", "adhesive", "contact")
PHOTO_TYPES = {b"\xff\xd8\xff": "jpg", b"\x89PNG": "png"}


@dataclass(frozen=True)
class EndInspection:
    """What was seen at one cable end, for ``cable_inspect_ends``."""

    end: CableEnd
    passed: bool
    zones: dict = field(default_factory=dict)
    cleaned: bool = False
    photo: bytes | None = None


def _problems(*, cable, end, port, passed, zones, photo, inspected_at, now) -> tuple[dict[str, str], str]:
    """Field errors of one inspection, and the storage name its photo will take."""
    errors: dict[str, str] = {}
    if end is None and port is None:
        errors["end"] = "Choose the cable end or the port you inspected."
    if end is not None and cable is not None and end.cable_id != cable.pk:
        errors["end"] = f"That end does not belong to {cable.label}."
    bad = [z for z in zones if z not in IEC_ZONES]
    if bad:
        errors["zones"] = (
            f"Unknown zone(s) {', '.join(bad)}; IEC 61300-3-35 zones are {', '.join(IEC_ZONES)}."
        )
    if zones and passed and any(v in ("fail", False) for v in zones.values()):
        errors["passed"] = "A zone failed, so the inspection cannot pass."
    if inspected_at is not None:
        tested = cable or (end.cable if end else None)
        when = test_date_problem(
            install_date=tested.install_date if tested else None, at=inspected_at, now=now
        )
        if when:
            errors["inspected_at"] = when
    photo_name = ""
    if photo:
        ext = next((e for m, e in PHOTO_TYPES.items() if photo.startswith(m)), None)
        if ext is None:
            errors["photo"] = "The photo must be a JPEG or PNG image."
        elif len(photo) > app_settings.photo_max_bytes:
            errors["photo"] = "The photo is too large."
        else:
            photo_name = f"inspections/{now:%Y/%m}/{uuid.uuid4().hex}.{ext}"
    return errors, photo_name


def _store(*, end, port, test, at, technician, passed, zones, cleaned, photo, photo_name) -> Inspection:
    insp = Inspection.objects.create(
        cable_end=end,
        port=port,
        test=test,
        inspected_at=at,
        technician=technician,
        passed=passed,
        zones=zones,
        cleaned=cleaned,
        photo=photo_name,
    )
    if photo_name:
        saved = default_storage.save(photo_name, ContentFile(photo))
        if saved != photo_name:
            insp.photo = saved
            insp.save(update_fields=["photo"])
    return insp


@transaction.atomic
def cable_inspect(
    *,
    cable: Cable | None = None,
    end: CableEnd | None = None,
    port: Port | None = None,
    passed: bool,
    zones: dict | None = None,
    cleaned: bool = False,
    photo: bytes | None = None,
    technician=None,
    inspected_at: datetime | None = None,
    now: datetime | None = None,
) -> Inspection:
    """Record an IEC 61300-3-35 end-face inspection of a cable end or a port (module socket,
    panel port). ``zones`` maps core/cladding/adhesive/contact to pass/fail."""
    now = now or timezone.now()
    zones = zones or {}
    errors, photo_name = _problems(
        cable=cable,
        end=end,
        port=port,
        passed=passed,
        zones=zones,
        photo=photo,
        inspected_at=inspected_at,
        now=now,
    )
    if errors:
        raise ValidationError(errors)
    cable = cable or (end.cable if end else None)
    test = None
    if cable is not None:
        test = CableTest.objects.create(
            cable=cable,
            kind=TestKind.INSPECTION,
            tested_at=inspected_at or now,
            technician=technician,
            verdict=Verdict.PASS if passed else Verdict.FAIL,
            details={"end": str(end) if end else "", "port": str(port) if port else "", "cleaned": cleaned},
        )
    return _store(
        end=end,
        port=port,
        test=test,
        at=inspected_at or now,
        technician=technician,
        passed=passed,
        zones=zones,
        cleaned=cleaned,
        photo=photo,
        photo_name=photo_name,
    )


@transaction.atomic
def cable_inspect_ends(
    *,
    cable: Cable,
    inspections: list[EndInspection],
    technician=None,
    inspected_at: datetime | None = None,
    now: datetime | None = None,
) -> CableTest:
    """Inspect several ends of one cable in one visit (both ends of a jumper, every leg of a
    breakout): one inspection test whose verdict is the worst end's (a failed A is never hidden by
    the B recorded after it), one ``Inspection`` per end. All or nothing: an error at any end
    (named: "End B: the photo must be ...") writes nothing."""
    now = now or timezone.now()
    if not inspections:
        raise ValidationError({"end": "Choose pass or fail for at least one end."})
    errors: list[str] = []
    names: list[str] = []
    for i in inspections:
        name = f"{i.end.side}{i.end.leg or ''}"
        problems, photo_name = _problems(
            cable=cable,
            end=i.end,
            port=None,
            passed=i.passed,
            zones=i.zones,
            photo=i.photo,
            inspected_at=inspected_at,
            now=now,
        )
        errors += [f"End {name}: {msg}" for msg in problems.values()]
        names.append(photo_name)
    if errors:
        raise ValidationError(errors)
    passed = all(i.passed for i in inspections)
    test = CableTest.objects.create(
        cable=cable,
        kind=TestKind.INSPECTION,
        tested_at=inspected_at or now,
        technician=technician,
        verdict=Verdict.PASS if passed else Verdict.FAIL,
        details={
            "ends": {f"{i.end.side}{i.end.leg or ''}": "pass" if i.passed else "fail" for i in inspections},
            "end": ", ".join(str(i.end) for i in inspections),
            "cleaned": any(i.cleaned for i in inspections),
        },
    )
    for i, photo_name in zip(inspections, names, strict=True):
        _store(
            end=i.end,
            port=None,
            test=test,
            at=inspected_at or now,
            technician=technician,
            passed=i.passed,
            zones=i.zones,
            cleaned=i.cleaned,
            photo=i.photo,
            photo_name=photo_name,
        )
    return test
