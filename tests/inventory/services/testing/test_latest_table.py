"""Each cable's latest tests (``CableTestLatest``), which the whole-site verdicts read, are what
the cable's tests and ends say, whoever wrote them: the seed, the OLTS, OTDR and qualification
services, the admin, and two technicians recording on one cable at the same moment."""

import threading
import time
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection, transaction
from django.test import Client
from django.utils import timezone

from inventory.core.choices import ConnectorType, DeviceRole
from inventory.core.choices import TestKind as Kind
from inventory.models import Cable, CableEnd, CableTest, CableTestLatest
from inventory.selectors.testing.facts import fibres_in_use
from inventory.services import testing as svc
from inventory.services.demo.seed import demo_seed
from tests import factories as f
from tests.inventory.testing_scenes import NOW, dac_link, olts, os2_jumper
from tests.sor_builder import build_v1

PREFIX = {Kind.OLTS: "olts", Kind.OTDR: "otdr", Kind.QUALIFICATION: "qualification"}


pytestmark = pytest.mark.usefixtures("media")


def expected() -> dict[int, dict]:
    """From the tests and the ends, in Python: per cable and kind the test with the greatest
    (tested_at, id), as ``selectors.testing.latest`` picks it."""
    best: dict[tuple[int, str], CableTest] = {}
    for t in CableTest.objects.filter(kind__in=list(PREFIX)).order_by("tested_at", "pk"):
        best[(t.cable_id, t.kind)] = t  # the last one in that order wins
    rows: dict[int, dict] = {}
    for (cable_id, kind), t in best.items():
        row = rows.setdefault(cable_id, {})
        p = PREFIX[kind]
        row |= {f"{p}_test_id": t.pk, f"{p}_at": t.tested_at, f"{p}_verdict": t.verdict}
        if kind == Kind.OLTS:
            row |= {"olts_loss_db": t.loss_db, "olts_fibres_passed": t.fibres_passed}
    empty = {
        fld.attname: None
        for fld in CableTestLatest._meta.fields
        if fld.attname not in ("cable_id", "fibres_in_use")
    }
    for cable in Cable.objects.filter(pk__in=list(rows)).prefetch_related("ends"):
        rows[cable.pk] = (
            empty | rows[cable.pk] | {"fibres_in_use": fibres_in_use(cable, list(cable.ends.all()))}
        )
    return rows


def kept() -> dict[int, dict]:
    return {r.pop("cable_id"): r for r in CableTestLatest.objects.values()}


def sor_upload(cable, when):
    return svc.cable_test_upload_otdr(cable=cable, files=[svc.SorUpload("t.sor", build_v1())], now=when)


@pytest.mark.django_db
def test_the_seed_and_every_service_keep_each_cables_latest_tests():
    demo_seed(gpus=8, seed=1)
    assert len(kept()) > 20
    assert kept() == expected()

    jumper = os2_jumper()
    newer = olts(jumper, [0.2] * 8, when=NOW)
    assert kept()[jumper.pk]["olts_test_id"] == newer.pk and kept()[jumper.pk]["olts_fibres_passed"] == 8
    olts(jumper, [0.2] * 8, when=NOW - timedelta(days=3))  # entered late: not the latest
    assert kept()[jumper.pk]["olts_test_id"] == newer.pk
    otdr = sor_upload(jumper, NOW)
    assert kept()[jumper.pk]["otdr_test_id"] == otdr.pk
    dac = dac_link()
    qual = svc.link_qualify(
        cable=dac, data=svc.QualificationInput(serial_a="DAC-B1", serial_b="DAC-A1", link_up=True), now=NOW
    )
    assert kept()[dac.pk]["qualification_test_id"] == qual.pk
    assert kept() == expected()


