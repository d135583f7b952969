"""OTDR verdicts an optics engineer would sign, on SOR files written here (``tests.sor_builder``):
bends across sessions, unknown never passing, traces that do not fit their cable, a worsened
event named by distance, polish on panel ports, and a batch upload's bounded query count.

Scenes (8 cages of twin-port DR4 modules on each side)::

    [gpu-1 eth0]--J-59 (59 m OS2 MPO-12/APC)--[leaf-1 Ethernet1/1]
    [gpu-1 eth1]--J-8  (8 m OS2 MPO-12/APC)---[leaf-1 Ethernet1/2]
    [gpu-2 eth0]--M-40 (40 m OM4 MPO-12/UPC, no modules)--[leaf-2 Ethernet1/1]
"""

from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext

from inventory.core.choices import CableKind, DeviceRole, Polarity, Polish, Verdict
from inventory.core.optics import budgets
from inventory.core.words import human_date
from inventory.models import Alert, CableTest, OtdrTrace
from inventory.selectors.testing.gate import cable_gate_check
from inventory.services import testing as svc
from inventory.services.plant import cables as cable_services
from tests import factories as f
from tests.inventory.testing_scenes import NOW, olts
from tests.sor_builder import build_v1

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("media")]

LAUNCH = (0.0, 0.0, -60.0, "1F9999LS")


def end(at: float) -> tuple:
    return (at, 0.0, -20.0, "1E9999LS")


def sor(events, *, wl=1310, total=0.4, days=0) -> bytes:
    return build_v1(events=events, wavelength_nm=wl, total_loss_db=total, when=NOW + timedelta(days=days))


def upload(cable, name, data, *, fibre=1, days=0):
    return svc.cable_test_upload_otdr(
        cable=cable, files=[svc.SorUpload(name, data, fibre=fibre)], now=NOW + timedelta(days=days)
    )


@pytest.fixture
def plant():
    _, gpu = f.twin_port_device(
        "gpu-1", role=DeviceRole.GPU_NODE, cages=4, names=lambda c, k: f"eth{2 * c + k}"
    )
    _, leaf = f.twin_port_device("leaf-1", u=20, cages=4)
    return gpu, leaf


@pytest.fixture
def j59(plant):
    gpu, leaf = plant
    return f.jumper("J-59", gpu[0], leaf[0], polarity=Polarity.B, length_m=Decimal("59"))


@pytest.fixture
def j8(plant):
    gpu, leaf = plant
    return f.jumper("J-8", gpu[1], leaf[1], polarity=Polarity.B, length_m=Decimal("8"))


@pytest.fixture
def om4():
    _, gpu = f.twin_port_device("gpu-2", role=DeviceRole.GPU_NODE, with_modules=False)
    _, leaf = f.twin_port_device("leaf-2", u=22, with_modules=False)
    upc = dict(polish=Polish.UPC)
    cable, _ = cable_services.cable_install(
        label="M-40",
        kind=CableKind.MMF_OM4,
        a=f.mpo_end(gpu[0], **upc),
        b=[f.mpo_end(leaf[0], **upc)],
        polarity=Polarity.B,
        length_m=Decimal("40"),
    )
    return cable


# --- bends across uploads -------------------------------------------------------------------


@pytest.mark.parametrize(("first", "second"), [(1310, 1550), (1550, 1310)])
def test_a_bend_is_found_when_the_two_wavelengths_arrive_in_separate_sessions(j59, first, second):
    """1310 nm loses 0.05 dB at 30 m, 1550 nm 1.20 dB: a bend, whichever file comes first."""
    loss = {1310: 0.05, 1550: 1.20}
    files = {wl: sor([LAUNCH, (30.0, loss[wl], None, "0F9999LS"), end(59.0)], wl=wl) for wl in (1310, 1550)}
    one = upload(j59, f"j59_{first}.sor", files[first])
    assert not any("bend" in w for w in one.warnings)  # one wavelength alone says nothing
    two = upload(j59, f"j59_{second}.sor", files[second], days=2)
    bend = [w for w in two.warnings if "Suspected bend" in w]
    assert bend == [
        f"fibre 1: Suspected bend at 30.0 m: 1.20 dB at 1550 nm against 0.05 dB at 1310 nm "
        f"(the {first} nm trace of {human_date(NOW)})."
    ]
    assert two.details["bends"][0]["distance_m"] == 30.0


