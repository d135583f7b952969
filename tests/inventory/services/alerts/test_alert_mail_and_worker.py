"""Alert mail through a real SMTP server (aiosmtpd on loopback), sent once; and the rule task on
a real Celery worker against the test database (PostgreSQL + Redis when configured).

Topology::

    [gpu-m eth0]--J-M0--[leaf-m Ethernet1/1]     the link that degrades
"""

import email
import email.policy
import socket
import time
from datetime import timedelta

import pytest
from aiosmtpd.controller import Controller
from django.utils import timezone

from inventory.core.choices import CableStatus, DeviceRole
from inventory.models import Alert, AlertNotification, Cable, Team
from inventory.services import alerts as svc
from tests import factories as f
from tests.workers import wait_for


class _Sink:
    def __init__(self):
        self.messages = []

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 - aiosmtpd's hook name
        self.messages.append((envelope.rcpt_tos, envelope.content.decode("utf-8", "replace")))
        return "250 OK"


@pytest.fixture
def smtp(settings):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sink = _Sink()
    ctl = Controller(sink, hostname="127.0.0.1", port=port)
    ctl.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", port
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
    yield sink
    ctl.stop()


def _degrading_link(now):
    team = Team.objects.create(name="Row ops", email="row-ops@example.com")
    rack = f.RackFactory(name="R-MAIL")
    rack.row.team = team
    rack.row.save()
    _, gpu = f.twin_port_device(
        "gpu-m", rack=rack, role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}"
    )
    _, leaf = f.twin_port_device("leaf-m", rack=rack, u=30)
    cable = f.jumper("J-M0", gpu[0], leaf[0])
    cable.status = CableStatus.IN_PRODUCTION
    cable.save()
    f.rollups(gpu[0], now - timedelta(minutes=15), 15, ber=3e-4)  # over the KP4 limit at the GPU
    f.rollups(leaf[0], now - timedelta(minutes=15), 15)
    return cable


@pytest.mark.django_db
def test_an_opened_alert_is_mailed_once_to_the_rows_team(smtp):
    now = timezone.now().replace(second=0, microsecond=0)
    _degrading_link(now)
    svc.alerts_evaluate(now=now)
    alert = Alert.objects.get()
    assert svc.alert_notifications_send(now=now) == 1
    assert svc.alert_notifications_send(now=now + timedelta(minutes=1)) == 0  # never twice
    svc.alerts_evaluate(now=now + timedelta(seconds=30))  # a re-run opens nothing new
    assert svc.alert_notifications_send(now=now + timedelta(minutes=30)) == 0
    (rcpts, content) = smtp.messages[0]
    assert len(smtp.messages) == 1
    assert rcpts == ["row-ops@example.com"]
    assert f"Message-ID: <alert-{alert.pk}-opened@" in content
    assert "J-M0" in content and "gpu-m:eth0" in content
    assert AlertNotification.objects.get().sent_at is not None


@pytest.mark.django_db
def test_an_alert_notice_says_where_each_cable_of_the_path_runs(smtp, settings):
    """A technician reading the notice on the way to the hall learns where to walk: each cable of
    the path with both its ends as its printed labels say them, and the link to its page."""
    settings.CABLETRACK_BASE_URL = "https://cabletrack.example.com"
    now = timezone.now().replace(second=0, microsecond=0)
    _degrading_link(now)
    svc.alerts_evaluate(now=now)
    assert svc.alert_notifications_send(now=now) == 1
    message = email.message_from_bytes(smtp.messages[0][1].encode(), policy=email.policy.default)
    text = message.get_content().replace("\r\n", "\n")
    assert (
        "  J-M0: A R-MAIL U1 gpu-m OSFP1 eth0 \u00b7 B R-MAIL U30 leaf-m OSFP1 Ethernet1/1\n"
        "    https://cabletrack.example.com/c/J-M0\n"
    ) in text


@pytest.mark.django_db
def test_a_failed_send_is_retried_by_the_sweep_after_its_backoff(settings, smtp):
    """SMTP down: the notice is tried once, then not again before its backoff (60 s, then
    120 s) has passed, however often the sender runs; it goes out once the server is back."""
    now = timezone.now().replace(second=0, microsecond=0)
    _degrading_link(now)
    svc.alerts_evaluate(now=now)
    good_port = settings.EMAIL_PORT
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        settings.EMAIL_PORT = s.getsockname()[1]  # nothing listens there

    def attempts():
        return AlertNotification.objects.get().attempts

    assert svc.alert_notifications_send(now=now) == 0
    notice = AlertNotification.objects.get()
    assert notice.sent_at is None and notice.error and notice.attempts == 1
    for later in (10, 30, 59):  # every alert opened runs the sender: no retry inside the backoff
        assert svc.alert_notifications_send(now=now + timedelta(seconds=later)) == 0
        assert attempts() == 1
    assert svc.alert_notifications_send(now=now + timedelta(seconds=61)) == 0  # the retry, failed again
    assert attempts() == 2
    assert svc.alert_notifications_send(now=now + timedelta(seconds=61 + 119)) == 0
    assert attempts() == 2  # the second wait is twice as long
    settings.EMAIL_PORT = good_port
    assert svc.alert_notifications_send(now=now + timedelta(seconds=61 + 121)) == 1
    assert attempts() == 3
    assert svc.alert_notifications_send(now=now + timedelta(hours=1)) == 0
    assert len(smtp.messages) == 1