@pytest.fixture
def admin_client(db):
    user = f.UserFactory(username="root-admin", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_a_test_moved_or_ends_corrected_in_the_admin_move_the_latest_tests(admin_client):
    jumper = os2_jumper()
    test = olts(jumper, [0.2] * 8, when=NOW)
    _, gpu = f.twin_port_device("gpu-7", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    _, leaf = f.twin_port_device("leaf-7", u=25)
    other = f.jumper("J-7", gpu[0], leaf[0], length_m=Decimal("3"))
    assert other.pk not in kept()

    url = f"/admin/inventory/cabletest/{test.pk}/change/"
    data = f.admin_post_data(admin_client.get(url))
    data["cable"] = str(other.pk)  # recorded against the wrong cable: corrected here
    at = timezone.localtime(data.pop("tested_at") and test.tested_at)  # the form's date and time boxes
    data |= {"tested_at_0": f"{at:%Y-%m-%d}", "tested_at_1": f"{at:%H:%M:%S}"}
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert jumper.pk not in kept() and kept()[other.pk]["olts_test_id"] == test.pk
    assert kept() == expected()

    assert kept()[other.pk]["fibres_in_use"] == fibres_in_use(other)
    url = f"/admin/inventory/cable/{other.pk}/change/"
    data = f.admin_post_data(admin_client.get(url))
    for key in [k for k in data if k.startswith("ends-") and k.endswith("-connector_type")]:
        data[key] = ConnectorType.MPO
    for key in [k for k in data if k.startswith("ends-") and k.endswith("-fibre_count")]:
        data[key] = "16"
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert set(CableEnd.objects.filter(cable=other).values_list("fibre_count", flat=True)) == {16}
    assert kept()[other.pk]["fibres_in_use"] == 16
    assert kept() == expected()


@pytest.mark.django_db
def test_a_test_dated_in_the_admin_moves_the_retest_due_date(
    admin_client, django_capture_on_commit_callbacks
):
    """A test's date corrected in the admin moves its cable's retest due date, as recording it
    through the service does: the reminders follow what the records say."""
    today = timezone.localdate()
    _, gpu = f.twin_port_device("gpu-1", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    _, leaf = f.twin_port_device("leaf-1", u=20)
    jumper = f.jumper(
        "J-1", gpu[0], leaf[0], install_date=today - timedelta(days=300)
    )  # installed: due dates
    with django_capture_on_commit_callbacks(execute=True):
        test = olts(jumper, [0.2] * 8, when=timezone.now() - timedelta(days=200))
    jumper.refresh_from_db()
    assert jumper.retest_due is not None and jumper.retest_due < today  # overdue

    url = f"/admin/inventory/cabletest/{test.pk}/change/"
    data = f.admin_post_data(admin_client.get(url))
    at = timezone.localtime(timezone.now() - timedelta(days=10))  # it was entered with the wrong year
    data.pop("tested_at", None)
    data |= {"tested_at_0": f"{at:%Y-%m-%d}", "tested_at_1": f"{at:%H:%M:%S}"}
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    jumper.refresh_from_db()
    assert jumper.retest_due > today
    assert "test edited in the admin" in jumper.history.first().history_change_reason


def _waits_on_a_lock() -> bool:
    with connection.cursor() as cur:
        cur.execute("SELECT pg_stat_clear_snapshot()")
        cur.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND query ILIKE %s",
            [f"%{CableTestLatest._meta.db_table}%"],
        )
        return cur.fetchone()[0] > 0


@pytest.mark.postgres  # concurrent writers are PostgreSQL's
@pytest.mark.django_db(transaction=True)
def test_two_tests_recorded_at_once_on_one_cable_keep_the_newer():
    """The first technician's session (the newer) holds its transaction open while the second's
    (entered later, dated earlier) waits on the cable's row; each saw only its own test. The row
    must end on the newer test, not on whichever transaction wrote last."""
    jumper = os2_jumper()
    first_wrote, second_done, errors, ids = threading.Event(), threading.Event(), [], {}
    seen = {"lock_wait": False}

    def first() -> None:
        try:
            with transaction.atomic():
                ids["newer"] = olts(jumper, [0.2] * 8, when=NOW).pk
                first_wrote.set()
                # Hold the transaction open until the second writer is seen waiting on our lock
                # in pg_stat_activity: then both are in flight at once, the race this test is for.
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline and not second_done.is_set():
                    if _waits_on_a_lock():
                        seen["lock_wait"] = True
                        break
                    time.sleep(0.05)
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)
        finally:
            first_wrote.set()
            connection.close()

    def second() -> None:
        try:
            first_wrote.wait(10)
            ids["older"] = olts(jumper, [0.3] * 8, when=NOW - timedelta(days=1)).pk
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)
        finally:
            second_done.set()
            connection.close()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    # The race happened: the second writer waited on the first's open transaction (observed in
    # pg_stat_activity), not merely ran after it.
    assert seen["lock_wait"], "the second writer never waited on the first: the two did not overlap"
    assert kept()[jumper.pk]["olts_test_id"] == ids["newer"] != ids["older"]
    assert kept() == expected()