def test_another_fibres_trace_is_not_compared_for_a_bend(j59):
    upload(j59, "f1_1310.sor", sor([LAUNCH, (30.0, 0.05, None, "0F9999LS"), end(59.0)]), fibre=1)
    two = upload(
        j59, "f2_1550.sor", sor([LAUNCH, (30.0, 1.2, None, "0F9999LS"), end(59.0)], wl=1550), fibre=2, days=1
    )
    assert not any("bend" in w for w in two.warnings)


# --- unknown never passes -------------------------------------------------------------------


def test_unknown_plus_marginal_reflectance_is_unknown_and_does_not_satisfy_the_gate(j59):
    """1650 nm (monitoring) has no published attenuation limit (no budget: unknown); a -45 dB APC
    connector is marginal."""
    assert budgets.worst([Verdict.UNKNOWN, Verdict.MARGINAL]) == Verdict.UNKNOWN
    assert budgets.worst([Verdict.UNKNOWN, Verdict.FAIL]) == Verdict.FAIL
    olts(j59, [0.6] * 8, when=NOW)
    test = upload(j59, "live.sor", sor([LAUNCH, (30.0, 0.2, -45.0, "1F9999LS"), end(59.0)], wl=1650))
    assert test.verdict == Verdict.UNKNOWN
    assert any("Suspected dirty or damaged connector at 30.0 m" in w for w in test.warnings)
    missing = cable_gate_check(cable=j59, now=NOW + timedelta(days=1))
    assert missing == [
        f"a passing OTDR trace (the last one, {human_date(NOW)}, was not judged: see its warnings)"
    ]


# --- the trace against the cable --------------------------------------------------------------


def test_a_trace_far_longer_than_the_cable_is_flagged_not_judged_and_fails_the_gate(j59, j8):
    olts(j59, [0.6] * 8, when=NOW)
    long_ = sor([LAUNCH, (30.0, 0.1, None, "0F9999LS"), end(180.0)])
    test = upload(j59, "other.sor", long_)
    assert test.verdict == Verdict.UNKNOWN and test.margin_db is None
    assert any(
        "Not judged: the fibre ends at 180.0 m, 121.0 m past the cable's recorded 59.0 m (tolerance 2.4 m"
        in w
        for w in test.warnings
    ), test.warnings
    assert any("OTDR" in m for m in cable_gate_check(cable=j59, now=NOW + timedelta(days=1)))
    assert upload(j8, "other.sor", long_).verdict == Verdict.UNKNOWN  # and on an 8 m jumper


def test_a_trace_of_another_fibre_says_nothing_of_this_cables_connectors(j59):
    """A reflective event at 1,447 m of a 3.6 km trace uploaded to a 59 m cable is not "a
    suspected dirty connector" of this cable: the trace is not judged, and says only why."""
    other = sor([LAUNCH, (1447.7, 0.3, -25.0, "1F9999LS"), end(3628.6)])
    test = upload(j59, "other.sor", other)
    assert test.verdict == Verdict.UNKNOWN
    assert [w for w in test.warnings if "Not judged: the fibre ends at 3628.6 m" in w]
    assert not [w for w in test.warnings if "connector" in w], test.warnings


