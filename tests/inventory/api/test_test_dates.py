"""Test dates have bounds: from the cable's install date (or the documented floor) to a day
ahead. 9999-12-31 once answered 500 with the row committed and then broke every retest sweep;
0001-01-01 was accepted.

    [gpu-d eth0]--J-D1--[leaf-d E1/1]   installed 2026-06-01
    [gpu-d eth1]--J-D2--[leaf-d E1/2]   no install date recorded
"""

import io
import json
import zipfile
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from inventory.core.choices import CableStatus, DeviceRole
from inventory.models import CableTest, RetestSweepRun
from inventory.services.retests import reminders
from tests import factories as f
from tests.inventory.testing_scenes import dac_link

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("media")]
READINGS = [{"fibre": i, "wavelength_nm": 1310, "loss_db": 0.4} for i in range(1, 9)]


@pytest.fixture
def cables():
    _, gpu = f.twin_port_device("gpu-d", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    _, leaf = f.twin_port_device("leaf-d", u=20)
    one = f.jumper("J-D1", gpu[0], leaf[0], length_m=Decimal("3"), install_date=date(2026, 6, 1))
    two = f.jumper("J-D2", gpu[1], leaf[1], length_m=Decimal("3"))
    assert two.install_date is None
    for cable in (one, two):
        cable.status = CableStatus.INSTALLED
        cable.save()
    return one, two


@pytest.mark.parametrize("when", ["9999-12-31", "9999-12-31T23:59:59Z", "0001-01-01", "1999-12-31T10:00:00Z"])
def test_an_absurd_test_date_is_a_400_and_nothing_is_written(tech_api, cables, when):
    resp = tech_api.post(
        "/api/tests/", {"cable": "J-D2", "readings": READINGS, "tested_at": when}, format="json"
    )
    assert resp.status_code == 400, resp.content
    assert "tested_at" in json.dumps(resp.json())
    assert not CableTest.objects.exists()


def test_a_test_dated_in_the_year_1_is_refused_with_the_date_written_whole(tech_api, cables):
    """It said "1-01-01 is before ..." (``%Y`` writes the year 1 as "1")."""
    resp = tech_api.post(
        "/api/tests/", {"cable": "J-D2", "readings": READINGS, "tested_at": "0001-01-01"}, format="json"
    )
    assert resp.json()["tested_at"] == ["0001-01-01 is before the earliest test date accepted (2000-01-01)."]


def test_a_test_before_the_install_date_is_refused_after_it_accepted(tech_api, cables):
    before = tech_api.post(
        "/api/tests/",
        {"cable": "J-D1", "readings": READINGS, "tested_at": "2026-05-31T12:00:00Z"},
        format="json",
    )
    assert before.status_code == 400
    assert "install date (2026-06-01)" in json.dumps(before.json())
    after = tech_api.post(
        "/api/tests/",
        {"cable": "J-D1", "readings": READINGS, "tested_at": "2026-06-01T12:00:00Z"},
        format="json",
    )
    assert after.status_code == 201, after.json()


def test_a_test_dated_tomorrow_is_accepted_and_the_day_after_refused(tech_api, cables):
    soon = (timezone.now() + timedelta(hours=20)).isoformat()
    later = (timezone.now() + timedelta(days=2)).isoformat()
    body = {"cable": "J-D2", "readings": READINGS}
    assert tech_api.post("/api/tests/", {**body, "tested_at": soon}, format="json").status_code == 201
    assert tech_api.post("/api/tests/", {**body, "tested_at": later}, format="json").status_code == 400


@pytest.mark.parametrize(
    ("calibrated", "error"),
    [
        (
            "9999-12-31",
            "The instrument's calibration date is after the test (9999-12-31, tested 2026-07-01 09:00 UTC): "
            "give the day it was last calibrated, on its calibration label.",
        ),
        (
            "2026-07-03",
            "The instrument's calibration date is after the test (2026-07-03, tested 2026-07-01 09:00 UTC): "
            "give the day it was last calibrated, on its calibration label.",
        ),
        (
            "0202-01-01",
            "The instrument's calibration date is before the earliest date accepted (0202-01-01, earliest "
            "2000-01-01): check the year on its calibration label.",
        ),
    ],
)
def test_an_impossible_calibration_date_is_a_400_at_its_field(tech_api, cables, calibrated, error):
    """An instrument is calibrated before the test it is used for, and not before the floor
    (CABLETRACK_TEST_DATE_FLOOR, 2000-01-01): 9999-12-31 and the year 202 were recorded."""
    body = {"cable": "J-D1", "readings": READINGS, "tested_at": "2026-07-01T09:00:00Z"}
    resp = tech_api.post("/api/tests/", {**body, "calibration_date": calibrated}, format="json")
    assert resp.status_code == 400
    assert resp.json()["calibration_date"] == [error]
    assert not CableTest.objects.exists()


def test_a_calibration_on_the_tests_day_east_of_utc_is_accepted_and_an_old_one_still_warned(tech_api, cables):
    """Calibrated on 2 July in Tokyo, tested there at 08:00 on 2 July: 1 July 23:00 UTC. The
    calibration is not after the test where it was taken. A calibration over a year before the
    test is accepted with its warning, as before."""
    body = {"cable": "J-D1", "readings": READINGS}
    east = tech_api.post(
        "/api/tests/",
        {**body, "tested_at": "2026-07-01T23:00:00Z", "calibration_date": "2026-07-02"},
        format="json",
    )
    assert east.status_code == 201, east.json()
    old = tech_api.post(
        "/api/tests/",
        {**body, "tested_at": "2026-07-03T09:00:00Z", "calibration_date": "2025-07-01"},
        format="json",
    )
    assert old.status_code == 201, old.json()
    assert "The instrument's calibration (2025-07-01) is over a year old." in old.json()["warnings"]
    assert [str(t.calibration_date) for t in CableTest.objects.order_by("tested_at")] == [
        "2026-07-02",
        "2025-07-01",
    ]


def test_qualification_dates_are_bounded_too(tech_api, cables):
    dac = dac_link()
    resp = tech_api.post(
        "/api/tests/qualification/",
        {"cable": dac.label, "link_up": True, "soak_minutes": 10, "tested_at": "9999-12-31T00:00:00Z"},
        format="json",
    )
    assert resp.status_code == 400 and "tested_at" in json.dumps(resp.json())
    assert not CableTest.objects.exists()


def test_a_tester_import_row_dated_9999_is_refused_with_its_cable(tech_api, cables):
    csv = "Cable ID,Fiber #,Wavelength,Loss (dB),Date\nJ-D2,1,1310,0.4,9999-12-31\n"
    mapping = {
        "cable": "Cable ID",
        "fibre": "Fiber #",
        "wavelength_nm": "Wavelength",
        "loss_db": "Loss (dB)",
        "tested_at": "Date",
    }
    resp = tech_api.post(
        "/api/tests/import/",
        {
            "file": SimpleUploadedFile("x.csv", csv.encode()),
            "instrument": "Fluke CFP",
            "mapping": json.dumps(mapping),
            "apply": True,
        },
        format="multipart",
    )
    assert resp.status_code in (200, 400)
    assert "tested_at" in json.dumps(resp.json()) and not CableTest.objects.exists()


def test_a_test_stored_at_9999_12_31_does_not_stop_the_retest_sweep(cables):
    """What an older version stored: the plant's sweep still runs and dates the other cables."""
    one, two = cables
    f.record_test(one, at=datetime(9999, 12, 31, tzinfo=UTC))
    f.record_test(two, at=datetime(2026, 11, 1, tzinfo=UTC))
    now = datetime(2026, 11, 29, 6, tzinfo=UTC)
    result = reminders.retests_sweep(now=now, full=True)
    assert result.cables_changed == 2
    one.refresh_from_db()
    two.refresh_from_db()
    assert one.retest_due == date.max
    assert two.retest_due == date(2026, 11, 1) + timedelta(days=90)
    assert RetestSweepRun.objects.get().finished_at == now


def test_a_committed_test_whose_due_refresh_fails_is_still_a_201(
    tech_api, cables, monkeypatch, caplog, django_capture_on_commit_callbacks
):
    """The after-commit hook logs; the write happened, so the answer says so."""
    from inventory.services.retests import due

    def broken(**kw):
        raise OverflowError("date value out of range")

    monkeypatch.setattr(due, "retest_due_recompute", broken)
    with django_capture_on_commit_callbacks(execute=True):
        resp = tech_api.post("/api/tests/", {"cable": "J-D2", "readings": READINGS}, format="json")
    assert resp.status_code == 201
    assert CableTest.objects.count() == 1
    assert "retest due refresh after commit failed" in caplog.text


def test_one_cable_whose_due_date_cannot_be_decided_is_set_aside_and_the_rest_swept(cables, monkeypatch):
    from inventory.core import retest_rules

    one, two = cables
    f.record_test(one, at=datetime(2026, 10, 1, tzinfo=UTC))
    f.record_test(two, at=datetime(2026, 11, 1, tzinfo=UTC))
    real = retest_rules.retest_due

    def picky(facts, *a, **kw):
        if facts.cable_id == one.pk:
            raise ValueError("bad facts")
        return real(facts, *a, **kw)

    monkeypatch.setattr(retest_rules, "retest_due", picky)
    # The set-based statement cannot decide the batch (a value out of range, say): the rules
    # decide it cable by cable, and only the cable they cannot decide is set aside.
    from django.db import DataError

    from inventory.services.retests import due_sets

    def out_of_range(**kw):
        raise DataError("date out of range")

    monkeypatch.setattr(due_sets, "decide_into_batch_table", out_of_range)
    reminders.retests_sweep(now=datetime(2026, 11, 29, 6, tzinfo=UTC), full=True)
    two.refresh_from_db()
    assert two.retest_due == date(2026, 11, 1) + timedelta(days=90)
    assert RetestSweepRun.objects.get().set_aside == [{"cable": one.pk, "reason": "ValueError: bad facts"}]


def test_an_otdr_trace_with_an_unset_instrument_clock_is_dated_at_upload(tech_api, cables):
    from tests.sor_builder import build_v1

    before = timezone.now()
    resp = tech_api.post(
        "/api/tests/otdr/",
        {
            "cable": "J-D1",
            "files": [SimpleUploadedFile("f1.sor", build_v1(when=datetime(1990, 1, 1, tzinfo=UTC)))],
        },
        format="multipart",
    )
    after = timezone.now()
    assert resp.status_code == 201, resp.content
    test = CableTest.objects.get()
    # The upload's own time (not compared by date with a later "today": that flips at midnight UTC).
    assert before <= test.tested_at <= after
    warning = next(w for w in test.warnings if "recorded at upload time" in w)
    assert warning.startswith("The trace's own date is not usable (1990-01-01 is before ")
    assert ").); " not in warning and warning.endswith("); recorded at upload time.")


def test_a_zip_whose_member_header_lies_is_a_400(tech_api, cables):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("J-D1.csv", "Cable ID,Fiber #,Wavelength,Loss (dB)\nJ-D1,1,1310,0.4\n" * 50)
    data = bytearray(buf.getvalue())
    data[data.index(b"PK\x03\x04") + 30 : data.index(b"PK\x03\x04") + 31] = b"X"  # the member's name
    resp = tech_api.post(
        "/api/tests/import/",
        {"file": SimpleUploadedFile("x.zip", bytes(data)), "instrument": "Fluke CFP"},
        format="multipart",
    )
    assert resp.status_code == 400, resp.content[:300]
    assert "archive" in json.dumps(resp.json())
