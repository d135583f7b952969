"""Numbers in query strings are the digits 0-9. ``str.isdigit`` also takes "²" (and other
scripts' digits), which ``int`` then refused: ``?days=²`` was a 500 where ``?days=x`` is a 400
naming the parameter."""

import pytest

from inventory.core.choices import DeviceRole
from tests import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def cable():
    _, gpu = f.twin_port_device("gpu-1", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    _, leaf = f.twin_port_device("leaf-1", u=20)
    return f.jumper("J-1", gpu[0], leaf[0])


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/api/cables/J-1/impact/?days=²", "days"),
        ("/api/cables/?page_size=²", "page_size"),
        ("/api/reports/commissioning/?page=²", "page"),
        ("/api/reports/commissioning/?row=²", "row"),
        ("/api/vendor-comparison/?days=²", "days"),
        ("/api/reports/repairs/?months=²", "months"),
    ],
)
def test_a_number_written_in_other_digits_is_a_400_naming_it(engineer_api, cable, url, field):
    r = engineer_api.get(url)
    assert r.status_code == 400, r.content[:200]
    assert field in r.json()
