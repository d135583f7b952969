"""Test records: power meter, OTDR uploads, baselines and loss_increase findings, inspection and
link qualification (the production gate: ``tests/inventory/selectors/testing/test_gate.py``)."""

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from inventory.core.choices import TestKind as Kind
from inventory.core.choices import Verdict
from inventory.models import Alert, AlertNotification, CableTest, Link, OtdrTrace
from inventory.services import testing as svc
from inventory.services.alerts import maintenance_start
from tests.inventory.testing_scenes import NOW, dac_link, olts, os2_jumper
from tests.paths import TEST_DATA
from tests.sor_builder import build_v1

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("media")]


@pytest.fixture
def jumper():
    return os2_jumper()


SOR = TEST_DATA / "sor"


def stored_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def test_olts_verdict_is_the_worst_fibre_against_the_tia_budget(jumper):
    test = olts(jumper, [0.3, 0.4, 0.35, 1.35, 0.3, 0.3, 0.3, 0.3])
    # 3 m OS2 at 1310 nm: 2 x 0.75 + 0.003 x 0.5 = 1.5015 dB; worst 1.35 -> margin 0.15: marginal
    assert test.budget_db == pytest.approx(1.5015)
    assert test.loss_db == 1.35
    assert test.margin_db == pytest.approx(0.1515, abs=1e-3)
    assert test.verdict == Verdict.MARGINAL
    assert test.is_baseline  # first passing test
    assert test.fibres.filter(verdict=Verdict.MARGINAL).count() == 1
    assert "TIA-568.3" in test.details["budget_source"]


def test_olts_bad_readings_are_refused_by_row_and_nothing_is_written(jumper):
    readings = [
        svc.FibreReading(fibre=1, wavelength_nm=1310, loss_db=0.3),
        svc.FibreReading(fibre=99, wavelength_nm=1310, loss_db=0.3),
        svc.FibreReading(fibre=2, wavelength_nm=850, loss_db=0.3),
        svc.FibreReading(fibre=3, wavelength_nm=1310, loss_db=None),
    ]
    with pytest.raises(ValidationError) as exc:
        svc.cable_test_record_olts(cable=jumper, data=svc.OltsInput(readings=readings, tested_at=NOW))
    errs = exc.value.message_dict
    assert "Fibre 99 does not exist" in errs["readings[1]"][0]
    assert "850 nm is not a single-mode" in errs["readings[2]"][0]
    assert "Enter the loss" in errs["readings[3]"][0]
    assert "readings[0]" not in errs
    assert CableTest.objects.count() == 0


def test_loss_from_reference_and_measured_power(jumper):
    r = svc.FibreReading(fibre=1, wavelength_nm=1310, reference_dbm=-5.0, measured_dbm=-5.6)
    test = svc.cable_test_record_olts(cable=jumper, data=svc.OltsInput(readings=[r], tested_at=NOW))
    assert test.loss_db == pytest.approx(0.6)


def test_retest_loss_increase_raises_a_notify_alert_naming_the_fibres(jumper):
    olts(jumper, [0.3] * 8, when=NOW - timedelta(days=90))
    retest = olts(jumper, [0.3] * 7 + [0.85])
    alert = Alert.objects.get(rule="loss_increase")
    assert alert.severity == "notify" and alert.state == "open"
    assert alert.cable == jumper
    assert "fibre 8" in alert.summary and "0.3 -> 0.85" in alert.summary
    # the baseline's day as the pages say a day, not ISO ("since baseline 2025-09-17")
    day = timezone.localtime(NOW - timedelta(days=90))
    assert f"loss up since the baseline of {day:%-d %b %Y}: fibre 8" in alert.summary
    assert not re.search(r"\d{4}-\d\d-\d\d", alert.summary)
    assert alert.link is not None  # the link the cable carries
    assert not retest.is_baseline
    assert any("Loss rose" in w for w in retest.warnings)


def test_a_loss_increase_is_mailed_like_any_other_alert(jumper):
    """The finding goes through the alert lifecycle: an unsilenced alert gets its mail notice."""
    olts(jumper, [0.3] * 8, when=NOW - timedelta(days=90))
    olts(jumper, [0.3] * 7 + [0.85])
    alert = Alert.objects.get(rule="loss_increase")
    assert not alert.silenced
    assert AlertNotification.objects.filter(alert=alert, kind="opened").count() == 1
    assert set(alert.cables.all()) == {jumper}  # the path, recorded on the alert


