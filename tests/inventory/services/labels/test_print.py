"""Printing labels from the database: facts, selections, the print view, the command.

Topology used by most tests (rack R-LBL-1 holds gpu-lbl, rack R-LBL-2 holds leaf-lbl)::

    [gpu-lbl eth0]--L-001--[leaf-lbl Ethernet1/1]
    [gpu-lbl eth1]--L-002--[leaf-lbl Ethernet1/2]
    [leaf-lbl Ethernet2/1]--BO-1 (legs BO-1-1, BO-1-2)--[gpu-lbl eth2], [gpu-lbl eth3]
"""

from datetime import timedelta
from urllib.parse import urlparse

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from inventory.core.choices import DeviceRole, LabelBatchStatus, Verdict
from inventory.models import Cable, CableEnd, LabelBatch, sanctioned_bulk_write
from inventory.selectors.labels.facts import LabelSelection, cable_label_facts, label_cable_ids
from tests import factories as f
from tests.qrscan import decode_pdf, page_texts

pytestmark = pytest.mark.django_db


@pytest.fixture
def plant():
    r1 = f.RackFactory(name="R-LBL-1")
    r2 = f.RackFactory(name="R-LBL-2")
    _, gpu = f.twin_port_device(
        "gpu-lbl", rack=r1, u=7, role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}"
    )
    _, leaf = f.twin_port_device("leaf-lbl", rack=r2, u=30)
    t0 = timezone.now() - timedelta(days=30)
    c1 = f.jumper("L-001", gpu[0], leaf[0], install_date=t0.date())
    c2 = f.jumper("L-002", gpu[1], leaf[1])
    bo = f.breakout("BO-1", leaf[2], [gpu[2], gpu[3]])
    f.cable_test(c1, verdict=Verdict.FAIL, tested_at=t0 + timedelta(hours=1), loss_db=3.5)
    f.cable_test(c1, verdict=Verdict.PASS, tested_at=t0 + timedelta(days=1), loss_db=1.1)
    f.cable_test(c1, verdict=Verdict.PASS, tested_at=t0 + timedelta(days=10), kind="otdr")
    return {"c1": c1, "c2": c2, "bo": bo, "t0": t0}


def follow(client, url: str):
    """Open a scanned URL in the app (the base URL is the configured one, never a guess)."""
    assert url.startswith(settings.CABLETRACK_BASE_URL + "/")
    return client.get(urlparse(url).path)


def test_facts_name_both_ends_with_cage_and_port_and_the_install_date(plant):
    labels = cable_label_facts(cable_ids=[plant["c1"].pk], base_url="https://ct.example")
    a, b = labels
    assert (a.this_end, b.this_end) == ("A", "B")
    assert a.url == b.url == "https://ct.example/c/L-001"
    assert (a.a.rack, a.a.u, a.a.device, a.a.cage, a.a.port) == ("R-LBL-1", 7, "gpu-lbl", "OSFP1", "eth0")
    assert (a.b.rack, a.b.u, a.b.device, a.b.port) == ("R-LBL-2", 30, "leaf-lbl", "Ethernet1/1")
    assert a.a.text() == "R-LBL-1 U7 gpu-lbl OSFP1 eth0"  # the cage on the faceplate, then the port
    assert a.installed == plant["t0"].date()


def test_a_label_prints_no_test_result_so_a_retest_never_makes_it_stale(plant):
    """L-001 passed, then fails a retest: the label printed before and the one printed after say
    the same (its results are behind the QR code, on the page it opens)."""
    from inventory.core.labels import STOCKS, render_pdf

    before = page_texts(
        render_pdf(
            cable_label_facts(cable_ids=[plant["c1"].pk], base_url="https://ct.example"), STOCKS["flag"]
        )
    )
    f.cable_test(plant["c1"], verdict=Verdict.FAIL, tested_at=plant["t0"] + timedelta(days=20), loss_db=4.2)
    after = page_texts(
        render_pdf(
            cable_label_facts(cable_ids=[plant["c1"].pk], base_url="https://ct.example"), STOCKS["flag"]
        )
    )
    assert before == after
    text = " ".join(after)
    for stale in ("PASS", "FAIL", "OLTS", "OTDR"):
        assert stale not in text
    assert "Inst " + f"{plant['t0'].date():%Y-%m-%d}" in text and "Tests: scan" in text


