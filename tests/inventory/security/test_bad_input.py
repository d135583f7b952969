"""Caps on bodies, clean 4xx for junk, and 500s that show a request id, never a traceback."""

import logging

import pytest
from django.test import Client, override_settings
from django.urls import path

from inventory.api import views as api_views

pytestmark = pytest.mark.django_db


def test_a_body_over_the_cap_is_413_before_anything_reads_it(plant, client_for, settings):
    settings.CABLETRACK_MAX_BODY_BYTES = 1000
    client = client_for("engineer")
    response = client.post("/api/vendors/", {"name": "x" * 2000, "slug": "x"}, format="json")
    assert response.status_code == 413
    assert response.json()["max_bytes"] == 1000


def test_the_bulk_prefixes_have_their_own_larger_cap(settings, rf):
    from inventory.middleware.idempotency import body_cap

    assert (
        body_cap(rf.post("/api/telemetry/", "{}", content_type="application/json"))
        == settings.CABLETRACK_MAX_IMPORT_BYTES
    )
    assert (
        body_cap(rf.post("/api/cables/", "{}", content_type="application/json"))
        == settings.CABLETRACK_MAX_BODY_BYTES
    )
    upload = rf.post("/c/X/tests/new", {"f": "x"})
    assert body_cap(upload) == settings.CABLETRACK_MAX_UPLOAD_BYTES


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"{not json", "application/json"),
        (b"[1,2,3]", "application/json"),
        (b'"text"', "application/json"),
        (b"\xff\xfe\x00", "application/json"),
        (b"<xml/>", "application/xml"),
        (b'{"label": null}', "application/json"),
    ],
)
def test_junk_bodies_get_a_4xx(plant, client_for, body, content_type):
    response = client_for("engineer").generic("POST", "/api/cables/", body, content_type=content_type)
    assert 400 <= response.status_code < 500


def _boom(request):
    raise RuntimeError("secret internals")


urlpatterns = [path("boom/", _boom), path("api/boom/", _boom)]
urlpatterns += __import__("cabletrack.urls", fromlist=["urlpatterns"]).urlpatterns
handler500 = "inventory.views.errors.server_error"
del api_views


@override_settings(ROOT_URLCONF=__name__, DEBUG=False)
@pytest.mark.parametrize("url", ["/boom/", "/api/boom/"])
def test_a_500_shows_the_request_id_and_logs_it_never_a_traceback(plant, url, caplog):
    client = Client(raise_request_exception=False)
    client.force_login(plant.users["viewer"])
    with caplog.at_level(logging.ERROR):
        response = client.get(url, HTTP_X_REQUEST_ID="req-abc-123")
    assert response.status_code == 500
    body = response.content.decode()
    assert "req-abc-123" in body
    assert "Traceback" not in body and "secret internals" not in body
    assert response["X-Request-ID"] == "req-abc-123"
    logged = [r for r in caplog.records if r.levelno >= logging.ERROR and r.exc_info]
    assert any(r.exc_info[0] is RuntimeError for r in logged)
