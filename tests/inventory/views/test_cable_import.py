import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from inventory.models import Cable
from inventory.services.plans import files as plan_files

pytestmark = pytest.mark.django_db

HEADER = "label,kind,a_device,a_port,b_device,b_port,polarity,length_m,a_connector,a_fibres,a_polish,a_pinned,b_connector,b_fibres,b_polish,b_pinned\n"
GOOD = (
    HEADER
    + "P-1,SMF_OS2,gpu-0001,eth2,leaf-01,Ethernet1/2,B,3,MPO,12,APC,no,MPO,12,APC,no\n"
    + "J-100,SMF_OS2,gpu-0001,eth1,pp-a,Front 1,A,5,MPO,12,APC,no,MPO,12,APC,no\n"
)
BAD = (
    HEADER
    + "P-1,SMF_OS2,gpu-0001,eth2,leaf-01,Ethernet1/2,B,3,MPO,12,APC,no,MPO,12,APC,no\n"
    + "P-2,SMF_OS2,gpu-0001,eth0,leaf-01,Ethernet9/9,B,3,,,,,,,,\n"
    + "P-3,string,gpu-0001,eth3,leaf-01,Ethernet2/2,B,-1,,,,,,,,\n"
)


def upload(client, text: str, name: str = "plan.csv"):
    return client.post("/cables/import", {"file": SimpleUploadedFile(name, text.encode(), "text/csv")})


def test_dry_run_shows_what_would_happen_and_writes_nothing_then_apply_writes_all(plant, engineer_client):
    resp = upload(engineer_client, GOOD)
    html = resp.content.decode()
    assert resp.status_code == 200
    assert "1 would be created" in html and "1 would change" in html
    assert "Length: – → 5 m" in html  # J-100: 5 m is new, said in words
    assert "plan.csv" in html  # the checked file is named, though the file field is empty again
    assert not Cable.objects.filter(label="P-1").exists()
    token = re.search(r'name="token" value="([0-9a-f]+)"', html).group(1)
    sha = re.search(r'name="sha256" value="([0-9a-f]+)"', html).group(1)
    resp = engineer_client.post("/cables/import", {"apply": "1", "token": token, "sha256": sha})
    result = resp.content.decode()
    assert resp.status_code == 200
    # The result page links every created and changed cable.
    assert 'href="/c/P-1"' in result and 'href="/c/J-100"' in result
    assert Cable.objects.filter(label="P-1").exists()
    assert str(Cable.objects.get(label="J-100").length_m) == "5.00"
    # the same dry run cannot be applied twice
    again = engineer_client.post("/cables/import", {"apply": "1", "token": token, "sha256": sha}, follow=True)
    assert "expired" in again.content.decode()


def test_dry_run_lists_every_error_by_row_and_offers_no_apply(plant, engineer_client):
    html = upload(engineer_client, BAD).content.decode()
    assert "The plan has errors" in html
    assert "End B: Unknown port leaf-01:Ethernet9/9 (leaf-01 has no port or cage of that name)." in html
    assert "already cabled (J-102)" in html
    assert "Unknown cable kind" in html
    assert 'name="apply"' not in html
    assert not Cable.objects.filter(label__startswith="P-").exists()
    # nothing to apply: the page does not speak of applying the checked copy
    assert "Applying uses this checked copy" not in html and "To check it again once fixed" in html


def test_a_one_row_plan_is_one_row(plant, engineer_client):
    html = upload(engineer_client, HEADER + GOOD.splitlines(keepends=True)[1]).content.decode()
    assert "1 row · 1 would be created" in html and "Applying uses this checked copy" in html


def test_a_tampered_apply_writes_nothing(plant, engineer_client):
    html = upload(engineer_client, GOOD).content.decode()
    token = re.search(r'name="token" value="([0-9a-f]+)"', html).group(1)
    resp = engineer_client.post(
        "/cables/import", {"apply": "1", "token": token, "sha256": "0" * 64}, follow=True
    )
    assert "changed since its dry run" in resp.content.decode()
    assert engineer_client.post("/cables/import", {"apply": "1", "token": "../../etc"}).status_code == 404
    assert not Cable.objects.filter(label="P-1").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"", "The submitted file is empty"), (b"\xff\xfe\x00bad", "not UTF-8"), (b"label,kind\n", "no rows")],
)
def test_unreadable_files_are_refused_next_to_the_field(plant, engineer_client, content, message):
    resp = engineer_client.post("/cables/import", {"file": SimpleUploadedFile("p.csv", content, "text/csv")})
    assert message in resp.content.decode()


def test_technicians_cannot_import(plant, tech_client):
    assert upload(tech_client, GOOD).status_code == 403


# A plan as a spreadsheet saves it: spaced and upper-case headers, a blank line of commas.
SPREADSHEET = (
    " Label , KIND ,A_Device, a_port ,B_DEVICE,b_port, Polarity ,Length_M\n"
    "P-1,SMF_OS2,gpu-0001,eth2,leaf-01,Ethernet1/2,B,3\n"
    ",,,,,,,\n"
    "P-2 , SMF_OS2 ,gpu-0001,eth3,leaf-01,Ethernet2/2,B, 7.5 \n"
)


