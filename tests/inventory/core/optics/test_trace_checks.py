"""The pure trace checks: wavelength against fibre type, fibre end against the recorded length
(the tolerance stated), and events matched to the baseline's by distance."""

import pytest

from inventory.core.optics.budgets import TraceEvent
from inventory.core.optics.trace_checks import (
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
