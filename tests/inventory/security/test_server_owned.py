"""Server-owned fields (gate status, due dates, counters, verdicts, retirement) cannot be set
through the API: not in any request body of the OpenAPI schema, and ignored if sent."""

import pytest
from drf_spectacular.generators import SchemaGenerator

from inventory.api.server_owned import SERVER_OWNED_NAMES
from inventory.core.choices import MANUAL_CABLE_STATUSES
from inventory.models import Cable, Link, Transceiver

pytestmark = pytest.mark.django_db

# Request bodies where a field named like a server-owned one is a person's input by design,
# with the values a person may give.
ALLOWED = {
    ("CableWriteRequest", "status"): {"planned", "installed"},
    ("StatusRequest", "status"): {str(s) for s in MANUAL_CABLE_STATUSES},
}


def _schema():
    return SchemaGenerator().get_schema(request=None, public=True)


def _enum(schema, prop):
    if "enum" in prop:
        return set(prop["enum"]) - {"", None}
    for ref in [prop.get("$ref"), *[p.get("$ref") for p in prop.get("allOf", []) + prop.get("oneOf", [])]]:
        if ref:
            return _enum(schema, schema["components"]["schemas"][ref.rsplit("/", 1)[1]])
    return None


def test_no_request_body_in_the_schema_carries_a_server_owned_field():
    schema = _schema()
    offending = []
    for name, component in schema["components"]["schemas"].items():
        if not name.endswith("Request"):
            continue
        for prop_name, prop in component.get("properties", {}).items():
            if prop_name not in SERVER_OWNED_NAMES and prop_name != "status":
                continue
            allowed = ALLOWED.get((name, prop_name))
            if allowed is not None and (_enum(schema, prop) or set()) <= allowed:
                continue
            offending.append(f"{name}.{prop_name}")
    assert offending == []


def test_no_api_serializer_writes_a_field_its_model_owns():
    """Every viewset's create/update serializer, with the per-model rules (a cable's status...)."""
    from rest_framework.test import APIRequestFactory

    from inventory.api.server_owned import server_owned
    from inventory.api.urls import router

    offending = []
    for prefix, viewset, _ in router.registry:
        for action, method in [("create", "post"), ("update", "put"), ("partial_update", "patch")]:
            if not hasattr(viewset, action):
                continue
            view = viewset(action=action, format_kwarg=None, kwargs={}, args=())
            view.request = getattr(APIRequestFactory(), method)("/")
            serializer = view.get_serializer()
            model = getattr(getattr(serializer, "Meta", None), "model", None) or view.get_queryset().model
            owned = server_owned(model) if model else set()
            for field_name, field in serializer.fields.items():
                if field.read_only or field_name not in owned:
                    continue
                if field_name == "status" and set(getattr(field, "choices", {})) <= {"planned", "installed"}:
                    continue  # a new cable is planned or installed: a fact, not a derived state
                offending.append(f"{prefix}.{action}.{field_name}")
    assert offending == []


def test_status_action_refuses_the_gate_states(plant, client_for):
    client = client_for("engineer")
    for state in ["tested", "in_production"]:
        response = client.post(
            f"/api/cables/{plant.north_cable.label}/status/", {"status": state}, format="json"
        )
        assert response.status_code == 400
        assert "status" in response.json()
    assert Cable.objects.get(pk=plant.north_cable.pk).status == plant.north_cable.status


def test_server_owned_fields_sent_in_a_write_are_ignored(plant, client_for):
    client = client_for("engineer")
    cable = plant.north_cable
    response = client.patch(
        f"/api/cables/{cable.label}/",
        {
            "notes": "ok",
            "status": "in_production",
            "retest_due": "2099-01-01",
            "retired_at": "2020-01-01T00:00:00Z",
        },
        format="json",
    )
    assert response.status_code == 200
    fresh = Cable.objects.get(pk=cable.pk)
    assert (fresh.notes, fresh.status, fresh.retest_due, fresh.retired_at) == (
        "ok",
        cable.status,
        cable.retest_due,
        None,
    )
    xcvr = Transceiver.objects.filter(cage__isnull=False).first()
    response = client.patch(
        f"/api/transceivers/{xcvr.pk}/", {"status": "spare", "cage": None, "firmware": "2.1"}, format="json"
    )
    assert response.status_code == 200
    xcvr.refresh_from_db()
    assert (xcvr.status, xcvr.cage_id is not None, xcvr.firmware) == ("installed", True, "2.1")
    assert (
        client.patch(f"/api/links/{Link.objects.first().pk}/", {"path_ok": False}, format="json").status_code
        == 405
    )