def test_every_breakout_leg_gets_its_own_label(plant):
    labels = cable_label_facts(cable_ids=[plant["bo"].pk], base_url="https://ct.example")
    assert [(lab.identifier, lab.this_end) for lab in labels] == [
        ("BO-1", "A"),
        ("BO-1-1", "B1"),
        ("BO-1-2", "B2"),
    ]
    assert labels[1].b.port == "eth2" and labels[2].b.port == "eth3"
    assert "2 legs" in labels[0].b.port


def test_facts_take_a_fixed_number_of_queries(plant, django_assert_num_queries):
    _, gpu = f.twin_port_device("gpu-lbl2", u=9, cages=4, role=DeviceRole.GPU_NODE)
    _, leaf = f.twin_port_device("leaf-lbl2", u=31, cages=4)
    extra = [f.jumper(f"X-{i}", gpu[i], leaf[i]) for i in range(8)]
    with django_assert_num_queries(3):
        few = cable_label_facts(cable_ids=[plant["c1"].pk], base_url="x")
    with django_assert_num_queries(3):
        many = cable_label_facts(
            cable_ids=[plant["c1"].pk, plant["bo"].pk] + [c.pk for c in extra], base_url="x"
        )
    assert len(few) == 2 and len(many) == 2 + 3 + 16


def test_selections_by_rack_row_list_and_changed_since(plant):
    ids = {c: plant[c].pk for c in ("c1", "c2", "bo")}
    assert set(label_cable_ids(selection=LabelSelection(racks=("R-LBL-1",)))) == set(ids.values())
    assert set(label_cable_ids(selection=LabelSelection(rows=("Hall 1/A",)))) == set(ids.values())
    assert label_cable_ids(selection=LabelSelection(cables=("L-002", str(ids["bo"])))) == [
        ids["bo"],
        ids["c2"],
    ]
    # Make L-001 an old, unchanged record: only the others changed since yesterday.
    old = timezone.now() - timedelta(days=60)
    with sanctioned_bulk_write():
        Cable.objects.filter(pk=ids["c1"]).update(updated_at=old)
        CableEnd.history.filter(cable_id=ids["c1"]).update(history_date=old)
    since = LabelSelection(changed_since=timezone.now() - timedelta(days=1))
    assert set(label_cable_ids(selection=since)) == {ids["c2"], ids["bo"]}
    # A retest since then changes nothing a label prints (results are behind the QR code).
    f.cable_test(plant["c1"], verdict=Verdict.FAIL, tested_at=timezone.now(), loss_db=4.2)
    assert set(label_cable_ids(selection=since)) == {ids["c2"], ids["bo"]}
    narrowed = LabelSelection(racks=("R-LBL-1",), changed_since=since.changed_since, cables=())
    assert ids["c1"] not in label_cable_ids(selection=narrowed)


# --- the print view ---------------------------------------------------------------------------


def _login(client, user_with_role, role):
    client.force_login(user_with_role(role))
    return client


def test_engineer_prints_a_rack_and_every_qr_opens_its_cable(client, user_with_role, plant):
    _login(client, user_with_role, "engineer")
    r = client.post(reverse("labels-print"), {"rack": "R-LBL-1", "stock": "a4"})
    assert r.status_code == 200
    assert r["Content-Type"] == "application/pdf"
    assert r["Content-Disposition"].startswith("attachment;")
    [page] = decode_pdf(r.content)
    assert len(page) == 7  # L-001 A+B, L-002 A+B, BO-1 A + 2 legs
    for url in page:
        label = url.rsplit("/", 1)[1]
        opened = follow(client, url)
        assert opened.status_code == 200
        assert opened.context["cable"].label == label
    assert {u.rsplit("/", 1)[1] for u in page} == {"L-001", "L-002", "BO-1"}
    text = page_texts(r.content)[0]
    assert "BO-1-2" in text and "gpu-lbl" in text


