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


def test_a_component_budget_records_what_it_was_worked_from():
    assert b.tia_component_budget(fibre="SMF_OS2", wavelength_nm=1310, length_m=45) == b.ComponentBudget(
        2, 0, 45, "OS2", 1310, 1.5225, "2 x 0.75 dB pairs + 0 x 0.3 dB splices + 0.045 km x 0.5 dB/km"
    )
    assert b.tia_component_budget(
        fibre="OM4", wavelength_nm=850, length_m=150, connector_pairs=4, splices=2
    ) == b.ComponentBudget(
        4, 2, 150, "OM4", 850, 4.125, "4 x 0.75 dB pairs + 2 x 0.3 dB splices + 0.150 km x 3.5 dB/km"
    )
    assert b.tia_component_budget(fibre="OS2", wavelength_nm=1550, length_m=2000).breakdown == (
        "2 x 0.75 dB pairs + 0 x 0.3 dB splices + 2.000 km x 0.5 dB/km"
    )
    # kept to a tenth of a millidecibel: 1.5 + 0.0455 km x 0.5 dB/km = 1.52275
    assert b.tia_component_budget(fibre="OS2", wavelength_nm=1310, length_m=45.5).budget_db == 1.5228


def test_a_run_of_no_length_or_no_connectors_still_has_a_budget():
    assert b.tia_component_budget(fibre="OS2", wavelength_nm=1310, length_m=0).budget_db == 1.5
    assert b.tia_component_budget(fibre="OS2", wavelength_nm=1310, length_m=0.5).budget_db == pytest.approx(
        1.50025, abs=1e-4
    )
    # a fusion-spliced run with no connector pair: 2 x 0.3 + 1 km x 0.5
    spliced = b.tia_component_budget(
        fibre="OS2", wavelength_nm=1310, length_m=1000, connector_pairs=0, splices=2
    )
    assert spliced.budget_db == 1.1


@pytest.mark.parametrize(("length", "pairs", "splices"), [(-1, 2, 0), (10, -1, 0), (10, 2, -1)])
def test_any_negative_count_or_length_is_refused(length, pairs, splices):
    with pytest.raises(b.BudgetError) as e:
        b.tia_component_budget(
            fibre="OS2", wavelength_nm=1310, length_m=length, connector_pairs=pairs, splices=splices
        )
    assert str(e.value) == "Length, connector pairs and splices cannot be negative."


def test_attenuation_rows_are_found_within_10_nm():
    assert b.fibre_attenuation("OM4", 860) == 3.5  # 10 nm off the 850 nm row: still that row
    with pytest.raises(b.BudgetError, match="No published attenuation limit for OM4 at 861 nm"):
        b.fibre_attenuation("OM4", 861)
    with pytest.raises(b.BudgetError) as e:
        b.fibre_attenuation("OS1", 1310)
    assert str(e.value) == "No TIA-568.3 attenuation for fibre 'OS1'."


def test_pmd_names_are_read_as_engineers_write_them():
    assert b.pmd_limit("2x 400GBASE-DR4", "OS2").pmd == "800G-2xDR4"
    assert b.pmd_limit("800g-2xdr4", "SMF_OS2").channel_il_db == 3.0
    assert b.pmd_limit(" 400gbase-fr4 ", "OS2").channel_il_db == 4.0


def test_a_single_mode_pmd_with_the_fibre_unknown_takes_its_only_row_and_none_on_multimode():
    assert b.pmd_limit("400GBASE-DR4", "").channel_il_db == 3.0
    assert b.pmd_limit("400GBASE-FR4", "").reach_m == 2000
    assert b.pmd_limit("400GBASE-DR4", "OM4") is None
    assert b.pmd_limit("400GBASE-SR8", "") is None  # multi-mode: which fibre decides the limit
    assert b.pmd_limit("no-such-pmd", "") is None


def test_verdict_at_the_edges_of_its_margins():
    assert b.verdict_for(3.0, 3.0) == b.Verdict(b.MARGINAL, 0.0, 3.0, 3.0)  # at the budget: passes, just
    assert b.verdict_for(2.7, 3.0).verdict == b.PASS  # exactly the 0.3 dB marginal band: pass
    assert b.verdict_for(3.001, 3.0).verdict == b.FAIL
    assert b.verdict_for(1.2345, 3.0).margin_db == 1.766  # to the millidecibel
    assert b.verdict_for(None, 3.0) == b.Verdict(b.UNKNOWN, None, None, 3.0, "no loss")
    assert b.verdict_for(2.0, None) == b.Verdict(b.UNKNOWN, None, 2.0, None, "no budget")


