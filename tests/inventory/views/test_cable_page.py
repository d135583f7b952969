import socket

import pytest
from django.test import Client

from inventory.core.choices import CableStatus
from inventory.models import Cable, FieldNote
from inventory.selectors.labels.facts import cable_label_facts
from inventory.services.plant import cables as cable_services
from tests import factories as f

pytestmark = pytest.mark.django_db


def test_cable_page_shows_both_ends_modules_path_tests_and_overdue_retest(plant, site_tech_client):
    resp = site_tech_client.get("/c/J-102")
    html = resp.content.decode()
    assert resp.status_code == 200
    gpu_module = plant["gpu"][0].cage.transceiver
    leaf_module = plant["leaf"][0].cage.transceiver
    # both ends: rack, U, device, port and module serial
    assert "A01" in html and "U10" in html and "gpu-0001" in html and "eth0" in html
    assert "B01" in html and "U46" in html and "leaf-01" in html and "Ethernet1/1" in html
    assert gpu_module.serial in html and leaf_module.serial in html
    # latest test with verdict and margin; the retest is overdue and says so
    assert "Power meter (OLTS)" in html and "margin 1.80 dB" in html and "Pass" in html
    assert 'class="retest-overdue"' in html and "overdue" in html
    # one-tap actions (a replacement adds a cable: an engineer's, not offered to a technician)
    for name in ("fault", "swap", "serviced", "edit"):
        assert f"/c/J-102/{name}" in html
    assert "/c/J-102/replace" not in html


def test_cable_page_offers_fault_replace_and_edit_only_where_the_technician_may(plant, client):
    """A technician in no team may act on no site's cables (issue 32): no swap, fault, replace or
    edit button (each would answer 403, as the API would) is shown to them."""
    client.force_login(f.UserFactory(username="teamless", role="technician"))
    html = client.get("/c/J-102").content.decode()
    for name in ("swap", "fault", "replace", "edit"):
        assert f"/c/J-102/{name}" not in html


def test_cable_page_traces_the_whole_channel_through_panels(plant, tech_client):
    html = tech_client.get("/c/T-100").content.decode()
    # the trunk's page shows the channel it carries from NIC to leaf, through both panels
    for label in ("J-100", "T-100", "J-101"):
        assert f'href="/c/{label}"' in html
    assert "gpu-0001:eth1" in html and "leaf-01:Ethernet2/1" in html


def test_cable_page_queries_are_bounded(plant, tech_client, django_assert_max_num_queries):
    with django_assert_max_num_queries(30):
        assert tech_client.get("/c/J-100").status_code == 200


def test_unknown_label_is_a_404(plant, tech_client):
    assert tech_client.get("/c/NOPE").status_code == 404


def test_retired_cable_offers_no_actions_and_points_to_its_replacement(plant, tech_client):
    cable_services.cable_replace(old=plant["cables"]["J-102"], new_label="J-102B")
    html = tech_client.get("/c/J-102").content.decode()
    assert "Retired" in html and 'href="/c/J-102B"' in html
    assert "/c/J-102/fault" not in html
    assert "Replaces" in tech_client.get("/c/J-102B").content.decode()


# --- login and the scanned URL --------------------------------------------------------------


def test_scan_while_logged_out_goes_to_login_and_back_to_the_cable(plant):
    f.UserFactory(username="walker", role="technician")
    client = Client()
    resp = client.get("/c/J-102")
    assert resp.status_code == 302
    assert resp["Location"] == "/login/?next=/c/J-102"
    login_page = client.get(resp["Location"]).content.decode()
    assert 'name="next" value="/c/J-102"' in login_page
    resp = client.post("/login/", {"username": "walker", "password": "pw-for-tests-1", "next": "/c/J-102"})
    assert resp.status_code == 302 and resp["Location"] == "/c/J-102"
    assert client.get("/c/J-102").status_code == 200


@pytest.mark.parametrize(
    "evil", ["https://evil.example/c/J-102", "//evil.example/c/J-102", "/\\evil.example", "http:evil.example"]
)
def test_login_never_sends_you_off_site(plant, evil):
    f.UserFactory(username="walker", role="technician")
    resp = Client().post("/login/", {"username": "walker", "password": "pw-for-tests-1", "next": evil})
    assert resp.status_code == 302
    assert resp["Location"] == "/"


# --- fault report ----------------------------------------------------------------------------


