"""Every write is in history with its actor (user, and the token when one was used), time and
before/after; the cable page shows it."""

import re

import pytest
from django.test import Client
from rest_framework.test import APIClient

from inventory.models import Cable
from inventory.selectors.plant.history import history_for
from inventory.services.access import tokens as token_services

pytestmark = pytest.mark.django_db


def test_a_token_write_names_the_user_and_the_token(plant, client_for):
    token, raw = token_services.api_token_create(user=plant.users["engineer"], name="plan-sync")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert client.patch("/api/cables/S-1/", {"notes": "re-terminated"}, format="json").status_code == 200
    entry = history_for(Cable.objects.get(label="S-1"))[0]
    assert entry["who"] == "engineer"
    assert entry["token"] == token.prefix
    assert {"field": "notes", "old": "", "new": "re-terminated"} in entry["changes"]
    assert entry["when"]
    # The API exposes the same history.
    api = client.get("/api/cables/S-1/history/").json()
    assert api[0]["token"] == token.prefix and api[0]["who"] == "engineer"


def test_a_session_write_names_the_user_and_no_token(plant, client_for):
    assert (
        client_for("technician")
        .post("/api/cables/N-1/status/", {"status": "faulty", "reason": "bent"}, format="json")
        .status_code
        == 200
    )
    entry = history_for(Cable.objects.get(label="N-1"))[0]
    assert (entry["who"], entry["token"], entry["reason"]) == ("technician", None, "bent")
    assert {"field": "status", "old": "planned", "new": "faulty"} in entry["changes"]


def test_the_cable_page_shows_who_changed_what(plant):
    """The newest entry of the cable page's history names the user, the token they wrote with,
    and the change (read from the page's history list, not anywhere on the page)."""
    token, raw = token_services.api_token_create(user=plant.users["engineer"], name="plan-sync")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert client.patch("/api/cables/N-1/", {"notes": "dusty"}, format="json").status_code == 200
    page = Client()
    page.force_login(plant.users["viewer"])
    html = page.get("/c/N-1").content.decode()
    history = re.search(r'<section class="card" id="history">.*?</section>', html, re.S).group(0)
    newest = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", re.findall(r"<li.*?</li>", history, re.S)[0]))
    assert f" engineer (token {token.prefix}) changed" in newest, newest
    assert "Notes: – → dusty" in newest, newest
