"""Link qualification of sealed DAC/ACC/AOC cables: EEPROM identity, speed and width, BER soak."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from inventory.conf import app_settings
from inventory.core.choices import FEC_LIMITS, CableKind, FecType, TestKind, Verdict
from inventory.models import Cable, CableTest, Link
from inventory.services.testing.dates import test_date_problem
from inventory.services.testing.findings import after_test

#: The longest BER soak a qualification records, in minutes: a week (7 x 24 x 60). Soaks run for
#: minutes to a few days; a longer one is a typo or seconds given for minutes, and a value such as
#: 1e308 would be recorded as a soak that passed.
SOAK_MINUTES_MAX = 10_080
SOAK_MINUTES_RULE = f"Give the soak's length in minutes: a number from 0 to {SOAK_MINUTES_MAX:,} (a week)."


def soak_minutes_problem(minutes) -> str | None:
    """Why ``minutes`` cannot be a qualification's soak length, or None: every entry point asks it
    (the API's field takes its bounds and words, ``link_qualify`` asks it again for any caller)."""
    if (
        isinstance(minutes, bool)
        or not isinstance(minutes, int | float)
        or not math.isfinite(minutes)
        or not 0 <= minutes <= SOAK_MINUTES_MAX
    ):
        return SOAK_MINUTES_RULE
    return None


@dataclass
class QualificationInput:
    """What was observed on the running link. The telemetry helper will fill these in."""

    serial_a: str = ""
    serial_b: str = ""
    part_number: str = ""
    link_up: bool = False
    speed_gbps: int | None = None
    lanes: int | None = None
    pre_fec_ber: float | None = None
    uncorrectable_codewords: int | None = None
    soak_minutes: float = 0
    tested_at: datetime | None = None
    technician: object | None = None


def qualification_check(
    *, cable: Cable, link: Link | None, data: QualificationInput
) -> tuple[str, list[str]]:
    """Pure checks: identity, speed/width, BER soak. Returns (verdict, problems)."""
    problems = []
    recorded = {s for s in (cable.serial_a, cable.serial_b) if s}
    seen = {s for s in (data.serial_a, data.serial_b) if s}
    if not seen:
        problems.append("No EEPROM serial read from the cable ends.")
    elif recorded and seen != recorded:
        problems.append(
            f"EEPROM serial(s) {', '.join(sorted(seen))} do not match the record ({', '.join(sorted(recorded))})."
        )
    if data.part_number and cable.part_number and data.part_number.strip() != cable.part_number.strip():
        problems.append(f"EEPROM part {data.part_number} is not the recorded {cable.part_number}.")
    if not data.link_up:
        problems.append("The link is not up.")
    if link is not None:
        if link.speed_gbps and data.speed_gbps != link.speed_gbps:
            problems.append(f"Link runs at {data.speed_gbps}G, expected {link.speed_gbps}G.")
        if link.lanes and data.lanes != link.lanes:
            problems.append(f"Link runs {data.lanes} lanes wide, expected {link.lanes}.")
    min_soak = app_settings.ber_soak_minutes
    if data.soak_minutes < min_soak:
        problems.append(f"BER soak of {data.soak_minutes:g} min is shorter than the {min_soak} min required.")
    limit = FEC_LIMITS.get(link.fec if link else FecType.KP4, FEC_LIMITS[FecType.KP4]).pre_fec_ber
    if data.pre_fec_ber is None:
        problems.append("No pre-FEC BER from the soak.")
    elif data.pre_fec_ber >= limit:
        problems.append(f"Pre-FEC BER {data.pre_fec_ber:.2e} is at or over the {limit:.1e} limit.")
    if data.uncorrectable_codewords:
        problems.append(f"{data.uncorrectable_codewords} uncorrectable codewords during the soak.")
    return (Verdict.FAIL if problems else Verdict.PASS), problems


@transaction.atomic
def link_qualify(
    *, cable: Cable, data: QualificationInput, link: Link | None = None, now: datetime | None = None
) -> CableTest:
    """Record a link qualification of a sealed DAC/ACC/AOC: a test like any other."""
    now = now or timezone.now()
    if cable.kind not in CableKind.sealed():
        raise ValidationError({"cable": f"{cable.label} is not a DAC/ACC/AOC; fibre gets OLTS and OTDR."})
    if data.tested_at is not None and (
        when := test_date_problem(install_date=cable.install_date, at=data.tested_at, now=now)
    ):
        raise ValidationError({"tested_at": when})
    if soak := soak_minutes_problem(data.soak_minutes):
        raise ValidationError({"soak_minutes": soak})
    if link is None:
        link = Link.objects.filter(active=True, segments__cable=cable).first()
    verdict, problems = qualification_check(cable=cable, link=link, data=data)
    test = CableTest.objects.create(
        cable=cable,
        link=link,
        kind=TestKind.QUALIFICATION,
        tested_at=data.tested_at or now,
        technician=data.technician,
        verdict=verdict,
        warnings=problems,
        details={
            "serial_a": data.serial_a,
            "serial_b": data.serial_b,
            "part_number": data.part_number,
            "link_up": data.link_up,
            "speed_gbps": data.speed_gbps,
            "lanes": data.lanes,
            "pre_fec_ber": data.pre_fec_ber,
            "uncorrectable_codewords": data.uncorrectable_codewords,
            "soak_minutes": data.soak_minutes,
        },
    )
    after_test(test, now=now)
    return test
