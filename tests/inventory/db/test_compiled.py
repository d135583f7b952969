"""``CompiledRead``: the page reads compiled once give what their querysets give, for any argument."""

import pytest
from django.db import connection
from django.db.models.sql.compiler import SQLCompiler
from django.test.utils import CaptureQueriesContext

from inventory.db.compiled import CompiledRead
from inventory.models import Rack, Room, Row
from tests.factories import RackFactory, SiteFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_halls():
    halls = []
    for n in (1, 2):
        site = SiteFactory(name=f"Hall {n}")
        row = Row.objects.create(room=Room.objects.create(site=site, name=f"Room {n}"), name="A")
        halls.append((site, [RackFactory(name=f"H{n}-R{i:02d}", row=row) for i in range(1, 4 + n)]))
    return halls


def _count_compiles(monkeypatch) -> list:
    """A list that grows by one each time Django compiles a query."""
    compiled = []
    real = SQLCompiler.as_sql
    monkeypatch.setattr(
        SQLCompiler, "as_sql", lambda self, *a, **k: compiled.append(1) or real(self, *a, **k)
    )
    return compiled


def _racks_of_site(site_id):
    return Rack.objects.filter(row__room__site_id=site_id).select_related("row__room__site").order_by("-name")


def test_each_call_reads_what_the_queryset_reads_with_its_related_rows(two_halls, django_assert_num_queries):
    read = CompiledRead(_racks_of_site)
    for site, racks in two_halls * 2:  # the first call compiles, the later ones reuse
        with django_assert_num_queries(1):
            got = read(site.pk)
            seen = [(r.name, r.row.room.site.name) for r in got]  # select_related: no further reads
        assert seen == [(r.name, site.name) for r in sorted(racks, key=lambda r: r.name, reverse=True)]
        assert seen == [(r.name, r.row.room.site.name) for r in _racks_of_site(site.pk)]
    assert read(-5) == []


def test_after_the_first_call_the_queryset_is_not_compiled_again(two_halls, monkeypatch):
    read = CompiledRead(_racks_of_site)
    read(two_halls[0][0].pk)
    compiled = _count_compiles(monkeypatch)
    assert [r.name for r in read(two_halls[1][0].pk)] == ["H2-R05", "H2-R04", "H2-R03", "H2-R02", "H2-R01"]
    assert compiled == []


def test_prefetches_and_labels_work_and_a_label_with_sql_in_it_is_only_a_value(two_halls):
    by_name = CompiledRead(lambda name: Room.objects.filter(site__name=name).prefetch_related("rows__racks"))
    rooms = by_name("Hall 2")
    assert [[r.name for r in row.racks.order_by("name")] for room in rooms for row in room.rows.all()] == [
        ["H2-R01", "H2-R02", "H2-R03", "H2-R04", "H2-R05"]
    ]
    assert [room.name for room in by_name("Hall 1")] == ["Room 1"]
    assert by_name("Hall 1' OR '1'='1") == []


def test_a_read_whose_sql_changes_with_its_arguments_is_read_plainly_and_stays_right(two_halls):
    racks = {r.name: r.pk for _, rs in two_halls for r in rs}
    by_ids = CompiledRead(lambda ids: Rack.objects.filter(pk__in=ids).order_by("name"))  # IN (%s, %s, ...)
    by_names = CompiledRead(lambda names: Rack.objects.filter(name__in=names).order_by("name"))
    for names in (["H1-R01"], ["H1-R02", "H2-R05", "H1-R03"], ["H2-R01"]):
        expected = sorted(names)
        assert [r.name for r in by_ids([racks[n] for n in names])] == expected
        assert [r.name for r in by_names(names)] == expected
    assert by_ids([]) == []


def test_an_id_list_bound_as_one_array_reads_right_at_any_length(two_halls):
    racks = {r.name: r.pk for _, rs in two_halls for r in rs}
    by_ids = CompiledRead(lambda ids: Rack.objects.filter(pk__any=ids).order_by("name"))
    for names in (["H1-R01", "H2-R02"], ["H2-R03"], ["H1-R02", "H2-R05", "H1-R03", "H2-R04"]):
        assert [r.name for r in by_ids([racks[n] for n in names])] == sorted(names)