def test_a_loss_increase_on_a_link_in_maintenance_opens_silenced_and_sends_no_mail(jumper):
    """[gpu-1 eth0]--J-1--[leaf-1 Ethernet1/1], the link in a maintenance window: the finding is
    recorded (silenced, still naming the cable) but nobody is mailed."""
    olts(jumper, [0.3] * 8, when=NOW - timedelta(days=90))
    maintenance_start(
        starts_at=NOW - timedelta(hours=1),
        ends_at=NOW + timedelta(hours=1),
        reason="re-terminating the MPO",
        links=[Link.objects.get(segments__cable=jumper)],
        now=NOW,
    )
    olts(jumper, [0.3] * 7 + [0.85])
    alert = Alert.objects.get(rule="loss_increase")
    assert alert.silenced and alert.state == "open"
    assert alert.cable == jumper
    assert not AlertNotification.objects.exists()


def test_small_drift_raises_nothing(jumper, settings):
    olts(jumper, [0.3] * 8, when=NOW - timedelta(days=90))
    olts(jumper, [0.7] * 8)
    assert not Alert.objects.exists()
    settings.CABLETRACK_LOSS_INCREASE_DB = 0.3  # configurable
    olts(jumper, [0.7] * 8)
    assert Alert.objects.filter(rule="loss_increase").count() == 1


def test_otdr_upload_stores_original_under_generated_name(jumper, media):
    data = (SOR / "anritsu-mt9090a_1310_example3.sor").read_bytes()
    test = svc.cable_test_upload_otdr(cable=jumper, files=[svc.SorUpload("my trace.sor", data)], now=NOW)
    tr = test.traces.get()
    assert tr.original_name == "my trace.sor"
    assert "my trace" not in tr.file.name and tr.file.name.endswith(".sor")
    assert (media / tr.file.name).read_bytes() == data
    assert tr.make.upper().startswith("ANRITSU") and tr.wavelength_nm == 1310
    assert len(tr.events) == 3 and tr.events[0]["distance_m"] == pytest.approx(1010, abs=5)
    assert test.kind == Kind.OTDR
    assert tr.checksum_ok is True


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"<html><body>Not found</body></html>", "web page"),
        (b"just some text, not a trace", "not a Bellcore"),
        ((SOR / "anritsu-mt9090a_1310_example3.sor").read_bytes()[:20_000], "truncated"),
    ],
)
def test_bad_otdr_file_writes_nothing(jumper, media, data, words):
    with pytest.raises(ValidationError) as exc:
        svc.cable_test_upload_otdr(cable=jumper, files=[svc.SorUpload("x.sor", data)], now=NOW)
    assert words in exc.value.message_dict["file"][0]
    assert CableTest.objects.count() == 0 and OtdrTrace.objects.count() == 0
    assert stored_files(media) == []


def test_oversized_otdr_file_writes_nothing(jumper, media, settings):
    settings.CABLETRACK_SOR_MAX_BYTES = 1000
    with pytest.raises(ValidationError) as exc:
        svc.cable_test_upload_otdr(cable=jumper, files=[svc.SorUpload("x.sor", build_v1())], now=NOW)
    assert "limit" in exc.value.message_dict["file"][0]
    assert stored_files(media) == []


def test_one_bad_file_in_a_batch_refuses_the_whole_batch(jumper, media):
    files = [svc.SorUpload("good.sor", build_v1()), svc.SorUpload("bad.sor", b"<html></html>")]
    with pytest.raises(ValidationError) as exc:
        svc.cable_test_upload_otdr(cable=jumper, files=files, now=NOW)
    assert "bad.sor" in exc.value.message_dict["file[1]"][0]
    assert stored_files(media) == [] and not OtdrTrace.objects.exists()


def test_otdr_new_event_raises_loss_increase_naming_distance_and_segment(jumper):
    base = build_v1(events=[(0.0, 0.0, -60.0, "1F9999LS"), (3.0, 0.0, -20.0, "1E9999LS")], total_loss_db=0.3)
    svc.cable_test_upload_otdr(
        cable=jumper, files=[svc.SorUpload("b.sor", base)], now=NOW - timedelta(days=90)
    )
    retest = build_v1(
        events=[(0.0, 0.0, -60.0, "1F9999LS"), (1.6, 0.45, None, "0F9999LS"), (3.0, 0.0, -20.0, "1E9999LS")],
        total_loss_db=0.75,
    )
    test = svc.cable_test_upload_otdr(cable=jumper, files=[svc.SorUpload("r.sor", retest)], now=NOW)
    alert = Alert.objects.get(rule="loss_increase")
    assert "1.6 m" in alert.summary and "J-1" in alert.summary
    assert alert.evidence["test_id"] == test.pk


