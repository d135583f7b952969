"""The production gate (what a cable still needs before production) and the latest-test reads
it stands on."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from inventory.core.choices import CableStatus, Verdict
from inventory.core.choices import TestKind as Kind
from inventory.models.base import sanctioned_bulk_write
from inventory.selectors.testing.gate import cable_gate_check
from inventory.selectors.testing.latest import last_passing_tests, latest_tests
from inventory.services.plant import cables as cable_services
from tests.inventory.testing_scenes import NOW, dac_link, olts, os2_jumper, qualify

pytestmark = pytest.mark.django_db


@pytest.fixture
def jumper():
    return os2_jumper()


def test_gate_for_a_sealed_cable_needs_a_passing_qualification():
    cable = dac_link()
    with pytest.raises(ValidationError) as exc:
        cable_services.cable_set_status(cable=cable, status=CableStatus.IN_PRODUCTION, now=NOW)
    assert "link qualification" in exc.value.message_dict["status"][0]
    qualify(cable)
    cable_services.cable_set_status(cable=cable, status=CableStatus.IN_PRODUCTION, now=NOW)
    cable.refresh_from_db()
    assert cable.status == CableStatus.IN_PRODUCTION


def test_gate_of_a_cable_whose_ends_give_no_fibre_count_names_its_fibre_not_all_1_fibres(jumper):
    """A plan row may give an MPO end without its fibre count: one fibre is then all the gate can
    ask for, said as such."""
    with sanctioned_bulk_write():  # a test's shortcut to an incomplete record, not a writer
        jumper.ends.update(fibre_count=None)
    assert cable_gate_check(cable=jumper, now=NOW) == ["a power-meter (OLTS) test of its fibre"]


def test_gate_for_fibre_says_exactly_what_is_missing(jumper):
    # short jumper: OTDR exempt (dead zone); needs OLTS on all 8 fibres
    assert cable_gate_check(cable=jumper, now=NOW) == ["a power-meter (OLTS) test of all 8 fibres"]
    olts(jumper, [0.3] * 6)
    assert cable_gate_check(cable=jumper, now=NOW) == ["power-meter results on all 8 fibres (only 6 pass)"]
    olts(jumper, [0.3] * 7 + [2.0])
    assert "the last one, 1 Nov 2026, failed" in cable_gate_check(cable=jumper, now=NOW)[0]
    olts(jumper, [0.3] * 8, when=NOW + timedelta(minutes=1))
    assert cable_gate_check(cable=jumper, now=NOW) == []
    later = NOW + timedelta(days=120)
    assert "newer than 90 days" in cable_gate_check(cable=jumper, now=later)[0]
    # long cable: an OTDR is needed too
    jumper.length_m = Decimal("45")
    jumper.save()
    with pytest.raises(ValidationError) as exc:
        cable_services.cable_set_status(cable=jumper, status=CableStatus.IN_PRODUCTION, now=NOW)
    assert exc.value.message_dict["status"] == ["J-1 cannot go into production: it needs an OTDR trace."]


def test_last_passing_tests_is_one_query_for_many_cables(jumper, django_assert_num_queries):
    olts(jumper, [0.3] * 8, when=NOW - timedelta(days=10))
    olts(jumper, [3.0] * 8, when=NOW)  # failing: not "passing"
    cable = dac_link()
    with django_assert_num_queries(1):
        got = last_passing_tests(cable_ids=[jumper.pk, cable.pk])
    assert got == {jumper.pk: {Kind.OLTS: NOW - timedelta(days=10)}}
    latest = latest_tests(cable_ids=[jumper.pk])
    assert latest[jumper.pk][Kind.OLTS].verdict == Verdict.FAIL
