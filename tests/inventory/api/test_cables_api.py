from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from inventory.core.choices import DeviceRole, TokenKind
from inventory.models import ApiToken, Cable, CableEnd, Link
from inventory.models.accounts import hash_token
from tests import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def plant():
    """[gpu-1 eth0..eth3] and [leaf-1 Ethernet1/1..2/2], nothing cabled yet."""
    _, gpu = f.twin_port_device("gpu-1", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    _, leaf = f.twin_port_device("leaf-1", u=20)
    return gpu, leaf


def body(label="C-1", a=("gpu-1", "eth0"), b=("leaf-1", "Ethernet1/1"), **kw):
    return {
        "label": label,
        "kind": "SMF_OS2",
        "polarity": "B",
        "a": {"device": a[0], "port_name": a[1], "connector_type": "MPO", "fibre_count": 12, "polish": "APC"},
        "b": [
            {"device": b[0], "port_name": b[1], "connector_type": "MPO", "fibre_count": 12, "polish": "APC"}
        ],
        **kw,
    }


def token_client(user, kind=TokenKind.FULL):
    raw = ApiToken.generate()
    ApiToken.objects.create(user=user, name="t", kind=kind, key_hash=hash_token(raw), prefix=raw[:8])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def test_anonymous_is_refused():
    assert APIClient().get("/api/cables/").status_code in (401, 403)


def test_viewer_reads_but_cannot_write(api_as, plant):
    viewer = api_as("viewer")
    assert viewer.get("/api/cables/").status_code == 200
    r = viewer.post("/api/cables/", body(), format="json")
    assert r.status_code == 403
    assert not Cable.objects.exists()


def test_engineer_installs_a_cable_by_device_and_alias(engineer_api, plant):
    gpu, leaf = plant
    f.alias(gpu[0], "mlx5_0", source="mlx5")
    r = engineer_api.post("/api/cables/", body(a=("gpu-1", "mlx5_0")), format="json")
    assert r.status_code == 201, r.json()
    data = r.json()
    assert data["label"] == "C-1"
    assert {(e["side"], e["device"]) for e in data["ends"]} == {("A", "gpu-1"), ("B", "leaf-1")}
    assert Link.objects.filter(active=True).count() == 1
    trace = engineer_api.get("/api/cables/C-1/trace/").json()
    assert trace["complete"] and trace["far"]["name"] == "Ethernet1/1"


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        (body(label="bad label/with slash"), "label"),
        (body(kind="FIBRE"), "kind"),
        (body(length_m="long"), "length_m"),
        (body(b=("leaf-1", "Ethernet9/9")), "b"),
        (body(a=("nope", "eth0")), "a"),
        ({"label": "C-9"}, "kind"),
    ],
)
def test_bad_input_is_a_clear_400_and_writes_nothing(engineer_api, plant, payload, field):
    r = engineer_api.post("/api/cables/", payload, format="json")
    assert r.status_code == 400
    assert field in r.json()
    assert not Cable.objects.exists()
    assert not CableEnd.objects.exists()


@pytest.mark.parametrize("length", ["0", "-1"])
def test_an_edit_to_a_length_of_nothing_names_length_m_as_the_install_does(engineer_api, plant, length):
    """Before, it was refused under ``non_field_errors`` by the database's rule name
    ("Refused: the values break cable_length_positive."), leaving the client to guess the field."""
    assert engineer_api.post("/api/cables/", body(length_m="3.00"), format="json").status_code == 201
    r = engineer_api.patch("/api/cables/C-1/", {"length_m": length, "notes": "re-measured"}, format="json")
    assert r.status_code == 400
    assert list(r.json()) == ["length_m", "help"]
    cable = Cable.objects.get(label="C-1")
    assert (str(cable.length_m), cable.notes) == ("3.00", "")


def test_a_cable_that_is_in_cannot_carry_an_install_date_still_ahead(engineer_api, plant):
    """Before, ``status: installed`` with 9999-12-31 was recorded: its retest came due on the
    calendar's last day, so the retest plan never asked for it. A planned cable may carry the
    day it is planned for; marking it installed (``/status/``) already refused a day ahead."""
    ahead = timezone.localdate() + timedelta(days=3)
    r = engineer_api.post("/api/cables/", body(status="installed", install_date="9999-12-31"), format="json")
    assert r.status_code == 400
    assert r.json()["install_date"] == ["31 Dec 9999 is still ahead: mark a cable installed once it is in."]
    r = engineer_api.post(
        "/api/cables/", body(install_date=f"{ahead}"), format="json"
    )  # installed by default
    assert r.status_code == 400 and "is still ahead" in r.json()["install_date"][0]
    assert not Cable.objects.exists()
    r = engineer_api.post("/api/cables/", body(status="planned", install_date=f"{ahead}"), format="json")
    assert r.status_code == 201, r.json()
    r = engineer_api.post("/api/cables/C-1/status/", {"status": "installed"}, format="json")
    assert r.json()["install_date"] == f"{timezone.localdate()}"
    r = engineer_api.patch("/api/cables/C-1/", {"install_date": "9999-12-31"}, format="json")
    assert r.status_code == 400
    assert r.json()["install_date"] == ["31 Dec 9999 is still ahead: mark a cable installed once it is in."]
    assert Cable.objects.get(label="C-1").install_date == timezone.localdate()


