"""The fault notice through a real SMTP server (aiosmtpd on loopback): sent after the commit,
kept and retried by the sweep when the server does not take it, never sent twice.

rack R-FN (team "Fabric ops"): [gpu-fn eth0]--F-N1--[leaf-fn Ethernet1/1]
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.core.choices import CableStatus
from inventory.models import Cable, FieldNote, Team
from inventory.services.alerts.notify import CLAIM_LEASE, MAX_ATTEMPTS
from inventory.services.plant import fieldwork
from tests import factories as f
from tests.smtp import SmtpSink, free_port

pytestmark = pytest.mark.django_db


@pytest.fixture
def sink(settings):
    server = SmtpSink().start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", server.port
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
    yield server
    server.stop()


@pytest.fixture
def cable():
    rack = f.RackFactory(name="R-FN")
    rack.team = Team.objects.create(name="Fabric ops", email="fabric-ops@example.com")
    rack.save()
    _, gpu = f.twin_port_device("gpu-fn", rack=rack, u=3, role="gpu_node")
    _, leaf = f.twin_port_device("leaf-fn", rack=rack, u=40)
    return f.jumper("F-N1", gpu[0], leaf[0])


def report(cable, capture):
    with capture(execute=True):
        return fieldwork.cable_fault_report(cable=cable, seen="link light off", status=CableStatus.FAULTY)


def test_the_notice_the_server_took_is_recorded_as_told(cable, sink, django_capture_on_commit_callbacks):
    note = report(cable, django_capture_on_commit_callbacks)
    assert fieldwork.fault_notice_told(note) == (True, "Told: fabric-ops@example.com.")
    assert FieldNote.objects.get().notice_sent_at is not None
    assert fieldwork.fault_notices_send(now=timezone.now() + timedelta(hours=1)) == 0
    assert len(sink.messages()) == 1


def test_the_notice_says_where_the_cable_runs(cable, sink, django_capture_on_commit_callbacks):
    """The team reads where to walk (both ends as the cable's labels say them), not only a label."""
    report(cable, django_capture_on_commit_callbacks)
    (got,) = sink.messages()
    text = got.text.replace("\r\n", "\n")
    assert "Where: A R-FN U3 gpu-fn OSFP1 Ethernet1/1 \u00b7 B R-FN U40 leaf-fn OSFP1 Ethernet1/1\n" in text


def test_a_notice_the_server_refused_is_kept_and_sent_by_the_sweep_once_it_is_back(
    cable, sink, settings, django_capture_on_commit_callbacks
):
    settings.EMAIL_PORT = free_port()  # nothing listens there: connection refused
    note = report(cable, django_capture_on_commit_callbacks)
    assert Cable.objects.get(pk=cable.pk).status == CableStatus.FAULTY  # the fault stays recorded
    delivered, words = fieldwork.fault_notice_told(note)
    assert not delivered and "could not be sent yet" in words and "retried automatically" in words
    stored = FieldNote.objects.get()
    assert stored.notice_sent_at is None and "ConnectionRefusedError" in stored.notice_error
    assert stored.notice_attempts == 1
    now = timezone.now()
    assert fieldwork.fault_notices_send(now=now) == 0  # not before its backoff
    assert FieldNote.objects.get().notice_attempts == 1
    settings.EMAIL_PORT = sink.port
    assert fieldwork.fault_notices_send(now=now + timedelta(minutes=2)) == 1
    assert fieldwork.fault_notices_send(now=now + timedelta(hours=1)) == 0  # never twice
    [mail] = sink.messages()
    assert "F-N1" in mail.subject and mail.message_id.startswith(f"<fault-{note.pk}@")
    stored = FieldNote.objects.get()
    assert stored.notice_sent_at is not None and stored.notice_error == "" and stored.notice_attempts == 2


def test_a_notice_whose_reporter_died_before_sending_goes_after_the_lease(cable, sink):
    """The report committed, the process died before its after-commit send ran."""
    fieldwork.cable_fault_report(cable=cable, seen="jacket crushed", status=CableStatus.DEGRADED)
    now = timezone.now()
    assert fieldwork.fault_notices_send(now=now) == 0  # still the reporter's
    assert fieldwork.fault_notices_send(now=now + CLAIM_LEASE + timedelta(seconds=1)) == 1
    assert len(sink.messages()) == 1


def test_a_notice_is_given_up_after_the_last_attempt_and_says_so(
    cable, settings, django_capture_on_commit_callbacks
):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", free_port()
    report(cable, django_capture_on_commit_callbacks)
    later = timezone.now()
    for _ in range(MAX_ATTEMPTS - 1):
        later += timedelta(days=1)
        assert fieldwork.fault_notices_send(now=later) == 0
    note = FieldNote.objects.get()
    assert note.notice_attempts == MAX_ATTEMPTS and note.notice_next_at is None
    assert fieldwork.fault_notices_send(now=later + timedelta(days=1)) == 0
    assert FieldNote.objects.get().notice_attempts == MAX_ATTEMPTS
    delivered, words = fieldwork.fault_notice_told(note)
    assert not delivered and "tell them yourself" in words


def test_a_cable_nobody_looks_after_tells_nobody_and_owes_no_notice(django_capture_on_commit_callbacks):
    rack = f.RackFactory(name="R-NONE")
    _, gpu = f.twin_port_device("gpu-nn", rack=rack, u=3, role="gpu_node")
    _, leaf = f.twin_port_device("leaf-nn", rack=rack, u=40)
    note = report(f.jumper("F-N2", gpu[0], leaf[0]), django_capture_on_commit_callbacks)
    assert fieldwork.fault_notice_told(note) == (
        True,
        "Told: nobody (no team is responsible for these racks).",
    )
    assert note.notice_next_at is None and fieldwork.fault_notices_send(now=timezone.now()) == 0


def test_the_notice_says_why_its_reader_gets_it_and_is_marked_automatic(
    cable, sink, settings, django_capture_on_commit_callbacks
):
    """The team reads why the notice reached them; the Message-ID is on the mail domain and the
    mail is marked automatic (no out-of-office replies to it)."""
    settings.CABLETRACK_BASE_URL = "https://cabletrack.example.com"
    settings.CABLETRACK_MAIL_DOMAIN = "mail.example.org"
    note = report(cable, django_capture_on_commit_callbacks)
    (got,) = sink.messages()
    assert (
        got.text.replace("\r\n", "\n")
        .rstrip()
        .endswith("You get this mail because you are on team Fabric ops, which looks after rack R-FN.")
    )
    assert got.message_id == f"<fault-{note.pk}@mail.example.org>"
    assert got.message["Auto-Submitted"] == "auto-generated"
