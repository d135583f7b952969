"""The pure trace checks: wavelength against fibre type, fibre end against the recorded length
(the tolerance stated), and events matched to the baseline's by distance."""

import pytest

from inventory.core.optics.budgets import TraceEvent
from inventory.core.optics.trace_checks import (
    LengthCheck,
    event_changes,
    fibre_end_check,
    wavelength_misfit,
    worsened_events,
)


@pytest.mark.parametrize(
    ("kind", "wl", "fits"),
    [
        ("SMF_OS2", 1310, True),
        ("SMF_OS2", 1550, True),
        ("SMF_OS2", 1625, True),
        ("SMF_OS2", 1490, True),
        ("SMF_OS2", 1650, True),
        ("MMF_OM4", 1650, False),
        ("SMF_OS2", 850, False),
        ("SMF_OS2", 1300, False),
        ("MMF_OM4", 850, True),
        ("MMF_OM4", 1300, True),
        ("MMF_OM4", 1302, True),
        ("MMF_OM4", 1310, False),
        ("MMF_OM3", 1550, False),
        ("MMF_OM3", 953, False),
        ("MMF_OM5", 953, True),
    ],
)
def test_a_wavelength_fits_only_its_medium(kind, wl, fits):
    assert (wavelength_misfit(kind, wl) == "") is fits


def test_the_fibre_end_tolerance_is_location_accuracy_plus_index_share_plus_leads():
    ok = fibre_end_check(
        fibre_end_m=61.0, cable_length_m=59.0, sample_spacing_m=0.2, tolerance_pct=2.0, leads_m=0
    )
    assert ok.ok and ok.tolerance_m == pytest.approx(1 + 0.2 + 1.18)
    far = fibre_end_check(
        fibre_end_m=180.0, cable_length_m=59.0, sample_spacing_m=0.2, tolerance_pct=2.0, leads_m=0
    )
    assert not far.ok and "121.0 m past the cable's recorded 59.0 m" in far.message
    short = fibre_end_check(
        fibre_end_m=40.0, cable_length_m=59.0, sample_spacing_m=0.2, tolerance_pct=2.0, leads_m=0
    )
    assert "short of" in short.message and "a break" in short.message
    leads = fibre_end_check(
        fibre_end_m=180.0, cable_length_m=59.0, sample_spacing_m=0.2, tolerance_pct=2.0, leads_m=125.0
    )
    assert leads.ok
    assert (
        fibre_end_check(
            fibre_end_m=180.0, cable_length_m=None, sample_spacing_m=None, tolerance_pct=2, leads_m=0
        )
        is None
    )


def ev(d, loss, refl=None, kind="reflective"):
    return TraceEvent(d, kind, loss, refl)


def test_an_event_worsens_when_its_loss_more_than_doubles_or_its_reflectance_rises_10_db():
    base = [ev(0, 0, -60), ev(20.0, 0.15, -55), ev(40.0, 0.02, None, "non-reflective"), ev(59, 0, -20, "end")]
    retest = [
        ev(0, 0, -60),
        ev(20.1, 0.45, -44),
        ev(40.0, 0.05, None, "non-reflective"),
        ev(59, 0, -20, "end"),
    ]
    found = worsened_events(base, retest)
    assert [(f.distance_m, f.message) for f in found] == [
        (
            20.1,
            "Event at 20.1 m worsened since the baseline: loss 0.15 -> 0.45 dB, reflectance -55.0 -> -44.0 dB.",
        )
    ]  # 0.02 -> 0.05 dB more than doubled but rose under 0.1 dB: noise
    assert worsened_events(base, base) == []
    new = event_changes(base, [*retest[:3], ev(50.0, 0.3, None, "non-reflective"), retest[3]])
    assert [f.kind for f in new] == ["worsened_event", "new_event"]


def test_the_refusal_names_the_medium_and_its_wavelengths():
    assert wavelength_misfit("SMF_OS2", 850) == (
        "850 nm is not a single-mode test wavelength (1310, 1383, 1490, 1550, 1625, 1650 nm): "
        "the wrong file or the wrong cable"
    )
    assert wavelength_misfit("MMF_OM4", 1550) == (
        "1550 nm is not a multi-mode test wavelength (850, 1300 nm): the wrong file or the wrong cable"
    )
    assert wavelength_misfit("SMF_OS2", None) == ""  # no wavelength in the file: nothing to refuse


@pytest.mark.parametrize(("wl", "fits"), [(1295, True), (1305, True), (1294, False), (1306, False)])
def test_a_wavelength_5_nm_off_its_nominal_still_fits(wl, fits):
    assert (wavelength_misfit("MMF_OM4", wl) == "") is fits


def check(end, length=100.0, *, spacing=0.5, pct=2.0, leads=0.0):
    return fibre_end_check(
        fibre_end_m=end, cable_length_m=length, sample_spacing_m=spacing, tolerance_pct=pct, leads_m=leads
    )


