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
    """A hall's count reads "1,200 cables in service", not "1200"; an alert line starts with its
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
    assert "<strong>1,200</strong> cables in service" in html
    assert "&nbsp;Link flap" not in html and "</strong> Link flap" in html
