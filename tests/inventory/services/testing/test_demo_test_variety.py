"""The demo carries what the OTDR and gate checks need: multi-mode, UPC-polished runs tested at
850 and 1300 nm, single-mode trunks tested at 1310 and 1550 nm, and a bend and a dirty
connector in the test history."""

from datetime import date

import pytest

from inventory.core.choices import CableKind, Polish, Verdict
from inventory.core.choices import TestKind as Kind
from inventory.models import CableEnd, CableTest, FibreResult, Link, Transceiver
from inventory.selectors.testing.results import link_verdicts
from inventory.services.demo.seed import demo_seed

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo():
    return demo_seed(gpus=64, seed=3, as_of=date(2026, 11, 29))


def test_the_demo_has_multimode_upc_runs_with_sr4_modules_and_a_judged_channel(demo):
    om4 = CableEnd.objects.filter(cable__kind=CableKind.MMF_OM4)
    assert om4.exists() and set(om4.values_list("polish", flat=True)) == {Polish.UPC}
    cages = set(om4.values_list("cage_id", flat=True))
    modules = Transceiver.objects.filter(cage_id__in=cages)
    assert modules.count() == len(cages) and {m.model.pmd for m in modules} == {"200GBASE-SR4"}
    assert {m.model.polish for m in modules} == {Polish.UPC}
    wls = set(
        FibreResult.objects.filter(test__cable__kind=CableKind.MMF_OM4).values_list(
            "wavelength_nm", flat=True
        )
    )
    assert wls == {850, 1300}
    link = Link.objects.filter(pmd="200GBASE-SR4").first()
    lv = link_verdicts(links=[link])[link.pk]
    assert lv.channel_limit_db == 1.9 and lv.pmd_verdict in (Verdict.PASS, Verdict.MARGINAL)


def test_the_demo_trunks_are_tested_at_both_wavelengths_with_a_bend_and_a_dirty_connector(demo):
    trunk_wls = set(
        FibreResult.objects.filter(test__cable__role="trunk").values_list("wavelength_nm", flat=True)
    )
    assert trunk_wls == {1310, 1550}
    otdr = CableTest.objects.filter(kind=Kind.OTDR)
    bends = [t for t in otdr if any("Suspected bend" in w for w in t.warnings)]
    dirty = [
        t for t in otdr.filter(is_baseline=True) if any("dirty or damaged connector" in w for w in t.warnings)
    ]
    assert bends and dirty
    bend = bends[0].details["bend"]
    olts = CableTest.objects.get(cable=bends[0].cable, kind=Kind.OLTS, tested_at=bends[0].tested_at)
    assert any("suspected bend" in w for w in olts.warnings)
    at_1550 = olts.fibres.get(fibre=bend["fibre"], wavelength_nm=1550).loss_db
    at_1310 = olts.fibres.get(fibre=bend["fibre"], wavelength_nm=1310).loss_db
    assert at_1550 - at_1310 >= 0.1 and olts.verdict in (Verdict.PASS, Verdict.MARGINAL)
    assert dirty[0].verdict == Verdict.MARGINAL  # an APC connector above -55 dB: warn
