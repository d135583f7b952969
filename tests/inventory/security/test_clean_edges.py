"""Clean edges (issue 32): control characters never reach a mail header, a file name or a log
line; NUL in a URL is a 400; a full upload disk is a 507 with nothing left behind; a garbled
X-Forwarded-For from the trusted proxy is refused; failed token authentication is throttled
per client. (Duplicate JSON keys in API bodies: test_smaller_findings.py.)"""

import errno
import json
import logging
from datetime import UTC, datetime

import pytest
from django.core import mail
from django.core.files.storage import filesystem
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.test import APIClient

from inventory.core.choices import AlertRule, TokenKind
from inventory.middleware.requestid import OneLineFormatter
from inventory.models import Alert, AlertNotification, CableTest, OtdrTrace
from inventory.services.alerts.notify import alert_notifications_send
from tests import factories as f
from tests.paths import TEST_DATA

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


# --- mail headers and log lines ------------------------------------------------------------------
def test_an_alert_whose_summary_has_a_line_break_is_still_mailed_on_one_line(plant):
    alert = Alert.objects.create(
        key="unrecorded_swap:port:1",
        rule=AlertRule.UNRECORDED_SWAP,
        severity="notify",
        summary="leaf-n:Ethernet1/1 reports EVIL\r\nBcc: victim@example.com s/n X",
        recommendation="Record the swap.",
        opened_at=T0,
        updated_at=T0,
    )
    AlertNotification.objects.create(
        alert=alert, kind="opened", recipients=["ops@example.com"], message_id="<a-1@x>", created_at=T0
    )
    assert alert_notifications_send(now=T0) == 1
    (msg,) = mail.outbox
    assert "\r" not in msg.subject and "\n" not in msg.subject
    assert "reports EVIL Bcc: victim@example.com s/n X" in msg.subject
    assert msg.bcc == [] and msg.to == ["ops@example.com"]
    assert AlertNotification.objects.get().sent_at is not None


def test_module_strings_with_a_line_break_are_refused_per_item_at_ingest(plant):
    client = f.api_token_client(plant.users["collector"], kind=TokenKind.INGEST)
    now = datetime.now(UTC).replace(microsecond=0)
    good = f.telemetry_sample("leaf-n", "Ethernet1/1", now, module_serial="MT-1")
    bad = f.telemetry_sample("leaf-n", "Ethernet1/2", now, module_serial="MT-2\r\nX-Injected: 1")
    r = client.post("/api/telemetry/", {"samples": [good, bad]}, format="json")
    assert r.status_code in (200, 207), r.content
    body = r.json()
    assert body["stored"] == 1
    assert "control characters" in json.dumps(body)


def test_a_log_line_cannot_be_forged_by_a_logged_value():
    record = logging.LogRecord(
        "x", logging.WARNING, __file__, 1, "serial %s", ("A\r\n2026 ERROR forged",), None
    )
    line = OneLineFormatter("%(levelname)s %(message)s").format(record)
    assert line == "WARNING serial A\\r\\n2026 ERROR forged"


# --- URLs ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("url", ["/c/%00", "/r/x%00y", "/api/cables/%00/", "/cables/?q=a%00b"])
def test_nul_in_a_url_is_a_400(plant, url):
    client = Client()
    client.force_login(plant.users["engineer"])
    response = client.get(url)
    assert response.status_code == 400
    assert b"NUL" in response.content


@pytest.mark.parametrize("url", ["/c/A%0d%0aB", "/r/x%0ay", "/api/cables/A%0d%0aB/"])
def test_other_control_characters_in_a_url_are_a_plain_not_found_never_a_500(plant, url):
    """CR, LF and the rest may be in names stored before names were checked (their pages must open,
    test_names_everywhere.py); a label or rack no one stored is a 404 page, not a server error."""
    client = Client()
    client.force_login(plant.users["engineer"])
    assert client.get(url).status_code == 404


# --- a full disk -----------------------------------------------------------------------------------
def test_a_full_upload_disk_is_a_507_and_leaves_nothing_behind(plant, settings, tmp_path, monkeypatch):
    settings.MEDIA_ROOT = tmp_path / "uploads"
    real_fdopen = filesystem.os.fdopen

    class FullDisk:
        """The file the storage writes: the first 1,000 bytes land, then the disk is full."""

        def __init__(self, fd, mode):
            self.f = real_fdopen(fd, mode)

        def write(self, chunk):
            self.f.write(chunk[:1000])
            self.f.flush()
            raise OSError(errno.ENOSPC, "No space left on device")

        def close(self):
            self.f.close()

    monkeypatch.setattr(filesystem.os, "fdopen", FullDisk)
    client = APIClient()
    client.force_login(plant.users["engineer"])
    data = (TEST_DATA / "sor" / "anritsu-mt1000a_1310_0001.sor").read_bytes()
    r = client.post(
        "/api/tests/otdr/", {"cable": "N-1", "files": [SimpleUploadedFile("t.sor", data)]}, format="multipart"
    )
    assert r.status_code == 507, r.content
    assert "storage is full" in r.json()["detail"]
    assert not CableTest.objects.exists() and not OtdrTrace.objects.exists()
    assert not [p for p in settings.MEDIA_ROOT.rglob("*") if p.is_file()]


# --- proxies and tokens ----------------------------------------------------------------------------
@pytest.mark.parametrize("xff", ["garbage", "203.0.113.9, not-an-ip", "203.0.113.9,,10.0.0.2", ""])
def test_a_garbled_forwarded_for_from_the_trusted_proxy_is_refused(plant, settings, xff):
    settings.CABLETRACK_TRUSTED_PROXIES = ["10.0.0.0/24"]
    response = Client(REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR=xff).get("/login/")
    assert response.status_code == 400
    assert b"X-Forwarded-For" in response.content
    assert (
        Client(REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.9").get("/login/").status_code == 200
    )


def test_failed_token_authentication_is_throttled_per_client(plant, settings):
    settings.CABLETRACK_TOKEN_FAILURE_LIMIT = 3
    good = f.api_token_client(plant.users["engineer"])
    good.defaults["REMOTE_ADDR"] = "192.0.2.50"
    guesser = APIClient(REMOTE_ADDR="192.0.2.66")
    guesser.credentials(HTTP_AUTHORIZATION="Bearer ct_guess")
    assert [guesser.get("/api/cables/").status_code for _ in range(3)] == [401, 401, 401]
    throttled = guesser.get("/api/cables/")
    assert throttled.status_code == 429 and int(throttled["Retry-After"]) > 0
    assert good.get("/api/cables/").status_code == 200  # another client is not affected
