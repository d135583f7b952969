"""The query plans that keep lists, search and the retest sweep independent of the plant's size.

PostgreSQL only (``postgres`` marker): every SELECT a page or a sweep runs is captured and
EXPLAINed on a seeded, ANALYZEd demo plant, and none may read a large table from end to end.
A bounded count (``COUNT(*)`` over a ``LIMIT`` subquery) may scan, because the LIMIT bounds it.
A change that drops an index, brings back a sort the indexes cannot serve, or an OR across
joins that only a full scan answers fails here, long before a 131,072-GPU benchmark notices.
"""

from __future__ import annotations

import json
from datetime import date, datetime, time, timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from inventory.core.choices import TokenKind
from inventory.db import bulk
from inventory.models import (
    ApiToken,
    Cable,
    CableEnd,
    Device,
    Link,
    Port,
    PortAlias,
    Rack,
    RetestReminder,
    Room,
    Row,
    Site,
)
from inventory.models.accounts import hash_token
from inventory.selectors.pages.lists import CABLE_SORTS, TRANSCEIVER_SORTS
from inventory.services.demo.seed import demo_seed
from inventory.services.plant import cable_sites
from inventory.services.retests import reminders
from tests import factories as f
from tests.seeded import seeded_module

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

AS_OF = date(2026, 11, 29)
#: Tables that grow with the plant (hundreds of thousands to millions of rows at 131,072 GPUs).
BIG = {
    "inventory_cable",
    "inventory_cableend",
    "inventory_port",
    "inventory_portalias",
    "inventory_cage",
    "inventory_cabletest",
    "inventory_fibreresult",
    "inventory_transceiver",
    "inventory_linksegment",
    "inventory_link",
    "inventory_retestreminder",
}
# session, user, permissions, the site or rack ids (with ?site=, ?rack=), bounded count, page, ends, sites, vendors;
# then the rows' decision (selectors.decision.cable_decisions, the "Next step" column and the alert
# flag): links through them, their latest tests, the links, the links' segments, the segments'
# cables, ends and whole-link tests (and latest tests of segments not on the page), the page's
# ends for the gate, open alerts, open faults. A fixed number, whatever the page size.
LIST_PAGE_QUERIES = 20
#: The read of the port names a failing PMD verdict shows, only when a link on the page fails it.
PMD_PORT_NAMES = '"inventory_port"."id" AS "pk", "inventory_device"."name" AS "device__name"'


def _seed_and_analyze():
    """The demo plant of 1,024 GPUs, ANALYZEd (the seed's own ANALYZE runs on commit, which a
    test never reaches); a test that grows a table ANALYZEs again, and its savepoint's rollback
    takes those statistics back with its rows."""
    demo_seed(gpus=1024, seed=1, as_of=AS_OF)
    with connection.cursor() as cur:
        cur.execute("ANALYZE")


_seeded = seeded_module(_seed_and_analyze)


@pytest.fixture
def plant(_seeded):
    """The seeded hall. ANALYZE again: a test before this one may have grown a table and
    ANALYZEd it, and while its rollback takes back the rows and their statistics, the row and
    page counts ANALYZE keeps in ``pg_class`` are written in place and stay."""
    with connection.cursor() as cur:
        cur.execute("ANALYZE")
    return Site.objects.get(name="Demo Hall 1")


@pytest.fixture
def browser(user_with_role):
    client = Client()
    client.force_login(user_with_role("engineer", "plan-user"))
    return client