def test_a_trace_within_the_stated_tolerance_is_judged(j59, settings):
    """Tolerance at 59 m: 1 m + one 0.2 m sample (location) + 2% (1.18 m, index and lay)."""
    assert upload(j59, "ok.sor", sor([LAUNCH, end(60.9)])).verdict == Verdict.PASS
    assert upload(j59, "short.sor", sor([LAUNCH, end(55.0)]), days=1).verdict == Verdict.UNKNOWN
    settings.CABLETRACK_OTDR_LEADS_M = 150.0  # the testers leave 150 m of leads in the trace
    assert upload(j59, "leads.sor", sor([LAUNCH, end(180.0)]), days=2).verdict == Verdict.PASS


def test_a_multimode_wavelength_on_single_mode_is_refused_naming_the_file(j59, media):
    with pytest.raises(ValidationError) as exc:
        upload(j59, "sr.sor", sor([LAUNCH, end(59.0)], wl=850))
    assert exc.value.message_dict["file"] == [
        "sr.sor: 850 nm is not a single-mode test wavelength (1310, 1383, 1490, 1550, 1625, 1650 nm): the wrong "
        "file or the wrong cable (J-59 is Single-mode OS2)."
    ]
    assert not CableTest.objects.exists() and not list(Path(media).rglob("*.sor"))


def test_a_single_mode_wavelength_on_om4_is_refused_and_1300_nm_is_judged(om4):
    with pytest.raises(ValidationError) as exc:
        upload(om4, "dr.sor", sor([LAUNCH, end(40.0)], wl=1310))
    assert "1310 nm is not a multi-mode test wavelength (850, 1300 nm)" in exc.value.message_dict["file"][0]
    assert upload(om4, "mm.sor", sor([LAUNCH, end(40.0)], wl=1300, total=0.3)).verdict == Verdict.PASS


# --- baseline comparison by event -----------------------------------------------------------


def test_a_worsened_event_is_named_with_its_distance_and_segment_in_the_alert(j59):
    """Connector at 30 m: 0.15 dB / -55 dB at baseline, 0.45 dB / -30 dB now (total +0.3 dB only)."""
    upload(j59, "base.sor", sor([LAUNCH, (30.0, 0.15, -55.0, "1F9999LS"), end(59.0)], total=0.4))
    retest = upload(
        j59, "re.sor", sor([LAUNCH, (30.0, 0.45, -30.0, "1F9999LS"), end(59.0)], total=0.7), days=90
    )
    alert = Alert.objects.get(rule="loss_increase")
    assert (
        "Event at 30.0 m worsened since the baseline: loss 0.15 -> 0.45 dB, reflectance -55.0 -> -30.0 dB"
        in (alert.summary)
    )
    assert "in J-59, 30.0 m from its start" in alert.summary
    found = retest.details["loss_increase"]["findings"]
    assert [(x["kind"], x["distance_m"]) for x in found] == [("worsened_event", 30.0)]


def test_an_unchanged_retest_raises_nothing(j59):
    ev = [LAUNCH, (30.0, 0.15, -55.0, "1F9999LS"), end(59.0)]
    upload(j59, "base.sor", sor(ev))
    upload(j59, "re.sor", sor([LAUNCH, (30.2, 0.2, -52.0, "1F9999LS"), end(59.1)]), days=90)
    assert not Alert.objects.filter(rule="loss_increase").exists()


# --- polish on panel ports ------------------------------------------------------------------


def test_a_upc_plug_in_an_apc_panel_port_is_refused_as_in_a_module():
    _, gpu = f.twin_port_device("gpu-3", role=DeviceRole.GPU_NODE, with_modules=False)
    _, _, fronts = f.patch_panel("pp-1")
    with pytest.raises(ValidationError) as exc:
        cable_services.cable_install(
            label="P-1",
            kind=CableKind.SMF_OS2,
            a=f.mpo_end(gpu[0], polish=Polish.UPC),
            b=[f.mpo_end(fronts[0], polish=Polish.UPC)],
        )
    assert "the port is APC; an UPC plug would damage it" in exc.value.message_dict["b"][0]
    cable, _ = cable_services.cable_install(
        label="P-2", kind=CableKind.SMF_OS2, a=f.mpo_end(gpu[1]), b=[f.mpo_end(fronts[1])]
    )
    assert cable.pk