@pytest.mark.worker
def test_the_rule_task_runs_on_a_real_worker(celery_worker_proc):
    from inventory.tasks import alerts_evaluate_task

    now = timezone.now().replace(second=0, microsecond=0)
    cable = _degrading_link(now - timedelta(minutes=1))
    alerts_evaluate_task.delay()
    alert = wait_for(lambda: Alert.objects.filter(rule="fec_degradation").first(), timeout=60)
    assert list(alert.cables.values_list("label", flat=True)) == ["J-M0"]
    wait_for(lambda: Cable.objects.get(pk=cable.pk).status == CableStatus.DEGRADED, timeout=30)
    # Beat firing again (and a redelivery) changes nothing: still one alert.
    alerts_evaluate_task.delay()
    alerts_evaluate_task.delay()
    time.sleep(3)
    wait_for(lambda: Alert.objects.get().updated_at > alert.updated_at, timeout=60)
    assert Alert.objects.count() == 1


def _received(smtp):
    return email.message_from_bytes(smtp.messages[0][1].encode(), policy=email.policy.default)


@pytest.mark.django_db
def test_an_alert_notice_says_why_its_reader_gets_it_and_is_marked_automatic(smtp, settings):
    """The reader learns why the mail reached them (their team and the racks it looks after);
    the Message-ID is on the mail domain (not the site's host) and mail systems see it is
    automatic (no out-of-office replies to it)."""
    settings.CABLETRACK_BASE_URL = "https://cabletrack.example.com:8443"
    settings.CABLETRACK_MAIL_DOMAIN = "mail.example.org"
    now = timezone.now().replace(second=0, microsecond=0)
    _degrading_link(now)
    Team.objects.get(name="Row ops").members.add(f.person("rowan", email="rowan@example.com"))
    svc.alerts_evaluate(now=now)
    assert svc.alert_notifications_send(now=now) == 1
    message = _received(smtp)
    text = message.get_content().replace("\r\n", "\n")
    assert text.rstrip().endswith(
        "You get this mail because you are on team Row ops, which looks after rack R-MAIL."
    )
    assert smtp.messages[0][0] == ["row-ops@example.com", "rowan@example.com"]
    assert message["Message-ID"] == f"<alert-{Alert.objects.get().pk}-opened@mail.example.org>"
    assert message["Auto-Submitted"] == "auto-generated"


@pytest.mark.django_db
def test_a_long_alert_subject_is_cut_between_words(smtp):
    """A collectives alert's summary runs past 200 characters: the subject ends with a whole
    word and "…", never with half a device name such as "(leaf-"."""
    now = timezone.now().replace(second=0, microsecond=0)
    _degrading_link(now)
    svc.alerts_evaluate(now=now)
    hops = ", ".join(
        f"rail {i} (leaf-{i:02d} Ethernet1/{i})" for i in range(1, 9)
    )  # a summary of 290 characters
    Alert.objects.update(summary=f"All-reduce slow on job 4711 across {hops}")
    assert svc.alert_notifications_send(now=now) == 1
    # (a folded, encoded header reads back with the fold's leading space; mail clients drop it)
    subject = str(_received(smtp)["Subject"]).strip()
    assert len(subject) <= 200 and subject.endswith("…")
    head = subject.removesuffix("…")
    full = f"[cabletrack] {Alert.objects.get().get_severity_display()}: All-reduce slow on job 4711 across {hops}"
    assert full.startswith(head) and full[len(head)] in " ,("  # cut where a word ends
    assert not head.endswith(("(leaf-", "(", ","))


@pytest.mark.django_db
def test_the_alert_recipients_cost_three_queries_whatever_the_devices(django_assert_num_queries):
    """Who is told, and why, is read set-based: the racks, their teams, the teams' members."""
    team = Team.objects.create(name="Hall ops", email="hall@example.com")
    devices = []
    for i in range(6):
        rack = f.RackFactory(name=f"R-Q{i}")
        rack.row.team = team
        rack.row.save()
        devices.append(f.twin_port_device(f"gpu-q{i}", rack=rack)[0])
    with django_assert_num_queries(3):
        told = svc.alert_recipients(devices=devices)
    assert [t.address for t in told] == ["hall@example.com"]
    assert (
        told[0].reason
        == "are on team Hall ops, which looks after racks R-Q0, R-Q1, R-Q2, R-Q3, R-Q4 and R-Q5"
    )