def test_fault_report_marks_the_cable_and_mails_the_team_after_commit(
    plant, site_tech_client, smtp_sink, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        resp = site_tech_client.post(
            "/c/J-100/fault", {"seen": "jacket crushed behind the door", "status": CableStatus.FAULTY}
        )
    assert resp.status_code == 302 and resp["Location"] == "/c/J-100"
    assert len(callbacks) == 1
    cable = Cable.objects.get(label="J-100")
    assert cable.status == CableStatus.FAULTY
    assert len(smtp_sink) == 1
    mail = smtp_sink[0]
    assert {a.strip() for a in mail["To"].split(",")} == {"hall-a@example.com", "tina@example.com"}
    assert "J-100" in mail["Subject"]
    assert "jacket crushed behind the door" in mail.get_payload()
    assert mail["Message-ID"].startswith("<fault-")
    page = site_tech_client.get("/c/J-100").content.decode()
    assert "Fault recorded" in page and "jacket crushed behind the door" in page


def test_fault_mail_links_to_the_url_on_the_cables_printed_label(
    plant, site_tech_client, smtp_sink, django_capture_on_commit_callbacks, settings
):
    """The link a team follows from the fault mail is the one the cable's QR label encodes,
    for a label with characters a page link may leave unescaped (``:``, ``(``, ``)``)."""
    settings.CABLETRACK_BASE_URL = "https://cabletrack.example.com"
    cable = Cable.objects.get(label="J-100")
    cable.label = "J:100(a)"
    cable.save()
    with django_capture_on_commit_callbacks(execute=True):
        site_tech_client.post("/c/J:100(a)/fault", {"seen": "bent", "status": CableStatus.FAULTY})
    printed = {x.url for x in cable_label_facts(cable_ids=[cable.pk], base_url=settings.CABLETRACK_BASE_URL)}
    assert printed == {"https://cabletrack.example.com/c/J%3A100%28a%29"}
    assert f"Open the cable: {printed.pop()}" in smtp_sink[0].get_payload().splitlines()


@pytest.mark.django_db(transaction=True)  # the notice goes out on commit, as in production
def test_fault_report_banner_names_who_was_told_when_the_mail_server_took_the_notice(
    plant, site_tech_client, smtp_sink
):
    resp = site_tech_client.post(
        "/c/J-100/fault", {"seen": "link light off", "status": CableStatus.FAULTY}, follow=True
    )
    html = resp.content.decode()
    assert len(smtp_sink) == 1
    assert "Fault recorded; J-100 is now faulty. Told: hall-a@example.com, tina@example.com." in html


@pytest.mark.django_db(transaction=True)
def test_fault_report_banner_says_the_notice_could_not_be_sent_and_will_be_retried(
    plant, site_tech_client, settings
):
    """No mail server listening (connection refused): the fault is recorded all the same, the
    banner does not claim anyone was told, and the notice waits for its retry."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        settings.EMAIL_PORT = s.getsockname()[1]  # nothing listens there
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    resp = site_tech_client.post(
        "/c/J-100/fault", {"seen": "link light off", "status": CableStatus.FAULTY}, follow=True
    )
    html = resp.content.decode()
    assert Cable.objects.get(label="J-100").status == CableStatus.FAULTY
    assert "Fault recorded; J-100 is now faulty." in html
    assert "Told:" not in html
    assert "could not be sent yet" in html and "retried automatically" in html
    note = FieldNote.objects.get(cable__label="J-100")
    assert note.notice_sent_at is None and "Connection" in note.notice_error


def test_fault_report_without_a_description_writes_nothing(plant, site_tech_client, smtp_sink):
    resp = site_tech_client.post("/c/J-100/fault", {"seen": "  ", "status": CableStatus.FAULTY})
    html = resp.content.decode()
    assert resp.status_code == 200
    assert 'class="error field-error"' in html and "Say what you saw (a light off" in html
    assert Cable.objects.get(label="J-100").status != CableStatus.FAULTY
    assert smtp_sink == []


def test_viewer_cannot_report_a_fault(plant, viewer_client):
    assert viewer_client.post("/c/J-100/fault", {"seen": "x", "status": "faulty"}).status_code == 403
    assert Cable.objects.get(label="J-100").status != CableStatus.FAULTY


# --- re-seated / cleaned --------------------------------------------------------------------


def test_reseated_and_cleaned_is_recorded_in_the_history(plant, tech_client):
    resp = tech_client.post("/c/J-102/serviced", {"kind": "reseated_cleaned", "text": "both ends"})
    assert resp.status_code == 302
    html = tech_client.get("/c/J-102").content.decode()
    assert "re-seated and cleaned" in html and "both ends" in html and "tech" in html


def test_serviced_rejects_an_unknown_kind(plant, tech_client):
    resp = tech_client.post("/c/J-102/serviced", {"kind": "polished"})
    assert resp.status_code == 200 and "Select a valid choice" in resp.content.decode()
    assert not plant["cables"]["J-102"].field_notes.exists()


# --- swap a module ---------------------------------------------------------------------------


def test_swap_puts_the_new_module_in_and_the_old_one_in_failed(plant, tech_client):
    cage = plant["gpu"][0].cage
    old = cage.transceiver
    new = f.module(serial="NEW-0001")
    resp = tech_client.post(
        "/c/J-102/swap",
        {"cage": cage.pk, "new_serial": "new-0001", "old_to": "failed", "notes": "dead laser"},
    )
    assert resp.status_code == 302, resp.content.decode()
    old.refresh_from_db()
    new.refresh_from_db()
    assert new.cage_id == cage.pk and new.status == "installed"
    assert old.cage_id is None and old.status == "failed"
    html = tech_client.get("/c/J-102").content.decode()
    assert "NEW-0001" in html
    assert old.serial in html and "swapped out" not in html and "failed" in html  # placement history


def test_swap_is_offered_only_where_an_end_plugs_into_a_module_cage(plant, tech_client):
    """J-102 ends in the GPU's and the leaf's cages: "Swap a module" is there. T-100 runs from
    panel to panel: no end holds a module, and the button would only lead to "there is no module
    to swap"; it is not offered."""
    assert 'href="/c/J-102/swap"' in tech_client.get("/c/J-102").content.decode()
    html = tech_client.get("/c/T-100").content.decode()
    assert "/c/T-100/swap" not in html and "Swap a module" not in html


def test_swap_with_an_unknown_serial_says_so_next_to_the_field(plant, tech_client):
    cage = plant["gpu"][0].cage
    old = cage.transceiver
    resp = tech_client.post("/c/J-102/swap", {"cage": cage.pk, "new_serial": "NOPE-1", "old_to": "spare"})
    html = resp.content.decode()
    assert resp.status_code == 200
    assert "No module with serial NOPE-1 is recorded" in html
    old.refresh_from_db()
    assert old.cage_id == cage.pk


def test_an_empty_swap_or_fault_form_says_what_to_give_not_this_field_is_required(plant, tech_client):
    html = tech_client.post("/c/J-102/swap", {"new_serial": "  ", "old_to": "spare"}).content.decode()
    assert "Choose the end whose module you swapped." in html
    assert "Type or scan the new module&#x27;s serial (on its label)." in html
    html = tech_client.post("/c/J-102/fault", {"seen": " ", "status": "faulty"}).content.decode()
    assert "Say what you saw (a light off, a crushed jacket, where): it goes on the record." in html
    assert "This field is required." not in html


def test_swap_refuses_a_module_that_does_not_fit(plant, tech_client):
    from inventory.core.choices import FormFactor

    cage = plant["gpu"][0].cage
    qsfp = f.module(f.twin_dr4_model(part="QSFP-ONLY", form_factor=FormFactor.QSFP28), serial="Q-1")
    resp = tech_client.post("/c/J-102/swap", {"cage": cage.pk, "new_serial": "Q-1", "old_to": "spare"})
    html = resp.content.decode()
    assert resp.status_code == 200 and "does not fit" in html
    qsfp.refresh_from_db()
    assert qsfp.cage_id is None
    assert cage.transceiver.status == "installed"


# --- replace the cable ----------------------------------------------------------------------


def test_replace_retires_the_old_cable_and_opens_the_new_one(plant, site_tech_client, engineer_client):
    # A technician may not, even in their team's site: a replacement adds a cable (add_cable).
    assert site_tech_client.post("/c/J-102/replace", {"new_label": "J-200"}).status_code == 403
    assert not Cable.objects.filter(label="J-200").exists()
    resp = engineer_client.post("/c/J-102/replace", {"new_label": "J-200", "reason": "bent"})
    assert resp.status_code == 302 and resp["Location"] == "/c/J-200"
    old = Cable.objects.get(label="J-102")
    assert old.status == CableStatus.RETIRED and old.replaced_by.label == "J-200"
    html = engineer_client.get("/c/J-200").content.decode()
    assert "gpu-0001" in html and "leaf-01" in html


def test_replace_with_a_label_in_use_writes_nothing(plant, engineer_client):
    resp = engineer_client.post("/c/J-102/replace", {"new_label": "J-100"})
    assert resp.status_code == 200
    assert "already on another cable" in resp.content.decode()
    assert Cable.objects.get(label="J-102").status == CableStatus.IN_PRODUCTION


def test_a_trunk_carrying_several_links_says_how_many(plant, tech_client):
    """A second channel over T-100: [gpu eth2]--J-103--[pp-a F2]==T-100==[pp-b F2]--J-104--[leaf E2/2]"""
    from inventory.core.choices import Polarity

    f.jumper("J-103", plant["gpu"][2], plant["pa_front"][1], polarity=Polarity.A)
    f.jumper("J-104", plant["pb_front"][1], plant["leaf"][3], polarity=Polarity.A)
    html = tech_client.get("/c/T-100").content.decode()
    assert "2 links" in html
    # each jumper's page shows its own whole channel
    html = tech_client.get("/c/J-104").content.decode()
    assert "gpu-0001:eth2" in html and "leaf-01:Ethernet2/2" in html and 'href="/c/T-100"' in html
