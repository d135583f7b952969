"""Loss budgets against hand-worked examples, verdicts, and the trace heuristics."""

import pytest

from inventory.core.optics import budgets as b


def test_tia_component_budget_trunk_hand_worked():
    # 45 m OS2 trunk between two panels at 1310 nm: 2 x 0.75 + 0.045 km x 0.5 dB/km = 1.5225 dB
    cb = b.tia_component_budget(fibre="SMF_OS2", wavelength_nm=1310, length_m=45, connector_pairs=2)
    assert cb.budget_db == pytest.approx(1.5225, abs=1e-3)
    assert "0.75 dB pairs" in cb.breakdown


def test_tia_component_budget_multimode_with_splices():
    # 150 m OM4 at 850 nm, 4 pairs, 2 splices: 3.0 + 0.6 + 0.15 x 3.5 = 4.125 dB
    cb = b.tia_component_budget(fibre="OM4", wavelength_nm=850, length_m=150, connector_pairs=4, splices=2)
    assert cb.budget_db == pytest.approx(4.125)
    # the same at 1300 nm: 3.0 + 0.6 + 0.15 x 1.5 = 3.825 dB
    cb = b.tia_component_budget(fibre="OM4", wavelength_nm=1300, length_m=150, connector_pairs=4, splices=2)
    assert cb.budget_db == pytest.approx(3.825)


def test_no_attenuation_for_an_unknown_wavelength():
    with pytest.raises(b.BudgetError):
        b.tia_component_budget(fibre="OM4", wavelength_nm=1550, length_m=10)


@pytest.mark.parametrize("nm", [1310, 1383, 1490, 1550, 1625])
def test_single_mode_is_judged_at_every_traffic_wavelength_against_the_os2_row(nm):
    # G.652.D: at most 0.40 dB/km over 1310-1625 nm, inside the OS2 row's 0.5 dB/km
    cb = b.tia_component_budget(fibre="SMF_OS2", wavelength_nm=nm, length_m=2000)
    assert cb.budget_db == pytest.approx(1.5 + 2 * 0.5)


def test_1650_nm_monitoring_has_no_published_limit_and_is_not_the_1625_row():
    with pytest.raises(b.BudgetError, match="No published attenuation limit for OS2 at 1650 nm"):
        b.tia_component_budget(fibre="SMF_OS2", wavelength_nm=1650, length_m=2000)


@pytest.mark.parametrize(
    ("pmd", "fibre", "limit"),
    [
        ("400GBASE-DR4", "OS2", 3.0),
        ("400GBASE-FR4", "SMF_OS2", 4.0),
        ("400GBASE-SR8", "OM3", 1.8),
        ("400GBASE-SR8", "OM4", 1.9),
        ("400GBASE-SR4.2", "OM3", 1.7),
        ("400GBASE-SR4.2", "OM4", 1.8),
        ("400GBASE-SR4.2", "OM5", 2.0),
        ("100GBASE-SR4", "MMF_OM4", 1.9),
        ("100GBASE-DR", "OS2", 3.0),
        ("800GBASE-DR8", "OS2", 3.0),
        ("2x400GBASE-DR4", "OS2", 3.0),
        ("800GBASE-SR8", "OM4", 1.9),
        ("HDR-SR4", "OM4", 1.9),
        ("NDR-DR4", "OS2", 3.0),
    ],
)
def test_pmd_channel_limits(pmd, fibre, limit):
    lim = b.pmd_limit(pmd, fibre)
    assert lim is not None and lim.channel_il_db == limit
    assert lim.source


def test_unpublished_or_wrong_fibre_has_no_limit():
    assert b.pmd_limit("NDR-SR4", "OM4").channel_il_db is None
    assert b.pmd_limit("400GBASE-SR8", "OS2") is None


