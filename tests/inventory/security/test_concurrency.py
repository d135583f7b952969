"""Two people editing the same cable: the second save is refused with 412, not lost silently."""

import pytest

from inventory.models import Cable

pytestmark = pytest.mark.django_db


def test_a_stale_if_match_is_412_with_a_clear_message(plant, client_for):
    alice, bob = client_for("engineer"), client_for("admin")
    etag = alice.get("/api/cables/N-1/")["ETag"]
    assert bob.get("/api/cables/N-1/")["ETag"] == etag
    saved = bob.patch("/api/cables/N-1/", {"notes": "bob"}, format="json", HTTP_IF_MATCH=etag)
    assert saved.status_code == 200
    assert saved["ETag"] != etag
    stale = alice.patch("/api/cables/N-1/", {"notes": "alice"}, format="json", HTTP_IF_MATCH=etag)
    assert stale.status_code == 412
    assert "changed since you opened it" in stale.json()["detail"]
    assert stale["ETag"] == saved["ETag"]
    assert Cable.objects.get(label="N-1").notes == "bob"
    # Alice reloads and applies her change again.
    fresh = alice.get("/api/cables/N-1/")["ETag"]
    assert (
        alice.patch("/api/cables/N-1/", {"notes": "alice"}, format="json", HTTP_IF_MATCH=fresh).status_code
        == 200
    )


def test_if_match_guards_object_actions_too(plant, client_for):
    client = client_for("engineer")
    etag = client.get("/api/cables/S-1/")["ETag"]
    client.patch("/api/cables/S-1/", {"notes": "moved"}, format="json")
    response = client.post("/api/cables/S-1/retire/", {}, format="json", HTTP_IF_MATCH=etag)
    assert response.status_code == 412
    assert Cable.objects.get(label="S-1").retired_at is None


def test_no_if_match_or_star_writes_unconditionally(plant, client_for):
    client = client_for("engineer")
    assert client.patch("/api/cables/N-1/", {"notes": "a"}, format="json").status_code == 200
    assert (
        client.patch("/api/cables/N-1/", {"notes": "b"}, format="json", HTTP_IF_MATCH="*").status_code == 200
    )


def test_if_match_can_be_required(plant, client_for, settings):
    settings.CABLETRACK_REQUIRE_IF_MATCH = True
    assert client_for("engineer").patch("/api/cables/N-1/", {"notes": "a"}, format="json").status_code == 428
