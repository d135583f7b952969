import pytest

pytestmark = pytest.mark.django_db


def test_rack_page_lists_devices_top_u_first_with_the_cables_that_need_attention(plant, tech_client):
    html = tech_client.get("/r/A01").content.decode()
    # pp-a sits at U40, gpu-0001 at U10: a technician works down the rack
    assert html.index("pp-a") < html.index("gpu-0001")
    assert 'href="/d/pp-a"' in html and 'href="/d/gpu-0001"' in html
    # J-102's retest is overdue: listed, with where it goes; J-100 and T-100 are fine.
    assert 'href="/c/J-102"' in html and "retest overdue" in html and "leaf-01" in html
    assert 'href="/c/J-100"' not in html and 'href="/c/T-100"' not in html


def test_the_device_page_lists_every_cable_and_module_of_the_device(plant, tech_client):
    html = tech_client.get("/d/gpu-0001").content.decode()
    for label in ("J-100", "J-102"):
        assert f'href="/c/{label}"' in html
    assert plant["gpu"][0].cage.transceiver.serial in html
    assert "leaf-01" in html and "pp-a" in html  # where each cable goes


def test_rack_page_queries_do_not_grow_with_the_rack(plant, tech_client, django_assert_max_num_queries):
    # Session, user, permissions, rack (with its row and room: the policy's site scope needs no
    # read), devices, the ends (one UNION), the open alerts they touch (one UNION), the far ends of
    # the cables listed, the cages with their modules, the cage-less ports, the rack's alerts and
    # their FEC series (when it has some), the rack's journal, the user's team sites.
    # None grows with the rack.
    with django_assert_max_num_queries(14):
        assert tech_client.get("/r/A01").status_code == 200


def test_unknown_rack_is_a_404(plant, tech_client):
    assert tech_client.get("/r/ZZ").status_code == 404


@pytest.mark.parametrize(
    ("q", "expect"),
    [
        ("j-10", ["J-100", "J-101", "J-102"]),  # partial label, any case
        ("gpu-000", ["gpu-0001"]),  # partial device
        ("ethernet2/", ["leaf-01:Ethernet2/1", "leaf-01:Ethernet2/2"]),  # partial port
    ],
)
def test_search_finds_partial_matches(plant, tech_client, q, expect):
    resp = tech_client.get("/search/", {"q": q}, follow=True)
    html = resp.content.decode()
    for e in expect:
        assert e in html


def test_search_by_module_serial_opens_the_module(plant, tech_client):
    xcvr = plant["gpu"][0].cage.transceiver
    resp = tech_client.get("/search/", {"q": xcvr.serial.lower()})
    assert resp.status_code == 302 and resp["Location"] == f"/t/{xcvr.pk}"
    assert "J-102" in tech_client.get(resp["Location"]).content.decode()


def test_search_by_port_alias_opens_the_cable_on_it(plant, tech_client):
    from tests.factories import alias

    alias(plant["leaf"][0], "swp1s0", source="sonic")
    resp = tech_client.get("/search/", {"q": "leaf-01:swp1s0"})
    assert resp.status_code == 302 and resp["Location"] == "/c/J-102"


def test_search_box_is_on_every_page(plant, tech_client):
    for url in ("/", "/c/J-100", "/r/A01", "/cables/", "/transceivers/"):
        assert 'role="search"' in tech_client.get(url).content.decode()


def test_search_with_nothing_found_says_so(plant, tech_client):
    assert "Nothing matches" in tech_client.get("/search/", {"q": "qqqq"}).content.decode()