def test_link_passes_tia_and_fails_its_pmd():
    """SR8 on OM4: a 90 m trunk passes its TIA budget, but with two 0.4 dB cords the channel
    (1.65 + 0.8 = 2.45 dB) is over 400GBASE-SR8's 1.9 dB."""
    trunk = b.tia_component_budget(fibre="OM4", wavelength_nm=850, length_m=90)  # 1.5 + 0.315 = 1.815
    assert b.verdict_for(1.65, trunk.budget_db).verdict == b.MARGINAL  # 0.165 dB margin
    channel = 1.65 + 0.4 + 0.4
    assert b.verdict_for(channel, b.pmd_limit("400GBASE-SR8", "OM4").channel_il_db).verdict == b.FAIL


def test_verdict_margins():
    assert b.verdict_for(2.0, 3.0) == b.Verdict(b.PASS, 1.0, 2.0, 3.0)
    assert b.verdict_for(2.8, 3.0).verdict == b.MARGINAL
    assert b.verdict_for(3.2, 3.0).verdict == b.FAIL
    assert b.verdict_for(3.2, 3.0).margin_db == pytest.approx(-0.2)
    assert b.verdict_for(None, 3.0).verdict == b.UNKNOWN


def test_session_is_its_worst_fibre():
    fibres = [b.FibreLoss(i, 1310, loss) for i, loss in enumerate([0.4, 0.5, 1.4, 0.3], start=1)]
    s = b.evaluate_fibres(fibres, budget_db=1.5)
    assert s.verdict == b.MARGINAL and s.loss_db == 1.4 and s.margin_db == pytest.approx(0.1)


@pytest.mark.parametrize(
    ("refl", "polish", "verdict"),
    [
        (-34.0, "UPC", b.FAIL),
        (-36.0, "UPC", b.PASS),
        (-50.0, "APC", b.MARGINAL),
        (-60.0, "APC", b.PASS),
        (-34.0, "APC", b.MARGINAL),
    ],
)
def test_reflectance_limits_by_polish(refl, polish, verdict):
    assert b.reflectance_verdict(refl, polish)[0] == verdict


def E(d, kind="non-reflective", loss=0.05, refl=None):
    return b.TraceEvent(d, kind, loss, refl)


def test_bend_is_loss_larger_at_1550_than_1310():
    # the JDSU macrobend of the manifest: 0.01 dB at 1310, 0.80 dB at 1550 near 1.01 km
    at1310 = [E(0, "reflective", 0.0, -50), E(1010, loss=0.01), E(2000, "end", 0.0, -20)]
    at1550 = [E(0, "reflective", 0.0, -50), E(1011, loss=0.80), E(2000, "end", 0.0, -20)]
    found = b.bends(at1310, at1550)
    assert len(found) == 1 and found[0].distance_m == 1011
    assert "bend" in found[0].message
    # a splice that loses the same at both wavelengths is not a bend
    assert b.bends([E(500, loss=0.1)], [E(501, loss=0.12)]) == []


def test_bend_from_power_meter_readings():
    fibres = [
        b.FibreLoss(1, 1310, 0.40),
        b.FibreLoss(1, 1550, 0.35),
        b.FibreLoss(2, 1310, 0.40),
        b.FibreLoss(2, 1550, 0.95),
    ]
    warnings = b.bend_from_olts(fibres)
    assert len(warnings) == 1 and warnings[0].startswith("fibre 2")


def test_dirty_connector_ignores_the_fibre_end_and_ghosts():
    events = [
        E(0, "reflective", 0, -55),
        E(30, "reflective", 0.4, -30),
        E(80, "end", 0, -14),
        E(160, "reflective", 0, -30),
    ]
    found = b.dirty_connectors(events, polish="UPC")
    assert [f.distance_m for f in found] == [30]


def test_new_event_against_baseline_and_its_location():
    base = [E(0, "reflective", 0, -55), E(80, "end", 0, -20)]
    retest = [E(0, "reflective", 0, -55), E(52.5, loss=0.6), E(80, "end", 0, -20)]
    found = b.new_events(base, retest)
    assert [f.distance_m for f in found] == [52.5]
    where = b.locate(52.5, [("J1", 3.0, "pp-a:Front 1"), ("T1", 60.0, "pp-b:Front 1"), ("J2", 5.0, "leaf")])
    assert where.startswith("in T1, 49.5 m from its start") and "pp-b" in where
