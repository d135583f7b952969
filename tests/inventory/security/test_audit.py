"""Every write is in history with its actor (user, and the token when one was used), time and
before/after; the cable page shows it."""

import pytest
from django.test import Client

from inventory.models import Cable
from inventory.selectors.plant.history import history_for
from inventory.services.access import tokens as token_services

pytestmark = pytest.mark.django_db


def test_a_token_write_names_the_user_and_the_token(plant, client_for):
    token, raw = token_services.api_token_create(user=plant.users["engineer"], name="plan-sync")
    from rest_framework.test import APIClient

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


def test_the_cable_page_shows_who_changed_what(plant, client_for):
    client_for("engineer", "token").patch("/api/cables/N-1/", {"notes": "dusty"}, format="json")
    page = Client()
    page.force_login(plant.users["viewer"])
    html = page.get("/c/N-1").content.decode()
    assert "engineer" in html and "dusty" in html and "token" in html