def test_bulk_action_posts_cable_ids_and_gets_zpl(client, user_with_role, plant):
    _login(client, user_with_role, "engineer")
    r = client.post(
        reverse("labels-print"), {"cable": [plant["c1"].pk, plant["c2"].pk], "format": "zpl", "stock": "flag"}
    )
    assert r.status_code == 200
    zpl = r.content.decode()
    assert zpl.count("^XA") == 4
    assert f"^FDQA,{settings.CABLETRACK_BASE_URL}/c/L-001^FS" in zpl


def test_rack_labels_open_the_rack_page(client, user_with_role, plant):
    _login(client, user_with_role, "engineer")
    r = client.post(reverse("labels-print"), {"rack": "R-LBL-1 R-LBL-2", "rack_label": "on"})
    pages = decode_pdf(r.content)
    assert [p for page in pages for p in page] == [
        f"{settings.CABLETRACK_BASE_URL}/r/R-LBL-1",
        f"{settings.CABLETRACK_BASE_URL}/r/R-LBL-2",
    ]
    opened = follow(client, pages[0][0])
    assert opened.status_code == 200 and opened.context["rack"].name == "R-LBL-1"


def test_technician_prints_one_cable_only(client, user_with_role, plant):
    _login(client, user_with_role, "technician")
    one = client.post(reverse("labels-print"), {"cable": plant["c2"].label})
    assert one.status_code == 200 and one["Content-Type"] == "application/pdf"
    assert client.post(reverse("labels-print"), {"rack": "R-LBL-1"}).status_code == 403
    assert client.post(reverse("labels-print"), {"cable": ["L-001", "L-002"]}).status_code == 403


def test_viewer_may_not_print(client, user_with_role, plant):
    _login(client, user_with_role, "viewer")
    assert client.post(reverse("labels-print"), {"cable": "L-001"}).status_code == 403
    page = client.get(reverse("labels-print"))
    assert page.status_code == 200 and "can only view" in page.content.decode()


def test_not_logged_in_goes_to_login(client, plant):
    r = client.post(reverse("labels-print"), {"cable": "L-001"})
    assert r.status_code == 302 and r["Location"].startswith(reverse("login"))


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"rack": "NOPE"}, "rack", "No rack named NOPE"),
        ({"cable": "L-001 GHOST"}, "cable", "No cable GHOST"),
        # ids no bigint key holds, and "digits" int() refuses: a 500 before
        ({"cable": "99999999999999999999999"}, "cable", "No cable 99999999999999999999999"),
        ({"cable": "L-001 ²³"}, "cable", "No cable ²³"),
        ({"row": "Z"}, "row", "No row"),
        ({"rack": "R-LBL-1", "stock": "napkin"}, "stock", "napkin"),
        ({"changed_since": "yesterday"}, "changed_since", "Enter a valid date"),
        ({}, None, "Choose cables, a rack"),
    ],
)
def test_bad_input_is_explained_next_to_the_field_and_prints_nothing(
    client, user_with_role, plant, data, field, message
):
    _login(client, user_with_role, "engineer")
    r = client.post(reverse("labels-print"), data)
    assert r.status_code == 400
    form = r.context["form"]
    errors = form.errors.get(field) if field else form.non_field_errors()
    assert errors and message in " ".join(errors)
    assert message in r.content.decode()
    assert not LabelBatch.objects.exists()