@pytest.fixture
def api(user_with_role):
    raw = ApiToken.generate()
    user = user_with_role("engineer")
    ApiToken.objects.create(
        user=user, name="t", kind=TokenKind.FULL, key_hash=hash_token(raw), prefix=raw[:8]
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def _nodes(node):
    yield node
    for child in node.get("Plans", ()):
        yield from _nodes(child)


def _full_scans(sql: str) -> list[str]:
    """The large tables a statement's plan reads whole (none for a LIMIT-bounded count)."""
    with connection.cursor() as cur:
        cur.execute("EXPLAIN (FORMAT JSON) " + sql)
        top = cur.fetchone()[0][0]["Plan"]
    if top["Node Type"] == "Aggregate" and any(n["Node Type"] == "Limit" for n in _nodes(top)):
        return []  # COUNT(*) over a LIMIT subquery: bounded by its LIMIT, whatever it scans
    return sorted(
        n["Relation Name"]
        for n in _nodes(top)
        if n["Node Type"] == "Seq Scan" and n.get("Relation Name") in BIG
    )


def _captured(fn):
    with CaptureQueriesContext(connection) as ctx:
        out = fn()
    selects = [
        q["sql"]
        for q in ctx.captured_queries
        if q["sql"].lstrip(" (").upper().startswith(("SELECT", "WITH"))  # "(SELECT ...) UNION" too
    ]
    return out, selects, len(ctx.captured_queries)


def _scans_of(selects: list[str]) -> dict[str, list[str]]:
    return {sql[:160]: scans for sql in selects if (scans := _full_scans(sql))}


def _page_query(selects: list[str], marker: str) -> str:
    (sql,) = [q for q in selects if marker in q]
    return sql


def test_every_sort_the_desk_offers_pages_the_list_from_an_index(plant, browser):
    assert Cable.objects.count() > 3000
    for status in ("", "&status=in_production"):
        for key in CABLE_SORTS:
            for sort in (key, f"-{key}"):
                path = f"/cables/?sort={sort}&page=4{status}"
                response, selects, n = _captured(lambda path=path: browser.get(path))
                assert response.status_code == 200, path
                assert response.context["page"].number == 4
                assert _full_scans(_page_query(selects, "LIMIT 50 OFFSET 150")) == [], path
                assert n <= LIST_PAGE_QUERIES, (path, n)


def _rows_read_by_table(sql: str) -> dict[str, int]:
    """Rows each large table's scans read as the statement ran (kept and filtered out, every loop
    counted): an index walked in sort order past every row counts as much as a scan."""
    with connection.cursor() as cur:
        cur.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql)
        top = cur.fetchone()[0][0]["Plan"]
    read: dict[str, int] = {}
    for n in _nodes(top):
        if n.get("Relation Name") in BIG:
            rows = (n["Actual Rows"] + n.get("Rows Removed by Filter", 0)) * n["Actual Loops"]
            read[n["Relation Name"]] = read.get(n["Relation Name"], 0) + rows
    return read


def _rows_read(sql: str) -> int:
    """Rows the statement's plan read from the large tables, as it ran (every loop counted)."""
    return sum(_rows_read_by_table(sql).values())


def _other_label(i: int, n: int) -> str:
    """Half before every demo label, half between the demo's C001000 and C001001."""
    return f"AA-{i:06d}" if i < n // 2 else f"C001000-{i:06d}"


