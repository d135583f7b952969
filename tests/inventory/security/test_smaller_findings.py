"""The smaller findings of issue 14, each as a user or a collector meets it.

* A chunked request body (no Content-Length) is read, under the same cap, not taken as empty.
* Every member of a gzip body is decoded (``cat a.gz b.gz``), not only the first.
* JSON that names a key twice is a 400, not silently its last value.
* A logged-in browser (Swagger's "Try it out") can post to the endpoints that read their own body.
* A viewer saves their own reminder settings; ``ensure_user`` knows the collector role.
* A test-import preview that is never applied does not leave its upload behind.
"""

import gzip
import io
import json
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.handlers.wsgi import WSGIHandler
from django.core.management import call_command
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from inventory.core.choices import ReminderMode, TokenKind
from inventory.models import CableTest, TelemetrySample, UserProfile, Vendor
from inventory.services.access import tokens as token_services
from inventory.services.testing import import_uploads
from tests import factories as f

pytestmark = pytest.mark.django_db


def _ts(minutes_ago: float = 1):
    return (timezone.now() - timedelta(minutes=minutes_ago)).replace(microsecond=0)


@pytest.fixture
def leaf(plant):
    return f.twin_port_device("leaf-t1")


@pytest.fixture
def ingest_token(plant):
    return token_services.api_token_create(user=plant.users["collector"], name="c", kind=TokenKind.INGEST)[1]


def _wsgi_post(path: str, body: bytes, *, token: str, terminated: bool) -> tuple[int, bytes]:
    """POST through Django's WSGI handler as gunicorn hands over a chunked request: the body
    de-chunked in ``wsgi.input``, no CONTENT_LENGTH, ``wsgi.input_terminated`` set."""
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "80",
        "REMOTE_ADDR": "127.0.0.1",
        "CONTENT_TYPE": "application/json",
        "HTTP_HOST": "testserver",
        "HTTP_TRANSFER_ENCODING": "chunked",
        "HTTP_AUTHORIZATION": f"Bearer {token}",
        "wsgi.input": io.BytesIO(body),
        "wsgi.input_terminated": terminated,
        "wsgi.url_scheme": "http",
        "wsgi.errors": io.StringIO(),
        "wsgi.version": (1, 0),
        "wsgi.multithread": False,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }
    status = []
    # As Django's test client does: the test's transaction must outlive the request's signals.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        response = WSGIHandler()(environ, lambda s, h, *a: status.append(s))
        body = b"".join(response)
        response.close()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)
    return int(status[0].split()[0]), body


def test_a_chunked_telemetry_body_is_read_whole(leaf, ingest_token):
    samples = [f.telemetry_sample("leaf-t1", "Ethernet1/1", _ts(m), link_down_events=0) for m in (2, 1)]
    code, body = _wsgi_post(
        "/api/telemetry/", json.dumps({"samples": samples}).encode(), token=ingest_token, terminated=True
    )
    assert code == 200, body
    assert json.loads(body)["stored"] == 2
    assert TelemetrySample.objects.count() == 2


def test_a_chunked_body_over_the_cap_is_413(leaf, ingest_token, settings):
    settings.CABLETRACK_BODY_LIMITS = {"/api/telemetry/": 100}
    samples = [f.telemetry_sample("leaf-t1", "Ethernet1/1", _ts(m), link_down_events=0) for m in (3, 2, 1)]
    code, _ = _wsgi_post(
        "/api/telemetry/", json.dumps({"samples": samples}).encode(), token=ingest_token, terminated=True
    )
    assert code == 413 and not TelemetrySample.objects.exists()


def test_a_chunked_body_a_server_cannot_end_is_refused_clearly_with_411(leaf, ingest_token):
    code, body = _wsgi_post("/api/telemetry/", b'{"samples": []}', token=ingest_token, terminated=False)
    assert code == 411 and b"Content-Length" in body


def test_every_gzip_member_is_decoded(leaf, ingest_token):
    text = json.dumps(
        {
            "samples": [
                f.telemetry_sample("leaf-t1", "Ethernet1/1", _ts(m), link_down_events=0) for m in (3, 2, 1)
            ]
        }
    )
    cut = len(text) // 2
    body = gzip.compress(text[:cut].encode()) + gzip.compress(text[cut:].encode())
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {ingest_token}")
    response = client.post(
        "/api/telemetry/", data=body, content_type="application/json", HTTP_CONTENT_ENCODING="gzip"
    )
    assert response.status_code == 200, response.content
    assert response.json()["stored"] == 3