def test_bend_and_dirty_connector_warnings_on_upload(jumper):
    """Same fibre at 1310 and 1550 nm: 0.02 vs 0.55 dB at 2 m is a bend; -30 dB is dirty."""

    def ev(loss):  # the 3 m jumper: the fibre end where the cable ends
        return [
            (0.0, 0.0, -60.0, "1F9999LS"),
            (1.0, 0.1, -30.0, "1F9999LS"),
            (2.0, loss, None, "0F9999LS"),
            (3.0, 0.0, -20.0, "1E9999LS"),
        ]

    files = [
        svc.SorUpload("a1310.sor", build_v1(events=ev(0.02), wavelength_nm=1310)),
        svc.SorUpload("a1550.sor", build_v1(events=ev(0.55), wavelength_nm=1550)),
    ]
    test = svc.cable_test_upload_otdr(cable=jumper, files=files, now=NOW)
    text = " ".join(test.warnings)
    assert "Suspected bend at 2.0 m" in text
    assert "Suspected dirty or damaged connector at 1.0 m" in text
    assert test.verdict == Verdict.MARGINAL  # APC connector above -55 dB: warn, not fail


def test_inspection_with_photo_and_zones(jumper, media):
    end = jumper.ends.get(side="A")
    png = b"\x89PNG\r\n\x1a\n" + b"\0" * 64
    insp = svc.cable_inspect(
        cable=jumper, end=end, passed=True, zones={"core": "pass"}, cleaned=True, photo=png, now=NOW
    )
    assert insp.photo.name.endswith(".png") and (media / insp.photo.name).exists()
    assert insp.test.kind == Kind.INSPECTION and insp.test.verdict == Verdict.PASS
    with pytest.raises(ValidationError) as exc:
        svc.cable_inspect(
            cable=jumper, end=end, passed=True, zones={"core": "fail", "ferrule": "pass"}, now=NOW
        )
    assert "ferrule" in exc.value.message_dict["zones"][0]
    assert "cannot pass" in exc.value.message_dict["passed"][0]


@pytest.mark.parametrize("soak", [1e308, 10_080.5, float("inf"), float("nan"), -0.5])
def test_link_qualify_refuses_a_soak_no_one_runs_for_any_caller(soak):
    """The service asks ``soak_minutes_problem`` itself, so a caller other than the API (a script,
    a later import) cannot record a soak of 1e308 minutes either."""
    data = svc.QualificationInput(
        serial_a="DAC-B1", serial_b="DAC-A1", link_up=True, speed_gbps=400, lanes=4, pre_fec_ber=1e-8
    )
    data.soak_minutes = soak
    with pytest.raises(ValidationError) as exc:
        svc.link_qualify(cable=dac_link(), data=data, now=NOW)
    assert exc.value.message_dict == {
        "soak_minutes": ["Give the soak's length in minutes: a number from 0 to 10,080 (a week)."]
    }
    assert not CableTest.objects.exists()


def test_link_qualification_checks_identity_speed_and_ber():
    cable = dac_link()
    bad = svc.link_qualify(
        cable=cable,
        data=svc.QualificationInput(
            serial_a="DAC-A1",
            serial_b="XXX",
            link_up=True,
            speed_gbps=200,
            lanes=4,
            pre_fec_ber=3e-4,
            soak_minutes=15,
        ),
        now=NOW,
    )
    assert bad.verdict == Verdict.FAIL
    text = " ".join(bad.warnings)
    assert "XXX" in text and "200G, expected 400G" in text and "3.00e-04" in text
    good = svc.link_qualify(
        cable=cable,
        data=svc.QualificationInput(
            serial_a="DAC-B1",
            serial_b="DAC-A1",
            link_up=True,
            speed_gbps=400,
            lanes=4,
            pre_fec_ber=1e-8,
            uncorrectable_codewords=0,
            soak_minutes=15,
        ),
        now=NOW,
    )
    assert good.verdict == Verdict.PASS and good.is_baseline