def test_an_unrecognised_verdict_counts_as_unknown():
    assert b.worst(["bogus"]) == b.UNKNOWN
    assert b.worst([b.PASS, "bogus"]) == b.UNKNOWN
    assert b.worst([b.FAIL, "bogus"]) == b.FAIL
    assert b.worst([]) == b.UNKNOWN


def test_a_session_fails_on_a_reflective_fibre_whose_loss_passes():
    """UPC: fibre 2 loses little but reflects -30 dB; the session fails on it, says why, and
    keeps its loss figures."""
    fibres = [
        b.FibreLoss(1, 1310, 0.5, reflectance_db=-50.0),
        b.FibreLoss(2, 1310, 0.6, reflectance_db=-30.0),
    ]
    s = b.evaluate_fibres(fibres, budget_db=1.5, polish="UPC")
    msg = "reflectance -30.0 dB is above the -35 dB UPC limit: suspected dirty or damaged connector"
    assert s == b.SessionVerdict(
        b.FAIL,
        0.6,
        0.9,
        1.5,
        [b.Verdict(b.PASS, 1.0, 0.5, 1.5), b.Verdict(b.FAIL, 0.9, 0.6, 1.5, msg)],
        [f"fibre 2 @1310 nm: {msg}"],
    )


def test_an_apc_warning_does_not_replace_a_marginal_loss_of_the_same_rank():
    fibres = [b.FibreLoss(1, 1310, 1.4, reflectance_db=-50.0)]
    s = b.evaluate_fibres(fibres, budget_db=1.5, polish="APC")
    assert s.per_fibre == [b.Verdict(b.MARGINAL, 0.1, 1.4, 1.5)]
    assert s.warnings == [
        "fibre 1 @1310 nm: reflectance -50.0 dB is above the -55 dB an APC connector should reach: "
        "suspected dirty or damaged connector"
    ]


def test_a_session_uses_its_marginal_band_and_keeps_its_margin_to_the_millidecibel():
    fibres = [b.FibreLoss(1, 1310, 1.0), b.FibreLoss(2, 1310, 1.1), b.FibreLoss(3, 1310, 1.2345)]
    s = b.evaluate_fibres(fibres, budget_db=1.5, marginal_db=0.5)
    assert s.verdict == b.MARGINAL and s.margin_db == 0.266
    # 0.4 dB of margin is marginal in a 0.5 dB band (it passes in the default 0.3 dB one)
    assert [v.verdict for v in s.per_fibre] == [b.PASS, b.MARGINAL, b.MARGINAL]


def test_a_session_without_readings_or_without_a_budget_is_unknown():
    empty = b.evaluate_fibres([], budget_db=1.5)
    assert (empty.verdict, empty.loss_db, empty.margin_db) == (b.UNKNOWN, None, None)
    nobudget = b.evaluate_fibres([b.FibreLoss(1, 1310, 0.5)], budget_db=None)
    assert (nobudget.verdict, nobudget.loss_db, nobudget.margin_db) == (b.UNKNOWN, 0.5, None)


def test_reflectance_exactly_at_the_limit_passes_and_the_messages_say_why():
    assert b.reflectance_verdict(-35.0, "UPC") == (b.PASS, "")
    assert b.reflectance_verdict(-55.0, "APC") == (b.PASS, "")
    assert b.reflectance_verdict(None, "UPC") == (b.UNKNOWN, "")
    assert b.reflectance_verdict(-34.0, "") == (
        b.FAIL,
        "reflectance -34.0 dB is above the -35 dB UPC limit: suspected dirty or damaged connector",
    )
    assert b.reflectance_verdict(-54.5, "APC") == (
        b.MARGINAL,
        "reflectance -54.5 dB is above the -55 dB an APC connector should reach: "
        "suspected dirty or damaged connector",
    )


def test_events_half_a_metre_apart_are_the_same_event():
    assert b.same_place(20.0, 20.5)
    assert not b.same_place(20.0, 20.6)
    assert b.same_place(1000.0, 1005.0)  # 0.5% of the distance further out


