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


@pytest.mark.parametrize("row", ["x", "1.5", "-1", "99999999999999999999999", "1\x00"])
@pytest.mark.parametrize("url", ["/reports/commissioning/", "/reports/commissioning.pdf"])
def test_a_row_that_is_no_row_id_is_a_400_not_a_500(tech, url, row):
    assert tech.get(url, {"row": row}).status_code == 400


def test_an_unknown_row_id_is_a_404(tech):
    assert tech.get("/reports/commissioning/", {"row": "424242"}).status_code == 404