def _another_site(n: int) -> Site:
    """``n`` cables in a second hall, newer than the demo's (higher ids), later in every date
    and length order and labelled after it: the demo's hall is a minority of each sort order, in
    one direction or the other (its labels sort first, and in a block inside the demo's), as
    with the retests bench's second hall."""
    site = Site.objects.create(name="Hall Two", slug="hall-two")
    row = Row.objects.create(room=Room.objects.create(site=site, name="H2"), name="R1")
    racks = [Rack.objects.create(row=row, name=f"H2-{i:02d}") for i in range(10)]
    devices = bulk.bulk_insert_rows(
        Device,
        ["name", "role", "rack_id", "position_u"],
        [[f"h2-node-{i}", "gpu_node", racks[i % 10].pk, i // 10 + 1] for i in range(n // 40)],
        history=False,
    )
    ports = bulk.bulk_insert_rows(
        Port,
        ["device_id", "name", "kind"],
        [[devices[i // 40], f"p{i % 40}", "interface"] for i in range(n)],
        history=False,
    )
    later = AS_OF + timedelta(days=400)
    cables = bulk.bulk_insert_rows(
        Cable,
        ["label", "kind", "status", "length_m", "install_date", "retest_due"],
        [[_other_label(i, n), "SMF_OS2", "in_production", 900, later, later] for i in range(n)],
        history=False,
    )
    bulk.bulk_insert_rows(
        CableEnd,
        ["cable_id", "side", "leg", "connector_type", "port_id", "active"],
        [[c, "A", 0, "LC", p, True] for c, p in zip(cables, ports, strict=True)],
        history=False,
    )
    assert cable_sites.cable_sites_refresh(cable_ids=cables) == n
    with connection.cursor() as cur:
        cur.execute("ANALYZE")
    return site


def test_a_sites_page_in_every_sort_reads_its_own_rows_when_the_site_is_a_minority(plant, browser, api):
    """The site filter over 11,000 cables of which the demo hall holds 3,400: a page of 50 at
    offset 150, in every order the desk offers, reads about its 200 rows from an index range.
    The EXISTS through the ends it replaced probed every cable of the other hall ahead of the
    page first (at 131,072 GPUs: 100,000 probes, 1.3 s a page)."""
    _another_site(8000)
    others = {_other_label(i, 8000) for i in range(8000)}
    for key in CABLE_SORTS:
        for sort in (key, f"-{key}"):
            path = f"/cables/?site={plant.slug}&status=in_production&sort={sort}&page=4"
            response, selects, n = _captured(lambda path=path: browser.get(path))
            assert response.status_code == 200, path
            labels = [c.label for c in response.context["page"].object_list]
            assert len(labels) == 50 and not set(labels) & others, path
            page = _page_query(selects, "LIMIT 50 OFFSET 150")
            assert _full_scans(page) == [], path
            assert _rows_read(page) <= 2 * 200, (path, _rows_read(page))
            assert n <= LIST_PAGE_QUERIES, (path, n)
    # The API list, numbered and keyset pages, in its default order (label).
    ours = list(Cable.objects.filter(site=plant).order_by("label").values_list("label", flat=True))
    for path, marker, first in (
        (f"/api/cables/?site={plant.slug}&page=4", "LIMIT 50 OFFSET 150", ours[150]),
        (f"/api/cables/?site={plant.slug}&after=C001000", '"label" >', min(x for x in ours if x > "C001000")),
    ):
        response, selects, _ = _captured(lambda path=path: api.get(path))
        assert response.status_code == 200, path
        assert response.json()["results"][0]["label"] == first, path
        page = _page_query(selects, marker)
        assert _full_scans(page) == [] and _rows_read(page) <= 2 * 200, (path, _rows_read(page))


def test_a_racks_page_reads_no_large_table_whole(plant, browser):
    """The rack filter finds the rack's cables from its devices down (ports, cages, their ends),
    each by an index; an EXISTS through COALESCE(port's rack, cage's rack) hashed every end and
    port of the plant for every page."""
    for path in ("/cables/?rack=S01-N01&sort=-label&page=2", "/cables/?rack=S01-G01&sort=retest"):
        response, selects, n = _captured(lambda path=path: browser.get(path))
        assert response.status_code == 200 and response.context["page"].object_list, path
        found = [q for q in selects if " UNION " in q and '"inventory_cableend"."cable_id"' in q]
        assert len(found) == 1, path  # the rack's cables: by port ends, by cage ends
        page = [q for q in selects if "ORDER BY" in q and '"inventory_cable"."label"' in q and "LIMIT" in q]
        assert _scans_of(found + page) == {}, path
        assert n <= LIST_PAGE_QUERIES, (path, n)


def test_the_module_list_sorts_page_from_an_index(plant, browser):
    for key in TRANSCEIVER_SORTS:
        for sort in (key, f"-{key}"):
            response, selects, _ = _captured(
                lambda sort=sort: browser.get(f"/transceivers/?sort={sort}&page=3")
            )
            assert response.status_code == 200
            assert _full_scans(_page_query(selects, "LIMIT 50 OFFSET 100")) == [], sort


def test_a_list_page_costs_the_same_queries_whatever_its_size_and_filters(plant, browser):
    """The same queries for 10 rows as for 100, but for the one that names the ends of a link
    failing its PMD (``link_verdicts``: no query when none on the page fails), which the demo
    hall's 100 latest retest dates hold and its 10 latest do not."""
    counts = set()
    for per_page in (10, 100):
        path = f"/cables/?site={plant.slug}&status=in_production&sort=-retest&per_page={per_page}"
        response, selects, n = _captured(lambda path=path: browser.get(path))
        assert response.status_code == 200
        assert len(response.context["page"].object_list) == per_page
        assert n <= LIST_PAGE_QUERIES, (path, n)
        counts.add(n - sum(PMD_PORT_NAMES in q for q in selects))
    assert len(counts) == 1


def test_the_count_stops_at_its_cap_and_the_page_says_so(plant, browser):
    response, selects, _ = _captured(lambda: browser.get("/cables/?page=3"))
    page = response.context["page"]
    assert page.paginator.count == 1000 and not page.paginator.count_exact
    assert page.paginator.num_pages == 20
    assert "1000+ results" in response.content.decode()
    (count,) = [q for q in selects if q.startswith("SELECT COUNT(*)")]
    assert "LIMIT 1001" in count


def test_the_api_keyset_page_is_an_index_range_and_continues_where_the_last_ended(plant, api):
    labels = list(Cable.objects.order_by("label").values_list("label", flat=True))
    start = labels[len(labels) // 2]
    response, selects, _ = _captured(lambda: api.get(f"/api/cables/?page_size=50&after={start}"))
    assert response.status_code == 200
    body = response.json()
    assert [c["label"] for c in body["results"]] == labels[labels.index(start) + 1 :][:50]
    assert body["count"] is None and f"after={body['results'][-1]['label']}&" in body["next"]
    assert _full_scans(_page_query(selects, '"label" >')) == []


def test_search_by_part_of_a_label_reads_the_trigram_index(plant, browser):
    # Enough labels that reading them all costs more than the index (3,400 fit in a few pages,
    # where a scan is the right plan).
    bulk.bulk_insert_rows(
        Cable,
        ["label", "kind", "status"],
        [[f"X{i:06d}Q", "CAT6A", "planned"] for i in range(60_000)],
        history=False,
    )
    with connection.cursor() as cur:
        cur.execute("ANALYZE inventory_cable")
    response, selects, _ = _captured(lambda: browser.get("/cables/?q=012345q"))
    assert response.status_code == 200
    assert [c.label for c in response.context["page"].object_list] == ["X012345Q"]
    (page,) = [q for q in selects if " LIKE " in q and "ORDER BY" in q]
    assert _full_scans(page) == []


def test_the_search_page_finds_nothing_without_reading_every_cable_port_or_alias(plant, browser):
    """``/search/?q=``: each name test is served by its trigram index (migrations 0014, 0032).
    At 131,072 GPUs the ports' name-or-alias test across the alias join scanned 909,312 ports and
    1.2 million aliases (1.3 s), and the cables' label-or-serial-or-end-label test walked the
    label index past all 437,248 cables (530 ms for "leaf")."""
    device = Device.objects.order_by("pk").first()
    bulk.bulk_insert_rows(
        Cable,
        ["label", "kind", "status"],
        [[f"X{i:06d}Q", "CAT6A", "planned"] for i in range(60_000)],
        history=False,
    )
    ports = bulk.bulk_insert_rows(
        Port, ["device_id", "name"], [[device.pk, f"p{i}"] for i in range(60_000)], history=False
    )
    bulk.bulk_insert_rows(
        PortAlias,
        ["port_id", "device_id", "name"],
        [[pk, device.pk, f"a{pk}"] for pk in ports],
        history=False,
    )
    with connection.cursor() as cur:
        cur.execute("ANALYZE")
    for q in ("leaf-zz9", "ZQXJ", f"{device.name}:zz9"):  # nothing of the kind anywhere
        response, selects, _ = _captured(lambda q=q: browser.get("/search/", {"q": q}))
        assert response.status_code == 200 and "Nothing matches" in response.content.decode(), q
        read = {sql[:160]: _rows_read_by_table(sql) for sql in selects}
        grown = {"inventory_cable", "inventory_port", "inventory_portalias"}  # 60,000 rows more each
        assert {sql: r for sql, r in read.items() if any(r.get(t, 0) > 2_000 for t in grown)} == {}, q
    found = browser.get("/search/", {"q": "a" + str(ports[7])})  # by an alias
    assert found.status_code in (200, 302)
    assert "p7" in (
        found.content.decode()
        if found.status_code == 200
        else browser.get(found["Location"]).content.decode()
    )


def test_the_daily_sweep_reads_only_what_changed_and_claims_only_what_crossed_a_threshold(plant):
    first = timezone.make_aware(datetime.combine(AS_OF, time(6)))
    reminders.retests_sweep(now=first)  # the first run: everything
    assert RetestReminder.objects.exists()
    # A hall that keeps up claims few reminders a day; a year of them is what the claims table
    # holds in practice, and only then is reading it by cable cheaper than reading it whole.
    digest = RetestReminder.objects.values_list("digest_id", flat=True).first()
    cable_ids = list(Cable.objects.values_list("pk", flat=True)[:20_000])
    bulk.bulk_insert_rows(
        RetestReminder,
        ["recipient", "cable_id", "due_date", "kind", "digest_id", "claimed_at"],
        [
            [
                f"past-{i % 12}@example.com",
                cable_id,
                AS_OF - timedelta(days=400 + i % 300),
                "due_soon",
                digest,
                first - timedelta(days=400),
            ]
            for i, cable_id in enumerate(cable_ids)
        ],
        history=False,
    )
    claimed = RetestReminder.objects.count()
    with connection.cursor() as cur:
        cur.execute("ANALYZE")
    next_day = first + timedelta(days=1)
    result, selects, _ = _captured(lambda: reminders.retests_sweep(now=next_day))
    assert _scans_of(selects) == {}
    # What the next day adds is exactly the cables whose date crossed a threshold overnight.
    today = next_day.date()
    crossed = set(
        Cable.objects.filter(
            retest_due__in=[today + timedelta(days=7), today - timedelta(days=1), today - timedelta(days=8)]
        )
        .exclude(status__in=["planned", "retired"])
        .values_list("pk", flat=True)
    )
    new = set(RetestReminder.objects.filter(claimed_at=next_day).values_list("cable_id", flat=True))
    assert new <= crossed
    assert result.reminders_claimed == RetestReminder.objects.count() - claimed


def test_a_technicians_cable_page_reads_no_large_table_whole_to_check_the_site(plant, user_with_role):
    """A technician's actions are scoped to their team's sites, so the cable page (and every test
    they upload) asks which sites the cable is in. Asked from the sites down, through every
    device's ports and cages, that took 1.1 s a call on the 4,096-GPU demo and held the load test
    to 6.7 requests/s; asked from the cable's own ends up, it is an index lookup."""
    tech = user_with_role("technician", "hall-tech")
    plant.team = f.team("Hall crew", members=[tech])
    plant.save(update_fields=["team"])
    cable = (
        Cable.objects.filter(status="in_production", kind="SMF_OS2", ends__port__isnull=False)
        .order_by("pk")
        .first()
    )
    client = Client()
    client.force_login(tech)
    response, selects, _ = _captured(lambda: client.get(f"/c/{cable.label}"))
    assert response.status_code == 200
    assert "Report a fault" in response.content.decode()  # a site-scoped action, offered: same site
    site_checks = [q for q in selects if "site_id" in q or '"inventory_site"' in q]
    assert site_checks and _scans_of(site_checks) == {}


def test_a_cable_page_reads_its_history_by_index(plant):
    """History tables keep indexes only for how history is read (by object, a cable's ends by
    cable, by date; migration 0019 dropped the rest): a cable's history and its ends' history
    are index lookups, never a read of every cable's history."""
    cable = Cable.objects.filter(status="in_production").order_by("pk").first()
    link = Link.objects.order_by("pk").first()
    for qs in (
        Cable.history.filter(id=cable.pk).select_related("history_user"),
        CableEnd.history.filter(cable_id=cable.pk).select_related("history_user"),
        Link.history.filter(id=link.pk).select_related("history_user"),
    ):
        plan = json.loads(qs.explain(format="json"))[0]["Plan"]
        seq = [n["Relation Name"] for n in _nodes(plan) if n["Node Type"] == "Seq Scan"]
        assert not [t for t in seq if t.startswith("inventory_historical")], str(qs.query)[:160]


def test_a_plan_imports_link_check_probes_the_link_index(plant, api):
    """The check of which of a plan's port pairs already have an active link probes the link
    index pair by pair: joined against the pairs, it was planned as a hash of the whole link
    table (115 ms a batch at 131,072 GPUs)."""
    n = 2_000
    f.free_port_devices(["plan-a", "plan-b"], n)
    with connection.cursor() as cur:
        cur.execute("ANALYZE")
    body = "label,kind,a_device,a_port,b_device,b_port\n" + "".join(
        f"PLAN-{i:05d},CAT6A,plan-a,p{i},plan-b,p{i}\n" for i in range(n)
    )
    response, selects, _ = _captured(
        lambda: api.generic("POST", "/api/cables/import/?dry_run=0", body, content_type="text/csv")
    )
    assert response.status_code == 201, response.json()
    assert Link.objects.filter(active=True, a_port__device__name="plan-a").count() == n
    (pairs,) = [q for q in selects if "unnest" in q and '"inventory_link"' in q]
    assert _full_scans(pairs) == []


def test_a_network_racks_page_reads_its_cable_ends_by_index(plant, browser):
    """A network rack holds hundreds of cable ends (about 800 at 4,096 GPUs). Its page reads them
    on the rack's ports UNION ALL on its cages, each half through the ids of the rack's ports and
    cages read first (``field__in_array``: ``= ANY(ARRAY(subquery))``). As ``IN (subquery)`` the
    planner guessed the cages' share and hashed every end of the plant: 16-21 ms of the page's
    33 ms in PostgreSQL at 4,096 GPUs, against 3-5 ms by the index.

    Only the ends, their cables and ports are held to the index here. The left join of the ports'
    ends to their cages may hash this demo's 2,304 cages (46 pages: cheaper than 278 probes, and
    the planner says so on freshly ANALYZEd statistics); at 131,072 GPUs the same join probes."""
    rack = Rack.objects.filter(name__contains="-N").order_by("name").first()
    response, selects, _ = _captured(lambda: browser.get(f"/r/{rack.name}"))
    assert response.status_code == 200 and response.context["cable_count"] > 100
    ends = [q for q in selects if " UNION ALL " in q and '"inventory_cableend"."connector"' in q]
    assert len(ends) == 1
    scanned = {t for tables in _scans_of(ends).values() for t in tables}
    assert scanned - {"inventory_cage"} == set()
