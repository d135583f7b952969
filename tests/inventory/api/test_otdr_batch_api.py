"""``POST /api/tests/otdr/batch/``: a tester's project of many .sor files in one request, matched
to cables and fibres by name, all or nothing.

    [gpu-1 eth0]--J-1 (3 m OS2 MPO-12/APC)--[leaf-1 Ethernet1/1]
    [gpu-1 eth1]--J-2 (3 m OS2 MPO-12/APC)--[leaf-1 Ethernet1/2]
"""

import io
import zipfile
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from inventory.core.choices import DeviceRole, Polarity
from inventory.models import CableTest, OtdrTrace
from tests import factories as f
from tests.sor_builder import build_v1

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("media")]
EVENTS = [(0.0, 0.0, -60.0, "1F9999LS"), (3.0, 0.0, -20.0, "1E9999LS")]


@pytest.fixture
def cables():
    _, gpu = f.twin_port_device("gpu-1", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    _, leaf = f.twin_port_device("leaf-1", u=20)
    return [
        f.jumper("J-1", gpu[0], leaf[0], polarity=Polarity.B, length_m=Decimal("3")),
        f.jumper("J-2", gpu[1], leaf[1], polarity=Polarity.B, length_m=Decimal("3")),
    ]


def sor_file(name: str, wl: int = 1310) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, build_v1(events=EVENTS, wavelength_nm=wl, total_loss_db=0.3))


def test_a_batch_of_files_for_many_cables_is_stored_in_one_request(api_as, cables, media):
    resp = api_as("technician").post(
        "/api/tests/otdr/batch/",
        {
            "files": [
                sor_file("J-1_F01_1310.sor"),
                sor_file("J-1_F01_1550.sor", 1550),
                sor_file("J-2_F03_1310.sor"),
            ]
        },
        format="multipart",
    )
    assert resp.status_code == 201, resp.json()
    assert resp.json()["matched"] == {"J-1": {"readings": 0, "sor": 2}, "J-2": {"readings": 0, "sor": 1}}
    assert sorted(OtdrTrace.objects.values_list("test__cable__label", "fibre", "wavelength_nm")) == [
        ("J-1", 1, 1310.0),
        ("J-1", 1, 1550.0),
        ("J-2", 3, 1310.0),
    ]
    assert sorted(CableTest.objects.values_list("cable__label", "verdict")) == [
        ("J-1", "pass"),
        ("J-2", "pass"),
    ]
    assert len(list(media.rglob("*.sor"))) == 3


def test_a_zip_project_is_accepted_as_one_file(api_as, cables):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("proj/J-1_1.sor", build_v1(events=EVENTS))
        z.writestr("proj/J-2_2.sor", build_v1(events=EVENTS))
    resp = api_as("technician").post(
        "/api/tests/otdr/batch/", {"files": [SimpleUploadedFile("p.zip", buf.getvalue())]}, format="multipart"
    )
    assert resp.status_code == 201, resp.json()
    assert OtdrTrace.objects.count() == 2


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        (sor_file("K-7_1.sor"), "no cable with this ID"),
        (sor_file("J-2_1_850.sor", 850), "850 nm is not a single-mode test wavelength"),
    ],
)
def test_one_bad_file_refuses_the_whole_batch_naming_it(api_as, cables, media, bad, words):
    resp = api_as("technician").post(
        "/api/tests/otdr/batch/", {"files": [sor_file("J-1_1.sor"), bad]}, format="multipart"
    )
    assert resp.status_code == 400
    assert words in str(resp.json())
    assert not CableTest.objects.exists() and not list(media.rglob("*.sor"))


def test_a_viewer_cannot_upload_a_batch(api_as, cables):
    resp = api_as("viewer").post(
        "/api/tests/otdr/batch/", {"files": [sor_file("J-1_1.sor")]}, format="multipart"
    )
    assert resp.status_code == 403 and not CableTest.objects.exists()


def test_the_import_preview_names_a_trace_at_the_wrong_wavelength(api_as, cables):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("J-1_1.sor", build_v1(events=EVENTS))
        z.writestr("J-2_1.sor", build_v1(events=EVENTS, wavelength_nm=850))
    resp = api_as("technician").post(
        "/api/tests/import/",
        {"file": SimpleUploadedFile("p.zip", buf.getvalue()), "instrument": "EXFO", "apply": False},
        format="multipart",
    )
    assert resp.json()["errors"] == [
        {
            "where": "J-2_1.sor",
            "errors": {
                "file": "850 nm is not a single-mode test wavelength (1310, 1383, 1490, 1550, 1625, 1650 nm): "
                "the wrong file or the wrong cable (J-2)."
            },
        }
    ]
    assert not CableTest.objects.exists()


def test_a_project_says_which_traces_were_not_judged_and_such_a_session_is_not_judged(api_as, cables, client):
    """J-1's 1550 nm trace ends at 180 m (another cable's, or a break): J-1 is not passed on its
    1310 nm trace alone, and the answer and the import page name the trace not judged."""
    other = build_v1(events=[EVENTS[0], (180.0, 0.0, -20.0, "1E9999LS")], wavelength_nm=1550)
    resp = api_as("technician").post(
        "/api/tests/otdr/batch/",
        {"files": [sor_file("J-1_F01_1310.sor"), SimpleUploadedFile("J-1_F01_1550.sor", other)]},
        format="multipart",
    )
    assert resp.status_code == 201, resp.json()
    assert resp.json()["not_judged"] == [
        {
            "cable": "J-1",
            "file": "J-1_F01_1550.sor",
            "fibre": 1,
            "why": "the fibre ends at 180.0 m, the cable is 3.0 m",
        }
    ]
    assert CableTest.objects.get().verdict == "unknown"
    tina = f.UserFactory(username="tina", role="technician")
    f.field_crew(tina)
    client.force_login(tina)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("proj/J-2_F01_1550.sor", other)
    page = client.post(
        "/tests/import/", {"instrument": "OTDR-1", "file": SimpleUploadedFile("p.zip", buf.getvalue())}
    )
    token = page.context["token"]
    page = client.post("/tests/import/", {"instrument": "OTDR-1", "token": token, "apply": "1"}, follow=True)
    assert (
        "Imported 1 test session(s) for 1 cable(s). 1 trace not judged: J-2_F01_1550.sor of J-2 "
        "(the fibre ends at 180.0 m, the cable is 3.0 m)." in page.content.decode()
    ), page.content.decode()
