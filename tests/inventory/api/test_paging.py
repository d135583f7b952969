"""API pages past the count's cap: a bounded count that says so, and keyset pages that continue it.

The cap is lowered to a handful of rows so the behaviour of a 440,000-cable list shows on twelve.
"""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from inventory.core.choices import TokenKind
from inventory.db import bulk
from inventory.models import ApiToken, Cable
from inventory.models.accounts import hash_token
from inventory.selectors import paging
from inventory.selectors.paging import BoundedPaginator

pytestmark = pytest.mark.django_db

LABELS = [f"K{i:03d}" for i in range(12)]


@pytest.fixture
def cables():
    bulk.bulk_insert_rows(Cable, ["label", "kind", "status"], [[x, "CAT6A", "planned"] for x in LABELS])
    return LABELS


@pytest.fixture
def api(user_with_role):
    raw = ApiToken.generate()
    ApiToken.objects.create(
        user=user_with_role("engineer"),
        name="t",
        kind=TokenKind.FULL,
        key_hash=hash_token(raw),
        prefix=raw[:8],
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


@pytest.fixture
def cap_of_five(monkeypatch):
    monkeypatch.setattr(BoundedPaginator, "cap", 5)


def test_the_count_is_exact_under_the_cap(cables, api):
    body = api.get("/api/cables/?page_size=5").json()
    assert body["count"] == 12 and body["count_exact"] is True
    assert [c["label"] for c in body["results"]] == LABELS[:5]


def test_past_the_cap_the_count_says_so_and_next_links_still_read_every_cable_once(cables, api, cap_of_five):
    first = api.get("/api/cables/?page_size=3").json()
    assert first["count"] == 5 and first["count_exact"] is False
    seen, url, hops = [], "/api/cables/?page_size=3", 0
    while url:
        r = api.get(url)
        assert r.status_code == 200, url
        body = r.json()
        seen += [c["label"] for c in body["results"]]
        url, hops = body["next"], hops + 1
    assert seen == LABELS
    assert hops == 5  # two numbered pages (3 + 2 rows: the capped count of five), three keyset pages


def test_a_keyset_page_starts_after_the_label_given(cables, api):
    body = api.get("/api/cables/?page_size=4&after=K005").json()
    assert [c["label"] for c in body["results"]] == LABELS[6:10]
    assert body["count"] is None and body["previous"] is None
    assert "after=K009" in body["next"]
    last = api.get("/api/cables/?page_size=4&after=K009").json()
    assert [c["label"] for c in last["results"]] == LABELS[10:] and last["next"] is None


def test_keyset_pages_refuse_another_order_or_a_page_number(cables, api):
    for query in ("after=K001&ordering=install_date", "after=K001&page=2"):
        r = api.get(f"/api/cables/?{query}")
        assert r.status_code == 400, query
        assert "after" in r.json()


def test_the_desk_list_says_when_its_count_stopped(cables, monkeypatch, user_with_role, client):
    monkeypatch.setattr(paging, "DESK_COUNT_CAP", 5)
    client.force_login(user_with_role("engineer", "desk-user"))
    html = client.get("/cables/?per_page=2").content.decode()
    assert "5+ results" in html and "page 1 of 3" in html


def test_ordering_by_a_date_puts_the_blanks_last_both_ways_as_the_desk_does(api, client, user_with_role):
    """``?ordering=retest_due``: the cables due soonest first and those never due (copper,
    untested) after them, and ``-retest_due`` the latest first, blanks still last, on SQLite as on
    PostgreSQL; ties by the cable's id in the sort's direction, so pages neither repeat nor skip a
    cable. The desk list, sorted the same way, shows the same order."""
    from datetime import date

    rows = [
        ["B", "CAT6A", "planned", None],
        ["A", "CAT6A", "planned", date(2027, 3, 1)],
        ["D", "CAT6A", "planned", None],
        ["C", "CAT6A", "planned", date(2027, 1, 1)],
        ["E", "CAT6A", "planned", date(2027, 3, 1)],
    ]
    bulk.bulk_insert_rows(Cable, ["label", "kind", "status", "retest_due"], rows)

    def labels(query):
        seen, url = [], f"/api/cables/?{query}&page_size=2"
        while url:
            body = api.get(url).json()
            seen += [c["label"] for c in body["results"]]
            url = body["next"]
        return seen

    assert labels("ordering=retest_due") == ["C", "A", "E", "B", "D"]
    assert labels("ordering=-retest_due") == ["E", "A", "C", "D", "B"]
    client.force_login(user_with_role("engineer", "desk-user"))
    for sort, api_order in (("retest", ["C", "A", "E", "B", "D"]), ("-retest", ["E", "A", "C", "D", "B"])):
        html = client.get(f"/cables/?sort={sort}").content.decode()
        positions = [html.index(f'href="/c/{x}"') for x in api_order]
        assert positions == sorted(positions), sort


@pytest.mark.parametrize(
    ("query", "named"),
    [("ordering=colour", "'colour'"), ("ordering=label,-lenght_m", "'-lenght_m'"), ("ordering=label,", "''")],
)
def test_an_order_the_list_does_not_offer_is_a_400_naming_it(cables, api, query, named):
    """Before, DRF dropped the field and answered in the default order: a client asking for a
    typo'd sort got label order and no word of it."""
    r = api.get(f"/api/cables/?{query}")
    assert r.status_code == 400
    assert r.json()["ordering"] == [
        f"This list cannot be sorted by {named}; sort by install_date, label, retest_due, status "
        "('-' first for descending, several separated by commas)."
    ]
    assert api.get("/api/cables/?ordering=-status,label").status_code == 200
    assert api.get("/api/cables/?ordering=").status_code == 200  # no value: the default order


def test_the_schema_says_which_fields_a_list_sorts_by(api):
    schema = api.get("/api/schema/?format=json").json()
    [param] = [p for p in schema["paths"]["/api/cables/"]["get"]["parameters"] if p["name"] == "ordering"]
    term = "-?(?:install_date|label|retest_due|status)"
    assert param["schema"]["pattern"] == f"^(?:{term}(?:,{term})*)?$"


@pytest.mark.parametrize(("url", "term"), [("/api/links/", "a_port____str__"), ("/api/ports/", "aliases")])
def test_a_list_sorts_only_by_a_column_of_its_rows(api, url, term):
    """DRF offered every serializer field: ``a_port.__str__`` was a 500, a many-valued relation
    repeated a port on several pages."""
    r = api.get(f"{url}?ordering={term}")
    assert r.status_code == 400
    assert f"cannot be sorted by '{term}'" in r.json()["ordering"][0]
    assert api.get(f"{url}?ordering=-id").status_code == 200
