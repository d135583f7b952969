"""SOR parsing: every shared real file parses (figures agree with its own key events) or is
refused with a clear reason; bad files are refused in words; fuzzed bytes never crash."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inventory.core.optics import budgets
from inventory.core.optics.sor.data import SorError
from inventory.core.optics.sor.parse import parse_sor
from inventory.core.optics.sor.sniff import sniff
from tests.paths import TEST_DATA
from tests.sor_builder import build_v1

HERE = Path(__file__).resolve()
LOCAL = TEST_DATA / "sor"


def shared_sor_dir() -> Path:
    """../shared/data/sor, found from the checkout (worktrees sit deeper than main)."""
    env = os.environ.get("CABLETRACK_SHARED_SOR")
    candidates = [Path(env)] if env else []
    candidates += [p / "shared" / "data" / "sor" for p in HERE.parents]
    candidates.append(Path("/work/shared/data/sor"))
    for c in candidates:
        if (c / "MANIFEST.md").exists():
            return c
    raise AssertionError("shared/data/sor not found; set CABLETRACK_SHARED_SOR")


# From shared/data/sor/MANIFEST.md: version, nm, pulse ns, date, length m, events, total, ORL.
MANIFEST = {
    "hp-e6000a_1310_sorv1_demo_ab.sor": ("1.x", 1310, 1000, date(1998, 2, 5), 50_700, 5, None, None),
    "noyes-m200_1310_sorv1_M200_Sample_005_S13.sor": (
        "1.x",
        1310,
        100,
        date(2006, 6, 17),
        3_790,
        5,
        2.564,
        30.3,
    ),
    "optixs-opxotdr_1310_sample1310_lowDR.sor": (
        "2.0",
        1310,
        1000,
        date(2011, 11, 22),
        17_070,
        3,
        6.39,
        32.4,
    ),
    "noyes-ofl280_1550_example1.sor": ("2.0", 1550, 30, date(2019, 9, 30), 3_730, 3, 0.576, 24.5),
    "exfo-max730c_1310_example2.sor": ("2.0", 1310, 10, date(2020, 6, 13), 3_740, 6, 1.912, 19.9),
    "anritsu-mt9090a_1310_example3.sor": ("2.0", 1310, 100, date(2020, 6, 14), 7_980, 3, 3.034, None),
    "exfo-ftbx730c-iolm_1310_example4.sor": ("2.0", 1310, 10, date(2020, 6, 25), 3_630, 9, 2.224, 36.0),
    "exfo-ftbx730c-iolm_1550_example4.sor": ("2.0", 1550, 20, date(2020, 6, 25), 3_630, 9, 1.611, 37.8),
    "viavi-smartotdr_1310_example6.sor": ("2.0", 1310, 30, date(2022, 7, 25), 2_490, 2, None, None),
    "viavi-mts4000_1310_F1_TT07_FO_004_OE.sor": ("2.0", 1310, 30, date(2023, 7, 31), 12_480, 9, None, None),
    "anritsu-cma4500_1625_issue14.sor": ("2.0", 1625, 1000, date(2022, 3, 7), 42_130, 11, 9.345, None),
    "anritsu-mt1000a_1310_0001.sor": ("2.0", 1310, 100, date(2025, 2, 26), 8_820, 6, 3.957, None),
    "exfo-ftbx730c_1550_short62m_FTHNTXAD01_FTHNTXAD06_001.sor": (
        "2.0",
        1550,
        5,
        date(2026, 3, 8),
        62.4,
        5,
        0.318,
        52.5,
    ),
    "exfo-ftbx730c_1550_satrefl_SUIWSC0034.sor": (
        "2.0",
        1550,
        500,
        date(2026, 8, 12),
        66_060,
        15,
        13.3,
        24.9,
    ),
}
# Read although odd: the GenParams language code is not text (00 b8); the rest of the file is sound.
ODD_HEADER = {"anritsu-cma4500_1310_issue15a_badlangcode.sor": "language code is not text (bytes 00 b8)"}


def test_every_shared_file_is_covered():
    names = {p.name for p in shared_sor_dir().glob("*.sor")}
    assert names == set(MANIFEST) | set(ODD_HEADER)


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_shared_file_figures_agree_with_its_key_events(name):
    version, nm, pulse, day, length, n_events, total, orl = MANIFEST[name]
    sor = parse_sor((shared_sor_dir() / name).read_bytes())
    assert sor.version == version
    assert sor.wavelength_nm == nm
    assert sor.pulse_width_ns == pulse
    assert sor.measured_at.date() == day
    assert sor.fibre_length_m == pytest.approx(length, rel=0.005, abs=0.1)
    assert len(sor.events) == n_events
    assert sor.total_loss_db == (pytest.approx(total, abs=0.001) if total else None)
    assert sor.orl_db == (pytest.approx(orl, abs=0.05) if orl else None)
    assert 1.4 < sor.index_of_refraction < 1.5
    assert sor.instrument
    assert len(sor.trace) > 100  # a plot, decimated
    # The end-to-end loss the file claims matches the sum of what its events say where the
    # instrument filled it in (within the fibre's slope contribution): at least not exceeded
    # by the event losses alone.
    inside = budgets._within_fibre([budgets.TraceEvent.from_dict(e) for e in sor.events_as_dicts()])
    if total:
        assert sum(max(e.loss_db or 0, 0) for e in inside if e.kind != "end") <= total + 0.5


@pytest.mark.parametrize("name", sorted(ODD_HEADER))
def test_odd_header_bytes_are_tolerated_when_the_rest_of_the_file_is_sound(name):
    sor = parse_sor((shared_sor_dir() / name).read_bytes())
    assert any(ODD_HEADER[name] in w for w in sor.warnings)
    assert sor.make == "Anritsu" and sor.wavelength_nm == 1310 and len(sor.events) == 21
    assert sor.checksum.ok is True  # the checksum covers the original bytes, odd code included


def test_odd_header_bytes_on_a_damaged_file_still_refuse_it():
    data = bytearray((shared_sor_dir() / "anritsu-cma4500_1310_issue15a_badlangcode.sor").read_bytes())
    _, blocks, _ = sniff(bytes(data))
    ke = next(b for b in blocks if b.name == "KeyEvents")
    data[ke.offset : ke.offset + 9] = b"XXXXXXXXX"  # the key events' header overwritten
    with pytest.raises(SorError) as exc:
        parse_sor(bytes(data))
    assert "language code is not text (bytes 00 b8)" in exc.value.reason
    assert "does not read with it set aside either" in exc.value.reason


def test_noyes_v1_connector_event_fails_the_connector_limit():
    sor = parse_sor((shared_sor_dir() / "noyes-m200_1310_sorv1_M200_Sample_005_S13.sor").read_bytes())
    e = sor.events[1]
    assert e.distance_m == pytest.approx(91, abs=1)
    assert e.loss_db == pytest.approx(0.79, abs=0.01)
    assert e.reflectance_db == pytest.approx(-38.5, abs=0.1)
    assert e.loss_db > budgets.TIA_CONNECTOR_PAIR_DB


def test_int32_sentinel_reflectance_is_no_value():
    sor = parse_sor((shared_sor_dir() / "anritsu-mt1000a_1310_0001.sor").read_bytes())
    assert all(e.reflectance_db is None or e.reflectance_db > -200 for e in sor.events)
    assert any(e.reflectance_db is None for e in sor.events)


def test_negative_first_event_of_a_user_offset_is_kept():
    sor = parse_sor(
        (shared_sor_dir() / "exfo-ftbx730c_1550_short62m_FTHNTXAD01_FTHNTXAD06_001.sor").read_bytes()
    )
    assert sor.events[0].distance_m == pytest.approx(-15.3, abs=0.1)
    assert sor.fibre_length_m == pytest.approx(62.4, abs=0.1)


def test_checksum_conventions_match_where_they_can_and_warn_otherwise():
    d = shared_sor_dir()
    ok = parse_sor((d / "viavi-smartotdr_1310_example6.sor").read_bytes())
    assert ok.checksum.ok is True and "zeroed" in ok.checksum.convention
    v1 = parse_sor((d / "hp-e6000a_1310_sorv1_demo_ab.sor").read_bytes())
    assert v1.checksum.ok is True
    exfo = parse_sor((d / "exfo-max730c_1310_example2.sor").read_bytes())
    assert exfo.checksum.ok is None and "EXFO" in exfo.checksum.convention
    assert not any("Checksum" in w for w in exfo.warnings)
    data = bytearray((d / "anritsu-mt9090a_1310_example3.sor").read_bytes())
    data[20_000] ^= 0x01  # one bit of the trace
    bad = parse_sor(bytes(data))
    assert bad.checksum.ok is False
    assert any("Checksum mismatch" in w for w in bad.warnings)


def test_1310_1550_pair_of_the_same_fibre_shows_no_bend():
    d = shared_sor_dir()
    a = parse_sor((d / "exfo-ftbx730c-iolm_1310_example4.sor").read_bytes())
    b = parse_sor((d / "exfo-ftbx730c-iolm_1550_example4.sor").read_bytes())
    ev = [budgets.TraceEvent.from_dict(e) for e in a.events_as_dicts()]
    ev2 = [budgets.TraceEvent.from_dict(e) for e in b.events_as_dicts()]
    assert budgets.bends(ev, ev2) == []


def test_saturated_reflection_and_upc_connector_are_flagged_dirty():
    d = shared_sor_dir()
    sat = parse_sor((d / "exfo-ftbx730c_1550_satrefl_SUIWSC0034.sor").read_bytes())
    found = budgets.dirty_connectors(
        [budgets.TraceEvent.from_dict(e) for e in sat.events_as_dicts()], polish="UPC"
    )
    assert [round(f.distance_m) for f in found] == [1004]
    upc = parse_sor((d / "exfo-max730c_1310_example2.sor").read_bytes())
    found = budgets.dirty_connectors(
        [budgets.TraceEvent.from_dict(e) for e in upc.events_as_dicts()], polish="UPC"
    )
    assert [round(f.distance_m) for f in found] == [150]
    assert "-34.8 dB" in found[0].message


# --- bad files ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"", "empty"),
        (b"<!DOCTYPE html><html><head><title>x</title></head><body>404</body></html>", "web page"),
        (b"\n  <html><body>Login</body></html>", "web page"),
        (b"%PDF-1.7\n" + b"x" * 100, "PDF"),
        (b"PK\x03\x04" + b"\0" * 100, "zip"),
        (b"hello, this is plain text and certainly not an OTDR trace at all", "not a Bellcore"),
        (b"Map\0", "too short"),
    ],
)
def test_bad_files_are_refused_in_words(data, words):
    with pytest.raises(SorError) as exc:
        parse_sor(data)
    assert words.lower() in exc.value.reason.lower()


def test_truncated_file_says_truncated():
    data = (LOCAL / "anritsu-mt9090a_1310_example3.sor").read_bytes()
    with pytest.raises(SorError) as exc:
        parse_sor(data[: len(data) // 2])
    assert "truncated" in exc.value.reason


def test_oversized_file_is_refused_before_parsing():
    data = (LOCAL / "anritsu-mt9090a_1310_example3.sor").read_bytes()
    with pytest.raises(SorError) as exc:
        sniff(data, max_bytes=10_000)
    assert "over the 10,000-byte limit" in exc.value.reason


def test_impossible_values_are_refused():
    with pytest.raises(SorError) as exc:
        parse_sor(build_v1(index=40.0))
    assert "index of refraction" in exc.value.reason


def test_synthetic_v1_round_trips():
    sor = parse_sor(
        build_v1(
            events=[
                (0.0, 0.0, -55.0, "1F9999LS"),
                (35.0, 0.3, None, "0F9999LS"),
                (80.0, 0.0, -20.0, "1E9999LS"),
            ]
        )
    )
    assert sor.version == "1.x"
    assert [round(e.distance_m, 1) for e in sor.events] == [0.0, 35.0, 80.0]
    assert sor.fibre_length_m == pytest.approx(80.0, abs=0.05)
    assert sor.checksum.ok is True


# --- fuzz: random and mutated bytes never crash or hang (bounded examples) -------------------

SEEDS = [(LOCAL / "anritsu-mt9090a_1310_example3.sor").read_bytes(), build_v1()]


def _parse_or_refuse(data: bytes) -> None:
    reason = None
    try:
        sor = parse_sor(data)
    except SorError as exc:
        reason = exc.reason
    if reason is None:
        assert sor.version in ("1.x", "2.0")
    else:
        assert isinstance(reason, str) and reason


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=4096))
def test_random_bytes_parse_or_refuse(data):
    _parse_or_refuse(data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.sampled_from(range(len(SEEDS))),
    edits=st.lists(st.tuples(st.integers(min_value=0, max_value=60_000), st.integers(0, 255)), max_size=12),
    cut=st.one_of(st.none(), st.integers(min_value=0, max_value=60_000)),
)
def test_mutated_sor_bytes_parse_or_refuse(seed, edits, cut):
    data = bytearray(SEEDS[seed])
    for pos, value in edits:
        if data:
            data[pos % len(data)] = value
    if cut is not None:
        data = data[: cut % (len(data) + 1)]
    _parse_or_refuse(bytes(data))


def test_the_fibre_length_follows_the_files_own_summary_not_the_end_event():
    """Noyes OFL280: the KeyEvents summary ends the fibre 0.14 m after the end event."""
    sor = parse_sor((shared_sor_dir() / "noyes-ofl280_1550_example1.sor").read_bytes())
    end = next(e for e in sor.events if e.kind == "end")
    assert sor.fibre_length_source == "summary"
    assert sor.fibre_length_m - end.distance_m == pytest.approx(0.14, abs=0.005)


def test_a_launch_lead_moves_the_trace_not_the_events():
    """EXFO FTBx-730C, 1,045 m launch lead: the trace's reflection peaks fall on the events."""
    sor = parse_sor(
        (shared_sor_dir() / "exfo-ftbx730c_1550_short62m_FTHNTXAD01_FTHNTXAD06_001.sor").read_bytes()
    )
    assert sor.fibre_start_offset_m == pytest.approx(-1044.87, abs=0.01)
    assert sor.trace[0][0] == pytest.approx(-1044.87, abs=0.01)
    near_zero = [(x, y) for x, y in sor.trace if -3 <= x <= 3]
    peak_x = max(near_zero, key=lambda p: p[1])[0]  # the launch lead's far connector (event 2, 0 m)
    assert abs(peak_x) < 1.0


def test_a_short_link_keeps_its_detail_in_the_plot():
    """EXFO FTBx-735C at 1650 nm: a 15.3 m fibre in a 1.2 km acquisition. Spread evenly, the 600
    plot points would leave it about ten; spent on the fibre, it keeps every sample."""
    sor = parse_sor((TEST_DATA / "real" / "sor" / "exfo-ftbx735c_1650_example5.sor").read_bytes())
    assert sor.fibre_length_m == pytest.approx(15.31, abs=0.01)
    shown = [x for x, _ in sor.trace if 0 <= x <= sor.fibre_length_m]
    assert len(shown) >= sor.fibre_length_m / sor.sample_spacing_m - 1
    assert sor.trace[-1][0] > 1000  # and the rest of the range is still there, coarser
