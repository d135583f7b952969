"""What the schema fuzzer found, pinned: each was a 500, a silent acceptance or an HTML answer."""

import pytest
from django.test import override_settings

from inventory.models import Device, Vendor

pytestmark = pytest.mark.django_db


def test_http_trace_does_not_run_the_trace_action(plant, client_for):
    """DRF dispatches an HTTP method to the view method of its name: a ``trace`` action answered
    TRACE on every cable URL (and advertised it in ``Allow``)."""
    client = client_for("engineer")
    response = client.generic("TRACE", "/api/cables/N-1/")
    assert response.status_code == 405
    assert "TRACE" not in response["Allow"]
    assert client.get("/api/cables/N-1/trace/").status_code == 200


@pytest.mark.parametrize("debug", [False, True], ids=["debug-off", "debug-on"])
@pytest.mark.parametrize("url", ["/api/ports/1.5/trace/", "/api/no-such-thing/", "/api/cables/N-1/nope/"])
def test_an_unrouted_api_url_is_a_json_404(plant, client_for, debug, url):
    """With DEBUG on (``make run``) Django answered a URL no route matches with its HTML
    technical 404 page; a collector gets the API's JSON error whatever DEBUG says."""
    with override_settings(DEBUG=debug):
        response = client_for("engineer").get(url)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": "Not found."}


@pytest.mark.parametrize("debug", [False, True], ids=["debug-off", "debug-on"])
def test_a_missing_object_keeps_its_own_404_message(plant, client_for, debug):
    """The route exists, the object does not: the view's own message, not the generic one."""
    with override_settings(DEBUG=debug):
        response = client_for("engineer").get("/api/cables/NO-SUCH-LABEL/")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": "No cable has this label."}


def test_a_port_id_that_is_not_a_number_is_404_not_500(plant, client_for):
    assert client_for("engineer").get("/api/ports/null,null/trace/").status_code == 404


def test_a_duplicate_is_a_400_and_nothing_is_written(plant, client_for):
    client = client_for("engineer")
    first = client.post("/api/devices/", {"name": "x1", "role": "leaf", "asset_tag": "A-1"}, format="json")
    assert first.status_code == 201, first.json()
    dup = client.post("/api/devices/", {"name": "x2", "role": "leaf", "asset_tag": "A-1"}, format="json")
    assert dup.status_code == 400
    assert "already exists" in str(dup.json())
    assert not Device.objects.filter(name="x2").exists()
    # the transaction of the refused write was rolled back: the next write works
    assert client.post("/api/vendors/", {"name": "V", "slug": "v"}, format="json").status_code == 201


def test_text_fields_take_text_only(plant, client_for):
    response = client_for("engineer").post("/api/vendors/", {"name": "V", "slug": 0}, format="json")
    assert response.status_code == 400
    assert "slug" in response.json()
    assert not Vendor.objects.filter(name="V").exists()


def test_a_database_rule_the_fields_do_not_check_is_a_400_naming_it(plant, client_for):
    """A port in a cage needs a connector (``port_cage_needs_connector``): no field says so."""
    from inventory.models import Port

    port = Port.objects.filter(cage__isnull=False).first()
    client = client_for("engineer")
    response = client.patch(f"/api/ports/{port.pk}/", {"connector": None}, format="json")
    assert response.status_code == 400, response.content
    assert "port_cage_needs_connector" in str(response.json())
    before = port.connector
    port.refresh_from_db()
    assert port.connector == before
    assert client.get(f"/api/ports/{port.pk}/").status_code == 200


@pytest.mark.parametrize(
    "query",
    [
        "/api/alerts/?silenced=maybe",
        "/api/links/?path_ok=null",
        "/api/cables/?page_size=lots",
        "/api/cables/?changed_since=",
    ],
)
def test_unreadable_filters_are_400_not_ignored(plant, client_for, query):
    assert client_for("engineer").get(query).status_code == 400


def test_a_tester_csv_with_bare_carriage_returns_is_read(plant, client_for):
    from django.core.files.uploadedfile import SimpleUploadedFile

    csv = b"Cable ID,Fibre,Wavelength,Loss\rN-1,1,1310,0.3\r"
    response = client_for("engineer").post(
        "/api/tests/import/",
        {"file": SimpleUploadedFile("t.csv", csv), "instrument": "meter-x", "apply": "false"},
        format="multipart",
    )
    assert response.status_code in (200, 400)
    assert response.json()["headers"] == ["Cable ID", "Fibre", "Wavelength", "Loss"]


@pytest.mark.parametrize(
    "url", ["/api/tests/gate/?cable=%00", "/api/topology/dot/?site=a%00b", "/api/cables/?ordering=%00"]
)
def test_a_nul_in_the_query_string_is_a_400(plant, client_for, url):
    response = client_for("engineer").get(url)
    assert response.status_code == 400
    assert "NUL" in response.json()["detail"]


def test_a_nul_in_a_json_body_is_a_400(plant, client_for):
    body = {"starts_at": "2026-01-01T00:00:00Z", "ends_at": "2026-01-01T01:00:00Z", "racks": ["N\u000001"]}
    response = client_for("engineer").post("/api/maintenance-windows/", body, format="json")
    assert response.status_code == 400
    assert "NUL" in str(response.json())


def test_a_device_csv_without_devices_is_a_400(plant, client_for):
    """A header line alone (or a body that is no CSV at all) imported nothing and answered 200."""
    for body in (b"{}", b"name,role,rack,position\r\n"):
        response = client_for("engineer").post("/api/devices/import/", body, content_type="text/csv")
        assert response.status_code == 400
        assert "no devices" in response.json()["detail"]


def test_an_unreadable_include_ok_is_a_400(plant, client_for):
    client = client_for("engineer")
    assert client.get("/api/reconciliation/?include_ok=null").status_code == 400
    assert client.get("/api/reconciliation/?include_ok=true").status_code == 200


@pytest.mark.parametrize(
    "body",
    [None, {}, {"keys": ["cage:1"], "all": True}, {"all": True, "site": " "}, {"keys": ["cage:١"]}],
)
def test_a_reconciliation_preview_needs_rows_or_a_scope(plant, client_for, body):
    """The schema's anyOf says it (rows, or all with a site or rack) and the view refuses the rest."""
    client = client_for("engineer")
    response = client.post("/api/reconciliation/preview/", body, format="json")
    assert response.status_code == 400