# --- a batch: every file recorded, a fixed number of queries, retests once ------------------


def _sessions(cables, *, days: int):
    ev = [LAUNCH, (2.0, 0.05, None, "0F9999LS"), end(8.0)]
    return [
        svc.OtdrSession(
            c,
            [
                svc.SorUpload(f"{c.label}_1_{wl}.sor", sor(ev, wl=wl, days=days), fibre=1)
                for wl in (1310, 1550)
            ],
        )
        for c in cables
    ]


def test_a_batch_records_every_file_in_a_fixed_number_of_queries_and_recomputes_retests_once(
    plant, django_capture_on_commit_callbacks
):
    gpu, leaf = plant
    cables = [f.jumper(f"B-{i}", gpu[i], leaf[i], length_m=Decimal("8")) for i in range(8)]
    small, large = cables[:2], cables[2:]
    for group in (small, large):  # baselines first, so the measured batches compare with them
        svc.otdr_sessions_upload(sessions=_sessions(group, days=0), now=NOW)
    counts = []
    for group in (small, large):
        with (
            django_capture_on_commit_callbacks(execute=True) as callbacks,
            CaptureQueriesContext(connection) as queries,
        ):
            tests = svc.otdr_sessions_upload(sessions=_sessions(group, days=90), now=NOW + timedelta(days=90))
        assert len(callbacks) == 1  # one retest recompute for the whole batch
        assert [t.verdict for t in tests] == [Verdict.PASS] * len(group)
        counts.append(len(queries))
    assert counts[0] == counts[1], counts
    assert OtdrTrace.objects.filter(test__cable__in=large, test__tested_at__gt=NOW).count() == 12
    assert CableTest.objects.filter(is_baseline=True).count() == 8


def test_a_cable_plan_row_with_a_upc_plug_on_an_apc_panel_port_is_refused(engineer_api):
    """The plan import checks panel ports as ``cable_install`` does (and as it checks modules)."""
    f.twin_port_device(
        "gpu-3", role=DeviceRole.GPU_NODE, with_modules=False, names=lambda c, k: f"eth{2 * c + k}"
    )
    f.patch_panel("pp-1")
    plan = (
        "label,kind,a_device,a_port,b_device,b_port,a_connector,a_fibres,a_polish,b_connector,b_fibres,b_polish\n"
        "P-1,SMF_OS2,gpu-3,eth0,pp-1,Front 1,MPO,12,UPC,MPO,12,UPC\n"
        "P-2,SMF_OS2,gpu-3,eth1,pp-1,Front 2,MPO,12,APC,MPO,12,APC\n"
    )
    r = engineer_api.generic("POST", "/api/cables/import/?dry_run=1", plan, content_type="text/csv")
    errors = {row["row"]: row["errors"] for row in r.json()["rows"]}
    assert errors[1] == {"b_polish": "Port Front 1 is APC."}
    assert errors[2] == {}


# --- a session of several traces: the worst of the judged ones, the rest counted ----------------


def _session(cable, files: dict[str, bytes], *, fibre=1):
    return svc.cable_test_upload_otdr(
        cable=cable, files=[svc.SorUpload(name, data, fibre=fibre) for name, data in files.items()], now=NOW
    )


def test_a_session_says_the_worst_of_its_judged_traces_and_counts_the_others_in_words(j59):
    """1310 and 1550 nm of this cable pass; a 1650 nm trace (no published limit: monitoring) is
    recorded but not judged: the session passes on what was judged, says which was not and why,
    before the traces' own warnings, and the cable goes through the gate."""
    olts(j59, [0.6] * 8, when=NOW)
    ok = [LAUNCH, (30.0, 0.05, None, "0F9999LS"), end(59.0)]
    test = _session(
        j59,
        {
            "j59_1310.sor": sor(ok, total=0.3),
            "j59_1550.sor": sor(ok, wl=1550, total=0.25),
            "live.sor": sor(ok, wl=1650),
        },
    )
    assert test.verdict == Verdict.PASS
    assert test.warnings[0] == "1 trace not judged: live.sor (no published limit at 1650 nm)."
    assert [x["file"] for x in test.details["not_judged"]] == ["live.sor"]
    assert test.margin_db is not None and test.loss_db == 0.3  # the worst judged trace's figures
    assert cable_gate_check(cable=j59, now=NOW + timedelta(days=1)) == []


