"""``/reports/commissioning/?row=x`` was a 500: a row id that is no number is a 400 on the page
and the PDF, as it is on the API."""

import pytest
from django.test import Client

from tests import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def tech():
    client = Client()
    client.force_login(f.UserFactory(username="tech-cs", role="technician"))
    return client


@pytest.mark.parametrize("row", ["x", "1.5", "-1", "99999999999999999999999", "1\x00", "²"])
@pytest.mark.parametrize("url", ["/reports/commissioning/", "/reports/commissioning.pdf"])
def test_a_row_that_is_no_row_id_is_a_400_not_a_500(tech, url, row):
    assert tech.get(url, {"row": row}).status_code == 400


def test_an_unknown_row_id_is_a_404(tech):
    assert tech.get("/reports/commissioning/", {"row": "424242"}).status_code == 404


@pytest.mark.parametrize("page", ["x", "0", "-1", "1.5", "99999999999999999999999", "²"])
@pytest.mark.parametrize("url", ["/reports/commissioning/", "/reports/commissioning.pdf"])
def test_a_page_that_is_no_page_number_is_a_400(tech, url, page):
    assert tech.get(url, {"page": page}).status_code == 400


def test_the_api_names_a_bad_page(tech):
    resp = tech.get("/api/reports/commissioning/", {"page": "two"})
    assert resp.status_code == 400 and "page" in resp.json()


def test_the_report_comes_in_pages_and_counts_the_whole_scope(tech, monkeypatch):
    """Each page details its own links, by A-end port; the counts are the scope's on every page;
    a page past the last is the last; the page shows where it is and links to the next."""
    from inventory.models import Link
    from inventory.selectors.pages.commissioning import commissioning_report
    from inventory.services.demo.seed import demo_seed

    demo_seed(gpus=64, seed=3)
    total = Link.objects.filter(active=True).count()
    first = commissioning_report(per_page=10)
    second = commissioning_report(per_page=10, page=2)
    beyond = commissioning_report(per_page=10, page=10_000)
    assert first.counts == second.counts == beyond.counts and first.counts["links"] == total
    assert first.pages == beyond.page == -(-total // 10) and len(first.links) == 10
    ids = [lv.link_id for lv in first.links] + [lv.link_id for lv in second.links]
    assert len(set(ids)) == 20
    expected = list(
        Link.objects.filter(active=True).order_by("a_port_id", "pk").values_list("pk", flat=True)[:20]
    )
    assert ids == expected
    assert (first.first, first.last, second.first, second.last) == (1, 10, 11, 20)
    monkeypatch.setattr("inventory.selectors.pages.commissioning.REPORT_PAGE", 10)
    html = tech.get("/reports/commissioning/", {"page": "2"}).content.decode()
    assert f"<strong>{total}</strong> links" in html and f"page 2 of {first.pages}" in html
    assert 'href="?page=1"' in html and 'href="?page=3"' in html and "commissioning.pdf?page=2" in html
    assert html.count('<tr class="v-') == 10
    body = tech.get("/api/reports/commissioning/", {"page": "2"}).json()
    assert (body["page"], body["pages"], body["counts"]["links"]) == (2, first.pages, total)
    assert [x["link_id"] for x in body["links"]] == ids[10:]
