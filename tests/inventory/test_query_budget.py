"""Query budgets for the hot reads: the cable list and detail (API and page), the trace, ``/c``.

Each budget is a fixed number of queries, whatever the page size or the path: a change that
brings back a query per row (N+1) or per hop fails here, long before a benchmark notices.
The plant is the demo cluster at its smallest useful size (leaf uplinks run through two
patch panels and an MPO trunk), so the reads see realistic data.
"""

from __future__ import annotations

from datetime import date

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from inventory.api.serializers import CableSerializer, end_point
from inventory.core.choices import CableStatus, TokenKind
from inventory.models import ApiToken, Cable, Port
from inventory.models.accounts import hash_token
from inventory.selectors.plant.trace import port_trace
from inventory.services.demo.seed import demo_seed
from tests import factories as f
from tests.inventory.views.conftest import without_name_spans
from tests.seeded import seeded_module

pytestmark = pytest.mark.django_db

# Ceilings, with what they are made of. Raise one only with a reason in the commit message.
# The one decision (``selectors.decision.cable_decisions``) for a page of cables, at most 12 queries
# whatever its size: links through the cables, each link's segments, the links, whole-link tests,
# then for the page's cables and every cable of those links together: facts, ends and latest
# tests (the gate and ``link_verdicts`` share them), open alerts (one union), open faults; and,
# only when the page holds them, the drains not restored on its links, the replacements' labels
# and the ends of the links whose channel fails its PMD (the words name them).
DECISION_QUERIES = 12
#: Reads a page makes only for what it holds (see DECISION_QUERIES): a larger page may need them.
CONTENT_QUERIES = 3
API_LIST_QUERIES = 5 + DECISION_QUERIES  # token, permissions, COUNT(*), the page, its ends
API_DETAIL_QUERIES = 4 + DECISION_QUERIES  # token, permissions, the cable, its ends
TRACE_QUERIES = 4  # the recursive path read, ports, cages, panel mappings
# One link: its rows read once, the cable's own latest tests taken from its test list.
# The Impact card (issue 35) adds two: the degraded alerts on the cable's links, the jobs on their ports.
IMPACT_QUERIES = 2
CABLE_PAGE_QUERIES = 17 + IMPACT_QUERIES  # session, user, permissions, the page's panels
TRUNK_PAGE_QUERIES = (
    27 + IMPACT_QUERIES
)  # many links: traced from A, each link's rows, the drawn path, link positions
# session, user, permissions, COUNT(*), page, ends, sites, vendors (the alert flag is the decision's)
CABLE_LIST_PAGE_QUERIES = 8 + DECISION_QUERIES


#: The 16-GPU demo, seeded once for the module (``tests/seeded.py``).
cluster = seeded_module(lambda: demo_seed(gpus=16, seed=1, as_of=date(2026, 11, 29)))


@pytest.fixture
def api(user_with_role):
    raw = ApiToken.generate()
    user = user_with_role("engineer")
    ApiToken.objects.create(
        user=user, name="t", kind=TokenKind.FULL, key_hash=hash_token(raw), prefix=raw[:8]
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    client.get("/api/sites/")  # the token's first use records last_used_at (once a minute)
    return client


@pytest.fixture
def browser(user_with_role):
    client = Client()
    client.force_login(user_with_role("engineer", "page-user"))
    return client


def _count(fn) -> tuple[int, object]:
    with CaptureQueriesContext(connection) as ctx:
        out = fn()
    return len(ctx.captured_queries), out


def test_api_cable_list_reads_a_page_in_fixed_queries_whatever_its_size(cluster, api):
    assert Cable.objects.count() >= 100
    small, r10 = _count(lambda: api.get("/api/cables/?page_size=10"))
    large, r100 = _count(lambda: api.get("/api/cables/?page_size=100"))
    assert r10.status_code == r100.status_code == 200
    assert len(r100.json()["results"]) == 100
    assert small <= large <= min(small + CONTENT_QUERIES, API_LIST_QUERIES)
    # Every row still names where both ends plug in.
    first = r100.json()["results"][0]
    assert {e["side"] for e in first["ends"]} == {"A", "B"}
    assert all(e["device"] and e["termination"] for e in first["ends"])


def test_api_cable_detail_within_budget_and_same_as_drf_would_render(cluster, api):
    cable = Cable.objects.filter(kind="SMF_OS2").order_by("label").first()
    n, r = _count(lambda: api.get(f"/api/cables/{cable.label}/"))
    assert r.status_code == 200
    assert n <= API_DETAIL_QUERIES
    assert r.json()["ends"] == [end_point(e) for e in cable.ends.order_by("side", "leg") if e.active]


def test_fast_cable_representation_matches_drf_field_for_field(cluster):
    """The unrolled ``CableSerializer.to_representation`` gives what DRF's generic loop gives."""
    vendor = f.VendorFactory(name="Corning-test")
    old = Cable.objects.filter(kind="SMF_OS2").order_by("label").first()
    new = Cable.objects.filter(kind="SMF_OS2").order_by("-label").first()
    old.vendor, old.notes, old.length_m, old.replaced_by, old.lot = vendor, "spliced", "12.50", new, "L7"
    old.save()
    for cable in Cable.objects.filter(pk__in=[old.pk, new.pk]).select_related("vendor"):
        fast = CableSerializer(cable).data
        generic = super(CableSerializer, CableSerializer(cable)).to_representation(cable)
        assert fast == generic
    retired = Cable.objects.get(pk=old.pk)
    assert CableSerializer(retired).data["replaced_by"] == new.pk
    assert CableSerializer(retired).data["length_m"] == "12.50"


def test_trace_through_two_panels_in_fixed_queries(cluster):
    uplink = (
        Port.objects.filter(device__name__startswith="leaf-", cage__index__gt=16)
        .select_related("device")
        .order_by("pk")
        .first()
    )
    n, trace = _count(lambda: port_trace(uplink))
    assert trace.complete and len(trace.segments) == 3, trace.segments
    assert trace.far is not None and trace.far.device.startswith("spine-")
    assert trace.segments[0].near.device == uplink.device.name
    assert n <= TRACE_QUERIES


def test_cable_page_within_budget_for_jumper_and_trunk(cluster, browser):
    trunk = Cable.objects.filter(role="trunk").order_by("label").first()
    jumper = Cable.objects.filter(role="jumper").order_by("label").first()
    for cable, budget in ((jumper, CABLE_PAGE_QUERIES), (trunk, TRUNK_PAGE_QUERIES)):
        n, r = _count(lambda cable=cable: browser.get(f"/c/{cable.label}"))
        assert r.status_code == 200
        assert cable.label in r.content.decode()
        assert n <= budget, (cable.label, n)


def test_cable_list_page_in_fixed_queries_whatever_its_size(cluster, browser):
    small, r10 = _count(lambda: browser.get("/cables/?per_page=10"))
    large, r100 = _count(lambda: browser.get("/cables/?per_page=100"))
    assert r10.status_code == r100.status_code == 200
    assert small <= large <= min(small + CONTENT_QUERIES, CABLE_LIST_PAGE_QUERIES)
    first = Cable.objects.exclude(status=CableStatus.RETIRED).order_by("label").first()
    a_end = first.ends.get(side="A")
    where = a_end.port or a_end.cage
    assert f"{where.device.name} {where.name}" in without_name_spans(r100.content.decode())