def test_a_trace_ending_where_the_cable_does_not_keeps_the_session_from_the_gate(j59):
    """A 180 m trace on a 59 m cable is another cable's file, or a break: the traces that pass
    do not pass the session, which stays not judged (the gate asks for the test again), and
    the summary still names every trace not judged and why."""
    olts(j59, [0.6] * 8, when=NOW)
    ok = [LAUNCH, (30.0, 0.05, None, "0F9999LS"), end(59.0)]
    test = _session(
        j59,
        {
            "j59_1310.sor": sor(ok, total=0.3),
            "other.sor": sor([LAUNCH, end(180.0)]),
            "live.sor": sor(ok, wl=1650),
        },
    )
    assert test.verdict == Verdict.UNKNOWN
    assert test.warnings[0] == (
        "2 traces not judged: other.sor (the fibre ends at 180.0 m, the cable is 59.0 m), "
        "live.sor (no published limit at 1650 nm)."
    )
    assert cable_gate_check(cable=j59, now=NOW + timedelta(days=1)) != []


def test_a_failing_judged_trace_is_the_sessions_worst_whatever_was_not_judged(j59):
    test = _session(
        j59,
        {"bad.sor": sor([LAUNCH, end(59.0)], total=5.0), "other.sor": sor([LAUNCH, end(180.0)])},
    )
    assert test.verdict == Verdict.FAIL
    assert test.warnings[0].startswith("1 trace not judged: other.sor (the fibre ends at 180.0 m")


def test_a_session_with_no_judged_trace_is_unknown_and_never_the_baseline(j59):
    test = _session(j59, {"a.sor": sor([LAUNCH, end(180.0)]), "b.sor": sor([LAUNCH, end(59.0)], wl=1650)})
    assert test.verdict == Verdict.UNKNOWN and not test.is_baseline
    assert test.warnings[0].startswith("2 traces not judged: a.sor (")


def test_a_session_with_a_trace_not_judged_does_not_become_the_baseline(j59):
    """Its unjudged trace (another cable's) would be what later retests are compared with."""
    ok = [LAUNCH, end(59.0)]
    first = _session(j59, {"ok.sor": sor(ok), "live.sor": sor(ok, wl=1650)})
    assert first.verdict == Verdict.PASS and not first.is_baseline
    assert _session(j59, {"ok.sor": sor(ok)}).is_baseline


def test_every_trace_judged_says_nothing_of_unjudged_ones(j59):
    test = _session(j59, {"ok.sor": sor([LAUNCH, end(59.0)])})
    assert test.verdict == Verdict.PASS and "not_judged" not in test.details
    assert not [w for w in test.warnings if "not judged" in w]


def test_the_upload_page_says_the_judged_verdict_and_the_traces_not_judged(j59, client):
    from django.core.files.uploadedfile import SimpleUploadedFile

    tina = f.UserFactory(username="tina", role="technician")
    f.field_crew(tina)
    client.force_login(tina)
    files = [
        SimpleUploadedFile("ok.sor", sor([LAUNCH, end(59.0)])),
        SimpleUploadedFile("other.sor", sor([LAUNCH, end(180.0)])),
    ]
    resp = client.post("/c/J-59/test/otdr", {"files": files, "fibre": "1"}, follow=True)
    text = resp.content.decode()
    assert (
        "OTDR trace stored: Not evaluated. 1 trace not judged: other.sor "
        "(the fibre ends at 180.0 m, the cable is 59.0 m)." in text
    ), text