def test_a_truncated_gzip_body_is_a_400(leaf, ingest_token):
    body = gzip.compress(json.dumps({"samples": []}).encode())[:-12]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {ingest_token}")
    response = client.post(
        "/api/telemetry/", data=body, content_type="application/json", HTTP_CONTENT_ENCODING="gzip"
    )
    assert response.status_code == 400


def test_duplicate_json_keys_are_a_400_and_write_nothing(plant):
    client = APIClient()
    client.force_login(plant.users["engineer"])
    response = client.post(
        "/api/vendors/",
        data='{"name": "Acme", "slug": "acme", "name": "Evil"}',
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "Duplicate key 'name'" in response.json()["detail"]
    assert not Vendor.objects.filter(slug="acme").exists()


def test_duplicate_keys_in_a_json_plan_are_a_400(plant):
    client = APIClient()
    client.force_login(plant.users["engineer"])
    body = '{"rows": [{"label": "X-1", "label": "X-2", "kind": "SMF_OS2"}]}'
    response = client.post("/api/cables/import/?dry_run=1", data=body, content_type="application/json")
    assert response.status_code == 400 and "Duplicate key" in str(response.json())


def _browser(user) -> tuple[Client, str]:
    """A logged-in browser with CSRF checks on, and its CSRF token (from a page with a form)."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    client.get("/profile/")
    return client, client.cookies["csrftoken"].value


def test_a_logged_in_browser_posts_telemetry_with_its_csrf_token(plant, leaf):
    client, csrf = _browser(plant.users["engineer"])
    body = json.dumps({"samples": [f.telemetry_sample("leaf-t1", "Ethernet1/1", _ts(), link_down_events=0)]})
    refused = client.post("/api/telemetry/", data=body, content_type="application/json")
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
    response = client.post(
        "/api/telemetry/", data=body, content_type="application/json", HTTP_X_CSRFTOKEN=csrf
    )
    assert response.status_code == 200, response.content
    assert response.json()["stored"] == 1


def test_a_logged_in_browser_posts_a_plan_import(plant):
    client, csrf = _browser(plant.users["engineer"])
    plan = "label,kind,a_device,a_port,b_device,b_port\nN-1,SMF_OS2,leaf-n,OSFP1,leaf-n2,OSFP1\n"
    response = client.post(
        "/api/cables/import/?dry_run=1", data=plan, content_type="text/csv", HTTP_X_CSRFTOKEN=csrf
    )
    assert response.status_code in (200, 400) and response.status_code != 415
    assert "rows" in response.json()


def test_a_viewer_saves_their_own_reminder_settings(plant):
    client = Client()
    client.force_login(plant.users["viewer"])
    response = client.post(
        "/profile/reminders/", {"reminder_mode": ReminderMode.WEEKLY, "digest_weekday": 3, "digest_hour": 6}
    )
    assert response.status_code == 302
    profile = UserProfile.objects.get(user=plant.users["viewer"])
    assert (profile.reminder_mode, profile.digest_weekday, profile.digest_hour) == ("weekly", 3, 6)


def test_ensure_user_makes_a_collector_account(db):
    call_command("ensure_user", "leaf-collector", "--password", "x-collector-pass-1", "--role", "collector")
    user = get_user_model().objects.get(username="leaf-collector")
    assert list(user.groups.values_list("name", flat=True)) == ["collector"]
    assert user.has_perm("inventory.add_telemetrysample") and not user.has_perm("inventory.view_cable")
    assert not user.is_staff


def _kept(media) -> list:
    return sorted(p.name for p in (media / "imports").glob("*")) if (media / "imports").exists() else []


def test_a_test_import_preview_never_applied_leaves_no_upload_behind(plant, media):
    client = Client()
    client.force_login(plant.users["technician"])
    csv_text = b"Cable,Fibre,Lambda,IL\nN-1,1,1310,0.41\n"
    first = client.post("/tests/import/", {"instrument": "x", "file": SimpleUploadedFile("a.csv", csv_text)})
    assert first.status_code == 200 and len(_kept(media)) == 1
    again = client.post(
        "/tests/import/",
        {"instrument": "x", "token": first.context["token"], "file": SimpleUploadedFile("b.csv", csv_text)},
    )
    assert _kept(media) == [again.context["token"]]  # a new upload in the flow replaces the old one
    assert import_uploads.import_uploads_purge() == 0  # fresh: kept for the apply step
    later = timezone.now() + import_uploads.UPLOAD_TTL + timedelta(minutes=1)
    assert import_uploads.import_uploads_purge(now=later) == 1
    assert _kept(media) == []
    assert not CableTest.objects.exists()