def test_large_selection_becomes_a_batch(
    client, user_with_role, plant, settings, django_capture_on_commit_callbacks
):
    settings.CABLETRACK_LABELS_INLINE_MAX = 2
    _login(client, user_with_role, "engineer")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        r = client.post(reverse("labels-print"), {"row": "A"})
    batch = LabelBatch.objects.get()
    assert r.status_code == 302 and r["Location"] == batch.get_absolute_url()
    assert batch.total == 7 and batch.status == LabelBatchStatus.QUEUED and len(callbacks) == 1
    page = client.get(batch.get_absolute_url())
    html = page.content.decode()
    assert "row A" in html
    assert '<span id="batch-done">0</span> of <span id="batch-total">7</span> labels' in html
    status = client.get(reverse("label-batch-status", kwargs={"uid": batch.uid})).json()
    assert status["status"] == "queued" and status["download"] is None
    assert client.get(reverse("label-batch-download", kwargs={"uid": batch.uid})).status_code == 404


# --- the command ------------------------------------------------------------------------------


def test_command_prints_a_rack_to_a_pdf(tmp_path, plant, client, user_with_role):
    out = tmp_path / "labels.pdf"
    call_command("print_labels", "--rack", "R-LBL-2", "--output", str(out))
    pages = decode_pdf(out.read_bytes(), dpi=150)
    assert len(pages) == 7  # flag stock: one page per label, the QR on both faces
    assert all(len(p) == 2 and p[0] == p[1] for p in pages)
    _login(client, user_with_role, "viewer")
    assert follow(client, pages[0][0]).context["cable"].label == "BO-1"


def test_command_other_selections_and_zpl(tmp_path, plant):
    out = tmp_path / "labels.zpl"
    call_command("print_labels", "--cables", "L-001,L-002", "--stock", "wrap", "--output", str(out))
    assert out.read_text().count("^XA") == 4
    call_command(
        "print_labels", "--row", "A", "--rack-label", "--format", "pdf", "--output", str(tmp_path / "r.pdf")
    )
    assert len(decode_pdf((tmp_path / "r.pdf").read_bytes())) == 2
    since = (timezone.now() - timedelta(days=1)).date().isoformat()
    call_command(
        "print_labels", "--changed-since", since, "--stock", "letter", "--output", str(tmp_path / "c.pdf")
    )
    assert len(decode_pdf((tmp_path / "c.pdf").read_bytes())[0]) == 7


def test_command_rejects_bad_input(tmp_path, plant):
    with pytest.raises(CommandError, match="No rack named NOPE"):
        call_command("print_labels", "--rack", "NOPE", "--output", str(tmp_path / "x.pdf"))
    with pytest.raises(CommandError, match="not a date"):
        call_command("print_labels", "--changed-since", "soon", "--output", str(tmp_path / "x.pdf"))
    assert not (tmp_path / "x.pdf").exists()


def test_stale_batches_are_requeued_and_finished_ones_left_alone(plant):
    from inventory.services.labels import printing as label_services

    now = timezone.now()
    stale = LabelBatch.objects.create(stock="flag", cable_ids=[plant["c1"].pk], total=2)
    LabelBatch.objects.filter(pk=stale.pk).update(updated_at=now - timedelta(minutes=30))
    fresh = LabelBatch.objects.create(stock="flag", cable_ids=[plant["c1"].pk], total=2)
    from unittest import mock

    with mock.patch("inventory.tasks.label_batch_render_task.apply_async") as send:
        assert label_services.label_batches_requeue(now=now) == [stale.pk]
    send.assert_called_once_with((stale.pk,), {})
    label_services.label_batch_run(batch_id=fresh.pk, now=now)
    fresh.refresh_from_db()
    assert fresh.status == LabelBatchStatus.DONE and fresh.done == 2
    first = fresh.file.path
    again = label_services.label_batch_run(batch_id=fresh.pk, now=now + timedelta(minutes=1))
    assert again.finished_at == fresh.finished_at and again.file.path == first
    import os

    os.remove(first)