def test_a_bend_is_named_with_both_losses_and_needs_a_twin_at_the_same_place():
    at1550 = [E(0, "reflective", None, -50), E(1011, loss=0.80), E(2000, "end", 1.2, -20)]
    at1310 = [E(0, "reflective", None, -50), E(500, loss=0.75), E(2000, "end", 0.9, -20)]
    # the 1310 nm event at 500 m is no twin of 1011 m: the bend is 0.80 dB against nothing; the
    # fibre end losing more at 1550 nm is no bend, and an event without loss is passed over
    assert b.bends(at1310, at1550) == [
        b.Finding("bend", 1011, "Suspected bend at 1011.0 m: 0.80 dB at 1550 nm against 0.00 dB at 1310 nm.")
    ]
    assert [f.distance_m for f in b.bends([], at1550)] == [1011]  # no 1310 nm trace at all
    twin_without_loss = [E(1010, loss=None)]
    assert [f.distance_m for f in b.bends(twin_without_loss, at1550)] == [1011]
    assert [f.distance_m for f in b.bends([E(1010, loss=0.0)], at1550)] == [1011]


def test_a_bend_of_exactly_a_tenth_of_a_db_is_a_bend_whatever_the_readings():
    """0.35 - 0.25 is 0.0999...98 in floating point: it was no bend, while 0.45 against 0.35 was."""
    assert len(b.bends([E(1010, loss=0.25)], [E(1011, loss=0.35)])) == 1
    assert b.bends([E(1010, loss=0.25)], [E(1011, loss=0.34)]) == []
    fibres = [b.FibreLoss(1, 1310, 0.25), b.FibreLoss(1, 1550, 0.35), b.FibreLoss(2, 1310, 0.85)]
    fibres += [b.FibreLoss(2, 1550, 0.94)]
    assert b.bend_from_olts(fibres) == [
        "fibre 1: 0.35 dB at 1550 nm against 0.25 dB at 1310 nm: suspected bend"
    ]


def test_dirty_connector_findings_by_polish_and_saturation():
    events = [
        E(0, "reflective", 0, -60),
        E(30, "reflective", 0.4, -30),
        E(45, "saturated", 0.3, -40),  # clipped: the true reflection is higher than read
        E(50, "saturated", 0.3, None),  # nothing read: nothing to report
        E(80, "end", 0, -14),
    ]
    assert b.dirty_connectors(events, polish="UPC") == [
        b.Finding(
            "dirty_connector",
            30,
            "Suspected dirty or damaged connector at 30.0 m: reflectance -30.0 dB is above the -35 dB "
            "UPC limit: suspected dirty or damaged connector",
        ),
        b.Finding(
            "dirty_connector",
            45,
            "Suspected dirty or damaged connector at 45.0 m: saturated reflection -40.0 dB",
        ),
    ]
    apc = [E(0, "reflective", 0, -60), E(30, "reflective", 0.2, -50), E(80, "end", 0, -14)]
    assert [f.distance_m for f in b.dirty_connectors(apc, polish="APC")] == [30]
    assert b.dirty_connectors(apc, polish="UPC") == []


def test_which_new_events_count_and_what_they_say():
    base = [E(0, "reflective", 0, -55), E(80, "end", 0, -20)]
    retest = [
        E(0, "reflective", 0, -55),
        E(10, loss=None),  # non-reflective, no loss: noise
        E(20, loss=0.05),  # under 0.1 dB: noise
        E(30, loss=0.1),  # 0.1 dB: counts
        E(40, "reflective", 0.0, -50),  # a new connector counts whatever its loss
        E(50, "saturated", None, -20),
        E(60, "end", 0.5, -14),  # the fibre now ends short: the length check says so, not this
    ]
    assert [f.message for f in b.new_events(base, retest)] == [
        "New non-reflective event at 30.0 m (0.10 dB) that the baseline trace did not have.",
        "New reflective event at 40.0 m (0.00 dB) that the baseline trace did not have.",
        "New saturated event at 50.0 m that the baseline trace did not have.",
    ]


def test_a_distance_on_a_joint_belongs_to_the_cable_before_it():
    path = [("J1", 3.0, "pp-a:Front 1"), ("T1", 60.0, "pp-b:Front 1"), ("J2", 5.0, "leaf")]
    assert b.locate(3.0, path) == "in J1, 3.0 m from its start (before pp-a:Front 1)"
    assert b.locate(65.0, path) == "in J2, 2.0 m from its start (before leaf)"
    assert b.locate(70.0, path) == "past the recorded path (68.0 m)"


def test_a_stored_event_reads_back_whole_or_with_its_missing_fields_empty():
    d = {"distance_m": "52.5", "kind": "reflective", "loss_db": 0.6, "reflectance_db": -45.0}
    assert b.TraceEvent.from_dict(d) == b.TraceEvent(52.5, "reflective", 0.6, -45.0)
    assert b.TraceEvent.from_dict({"distance_m": 5}) == b.TraceEvent(5.0, "", None, None)
