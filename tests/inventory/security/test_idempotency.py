"""``Idempotency-Key``: a retried write returns the first answer instead of writing twice."""

import pytest

from inventory.api.views.devices import VendorViewSet
from inventory.models import Cable, IdempotencyRecord, Vendor

pytestmark = pytest.mark.django_db

NEW_CABLE = {
    "label": "IDEM-1",
    "kind": "SMF_OS2",
    "a": {"device": "leaf-s", "port_name": "Ethernet2/1"},
    "b": [{"device": "leaf-s2", "port_name": "Ethernet2/1"}],
}


def test_a_retried_post_returns_the_first_result_and_writes_once(plant, client_for):
    client = client_for("engineer", "token")
    first = client.post("/api/cables/", NEW_CABLE, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code == 201
    again = client.post("/api/cables/", NEW_CABLE, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert again.status_code == 201
    assert again.content == first.content
    assert again["Idempotent-Replayed"] == "true"
    assert Cable.objects.filter(label="IDEM-1").count() == 1
    assert Cable.history.filter(label="IDEM-1").count() == 1


def test_without_a_key_a_retry_is_a_new_request(plant, client_for):
    client = client_for("engineer")
    assert client.post("/api/cables/", NEW_CABLE, format="json").status_code == 201
    assert client.post("/api/cables/", NEW_CABLE, format="json").status_code == 400  # label in use


def test_same_key_different_body_is_422_and_writes_nothing(plant, client_for):
    client = client_for("engineer")
    assert (
        client.post(
            "/api/vendors/", {"name": "A", "slug": "a"}, format="json", HTTP_IDEMPOTENCY_KEY="v"
        ).status_code
        == 201
    )
    response = client.post(
        "/api/vendors/", {"name": "B", "slug": "b"}, format="json", HTTP_IDEMPOTENCY_KEY="v"
    )
    assert response.status_code == 422
    assert "different request" in response.json()["detail"]
    assert not Vendor.objects.filter(name="B").exists()


def test_keys_are_per_user(plant, client_for):
    a, b = client_for("engineer"), client_for("admin")
    assert (
        a.post(
            "/api/vendors/", {"name": "A", "slug": "a"}, format="json", HTTP_IDEMPOTENCY_KEY="same"
        ).status_code
        == 201
    )
    response = b.post("/api/vendors/", {"name": "A", "slug": "a"}, format="json", HTTP_IDEMPOTENCY_KEY="same")
    assert response.status_code == 400  # admin's own request ran (and met the unique name)
    assert "Idempotent-Replayed" not in response


def test_put_and_patch_replay_too(plant, client_for):
    """A retried PUT and a retried PATCH return the first answer and do not write again, even when
    someone else changed the record in between (the retry would otherwise overwrite them)."""
    client = client_for("engineer")
    vendor = Vendor.objects.create(name="Acme", slug="acme")
    body = {"name": "Acme Optics", "slug": "acme"}
    r1 = client.put(f"/api/vendors/{vendor.pk}/", body, format="json", HTTP_IDEMPOTENCY_KEY="put-1")
    assert r1.status_code == 200 and r1.json()["name"] == "Acme Optics"
    vendor.refresh_from_db()
    vendor.name = "Renamed elsewhere"  # someone else writes in between
    vendor.save()
    r2 = client.put(f"/api/vendors/{vendor.pk}/", body, format="json", HTTP_IDEMPOTENCY_KEY="put-1")
    assert r2.status_code == 200
    assert r2["Idempotent-Replayed"] == "true" and r2.content == r1.content
    assert Vendor.objects.get(pk=vendor.pk).name == "Renamed elsewhere"  # the retry wrote nothing

    r1 = client.patch("/api/cables/N-1/", {"notes": "a"}, format="json", HTTP_IDEMPOTENCY_KEY="p")
    assert r1.status_code == 200 and r1.json()["notes"] == "a"
    cable = Cable.objects.get(label="N-1")
    cable.notes = "someone else"  # someone else writes in between
    cable.save()
    r2 = client.patch("/api/cables/N-1/", {"notes": "a"}, format="json", HTTP_IDEMPOTENCY_KEY="p")
    assert r2["Idempotent-Replayed"] == "true" and r2.content == r1.content
    assert Cable.objects.get(label="N-1").notes == "someone else"
    assert Cable.history.filter(label="N-1", notes="a").count() == 1


def test_a_refused_request_is_remembered_but_a_server_error_is_not(plant, client_for, monkeypatch):
    client = client_for("viewer")
    assert (
        client.post(
            "/api/vendors/", {"name": "A", "slug": "a"}, format="json", HTTP_IDEMPOTENCY_KEY="x"
        ).status_code
        == 403
    )
    assert IdempotencyRecord.objects.get(key="x").status_code == 403
    again = client.post("/api/vendors/", {"name": "A", "slug": "a"}, format="json", HTTP_IDEMPOTENCY_KEY="x")
    assert again.status_code == 403 and again["Idempotent-Replayed"] == "true"

    # A server error after the view wrote: the write and the key both roll back, so the client's
    # retry with the same key runs for real.
    original = VendorViewSet.perform_create

    def write_then_fail(self, serializer):
        original(self, serializer)
        assert Vendor.objects.filter(name="B").exists()
        raise RuntimeError("the server fails after writing")

    monkeypatch.setattr(VendorViewSet, "perform_create", write_then_fail)
    engineer = client_for("engineer")
    engineer.raise_request_exception = False
    failed = engineer.post(
        "/api/vendors/", {"name": "B", "slug": "b"}, format="json", HTTP_IDEMPOTENCY_KEY="y"
    )
    assert failed.status_code == 500
    assert not IdempotencyRecord.objects.filter(key="y").exists()
    assert not Vendor.objects.filter(name="B").exists()
    monkeypatch.setattr(VendorViewSet, "perform_create", original)
    retry = engineer.post(
        "/api/vendors/", {"name": "B", "slug": "b"}, format="json", HTTP_IDEMPOTENCY_KEY="y"
    )
    assert retry.status_code == 201
    assert "Idempotent-Replayed" not in retry
    assert Vendor.objects.filter(name="B").count() == 1


@pytest.mark.parametrize("key", ["", "x" * 256, "tab\there"])
def test_a_bad_key_is_400(plant, client_for, key):
    response = client_for("engineer").post(
        "/api/vendors/", {"name": "A", "slug": "a"}, format="json", HTTP_IDEMPOTENCY_KEY=key
    )
    assert response.status_code == 400
    assert not Vendor.objects.filter(name="A").exists()


def test_purge_forgets_old_keys(plant, client_for):
    from datetime import timedelta

    from django.utils import timezone

    from inventory.services.ops.reliability import idempotency_purge

    client_for("engineer").post(
        "/api/vendors/", {"name": "A", "slug": "a"}, format="json", HTTP_IDEMPOTENCY_KEY="old"
    )
    assert idempotency_purge(now=timezone.now()) == 0
    assert idempotency_purge(now=timezone.now() + timedelta(hours=25)) == 1