@pytest.mark.parametrize("status", ["installed", "planned"])
def test_an_install_date_before_the_plant_is_refused(engineer_api, plant, status):
    """Before, 0001-01-01 was recorded: that cable alone added 2,025 years of service to its
    cohort, whose learned failure rate (the forecast, the spares to order) fell to almost nothing."""
    r = engineer_api.post("/api/cables/", body(status=status, install_date="0001-01-01"), format="json")
    assert r.status_code == 400
    assert r.json()["install_date"] == [
        "0001-01-01 is before the earliest install date accepted (2000-01-01)."
    ]
    assert not Cable.objects.exists()


def test_duplicate_label_and_already_cabled_port_are_refused(engineer_api, plant):
    assert engineer_api.post("/api/cables/", body(), format="json").status_code == 201
    dup = engineer_api.post(
        "/api/cables/", body(a=("gpu-1", "eth1"), b=("leaf-1", "Ethernet1/2")), format="json"
    )
    assert dup.status_code == 400
    assert "already in use" in dup.json()["label"][0]
    busy = engineer_api.post("/api/cables/", body(label="C-2", b=("leaf-1", "Ethernet1/2")), format="json")
    assert busy.status_code == 400
    assert "already cabled" in busy.json()["a"][0]
    assert Cable.objects.count() == 1


def test_a_cable_from_a_port_to_itself_says_both_ends_are_the_same_port_once(engineer_api, plant):
    """The words the plan import and the desk form say (``same_port_problem``), at end B only:
    not "already cabled" at end A too, when the port holds a cable."""
    from inventory.core.validators import same_port_problem

    same = body(a=("leaf-1", "Ethernet1/1"), b=("leaf-1", "Ethernet1/1"))
    r = engineer_api.post("/api/cables/", same, format="json")
    assert r.status_code == 400
    errors = {k: v for k, v in r.json().items() if k != "help"}
    assert errors == {"b": ["Both ends are the same port (leaf-1:Ethernet1/1)."]}
    assert engineer_api.post("/api/cables/", body(label="C-0"), format="json").status_code == 201
    r = engineer_api.post("/api/cables/", same, format="json")  # the port holds C-0 now
    assert {k: v for k, v in r.json().items() if k != "help"} == {
        "b": [same_port_problem("leaf-1:Ethernet1/1")]
    }
    assert Cable.objects.count() == 1


def test_read_only_token_reads_but_cannot_write(user_with_role, plant):
    client = token_client(user_with_role("engineer"), TokenKind.READ_ONLY)
    assert client.get("/api/cables/").status_code == 200
    assert client.post("/api/cables/", body(), format="json").status_code == 403
    assert not Cable.objects.exists()


def test_ingest_token_cannot_read_the_plant(user_with_role):
    client = token_client(user_with_role("collector"), TokenKind.INGEST)
    assert client.get("/api/cables/").status_code == 403


def test_revoked_and_expired_tokens_get_401(user_with_role):
    from datetime import timedelta

    from django.utils import timezone

    user = user_with_role("engineer")
    client = token_client(user)
    ApiToken.objects.update(revoked_at=timezone.now())
    assert client.get("/api/cables/").status_code == 401
    client = token_client(user)
    ApiToken.objects.filter(revoked_at__isnull=True).update(expires_at=timezone.now() - timedelta(minutes=1))
    assert client.get("/api/cables/").status_code == 401
    assert APIClient(HTTP_AUTHORIZATION="Bearer ct_nonsense").get("/api/cables/").status_code == 401


def test_retire_keeps_the_record_and_history_names_the_actor(engineer_api, plant):
    engineer_api.post("/api/cables/", body(), format="json")
    r = engineer_api.post("/api/cables/C-1/retire/", {"reason": "crushed under a floor tile"}, format="json")
    assert r.status_code == 200
    assert r.json()["status"] == "retired"
    history = engineer_api.get("/api/cables/C-1/history/").json()
    assert history[0]["who"] == "engineer-user"
    assert any(c["field"] == "status" and c["new"] == "retired" for h in history for c in h["changes"])
    assert engineer_api.delete("/api/cables/C-1/").status_code in (403, 405)
    assert Cable.objects.filter(label="C-1").exists()


def test_a_long_retire_reason_is_kept_whole_in_the_notes_and_fits_the_history(engineer_api, plant):
    """The API takes a reason of up to 500 characters; the history's column holds 100 (on
    PostgreSQL a longer one was refused as "a value is out of range" and the cable not retired)."""
    engineer_api.post("/api/cables/", body(), format="json")
    reason = "crushed under a floor tile during the row 7 re-cabling; " * 8
    r = engineer_api.post("/api/cables/C-1/retire/", {"reason": reason[:500]}, format="json")
    assert r.status_code == 200, r.json()
    cable = Cable.objects.get(label="C-1")
    assert cable.status == "retired" and reason[:500].strip() in cable.notes
    latest = cable.history.latest("history_date").history_change_reason
    assert len(latest) == 100 and latest.endswith("…") and latest.startswith("crushed under a floor tile")


def test_cable_list_query_count_does_not_grow_with_rows(engineer_api, plant, django_assert_max_num_queries):
    gpu, leaf = plant
    for i in range(4):
        f.jumper(f"J-{i}", gpu[i], leaf[i])
    with django_assert_max_num_queries(8 + 11):  # 11: the decision of the page (test_query_budget)
        r = engineer_api.get("/api/cables/?page_size=1000")
    assert r.json()["count"] == 4


def test_openapi_schema_is_served(engineer_api):
    r = engineer_api.get("/api/schema/")
    assert r.status_code == 200
    assert b"/api/cables/" in r.content
