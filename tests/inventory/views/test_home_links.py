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
