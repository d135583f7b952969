"""``/metrics`` keeps its cardinality bounded: past ``CABLETRACK_METRICS_MAX_LINKS`` links only
the worst (highest pre-FEC BER) are exported, so a scrape never grows with a bad day.

    [gpu-p eth0]--J-P0--[leaf-p Ethernet1/1]   healthy (5e-9)
    [gpu-p eth1]--J-P1--[leaf-p Ethernet1/2]   1e-4 at the leaf
"""

import pytest
from django.test import Client

from tests.inventory.views.test_alert_pages import scene as scene  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db


def _scrape(settings) -> str:
    settings.CABLETRACK_METRICS_TOKEN = "scrape-secret-2"
    r = Client().get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-secret-2")
    assert r.status_code == 200
    return r.content.decode()


def _info_lines(body: str) -> list[str]:
    return [x for x in body.splitlines() if x.startswith("cabletrack_link_info{")]


def test_the_link_series_are_capped_worst_first(scene, settings):  # noqa: F811
    assert len(_info_lines(_scrape(settings))) == 2
    settings.CABLETRACK_METRICS_MAX_LINKS = 1
    body = _scrape(settings)
    (line,) = _info_lines(body)
    assert 'cable="J-P1"' in line and 'a_device="gpu-p"' in line and 'b_port="Ethernet1/2"' in line
    assert "J-P0" not in body
    link = scene["alert"].link_id
    ber_lines = [x for x in body.splitlines() if x.startswith("cabletrack_link_pre_fec_ber{")]
    assert ber_lines and all(f'link="{link}"' in x for x in ber_lines)
