"""The home page leads to the pages a desk engineer looks after: the telemetry pipeline (poison
set aside, a stalled queue) and the NetBox sync conflicts."""

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_home_links_the_pipeline_and_the_sync_conflicts_and_both_open(user_with_role):
    client = Client()
    client.force_login(user_with_role("viewer"))
    html = client.get("/").content.decode()
    for path in ("/telemetry/pipeline/", "/sync/conflicts/"):
        assert f'href="{path}"' in html
        assert client.get(path).status_code == 200


def test_home_counts_read_with_thousands_grouped_and_no_blank_before_an_alert(user_with_role):
    """A hall's count reads "1,200 cables", not "1200"; an alert line starts with its
    severity word, then its summary, with no underlined blank between them."""
    from django.utils import timezone

    from inventory.core.choices import AlertState
    from inventory.db import bulk
    from inventory.models import Alert, Cable

    bulk.bulk_insert_rows(
        Cable, ["label", "kind", "status"], [[f"H-{i}", "CAT6A", "in_production"] for i in range(1200)]
    )
    Alert.objects.create(
        key="k1",
        rule="link_flap",
        severity="page",
        state=AlertState.OPEN,
        summary="Link flap",
        opened_at=timezone.now(),
        updated_at=timezone.now(),
    )
    client = Client()
    client.force_login(user_with_role("viewer"))
    html = client.get("/").content.decode()
    assert "<strong>1,200</strong> cables" in html and "<strong>1,200</strong> in production" in html
    assert "&nbsp;Link flap" not in html and "</strong> Link flap" in html


def test_each_home_count_is_what_its_link_lists(user_with_role, settings):
    """The plant's tiles say how many cables there are and how many are in production, and
    each number is the count of the list it links to: "cables in service" counted degraded,
    faulty and planned cables too while linking to every cable, retired ones included."""
    import re
    from datetime import timedelta

    from django.utils import timezone

    from inventory.db import bulk
    from inventory.models import Cable

    overdue = timezone.localdate() - timedelta(days=3)
    rows = [
        ["P-1", "CAT6A", "in_production", None],
        ["P-2", "CAT6A", "in_production", overdue],
        ["P-3", "CAT6A", "in_production", None],
        ["D-1", "CAT6A", "degraded", overdue],
        ["F-1", "CAT6A", "faulty", None],
        ["N-1", "CAT6A", "planned", overdue],  # a bench test's date: not in the plant yet
        ["R-1", "CAT6A", "retired", overdue],  # gone before the sweep cleared its date
    ]
    bulk.bulk_insert_rows(Cable, ["label", "kind", "status", "retest_due"], rows)
    settings.CABLETRACK_METRICS_TOKEN = "scrape-secret-1"
    client = Client()
    client.force_login(user_with_role("viewer"))
    html = client.get("/").content.decode()
    assert "<strong>6</strong> cables</a>" in html  # every cable but the retired one
    assert "<strong>3</strong> in production</a>" in html
    assert "in service" not in html
    tiles = re.findall(r'<a href="(/cables/[^"]*)"><strong>([\d,]+)</strong> ([^<]+)</a>', html)
    assert len(tiles) == 5, tiles
    for href, shown, words in tiles:
        listed = client.get(href.replace("&amp;", "&")).context["page"].paginator.count
        assert int(shown.replace(",", "")) == listed, (words, href)
    # the retest planning page's header and the Prometheus gauge count the same overdue cables
    from inventory.selectors.retests.worklist import retest_counts

    overdue_list = client.get("/cables/?retest_overdue=true").context["page"].paginator.count
    assert overdue_list == 2 == retest_counts(today=timezone.localdate())["overdue"]
    body = Client().get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-secret-1").content.decode()
    assert "cabletrack_cables_retest_overdue 2.0" in body.splitlines()
