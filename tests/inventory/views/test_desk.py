import csv
import io
from datetime import date
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from inventory.core.choices import CableKind, ConnectorType, Polish
from inventory.models import Alert, Cable, Transceiver
from inventory.services.plant import cables as cable_services
from tests import factories as f

pytestmark = pytest.mark.django_db


def labels_in(html: str) -> list[str]:
    import re

    return re.findall(r'<a class="mono" href="/c/([^"]+)"', html)


# --- cable list -------------------------------------------------------------------------------


def test_cable_list_filters_like_the_api(plant, engineer_client):
    Alert.objects.create(
        rule="fec_tail",
        severity="warning",
        cable=plant["cables"]["J-101"],
        opened_at=timezone.now(),
        updated_at=timezone.now(),
        summary="tail",
    )
    get = lambda **q: labels_in(engineer_client.get("/cables/", q).content.decode())  # noqa: E731
    assert get() == ["J-100", "J-101", "J-102", "T-100"]
    assert get(retest_overdue="true") == ["J-102"]
    assert get(has_open_alert="true") == ["J-101"]
    assert get(status="in_production") == ["J-102"]
    assert get(rack="B01") == ["J-101", "J-102", "T-100"]
    assert get(site="hall-test", q="t-") == ["T-100"]
    assert get(vendor="nobody") == []


def test_cable_list_sorts_and_paginates(plant, engineer_client):
    html = engineer_client.get("/cables/", {"sort": "-label"}).content.decode()
    assert labels_in(html) == ["T-100", "J-102", "J-101", "J-100"]
    html = engineer_client.get("/cables/", {"sort": "label", "per_page": 3, "page": 2}).content.decode()
    assert labels_in(html) == ["T-100"]
    assert "page 2 of 2" in html and 'rel="prev"' in html
    # the sort link on the active column flips the direction
    assert "sort=-label" in engineer_client.get("/cables/", {"sort": "label"}).content.decode()


@pytest.mark.parametrize(
    ("sort", "field", "low", "high"),
    [
        ("retest", "retest_due", date(2026, 1, 5), date(2026, 6, 1)),
        ("installed", "install_date", date(2025, 1, 5), date(2025, 6, 1)),
        ("length", "length_m", Decimal("2.50"), Decimal("30.00")),
    ],
)
def test_cable_list_sorts_cables_without_the_value_last_in_both_directions(
    plant, engineer_client, sort, field, low, high
):
    """A page sorted by a column some cables leave blank (no retest date on copper, no install
    date yet, no length) starts with the cables that have one, ascending and descending: the
    overdue retests are what the engineer sorted for, not a page of blanks."""
    cables = plant["cables"]
    for label, value in (("J-101", low), ("J-102", high), ("J-100", None), ("T-100", None)):
        setattr(cables[label], field, value)
        cables[label].save()
    up = labels_in(engineer_client.get("/cables/", {"sort": sort}).content.decode())
    down = labels_in(engineer_client.get("/cables/", {"sort": f"-{sort}"}).content.decode())
    assert up[:2] == ["J-101", "J-102"] and set(up[2:]) == {"J-100", "T-100"}
    assert down[:2] == ["J-102", "J-101"] and set(down[2:]) == {"J-100", "T-100"}


def test_cable_list_bad_filter_input_is_reported_not_ignored(plant, engineer_client):
    html = engineer_client.get("/cables/", {"status": "melted"}).content.decode()
    assert "Select a valid choice" in html
    assert labels_in(html) == []