def _through_the_page(client, api) -> None:
    html = upload(client, SPREADSHEET).content.decode()
    token = re.search(r'name="token" value="([0-9a-f]+)"', html).group(1)
    sha = re.search(r'name="sha256" value="([0-9a-f]+)"', html).group(1)
    resp = client.post("/cables/import", {"apply": "1", "token": token, "sha256": sha})
    assert resp.status_code == 200 and 'id="result"' in resp.content.decode()


def _through_the_api(client, api) -> None:
    r = api.generic("POST", "/api/cables/import/?dry_run=0", SPREADSHEET, content_type="text/csv")
    assert r.status_code == 201, r.json()


@pytest.mark.parametrize("route", [_through_the_page, _through_the_api], ids=["page", "api"])
def test_the_page_and_the_api_read_one_plan_csv_into_the_same_cables(
    plant, engineer_client, engineer_api, route
):
    """One reader for the plan CSV: headers normalised and the blank row dropped on both routes.

    [gpu-0001 eth2]--P-1--[leaf-01 Ethernet1/2]
    [gpu-0001 eth3]--P-2--[leaf-01 Ethernet2/2]
    """
    route(engineer_client, engineer_api)
    cables = Cable.objects.filter(label__startswith="P-")
    exported = plan_files.plan_rows_from_csv(plan_files.plan_export(cables=cables, fmt="csv"))
    assert [
        (r["label"], r["kind"], r["a_device"], r["a_port"], r["b_device"], r["b_port"], r["length_m"])
        for r in exported
    ] == [
        ("P-1", "SMF_OS2", "gpu-0001", "eth2", "leaf-01", "Ethernet1/2", "3.00"),
        ("P-2", "SMF_OS2", "gpu-0001", "eth3", "leaf-01", "Ethernet2/2", "7.50"),
    ]
    # read again through the API, the same file is the same cables: nothing to create or change
    r = engineer_api.generic("POST", "/api/cables/import/?dry_run=1", SPREADSHEET, content_type="text/csv")
    assert r.json()["summary"] == {"create": 0, "change": 0, "unchanged": 2, "error": 0}


def test_ports_may_be_named_by_their_cage_as_the_pages_show_them(plant, engineer_client):
    """gpu-0001 OSFP2/1 is eth2 and leaf-01 OSFP1/2 is Ethernet1/2: the plan names the faceplate."""
    plan = HEADER + "P-1,SMF_OS2,gpu-0001,OSFP2/1,leaf-01,OSFP1/2,B,3,MPO,12,APC,no,MPO,12,APC,no\n"
    html = upload(engineer_client, plan).content.decode()
    assert "1 would be created" in html and "errors" not in html.split('id="dry-run"')[1].split("</h2>")[0]
    token = re.search(r'name="token" value="([0-9a-f]+)"', html).group(1)
    sha = re.search(r'name="sha256" value="([0-9a-f]+)"', html).group(1)
    engineer_client.post("/cables/import", {"apply": "1", "token": token, "sha256": sha})
    ends = {e.side: e for e in Cable.objects.get(label="P-1").ends.select_related("cage__device")}
    assert (ends["A"].cage.device.name, ends["A"].cage.name, ends["A"].connector) == ("gpu-0001", "OSFP2", 1)
    assert (ends["B"].cage.device.name, ends["B"].cage.name, ends["B"].connector) == ("leaf-01", "OSFP1", 2)


def test_errors_say_whether_the_device_or_the_port_is_unknown(plant, engineer_client):
    plan = (
        HEADER
        + "P-1,SMF_OS2,gpu-9999,eth2,leaf-01,Ethernet1/2,B,3,,,,,,,,\n"
        + "P-2,SMF_OS2,gpu-0001,OSFP9,leaf-01,Ethernet2/2,B,3,,,,,,,,\n"
    )
    html = upload(engineer_client, plan).content.decode()
    assert "End A: Unknown device gpu-9999." in html
    assert "End A: Unknown port gpu-0001:OSFP9 (gpu-0001 has no port or cage of that name)." in html


def test_a_bare_cage_name_is_its_first_connector_as_the_lists_print_it(plant, engineer_client):
    plan = HEADER + "P-1,SMF_OS2,gpu-0001,OSFP2,leaf-01,Ethernet1/2,B,3,MPO,12,APC,no,MPO,12,APC,no\n"
    html = upload(engineer_client, plan).content.decode()
    assert "1 would be created" in html, html
    token = re.search(r'name="token" value="([0-9a-f]+)"', html).group(1)
    sha = re.search(r'name="sha256" value="([0-9a-f]+)"', html).group(1)
    engineer_client.post("/cables/import", {"apply": "1", "token": token, "sha256": sha})
    end = Cable.objects.get(label="P-1").ends.select_related("cage").get(side="A")
    assert (end.cage.name, end.connector) == ("OSFP2", 1)
