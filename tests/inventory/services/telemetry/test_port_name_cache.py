"""The ingest's port names per web process (PostgreSQL): every device a collector posts for is
named once, then answered from memory until a name changes; past its bound the cache starts
over and no sample is lost."""

import json
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from inventory.core.choices import TokenKind
from inventory.models import PortAlias, TelemetrySample
from inventory.services.telemetry import ingest_rows
from tests import factories as f

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

NAMES_READ = "a.valid_to IS NULL AND d.name = ANY"


@pytest.fixture
def site():
    """Four leaves of four ports each: every current name of the site."""
    return [f.twin_port_device(f"leaf-n{i}")[0] for i in range(4)]


@pytest.fixture
def cache(monkeypatch):
    fresh = ingest_rows._PortNameCache()
    monkeypatch.setattr(ingest_rows, "_port_names", fresh)
    return fresh


def _post_round(client, devices, minute: int) -> int:
    """One batch per device, a sample for each of its ports; the names read meanwhile."""
    ts = (timezone.now() - timedelta(minutes=30 - minute)).replace(second=0, microsecond=0)
    with CaptureQueriesContext(connection) as q:
        for dev in devices:
            names = PortAlias.objects.filter(device=dev, valid_to__isnull=True).values_list("name", flat=True)
            samples = [f.telemetry_sample(dev.name, n, ts, fec_corrected_codewords=minute) for n in names]
            r = client.post(
                "/api/telemetry/", json.dumps({"samples": samples}), content_type="application/json"
            )
            assert r.status_code == 200 and r.json()["rejected"] == 0, r.content
    return sum(NAMES_READ in x["sql"] for x in q.captured_queries)


def test_a_site_whose_names_fit_is_named_once_per_device(site, cache, user_with_role, monkeypatch):
    names = PortAlias.objects.filter(valid_to__isnull=True, device__in=site).count()
    monkeypatch.setattr(ingest_rows._PortNameCache, "MAX_NAMES", names)  # the site's names, exactly
    client = f.api_token_client(user_with_role("collector"), TokenKind.INGEST)
    assert _post_round(client, site, 1) == len(site)  # each device's names read on its first batch
    assert _post_round(client, site, 2) == 0  # then every port answered from memory
    assert cache.size == names
    assert TelemetrySample.objects.count() == 2 * names


def test_past_its_bound_the_cache_starts_over_and_every_sample_is_stored(
    site, cache, user_with_role, monkeypatch
):
    names = PortAlias.objects.filter(valid_to__isnull=True, device__in=site).count()
    monkeypatch.setattr(ingest_rows._PortNameCache, "MAX_NAMES", names - 1)
    client = f.api_token_client(user_with_role("collector"), TokenKind.INGEST)
    _post_round(client, site, 1)
    assert cache.size < names  # the last device's names did not fit: it started over
    assert _post_round(client, site, 2) > 0
    assert TelemetrySample.objects.count() == 2 * names