def test_a_first_call_it_cannot_probe_does_not_keep_later_calls_from_compiling(two_halls, monkeypatch):
    racks = {r.name: r.pk for _, rs in two_halls for r in rs}
    by_ids = CompiledRead(lambda ids: Rack.objects.filter(pk__any=ids).order_by("name"))
    assert [r.name for r in by_ids([racks["H1-R01"], None])] == ["H1-R01"]  # a None cannot be probed
    assert [r.name for r in by_ids([racks["H2-R02"]])] == ["H2-R02"]
    compiled = _count_compiles(monkeypatch)
    assert [r.name for r in by_ids([racks["H2-R03"], racks["H1-R02"]])] == ["H1-R02", "H2-R03"]
    assert compiled == ([] if connection.vendor == "postgresql" else [1])  # SQLite: IN (%s, %s) varies


def test_a_compiled_read_shows_in_the_query_log_with_its_values(two_halls):
    by_name = CompiledRead(lambda name: Rack.objects.filter(name=name))
    by_name("H1-R01")
    with CaptureQueriesContext(connection) as q:
        assert [r.name for r in by_name("H2-R03")] == ["H2-R03"]
    assert len(q.captured_queries) == 1 and "H2-R03" in q.captured_queries[0]["sql"]


@pytest.mark.postgres  # prepared statements are PostgreSQL's (deselected on SQLite, tests/conftest.py)
def test_on_postgresql_the_statement_is_prepared_once_per_connection(two_halls):
    def prepared() -> int:
        with connection.cursor() as cur:
            cur.execute("SELECT count(*) FROM pg_prepared_statements")
            return cur.fetchone()[0]

    by_site = CompiledRead(_racks_of_site)
    before = prepared()
    for site, racks in two_halls * 3:
        assert len(by_site(site.pk)) == len(racks)
    assert prepared() == before + 1


def test_a_time_argument_is_bound_like_an_id_and_compiled_once_on_postgresql(two_halls, monkeypatch):
    """``now`` (an aware datetime) is an argument like an id: the decision reads pass it."""
    from datetime import timedelta

    from django.utils import timezone

    made_by = CompiledRead(
        lambda site_id, now: Rack.objects.filter(row__room__site_id=site_id, created_at__lte=now).order_by(
            "name"
        )
    )
    site = two_halls[1][0]
    now = timezone.now()
    assert made_by(site.pk, now - timedelta(days=1)) == []  # before the racks existed
    compiled = _count_compiles(monkeypatch)
    assert [r.name for r in made_by(site.pk, now + timedelta(seconds=1))] == [
        "H2-R01",
        "H2-R02",
        "H2-R03",
        "H2-R04",
        "H2-R05",
    ]
    assert made_by(two_halls[0][0].pk, now - timedelta(days=1)) == []
    if connection.vendor == "postgresql":
        assert compiled == []  # the kept statement, with the times put in


def test_labels_and_ids_both_read_right_through_any(two_halls):
    racks = {r.name: r.pk for _, rs in two_halls for r in rs}
    by_names = CompiledRead(lambda names: Rack.objects.filter(name__any=names).order_by("name"))
    assert [r.name for r in by_names(["H2-R04", "H1-R01", "nope"])] == ["H1-R01", "H2-R04"]
    plain = Rack.objects.filter(pk__any=[racks["H1-R03"], racks["H2-R01"]]).order_by("name")
    assert [r.name for r in plain] == ["H1-R03", "H2-R01"]


@pytest.mark.postgres  # the array parameter is PostgreSQL's (deselected on SQLite, tests/conftest.py)
def test_an_id_list_is_bound_as_one_literal_not_element_by_element(two_halls, monkeypatch):
    """psycopg's list dumper adapts each element (11 ms of a 131,072-GPU desk page of trunks)."""
    from psycopg.types.array import ListDumper

    dumped = []
    real = ListDumper.dump
    monkeypatch.setattr(ListDumper, "dump", lambda self, obj: dumped.append(obj) or real(self, obj))
    racks = {r.name: r.pk for _, rs in two_halls for r in rs}
    by_ids = CompiledRead(lambda ids: Rack.objects.filter(pk__any=ids).order_by("name"))
    for names in (["H1-R01", "H2-R02"], ["H2-R03", "H1-R02"]):
        assert [r.name for r in by_ids([racks[n] for n in names])] == sorted(names)
    assert list(Rack.objects.filter(pk__any=[racks["H2-R05"]]).values_list("name", flat=True)) == ["H2-R05"]
    assert dumped == []


@pytest.mark.postgres  # SQLite's driver refuses such an int outright, with or without ``any``
def test_an_id_past_bigint_finds_nothing_instead_of_failing(two_halls):
    racks = {r.name: r.pk for _, rs in two_halls for r in rs}
    found = Rack.objects.filter(pk__any=[racks["H1-R01"], 2**70]).values_list("name", flat=True)
    assert list(found) == ["H1-R01"]
    assert list(Rack.objects.filter(pk__any=[-(2**64)])) == []