def test_a_fibre_end_exactly_at_the_tolerance_is_where_the_cable_ends():
    """100 m cable: tolerance 1 m + 0.5 m spacing + 2% of 100 m = 3.5 m, either way."""
    assert check(103.5) == LengthCheck(103.5, 100.0, 3.5, "")
    assert check(96.5).ok
    assert check(103.75).message == (
        "the fibre ends at 103.8 m, 3.8 m past the cable's recorded 100.0 m (tolerance 3.5 m: event "
        "location, group index and lay, leads): another cable's trace, or leads left in; not judged"
    )
    assert check(96.25).message == (
        "the fibre ends at 96.2 m, 3.8 m short of the cable's recorded 100.0 m (tolerance 3.5 m: event "
        "location, group index and lay, leads): a break, or another cable's trace; not judged"
    )


def test_the_fibre_end_is_kept_to_the_centimetre_and_the_tolerance_too():
    c = check(61.374, 59.0, spacing=0.333)
    assert (c.fibre_end_m, c.cable_length_m, c.tolerance_m) == (61.37, 59.0, 2.51)  # 1 + 0.333 + 1.18
    # no sample spacing in the file: the tolerance is location accuracy and the index share only
    assert check(60.0, 59.0, spacing=None).tolerance_m == 2.18


def test_a_one_metre_cord_is_checked_and_a_cable_of_no_length_is_not():
    assert check(1.0, 1.0) == LengthCheck(1.0, 1.0, 1.52, "")
    assert check(12.0, 1.0).message.startswith("the fibre ends at 12.0 m, 11.0 m past")
    assert check(12.0, 0.0) is None


def test_loss_worsens_only_when_it_more_than_doubles_and_rises_by_a_tenth_of_a_db():
    base = [ev(0, 0, -60), ev(20.0, 0.2, None, "non-reflective"), ev(59, 0, -20, "end")]

    def worse(after, before=0.2):
        b = [base[0], ev(20.0, before, None, "non-reflective"), base[2]]
        return worsened_events(b, [base[0], ev(20.0, after, None, "non-reflective"), base[2]])

    assert worse(0.4) == []  # exactly doubled: not more than double
    assert [f.message for f in worse(0.41)] == [
        "Event at 20.0 m worsened since the baseline: loss 0.20 -> 0.41 dB."
    ]
    assert worse(0.09, before=0.04) == []  # more than doubled, but only 0.05 dB more
    assert len(worse(0.15, before=0.05)) == 1  # 0.1 dB more (to the reading's resolution): worse
    # a baseline event with no loss: any rise of 0.1 dB or more is worse
    assert [f.message for f in worse(0.5, before=0.0)] == [
        "Event at 20.0 m worsened since the baseline: loss 0.00 -> 0.50 dB."
    ]


def test_reflectance_worsens_from_a_rise_of_exactly_10_db():
    base = [ev(0, 0, -60), ev(20.0, 0.1, -55), ev(59, 0, -20, "end")]
    at = [base[0], ev(20.0, 0.1, -45.0), base[2]]
    assert [f.message for f in worsened_events(base, at)] == [
        "Event at 20.0 m worsened since the baseline: reflectance -55.0 -> -45.0 dB."
    ]
    assert worsened_events(base, [base[0], ev(20.0, 0.1, -45.5), base[2]]) == []


def test_an_unmatched_event_does_not_hide_a_worsened_one_after_it():
    base = [ev(0, 0, -60), ev(40.0, 0.1, -55), ev(59, 0, -20, "end")]
    retest = [ev(0, 0, -60), ev(30.0, 0.4, None, "non-reflective"), ev(40.0, 0.5, -55), ev(59, 0, -20, "end")]
    assert [f.distance_m for f in worsened_events(base, retest)] == [40.0]
    assert [(f.kind, f.distance_m) for f in event_changes(base, retest)] == [
        ("new_event", 30.0),
        ("worsened_event", 40.0),
    ]


def test_a_fibre_end_is_no_event_to_worsen_nor_a_worsened_one():
    """Baseline taken with a receive lead (the far panel's connector at 59 m, the end at 159 m),
    retest without: its end (glass-air, -14 dB) sits on that connector. And the other way round:
    the baseline's end at 59 m is no connector for the retest's receive-lead connector."""
    with_lead = [ev(0, 0, -60), ev(59.0, 0.2, -50), ev(159.0, 0, -14, "end")]
    without = [ev(0, 0, -60), ev(59.2, 0.0, -14, "end")]
    assert worsened_events(with_lead, without) == []
    assert worsened_events(without, [ev(0, 0, -60), ev(59.2, 0.3, -45), ev(159.0, 0, -14, "end")]) == []


def test_changes_are_listed_from_the_launch_end_outwards():
    """The launch connector got dirtier (at 0 m) and a new event appeared at 0.8 m: 0 m first."""
    base = [ev(0, 0, -60), ev(59, 0, -20, "end")]
    retest = [ev(0, 0, -45), ev(0.8, 0.3, None, "non-reflective"), ev(59, 0, -20, "end")]
    assert [(f.kind, f.distance_m) for f in event_changes(base, retest)] == [
        ("worsened_event", 0),
        ("new_event", 0.8),
    ]