def test_cable_list_csv_export_has_every_matching_row(plant, engineer_client):
    resp = engineer_client.get("/cables/", {"format": "csv", "rack": "A01"})
    assert resp["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(resp.streaming_content).decode())))
    assert [r["label"] for r in rows] == ["J-100", "J-102", "T-100"]
    j102 = next(r for r in rows if r["label"] == "J-102")
    assert j102["a_end"] == "A01 U10 gpu-0001 OSFP1" and "leaf-01" in j102["b_end"]


@pytest.mark.parametrize("n_cables", [4, 24])
def test_cable_list_queries_do_not_grow_with_rows(
    plant, engineer_client, django_assert_max_num_queries, n_cables
):
    if n_cables > 4:
        dev = f.twin_port_device("gpu-many", cages=10, role="gpu_node", with_modules=False)[1]
        leaf = f.twin_port_device("leaf-many", cages=10, with_modules=False)[1]
        for i in range(n_cables - 4):
            f.jumper(f"M-{i:02d}", dev[i], leaf[i])
    # 10, and the one decision of the page's rows (11: test_query_budget.DECISION_QUERIES)
    with django_assert_max_num_queries(10 + 11):
        resp = engineer_client.get("/cables/", {"per_page": 50})
    assert len(labels_in(resp.content.decode())) == n_cables


def test_bulk_set_status_changes_the_ticked_cables(plant, engineer_client):
    ids = [plant["cables"]["J-100"].pk, plant["cables"]["J-101"].pk]
    resp = engineer_client.post(
        "/cables/status", {"cable": ids, "status": "degraded", "next": "/cables/?rack=A01"}
    )
    assert resp.status_code == 302 and resp["Location"] == "/cables/?rack=A01"
    assert set(Cable.objects.filter(pk__in=ids).values_list("status", flat=True)) == {"degraded"}


def test_bulk_set_status_refuses_tested_which_only_the_test_gate_sets(plant, engineer_client):
    """As ``POST /api/cables/<label>/status/``: a person sets planned, installed, degraded,
    faulty or retired; tested and in production come from the test gate."""
    ids = [plant["cables"]["J-100"].pk, plant["cables"]["J-101"].pk]
    before = dict(Cable.objects.filter(pk__in=ids).values_list("pk", "status"))
    resp = engineer_client.post("/cables/status", {"cable": ids, "status": "tested"}, follow=True)
    assert "msg-error" in resp.content.decode()
    assert dict(Cable.objects.filter(pk__in=ids).values_list("pk", "status")) == before


def test_bulk_set_status_is_all_or_nothing_through_the_production_gate(plant, engineer_client):
    """J-100 and J-101 have no tests: the page refuses production (the test gate's state, as the
    API does), the bulk service behind it refuses it all or nothing, and neither changes."""
    ids = [plant["cables"]["J-100"].pk, plant["cables"]["J-101"].pk]
    before = dict(Cable.objects.filter(pk__in=ids).values_list("pk", "status"))
    resp = engineer_client.post("/cables/status", {"cable": ids, "status": "in_production"}, follow=True)
    assert "msg-error" in resp.content.decode()
    with pytest.raises(ValidationError), transaction.atomic():
        cable_services.cables_set_status(
            cables=list(Cable.objects.filter(pk__in=ids)), status="in_production", reason="bulk"
        )
    assert dict(Cable.objects.filter(pk__in=ids).values_list("pk", "status")) == before


def test_bulk_set_status_never_redirects_off_site(plant, engineer_client):
    resp = engineer_client.post(
        "/cables/status",
        {"cable": [plant["cables"]["J-100"].pk], "status": "degraded", "next": "https://evil.example/"},
    )
    assert resp["Location"] == "/cables/"


def test_bulk_set_status_with_nothing_ticked_writes_nothing(plant, engineer_client):
    resp = engineer_client.post("/cables/status", {"status": "faulty"}, follow=True)
    assert "Tick the cables to change first" in resp.content.decode()
    assert not Cable.objects.filter(status="faulty").exists()


def test_viewer_sees_the_list_but_cannot_bulk_change(plant, viewer_client):
    assert viewer_client.get("/cables/").status_code == 200
    assert (
        viewer_client.post(
            "/cables/status", {"cable": [plant["cables"]["J-100"].pk], "status": "faulty"}
        ).status_code
        == 403
    )


def test_the_list_offers_ticked_rows_actions_only_to_whom_they_would_not_refuse(
    plant, viewer_client, engineer_client
):
    """A viewer was offered "Set status" and "Print labels" over row checkboxes, and both
    answered 403 "Not allowed": the list is theirs to read, without the bulk bar."""
    viewer = viewer_client.get("/cables/").content.decode()
    assert "J-100" in viewer
    assert "Set status" not in viewer and "Print labels" not in viewer
    assert "data-row-check" not in viewer and "data-check-all" not in viewer
    assert viewer_client.post("/labels/print/", {"cable": plant["cables"]["J-100"].pk}).status_code == 403
    engineer = engineer_client.get("/cables/").content.decode()
    assert "Set status" in engineer and "Print labels" in engineer and "data-row-check" in engineer


# --- add / edit a cable -----------------------------------------------------------------------


def cable_form(**over):
    data = {
        "label": "N-1",
        "kind": CableKind.SMF_OS2,
        "polarity": "B",
        "length_m": "3",
        "a_device": "gpu-0001",
        "a_port": "eth2",
        "a_connector_type": "MPO",
        "a_fibre_count": "12",
        "a_polish": "APC",
        "a_pinned": "false",
        "b_device": "leaf-01",
        "b_port": "Ethernet1/2",
        "b_connector_type": "MPO",
        "b_fibre_count": "12",
        "b_polish": "APC",
        "b_pinned": "false",
    }
    data.update(over)
    return data


def test_add_cable_records_it_with_both_ends(plant, engineer_client):
    resp = engineer_client.post("/cables/new", cable_form())
    assert resp.status_code == 302 and resp["Location"] == "/c/N-1"
    cable = Cable.objects.get(label="N-1")
    assert sorted(e.side for e in cable.ends.all()) == ["A", "B"]


@pytest.mark.parametrize(
    ("over", "field", "message"),
    [
        ({"a_port": "eth0"}, "a_port", "is already cabled"),  # J-102 is on eth0
        # one port at both ends: said once, at end B, as the API and the plan import say it
        (
            {"a_device": "leaf-01", "a_port": "Ethernet1/1", "b_port": "Ethernet1/1"},
            "b_port",
            "Both ends are the same port (leaf-01:Ethernet1/1).",
        ),
        ({"a_connector_type": "LC", "a_fibre_count": "2"}, "a_port", "takes MPO, not LC"),
        ({"b_polish": "UPC"}, "b_port", "is APC; an UPC plug"),
        ({"label": "J-100"}, "label", "already in use"),
        ({"a_device": "gpu-9999"}, "a_port", "There is no device called gpu-9999"),
        ({"b_port": "Ethernet9/9"}, "b_port", "leaf-01 has no port called Ethernet9/9"),
        ({"length_m": "-2"}, "length_m", "greater than or equal to 0.01"),
        ({"kind": "string"}, "kind", "Select a valid choice"),
        # an MPO plug with no fibre count: the test gate would ask for one fibre's result
        ({"a_fibre_count": ""}, "a_fibre_count", "MPO needs a fibre count: 8, 12, 16, 24 or 32."),
    ],
)
def test_add_cable_errors_appear_next_to_the_field_and_nothing_is_written(
    plant, engineer_client, over, field, message
):
    before = Cable.objects.count()
    resp = engineer_client.post("/cables/new", cable_form(**over))
    html = resp.content.decode()
    assert resp.status_code == 200
    assert message in html
    # the message sits in the field's own block
    block = html[html.index(f'id="id_{field}"') :]
    assert block.index(message) < block.index('class="field')
    assert Cable.objects.count() == before


def test_mpo12_sr8_module_refuses_an_lc_cable(plant, engineer_client):
    sr8 = f.twin_dr4_model(
        part="SR8-16",
        pmd="400GBASE-SR8",
        connector_type=ConnectorType.MPO,
        fibre_count=16,
        polish=Polish.UPC,
        connector_count=1,
        single_mode=False,
    )
    dev, ports = f.twin_port_device("gpu-sr8", cages=1, with_modules=False, role="gpu_node")
    from inventory.services.plant.transceivers import transceiver_install

    transceiver_install(transceiver=f.module(sr8), cage=ports[0].cage)
    resp = engineer_client.post(
        "/cables/new",
        cable_form(
            a_device="gpu-sr8",
            a_port=ports[0].name,
            a_connector_type="MPO",
            a_fibre_count="12",
            a_polish="UPC",
            kind=CableKind.MMF_OM4,
        ),
    )
    assert "takes MPO-16, not MPO-12" in resp.content.decode()
    assert not Cable.objects.filter(label="N-1").exists()


def test_too_long_dac_is_recorded_with_a_warning(plant, engineer_client):
    _, a = f.twin_port_device("sw-dac-a", cages=1, with_modules=False)
    _, b = f.twin_port_device("sw-dac-b", cages=1, with_modules=False)
    resp = engineer_client.post(
        "/cables/new",
        {
            "label": "DAC-7",
            "kind": CableKind.DAC,
            "length_m": "7",
            "a_device": "sw-dac-a",
            "a_port": a[0].name,
            "b_device": "sw-dac-b",
            "b_port": b[0].name,
        },
        follow=True,
    )
    html = resp.content.decode()
    assert Cable.objects.filter(label="DAC-7").exists()
    assert "past the usual 3 m reach" in html and "msg-warning" in html


def test_edit_cable_saves_and_keeps_history(plant, engineer_client):
    cable = plant["cables"]["J-100"]
    form = engineer_client.get("/c/J-100/edit").content.decode()
    import re

    version = re.search(r'name="version" value="([^"]+)"', form).group(1)
    resp = engineer_client.post("/c/J-100/edit", {"length_m": "4.5", "polarity": "A", "version": version})
    assert resp.status_code == 302
    cable.refresh_from_db()
    assert str(cable.length_m) == "4.50"
    page = engineer_client.get("/c/J-100").content.decode()
    assert "Length (m): – → 4.50" in page and "length_m" not in page  # the change, in words


def test_edit_cable_refuses_an_install_date_still_ahead(plant, engineer_client):
    """A cable that is in went in on a day already come (before, 9999-12-31 was saved and the
    cable's retest came due on the calendar's last day)."""
    import re

    cable = plant["cables"]["J-100"]
    assert cable.status != "planned"
    form = engineer_client.get("/c/J-100/edit").content.decode()
    version = re.search(r'name="version" value="([^"]+)"', form).group(1)
    resp = engineer_client.post("/c/J-100/edit", {"install_date": "9999-12-31", "version": version})
    assert resp.status_code == 200
    assert "31 Dec 9999 is still ahead: mark a cable installed once it is in." in resp.content.decode()
    cable.refresh_from_db()
    assert cable.install_date != date(9999, 12, 31)


def test_edit_over_someone_elses_newer_change_is_refused(plant, engineer_client, site_tech_client):
    import re

    cable = plant["cables"]["J-100"]
    form = engineer_client.get("/c/J-100/edit").content.decode()
    version = re.search(r'name="version" value="([^"]+)"', form).group(1)
    # meanwhile a technician reports the cable degraded from the phone
    assert site_tech_client.post("/c/J-100/fault", {"seen": "flaky", "status": "degraded"}).status_code == 302
    resp = engineer_client.post("/c/J-100/edit", {"length_m": "9", "polarity": "A", "version": version})
    html = resp.content.decode()
    assert resp.status_code == 200
    assert "changed since you opened it" in html and "tech" in html
    cable.refresh_from_db()
    assert cable.length_m != 9


# --- transceivers -----------------------------------------------------------------------------


def test_transceiver_list_filters_sorts_and_exports(plant, engineer_client, django_assert_max_num_queries):
    spare = f.module(serial="SPARE-1")
    with django_assert_max_num_queries(10):
        html = engineer_client.get("/transceivers/", {"status": "spare"}).content.decode()
    assert "SPARE-1" in html and plant["gpu"][0].cage.transceiver.serial not in html
    html = engineer_client.get("/transceivers/", {"rack": "A01", "sort": "-serial"}).content.decode()
    assert spare.serial not in html
    resp = engineer_client.get("/transceivers/", {"format": "csv", "device": "leaf-01"})
    rows = list(csv.DictReader(io.StringIO(b"".join(resp.streaming_content).decode())))
    assert len(rows) == 2 and {r["device"] for r in rows} == {"leaf-01"}


def test_add_transceiver_refuses_a_duplicate_serial(plant, engineer_client):
    model = f.twin_dr4_model()
    existing = plant["gpu"][0].cage.transceiver
    resp = engineer_client.post("/transceivers/new", {"model": model.pk, "serial": existing.serial.lower()})
    html = resp.content.decode()
    assert resp.status_code == 200
    assert f"Serial {existing.serial} is already recorded" in html
    assert Transceiver.objects.filter(serial__iexact=existing.serial).count() == 1
    resp = engineer_client.post("/transceivers/new", {"model": model.pk, "serial": "FRESH-1"})
    assert resp.status_code == 302
    assert Transceiver.objects.get(serial="FRESH-1").status == "spare"


def test_edit_transceiver_refuses_a_stale_form(plant, engineer_client):
    import re

    xcvr = f.module(serial="EDIT-1")
    form = engineer_client.get(f"/t/{xcvr.pk}/edit").content.decode()
    version = re.search(r'name="version" value="([^"]+)"', form).group(1)
    ok = engineer_client.post(
        f"/t/{xcvr.pk}/edit", {"serial": "EDIT-1", "firmware": "1.2", "version": version}
    )
    assert ok.status_code == 302
    stale = engineer_client.post(
        f"/t/{xcvr.pk}/edit", {"serial": "EDIT-1", "firmware": "9.9", "version": version}
    )
    assert "changed since you opened it" in stale.content.decode()
    xcvr.refresh_from_db()
    assert xcvr.firmware == "1.2"


def test_an_alert_on_the_path_marks_every_segment(plant, engineer_client):
    """An alert names J-100 as the suspect and the whole path J-100, T-100, J-101."""
    alert = Alert.objects.create(
        rule="fec_tail",
        severity="warning",
        cable=plant["cables"]["J-100"],
        opened_at=timezone.now(),
        updated_at=timezone.now(),
        summary="tail",
    )
    alert.cables.set([plant["cables"][x] for x in ("J-100", "T-100", "J-101")])
    html = engineer_client.get("/cables/", {"has_open_alert": "true"}).content.decode()
    assert labels_in(html) == ["J-100", "J-101", "T-100"]
    assert "alert" in engineer_client.get("/r/B01").content.decode()


def test_edit_cable_with_a_damaged_version_asks_to_reload_not_a_500(plant, engineer_client):
    """The hidden version holds the time the editor loaded; one shaped like a time but none
    (a tampered or truncated form) is the form's error, and nothing is saved."""
    resp = engineer_client.post(
        "/c/J-100/edit", {"length_m": "4.5", "polarity": "A", "version": "2026-13-45T10:00:00+00:00"}
    )
    assert resp.status_code == 200
    assert "The form is damaged; reload the page." in resp.content.decode()
    plant["cables"]["J-100"].refresh_from_db()
    assert str(plant["cables"]["J-100"].length_m) != "4.50"
