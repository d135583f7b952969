"""The pictures (rack drawing, path, device and port pages), the lists at phone size, the home
page's alerts and the alert evidence, as the pages render them.

Plant: ``tests/inventory/views/conftest.py``
[gpu-0001 eth1]--J-100--[pp-a Front 1]==T-100==[pp-b Front 1]--J-101--[leaf-01 Ethernet2/1]
[gpu-0001 eth0]--J-102--[leaf-01 Ethernet1/1]
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.core.choices import AlertRule, AlertState, Severity
from inventory.models import Alert
from inventory.selectors.alerts.queries import sparkline
from inventory.selectors.pages import cable_links
from tests.inventory.views.conftest import without_name_spans

pytestmark = pytest.mark.django_db


def _alert(severity, summary, hours, **kw):
    now = timezone.now()
    return Alert.objects.create(
        key=f"{severity}:{summary}",
        rule=AlertRule.FEC_DEGRADATION,
        severity=severity,
        state=AlertState.OPEN,
        opened_at=now - timedelta(hours=hours),
        updated_at=now,
        summary=summary,
        **kw,
    )


def test_the_rack_page_draws_the_rack_and_each_device_links_to_its_page(plant, tech_client):
    html = tech_client.get("/r/A01").content.decode()
    assert '<svg class="elevation"' in html
    assert 'href="/d/gpu-0001"' in html and 'href="/d/pp-a"' in html
    assert "U11-39 free" in html  # between the node (U10) and the panel (U40)


def test_the_device_page_lists_its_ports_in_natural_order_and_each_cable(plant, tech_client):
    html = tech_client.get("/d/pp-a").content.decode()
    ports = [f"Front {n}</a>" for n in (1, 2, 3, 10, 11, 12)]
    positions = [html.index(p) for p in ports]
    assert positions == sorted(positions)  # Front 2 before Front 10
    assert 'href="/c/J-100"' in html and 'href="/c/T-100"' in html
    assert tech_client.get("/d/nope").status_code == 404


def test_the_port_page_draws_the_path_with_both_panels_and_the_trunk_position(plant, tech_client):
    html = tech_client.get("/d/gpu-0001/p/eth1").content.decode()
    assert 'class="pathdiagram"' in html
    for text in ("pp-a", "Front 1</a> ⇄ <a", "Rear 1", "fibre position 1 of 12", "pp-b", "Ethernet2/1"):
        assert text in html, text
    assert tech_client.get("/d/gpu-0001/p/eth99").status_code == 404


def test_a_trunk_lists_every_link_it_carries_by_position(plant, tech_client):
    from django.template import Context, Template

    trunk = plant["cables"]["T-100"]
    links = cable_links(trunk)  # the plant's cabling recorded the one link through the trunk
    assert len(links) == 1
    html = Template("{% load path_tags %}{% trunk_links cable links %}").render(
        Context({"cable": trunk, "links": links})
    )
    assert "Links carried (1)" in html and "Position 1" in html
    assert 'href="/d/gpu-0001/p/eth1"' in html and 'href="/d/leaf-01/p/Ethernet2/1"' in html


def test_a_steady_sparkline_is_drawn_across_the_middle_not_along_the_floor():
    """A BER held at the alert's value all day is a level line at mid height: along the floor it
    read as "nothing" beside an alert quoting that BER."""
    steady = sparkline([2e-5] * 6, width=100, height=20)
    ys = {float(p.split(",")[1]) for p in steady["points"].split()}
    assert ys == {10.0}
    rising = sparkline([1e-9, 1e-7, 1e-5], width=100, height=20)
    assert [float(p.split(",")[1]) for p in rising["points"].split()] == [18.0, 10.0, 2.0]


def test_a_sparkline_with_one_reading_draws_a_dot():
    one = sparkline([3e-7])
    assert not one["empty"] and len(one["dots"]) == 1
    assert sparkline([None, 2e-7, None])["dots"]  # a lone reading among gaps, too
    assert not sparkline([1e-7, 2e-7])["dots"]  # a line needs no dots


def test_home_lists_alerts_most_severe_first_without_contradicting_tiles(plant, tech_client):
    _alert(Severity.WARNING, "newest warning", 1)
    _alert(Severity.PAGE, "older page", 5)
    html = tech_client.get("/").content.decode()
    assert html.index("older page") < html.index("newest warning")
    assert "degraded or faulty" not in html and "cables degraded" not in html


def test_alert_evidence_reads_as_labelled_values(plant, tech_client):
    a = _alert(
        Severity.PAGE,
        "flapping",
        1,
        evidence={
            "ends": {"a": {"port_id": 3, "pre_fec_ber": 2.1e-6, "lanes_down": [1, 3], "rx_power_dbm": -6.1}}
        },
    )
    html = without_name_spans(tech_client.get(f"/alerts/{a.pk}/").content.decode())
    assert "<dt>Pre-FEC BER</dt><dd>2.1e-06</dd>" in html
    assert (
        "<dt>Lanes down</dt><dd>1, 3</dd>" in html and "<dt>Rx power</dt><dd>-6.1 dBm</dd>" in html
    )  # the unit with the value
    assert "pre_fec_ber" not in html and "port_id" not in html


def test_retests_are_paged_and_each_row_shows_both_ends(plant, tech_client, monkeypatch):
    monkeypatch.setattr("inventory.views.retests.RETESTS_PER_PAGE", 1)
    j100 = plant["cables"]["J-100"]
    j100.retest_due = timezone.localdate() - timedelta(days=1)
    j100.save()
    first = tech_client.get("/retests/").content.decode()
    assert "page 1 of 2" in first and 'rel="next"' in first
    second = tech_client.get("/retests/", {"page": 2}).content.decode()
    assert "page 2 of 2" in second and 'rel="prev"' in second
    everything = without_name_spans(first + second)
    # J-102 (overdue in the plant) shows where both of its ends are, cage by cage.
    assert "A: A01 U10 gpu-0001 OSFP1" in everything and "B: B01 U46 leaf-01 OSFP1" in everything
    assert "B: A01 U40 pp-a Front 1" in everything  # J-100's far end, a panel port
