"""Every real OTDR file in ``tests/data/real/sor`` uploaded through ``POST /api/tests/otdr/`` (and
the page): what the product stores, value by value, against an independent reading of the file.

The readings the product is compared with are not the product's:

* SOR 2 files: ``otdrparser`` (a separate pure-Python reader, mjuenema/otdrparser), except the two
  Viavi files it cannot read (a zero-size LnkParams block): those are read here straight from the
  ``otdrs`` structures with the SR-4731 formula (distance = time x c / group index);
* SOR 1 files: pyOTDR's own published dumps (``reference/pyotdr_*-dump.json``);
* and each of these is cross-checked against the shared MANIFEST's figures (otdrs 1.1.1 and pyotdr
  2.1.1 readings) and, for the 1,002 m launch-lead file, against otdrparser's published reading.

Then every file once more with one byte of its trace flipped: the checksum convention of its
maker either catches the change (a warning) or the maker is one whose convention is not
reproducible (EXFO, OptixS) or that writes no checksum (FIBERCLOUD), said as such, never "verified".
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import otdrparser
import otdrs
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from inventory.core.choices import CableKind, DeviceRole, Polarity
from inventory.core.optics.sor.sniff import sniff
from inventory.models import CableTest, OtdrTrace
from tests import factories as f
from tests.paths import TEST_DATA

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("media")]

REAL = TEST_DATA / "real" / "sor"
C = 299_792_458.0


def shared_sor_dir() -> Path:
    env = os.environ.get("CABLETRACK_SHARED_SOR")
    candidates = [Path(env)] if env else []
    candidates += [p / "shared" / "data" / "sor" for p in Path(__file__).resolve().parents]
    candidates.append(Path("/work/shared/data/sor"))
    for c in candidates:
        if (c / "MANIFEST.md").exists():
            return c
    raise AssertionError("shared/data/sor not found; set CABLETRACK_SHARED_SOR")


# Two files of the shared set have no stated licence, so they are read from there, not copied.
UNLICENSED = (
    "exfo-ftbx730c_1550_short62m_FTHNTXAD01_FTHNTXAD06_001.sor",
    "exfo-ftbx730c_1550_satrefl_SUIWSC0034.sor",
)


def path_of(name: str) -> Path:
    return shared_sor_dir() / name if name in UNLICENSED else REAL / name


# The MANIFEST's figures (shared/data/sor/MANIFEST.md) and, for the four files not in it, the other
# readers' figures: instrument maker, nm, pulse ns, date, length km (as printed), events, total loss,
# ORL, fibre-start offset m (None: none), checksum ("verified", or why it is not verifiable).
NOT_EXFO = "not verifiable: EXFO writes a checksum no known convention reproduces"
NOT_OPTIXS = "not verifiable: OptixS writes a checksum no known convention reproduces"
NONE_WRITTEN = "the instrument wrote no checksum (0000)"
FILES = {
    "hp-e6000a_1310_sorv1_demo_ab.sor": (
        "HP",
        1310,
        1000,
        "1998-02-05",
        50.7,
        5,
        None,
        None,
        None,
        "verified",
    ),
    "noyes-m200_1310_sorv1_M200_Sample_005_S13.sor": (
        "Noyes",
        1310,
        100,
        "2006-06-17",
        3.79,
        5,
        2.564,
        30.3,
        None,
        "verified",
    ),
    "optixs-opxotdr_1310_sample1310_lowDR.sor": (
        "OptixS",
        1310,
        1000,
        "2011-11-22",
        17.07,
        3,
        6.39,
        32.4,
        -7.46,
        NOT_OPTIXS,
    ),
    "noyes-ofl280_1550_example1.sor": (
        "Noyes",
        1550,
        30,
        "2019-09-30",
        3.73,
        3,
        0.576,
        24.5,
        None,
        "verified",
    ),
    "exfo-max730c_1310_example2.sor": ("EXFO", 1310, 10, "2020-06-13", 3.74, 6, 1.912, 19.9, None, NOT_EXFO),
    "anritsu-mt9090a_1310_example3.sor": (
        "Anritsu",
        1310,
        100,
        "2020-06-14",
        7.98,
        3,
        3.034,
        None,
        None,
        "verified",
    ),
    "exfo-ftbx730c-iolm_1310_example4.sor": (
        "EXFO",
        1310,
        10,
        "2020-06-25",
        3.63,
        9,
        2.224,
        36.0,
        -151.6,
        NOT_EXFO,
    ),
    "exfo-ftbx730c-iolm_1550_example4.sor": (
        "EXFO",
        1550,
        20,
        "2020-06-25",
        3.63,
        9,
        1.611,
        37.8,
        -151.54,
        NOT_EXFO,
    ),
    "viavi-smartotdr_1310_example6.sor": (
        "Viavi",
        1310,
        30,
        "2022-07-25",
        2.49,
        2,
        None,
        None,
        None,
        "verified",
    ),
    "viavi-mts4000_1310_F1_TT07_FO_004_OE.sor": (
        "Viavi",
        1310,
        30,
        "2023-07-31",
        12.48,
        9,
        None,
        None,
        None,
        "verified",
    ),
    "anritsu-cma4500_1625_issue14.sor": (
        "Anritsu",
        1625,
        1000,
        "2022-03-07",
        42.13,
        11,
        9.345,
        None,
        None,
        "verified",
    ),
    "anritsu-cma4500_1310_issue15a_badlangcode.sor": (
        "Anritsu",
        1310,
        1000,
        "2022-03-07",
        42.28,
        21,
        None,
        None,
        None,
        "verified",
    ),
    "anritsu-mt1000a_1310_0001.sor": (
        "Anritsu",
        1310,
        100,
        "2025-02-26",
        8.82,
        6,
        3.957,
        None,
        None,
        "verified",
    ),
    "exfo-ftbx730c_1550_short62m_FTHNTXAD01_FTHNTXAD06_001.sor": (
        "EXFO",
        1550,
        5,
        "2026-03-08",
        0.0624,
        5,
        0.318,
        52.5,
        -1044.87,
        NOT_EXFO,
    ),
    "exfo-ftbx730c_1550_satrefl_SUIWSC0034.sor": (
        "EXFO",
        1550,
        500,
        "2026-08-12",
        66.06,
        15,
        13.3,
        24.9,
        None,
        NOT_EXFO,
    ),
    # Not in the MANIFEST: otdrparser's published reading (example.sor), otdrparser and otdrs.
    "exfo-max715b_1310_launchlead_example.sor": (
        "EXFO",
        1310,
        10,
        "2015-10-16",
        0.6198,
        4,
        1.054,
        17.452,
        -1002.30,
        NOT_EXFO,
    ),
    "exfo-ftbx735c_1650_example5.sor": (
        "EXFO",
        1650,
        10,
        "2021-07-09",
        0.0153,
        3,
        1.457,
        59.956,
        None,
        NOT_EXFO,
    ),
    "fibercloud-fc3200_1310_otdr1.sor": (
        "FIBERCLOUD",
        1310,
        80,
        "2023-10-29",
        0.2711,
        2,
        None,
        None,
        None,
        NONE_WRITTEN,
    ),
    "fibercloud-fc3200_1310_traceonly_otdr7.sor": (
        "FIBERCLOUD",
        1310,
        30,
        "2023-09-18",
        None,
        0,
        None,
        None,
        None,
        NONE_WRITTEN,
    ),
}


def test_every_real_file_is_read_here():
    assert {p.name for p in REAL.glob("*.sor")} | set(UNLICENSED) == set(FILES)
    assert {p.name for p in shared_sor_dir().glob("*.sor")} <= set(FILES)


# --- the independent readings -----------------------------------------------------------------


@dataclass
class Reading:
    wavelength_nm: float
    pulse_ns: float
    index: float
    stamp: int
    make: str
    model: str
    serial: str
    total_loss_db: float | None = None
    orl_db: float | None = None
    start_m: float | None = None
    length_m: float | None = None
    events: list[tuple[float, float, float | None]] = field(default_factory=list)  # m, dB, dB
    has_event_table: bool = True
    distance_step_m: float = 0.01  # the reading's resolution (pyOTDR prints km to 3 decimals: 1 m)


def no_value(refl: float | None) -> float | None:
    """0, a positive figure, or the INT32 sentinel (-2147483.647) all mean "no reflectance"."""
    return None if refl is None or refl == 0 or refl > 0 or refl < -2000 else refl


def by_otdrparser(path: Path) -> Reading:
    with open(path, "rb") as fp:
        d = otdrparser.parse2(fp)
    sp, fx, gp = d["SupParams"], d["FxdParams"], d["GenParams"]
    r = Reading(
        wavelength_nm=gp["wavelength"],
        pulse_ns=fx["pulse_width"],
        index=fx["index_of_refraction"],
        stamp=fx["date_time"],
        make=sp["supplier_name"].strip(),
        model=(sp["otdr_name"].strip() or sp["module_name"].strip()),
        serial=(sp["otdr_serial_number"].strip() or sp["module_serial_number"].strip()),
    )
    ke = d.get("KeyEvents")
    if ke is None:
        r.has_event_table = False
        return r
    r.total_loss_db = ke["total_loss"] or None
    r.orl_db = ke["optical_return_loss"] or None
    r.start_m = ke["fiber_start_position"] if ke["fiber_start_position"] < 0 else None
    r.length_m = ke["fiber_length"] or None
    # otdrparser reads an event's time of flight as unsigned; SR-4731 stores it signed (EXFO's
    # events inside a launch lead are negative: -750 is -15.3 m, not the 87,592 km it prints).
    wrap = 2**32 * 1e-10 * C / r.index
    r.events = [
        (d - wrap if d > wrap / 2 else d, e["splice_loss"], no_value(e["reflection_loss"]))
        for e in ke["events"]
        for d in (e["distance_of_travel"],)
    ]
    return r


def by_otdrs(path: Path) -> Reading:
    """The otdrs structures, converted here with the SR-4731 formula (Viavi: otdrparser cannot)."""
    s = otdrs.parse_bytes(path.read_bytes())
    fp, sp, ke = s.fixed_parameters, s.supplier_parameters, s.key_events
    n = fp.group_index / 100000.0
    events = [*ke.key_events, ke.last_key_event]
    last = ke.last_key_event
    return Reading(
        wavelength_nm=s.general_parameters.nominal_wavelength,
        pulse_ns=fp.pulse_widths_used[0],
        index=n,
        stamp=fp.date_time_stamp,
        make=sp.supplier_name.strip(),
        model=sp.otdr_mainframe_id.strip() or sp.optical_module_id.strip(),
        serial=sp.otdr_mainframe_sn.strip() or sp.optical_module_sn.strip(),
        total_loss_db=last.end_to_end_loss / 1000 or None,
        orl_db=last.optical_return_loss / 1000 or None,
        length_m=last.end_to_end_marker_position_2 * 1e-10 * C / n or None,
        events=[
            (
                e.event_propogation_time * 1e-10 * C / n,
                e.event_loss / 1000,
                no_value(e.event_reflectance / 1000),
            )
            for e in events
        ],
    )


PYOTDR_DUMPS = {
    "hp-e6000a_1310_sorv1_demo_ab.sor": "pyotdr_demo_ab-dump.json",
    "noyes-m200_1310_sorv1_M200_Sample_005_S13.sor": "pyotdr_M200_Sample_005_S13-dump.json",
}


def by_pyotdr_dump(name: str) -> Reading:
    d = json.loads((REAL / "reference" / PYOTDR_DUMPS[name]).read_text())
    sp, fx, ke = d["SupParams"], d["FxdParams"], d["KeyEvents"]
    events = [ke[f"event {i}"] for i in range(1, ke["num events"] + 1)]
    summary = ke["Summary"]
    return Reading(
        wavelength_nm=float(d["GenParams"]["wavelength"].split()[0]),
        pulse_ns=float(fx["pulse width"].split()[0]),
        index=float(fx["index"]),
        stamp=int(fx["date/time"].split("(")[1].split()[0]),
        make=sp["supplier"].strip(),
        model=sp["OTDR"].strip() or sp["module"].strip(),
        serial=sp["OTDR S/N"].strip() or sp["module S/N"].strip(),
        total_loss_db=summary["total loss"] or None,
        orl_db=summary["ORL"] or None,
        length_m=summary["loss end"] * 1000 or None,
        distance_step_m=1.0,
        events=[
            (float(e["distance"]) * 1000, float(e["splice loss"]), no_value(float(e["refl loss"])))
            for e in events
        ],
    )


@functools.cache
def reading(name: str) -> Reading:
    if name in PYOTDR_DUMPS:
        return by_pyotdr_dump(name)
    if name.startswith("viavi-"):
        return by_otdrs(path_of(name))
    return by_otdrparser(path_of(name))


@pytest.mark.parametrize("name", sorted(FILES))
def test_the_reference_reading_agrees_with_the_manifest(name):
    """The yardstick first: the independent reading says what the MANIFEST (another reader) says."""
    _, nm, pulse, day, km, n_events, total, orl, start, _ = FILES[name]
    r = reading(name)
    assert r.wavelength_nm == nm and r.pulse_ns == pulse
    assert datetime.fromtimestamp(r.stamp, tz=UTC).date().isoformat() == day
    assert len(r.events) == n_events
    if km is not None and r.length_m is not None:
        assert r.length_m / 1000 == pytest.approx(km, rel=0.001, abs=0.0051 if km > 1 else 0.0002)
    assert r.total_loss_db == (pytest.approx(total, abs=0.001) if total else None)
    assert r.orl_db == (pytest.approx(orl, abs=0.05) if orl else None)
    assert r.start_m == (pytest.approx(start, abs=0.01) if start else None)


def test_the_launch_lead_file_reads_as_otdrparser_published_it():
    """mjuenema/otdrparser @f88c98c example-parse2.json: its reading of this very file."""
    r = reading("exfo-max715b_1310_launchlead_example.sor")
    assert r.start_m == pytest.approx(-1002.3040072262725, abs=1e-6)
    assert r.length_m == pytest.approx(619.8066597773387, abs=1e-6)
    assert r.events[0][1:] == (pytest.approx(0.812), pytest.approx(-25.721))
    assert r.events[1][0] == pytest.approx(619.8066597773387, abs=1e-6)
    assert r.events[2][0] == pytest.approx(1027.530121938407, abs=1e-6)


# --- upload through the API: every stored value against the reading -----------------------------


@pytest.fixture
def cable():
    """An OS2 jumper with no recorded length (so every file's fibre end is accepted as is)."""
    _, gpu = f.twin_port_device("gpu-1", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    _, leaf = f.twin_port_device("leaf-1", u=20)
    c = f.jumper("J-1", gpu[0], leaf[0], polarity=Polarity.B)
    assert c.kind == CableKind.SMF_OS2 and c.length_m is None
    return c


def upload(api, name: str, data: bytes | None = None):
    data = path_of(name).read_bytes() if data is None else data
    return api.post(
        "/api/tests/otdr/",
        {"cable": "J-1", "fibre": 2, "files": [SimpleUploadedFile(name, data)]},
        format="multipart",
    )


def assert_stored_as_read(stored: dict, r: Reading, name: str) -> None:
    maker, *_, start, checksum = FILES[name]
    assert stored["wavelength_nm"] == r.wavelength_nm
    assert stored["pulse_width_ns"] == r.pulse_ns
    assert stored["index_of_refraction"] == pytest.approx(r.index, abs=1e-6)
    assert datetime.fromisoformat(stored["measured_at"]).timestamp() == r.stamp
    assert (stored["make"], stored["model"], stored["serial"]) == (r.make, r.model, r.serial)
    assert stored["total_loss_db"] == (
        pytest.approx(r.total_loss_db, abs=0.0005) if r.total_loss_db else None
    )
    assert stored["orl_db"] == (pytest.approx(r.orl_db, abs=0.0005) if r.orl_db else None)
    assert stored["fibre_start_offset_m"] == (pytest.approx(r.start_m, abs=0.01) if r.start_m else None)
    assert stored["has_event_table"] is r.has_event_table
    assert len(stored["events"]) == len(r.events)
    for got, (d, loss, refl) in zip(stored["events"], r.events, strict=True):
        assert got["distance_m"] == pytest.approx(d, abs=r.distance_step_m / 2 + 0.006), (name, got)
        assert got["loss_db"] == pytest.approx(loss, abs=0.0005), (name, got)
        assert got["reflectance_db"] == (None if refl is None else pytest.approx(refl, abs=0.006)), (
            name,
            got,
        )
    if r.length_m is not None:  # the file's own summary says where the fibre ends
        assert stored["fibre_length_source"] == "summary"
        assert stored["fibre_length_m"] == pytest.approx(r.length_m, abs=r.distance_step_m / 2 + 0.006)
    elif r.events:
        assert stored["fibre_length_source"] in ("end event", "last event")
    else:
        assert stored["fibre_length_m"] is None and stored["fibre_length_source"] == ""
    assert len(stored["trace"]) > 100  # the plot, every file
    if start:  # the trace drawn from the fibre start: the instrument sits at the offset
        assert stored["trace"][0][0] == pytest.approx(start, abs=0.05)
    if checksum == "verified":
        assert stored["checksum_ok"] is True and stored["checksum_convention"].startswith("CRC-16/")
    else:
        assert stored["checksum_ok"] is None and stored["checksum_convention"] == checksum


@pytest.mark.parametrize("name", sorted(FILES))
def test_each_real_file_is_stored_exactly_as_the_file_says(tech_api, cable, name):
    resp = upload(tech_api, name)
    assert resp.status_code == 201, resp.json()
    body = resp.json()
    stored = body["traces"][0]
    assert stored["original_name"] == name and stored["fibre"] == 2
    r = reading(name)
    assert_stored_as_read(stored, r, name)
    # The database row holds the same (the API is not a separate reading).
    row = OtdrTrace.objects.get(pk=stored["id"])
    assert (row.fibre_length_m, row.fibre_start_offset_m, row.has_event_table, row.checksum_ok) == (
        stored["fibre_length_m"],
        stored["fibre_start_offset_m"],
        stored["has_event_table"],
        stored["checksum_ok"],
    )
    assert row.events == stored["events"]
    test = CableTest.objects.get(pk=body["id"])
    assert test.wavelength_nm == round(r.wavelength_nm)
    assert r.make in test.instrument and r.model in test.instrument
    # No checksum warning on any genuine file, of any maker.
    assert not any("Checksum" in w for w in body["warnings"]), body["warnings"]


# --- one byte changed: the checksum says so where the maker's convention is known --------------


def flip_one_trace_byte(data: bytes) -> bytes:
    _, blocks, _ = sniff(data)
    dp = next(b for b in blocks if b.name == "DataPts")
    out = bytearray(data)
    out[dp.offset + dp.size // 2] ^= 0x04  # one trace point, a little louder
    return bytes(out)


@pytest.mark.parametrize("name", sorted(FILES))
def test_a_damaged_copy_of_each_real_file_is_caught_where_its_maker_allows(tech_api, cable, name):
    *_, checksum = FILES[name]
    resp = upload(tech_api, name, flip_one_trace_byte(path_of(name).read_bytes()))
    assert resp.status_code == 201, resp.json()
    body = resp.json()
    stored = body["traces"][0]
    if checksum == "verified":
        assert stored["checksum_ok"] is False
        assert stored["checksum_convention"] == "matches no known CRC-16 convention"
        assert any(w.startswith(f"{name}: Checksum mismatch") for w in body["warnings"]), body["warnings"]
    else:  # never "verified": the maker's convention is not reproducible, or it wrote none
        assert stored["checksum_ok"] is None and stored["checksum_convention"] == checksum


# --- trace only, fibre start, wavelengths -------------------------------------------------------


def test_a_trace_only_file_is_stored_with_its_plot_a_note_and_no_verdict(tech_api, cable):
    resp = upload(tech_api, "fibercloud-fc3200_1310_traceonly_otdr7.sor")
    assert resp.status_code == 201, resp.json()
    body = resp.json()
    tr = body["traces"][0]
    assert tr["has_event_table"] is False and tr["events"] == [] and len(tr["trace"]) > 500
    assert body["verdict"] == "unknown" and body["loss_db"] is None and not body["is_baseline"]
    assert any("stored no event table" in w for w in body["warnings"])


def test_1650_nm_monitoring_trace_is_accepted_on_single_mode_and_loss_not_judged(tech_api, cable):
    resp = upload(tech_api, "exfo-ftbx735c_1650_example5.sor")
    assert resp.status_code == 201, resp.json()
    body = resp.json()
    assert body["wavelength_nm"] == 1650 and body["verdict"] == "unknown" and body["budget_db"] is None
    assert any("No published attenuation limit for OS2 at 1650 nm" in w for w in body["warnings"])


def test_1625_nm_trace_is_judged_against_the_os2_limit(tech_api, cable):
    """G.652.D caps cabled fibre at 0.40 dB/km over 1310-1625 nm: the OS2 row (0.5 dB/km) holds."""
    cable.length_m = 42_131
    cable.save(update_fields=["length_m"])
    body = upload(tech_api, "anritsu-cma4500_1625_issue14.sor").json()
    assert body["budget_db"] == pytest.approx(2 * 0.75 + 42.131 * 0.5, abs=0.01)
    assert body["loss_db"] == pytest.approx(9.345)
    assert body["margin_db"] == pytest.approx(body["budget_db"] - 9.345, abs=0.001)  # judged: not "no budget"
    # Its connectors reflect at about -40 dB: on this APC jumper that is marginal, not a pass.
    assert body["verdict"] == "marginal"
    assert any("connector" in w for w in body["warnings"]), body["warnings"]


# --- the page: upload and look -------------------------------------------------------------------


def test_the_page_upload_shows_launch_lead_trace_only_note_and_no_checksum_warning(
    client, user_with_role, cable
):
    client.force_login(user_with_role("technician", "tech"))
    url = reverse("cable-test-otdr", kwargs={"label": "J-1"})
    for fibre, name in (
        (1, "exfo-max715b_1310_launchlead_example.sor"),
        (2, "fibercloud-fc3200_1310_traceonly_otdr7.sor"),
    ):
        with open(path_of(name), "rb") as fh:
            resp = client.post(url, {"files": [fh], "fibre": fibre, "notes": ""})
        assert resp.status_code == 302, resp.content[:2000]
    page = client.get(cable.get_absolute_url()).content.decode()
    assert "the instrument is 1,002.3 m before it (launch lead)" in page
    assert "The instrument stored no event table" in page
    assert page.count('class="otdr-plot otdr-overlay"') == 2  # both plotted, the trace-only one too
    assert "Checksum not checked: EXFO writes one" in page and "the instrument wrote no checksum" in page
    assert "Checksum mismatch" not in page and "checksum mismatch" not in page
