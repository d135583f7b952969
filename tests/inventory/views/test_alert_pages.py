"""Alert pages, the cable-page block, maintenance form, bring-up report, exports and /metrics.

Topology::

    [gpu-p eth0]--J-P0--[leaf-p Ethernet1/1]     healthy
    [gpu-p eth1]--J-P1--[leaf-p Ethernet1/2]     degraded (alert open)
"""

import re
from datetime import timedelta

import pytest
from django.template.loader import render_to_string
from django.test import Client
from django.utils import timezone

from inventory.core.choices import AlertRule, AlertState, DeviceRole, Severity
from inventory.models import Alert, Cable, MaintenanceWindow
from inventory.selectors.alerts.queries import cable_alerts_context, sparkline
from inventory.services import alerts as svc
from inventory.templatetags.cabletrack import when
from tests import factories as f
from tests.inventory.phone_checks import RAW_CODE

pytestmark = pytest.mark.django_db


@pytest.fixture
def scene():
    now = timezone.now().replace(second=0, microsecond=0)
    rack = f.RackFactory(name="R-PAGES")
    _, gpu = f.twin_port_device(
        "gpu-p", rack=rack, role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}"
    )
    _, leaf = f.twin_port_device("leaf-p", rack=rack, u=30)
    f.jumper("J-P0", gpu[0], leaf[0])
    f.jumper("J-P1", gpu[1], leaf[1])
    for p in (gpu[0], gpu[1], leaf[0]):
        f.rollups(p, now - timedelta(minutes=20), 20)
    f.rollups(leaf[1], now - timedelta(minutes=20), 20, ber=1e-4)
    svc.alerts_evaluate(now=now)
    return {"now": now, "gpu": gpu, "leaf": leaf, "rack": rack, "alert": Alert.objects.get()}


@pytest.fixture
def tech_client():
    c = Client()
    tech = f.UserFactory(username="tech-pages", role="technician")
    f.field_crew(tech)  # a technician acknowledges and silences in their team's sites
    c.force_login(tech)
    return c


def test_the_cable_block_shows_the_open_alert_sparkline_and_fec_health(scene):
    cable = Cable.objects.get(label="J-P1")
    ctx = cable_alerts_context(cable, now=scene["now"])
    assert ctx["cable_alerts"] == [scene["alert"]]
    assert ctx["fec_health"]["state"] == "bad"  # 1e-4 is under a decade from 2.4e-4
    html = render_to_string("inventory/_cable_alerts.html", ctx)
    assert "<svg" in html and "<polyline" in html
    assert "FEC degradation" in html and "near the FEC limit" in html
    healthy = render_to_string(
        "inventory/_cable_alerts.html", cable_alerts_context(Cable.objects.get(label="J-P0"))
    )
    assert "No open alerts on this cable." in healthy and "healthy" in healthy


def test_sparkline_scales_into_the_box_and_keeps_gaps():
    s = sparkline([1e-9, None, 1e-7, 1e-5], width=100, height=20)
    xs = [float(p.split(",")[0]) for p in s["points"].split()]
    ys = [float(p.split(",")[1]) for p in s["points"].split()]
    assert len(xs) == 3 and min(ys) >= 0 and max(ys) <= 20 and ys[0] > ys[-1]
    assert sparkline([None, None])["empty"]


def test_alert_list_and_detail_pages(scene, tech_client, django_assert_max_num_queries):
    with django_assert_max_num_queries(12):
        r = tech_client.get("/alerts/")
    assert r.status_code == 200 and "J-P1" in r.content.decode()
    r = tech_client.get(f"/alerts/{scene['alert'].pk}/")
    body = r.content.decode()
    assert r.status_code == 200 and "Recommendation" in body and "gpu-p:eth1" in body


def test_the_alert_page_says_its_evidence_in_words_with_units_and_no_bookkeeping(scene, tech_client):
    """The evidence rows come from the one vocabulary: "PMD" and "Speed" 400 Gb/s, never "Pmd",
    "Speed gbps" or an empty "Recommendation code" row."""
    alert = scene["alert"]
    assert alert.evidence["recommendation_code"] and alert.evidence["link"]["pmd"]
    body = tech_client.get(f"/alerts/{alert.pk}/").content.decode()
    evidence = body[body.index("<h2>Evidence</h2>") :]
    rows = re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", evidence, re.S)
    labels = [label for label, _ in rows]
    assert "PMD" in labels and "FEC" in labels and "Pre-FEC BER" not in labels
    assert dict(rows)["Speed"].endswith(" Gb/s")
    assert all(text.strip() for _, text in rows), rows  # no empty rows
    for label in labels:
        assert not RAW_CODE.search(label) and "_" not in label, label
    for naive in ("Recommendation code", "Pmd", "Speed gbps", "Fec", "Bucket s", "Series"):
        assert naive not in evidence, naive


def test_acknowledge_and_silence_from_the_detail_page(scene, tech_client):
    pk = scene["alert"].pk
    assert tech_client.post(f"/alerts/{pk}/acknowledge").status_code == 302
    assert Alert.objects.get(pk=pk).acknowledged_at is not None
    r = tech_client.post(f"/alerts/{pk}/silence", {"hours": "0", "reason": "x"})
    assert r.status_code == 400 and "greater than or equal to 0.25" in r.content.decode()
    assert not MaintenanceWindow.objects.exists()
    assert tech_client.post(f"/alerts/{pk}/silence", {"hours": "2", "reason": "swap"}).status_code == 302
    mw = MaintenanceWindow.objects.get()
    assert list(mw.links.all()) == [scene["alert"].link]


def test_viewers_cannot_acknowledge(scene):
    c = Client()
    c.force_login(f.UserFactory(username="viewer-pages", role="viewer"))
    assert c.post(f"/alerts/{scene['alert'].pk}/acknowledge").status_code == 403


def test_the_phone_maintenance_form_silences_a_rack_and_names_bad_input(scene, tech_client):
    r = tech_client.post(
        "/maintenance/", {"targets": "R-PAGES, nope-9", "hours": "2", "reason": "re-cabling"}
    )
    assert r.status_code == 400 and "nope-9" in r.content.decode()
    assert not MaintenanceWindow.objects.exists()
    r = tech_client.post(
        "/maintenance/", {"targets": "R-PAGES\nleaf-p:Ethernet1/1", "hours": "2", "reason": "re-cabling"}
    )
    assert r.status_code == 302
    mw = MaintenanceWindow.objects.get()
    assert [r.name for r in mw.racks.all()] == ["R-PAGES"] and mw.links.count() == 1
    # The list says the window's end as the other pages say a moment, not "2026-12-07 00:30 UTC".
    listed = tech_client.get("/maintenance/").content.decode()
    assert re.search(r"re-cabling</strong> until (today|tomorrow) \d\d:\d\d:", listed), listed
    assert not re.search(r"\d{4}-\d\d-\d\d", listed.split("Current and upcoming", 1)[1])


def test_bringup_report_lists_miswires_and_silent_ports(scene, tech_client):
    gpu, leaf = scene["gpu"], scene["leaf"]
    f.seen(gpu[0], scene["now"], neighbor=leaf[1])
    r = tech_client.get("/r/R-PAGES/bringup")
    body = r.content.decode()
    assert r.status_code == 200
    assert "gpu-p:eth0: expected leaf-p:Ethernet1/1, sees leaf-p:Ethernet1/2" in body
    assert "gpu-p:eth1 (expected leaf-p:Ethernet1/2)" in body  # no neighbour seen


def test_bringup_report_says_each_ports_state_in_words(scene, tech_client):
    """The "Every port" table's Status read ``no_neighbour``, ``miswire`` and ``unused``: codes
    where the reconciliation page beside it says "no neighbour seen"."""
    gpu, leaf = scene["gpu"], scene["leaf"]
    f.seen(gpu[0], scene["now"], neighbor=leaf[1])
    body = tech_client.get("/r/R-PAGES/bringup").content.decode()
    table = body[body.index("<h2>Every port</h2>") :]
    states = set(re.findall(r'<td class="[a-z]*">([^<]+)</td></tr>', table))
    assert states and not {s for s in states if "_" in s or s in {"miswire", "unused", "unrecorded"}}, states
    assert {"miswired", "no neighbour seen"} <= states, states


def test_topology_exports(scene, tech_client):
    txt = tech_client.get("/topology/export.txt").content.decode()
    assert "leaf-p Ethernet1/1 gpu-p eth0 J-P0" in txt
    ufm = tech_client.get("/topology/export.ufm").content.decode()
    assert "leaf-p" in ufm and "-4x-100G-> HCA gpu-p eth0/P1" in ufm
    dot = tech_client.get("/topology/export.dot").content.decode()
    assert '"leaf-p":"Ethernet1/1" -- "gpu-p":"eth0"' in dot
    assert tech_client.get("/topology/export.xml").status_code == 404


def test_metrics_are_not_served_to_the_world(scene, settings):
    c = Client()
    assert c.get("/metrics").status_code == 404  # nothing configured: it does not exist
    settings.CABLETRACK_METRICS_TOKEN = "scrape-secret-1"
    assert c.get("/metrics").status_code == 401
    assert c.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    r = c.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-secret-1")
    assert r.status_code == 200
    body = r.content.decode()
    link = scene["alert"].link_id
    assert (
        'cabletrack_link_info{a_device="gpu-p",a_port="eth1",a_rack="R-PAGES",b_device="leaf-p",'
        f'b_port="Ethernet1/2",b_rack="R-PAGES",cable="J-P1",link="{link}",vendor="NVIDIA"}} 1.0'
    ) in body.splitlines()
    assert 'cable="J-P1"' in body and 'rack="R-PAGES"' in body
    assert f'cabletrack_link_pre_fec_ber{{end="b",link="{link}"}} 0.0001' in body.splitlines()
    assert (
        f'cabletrack_link_alert_open{{link="{link}",rule="fec_degradation",severity="notify",silenced="false"}} 1.0'
        in body
    )
    assert 'cabletrack_alerts_open{rule="fec_degradation",severity="notify",silenced="false"} 1.0' in body
    assert "cabletrack_cables_retest_overdue" in body


def test_metrics_from_an_allowed_network(scene, settings):
    settings.CABLETRACK_METRICS_NETWORKS = ["10.0.0.0/8"]
    assert Client(REMOTE_ADDR="10.1.2.3").get("/metrics").status_code == 200
    assert Client(REMOTE_ADDR="192.0.2.1").get("/metrics").status_code == 401


def test_vendor_comparison_page(scene, tech_client):
    r = tech_client.get("/vendors/compare/")
    assert r.status_code == 200 and "MMS4X00-NM" in r.content.decode()


def test_the_vendor_comparison_says_the_days_it_shows(scene, tech_client):
    """Asked for more days than it keeps (or none), the page says the days its figures are of."""
    assert "Last 90 days (since " in tech_client.get("/vendors/compare/?days=500").content.decode()
    assert "Last 1 days (since " in tech_client.get("/vendors/compare/?days=0").content.decode()


def test_the_grafana_dashboard_queries_only_what_metrics_serves(scene, settings):
    """Every metric and label the shipped dashboard uses is in a real ``/metrics`` scrape."""
    import json
    import re
    from pathlib import Path

    from django.utils import timezone
    from prometheus_client.parser import text_string_to_metric_families

    from inventory.models import Link, PortBaseline

    settings.CABLETRACK_METRICS_TOKEN = "scrape-secret-1"
    link = Link.objects.filter(active=True).first()  # a learned Rx baseline, for the Rx panel
    now = timezone.now()
    PortBaseline.objects.update_or_create(
        port_id=link.a_port_id, defaults={"rx_power_dbm": [-1.0] * 4, "first_at": now, "updated_at": now}
    )
    body = Client().get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-secret-1").content.decode()
    served: dict[str, set[str]] = {}
    for family in text_string_to_metric_families(body):
        for sample in family.samples:
            served.setdefault(sample.name, set()).update(sample.labels)
    dashboard = json.loads(
        (Path(__file__).resolve().parents[3] / "deploy" / "grafana" / "cabletrack-dashboard.json").read_text()
    )

    def queries(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if (
                    key in ("expr", "query", "definition")
                    and isinstance(value, str)
                    and "cabletrack_" in value
                ):
                    yield value
                else:
                    yield from queries(value)
        elif isinstance(node, list):
            for item in node:
                yield from queries(item)

    exprs = list(queries(dashboard))
    assert len(exprs) >= 7
    for expr in exprs:
        names = set(re.findall(r"\bcabletrack_[a-z_]+\b", expr))
        assert names <= set(served), f"{expr}: not served: {names - set(served)}"
        labels = set(served[next(iter(names))]).union(*(served[n] for n in names))
        used = set()
        for group in re.findall(r"\b(?:by|on|group_left|without)\s*\(([^)]*)\)", expr):
            used |= {g.strip() for g in group.split(",") if g.strip()}
        used |= set(re.findall(r"[{,]\s*([a-z_]+)\s*(?:=~|!=|!~|=)", expr))
        used |= set(re.findall(r"label_values\([a-z_]+,\s*([a-z_]+)\)", expr))
        assert used <= labels, f"{expr}: labels not served: {used - labels}"


def test_the_cable_page_says_when_each_pre_fec_ber_was_measured(tech_client):
    """The alert's figures are the moment it last measured them; the link health's are the last
    hour. On one page, side by side, each says which (they differ: 3.3e-05 then, 5.0e-05 now).

    [gpu-b eth0]--J-B--[leaf-b Ethernet1/1], an alert that measured 3 hours ago.
    """
    now = timezone.now().replace(second=0, microsecond=0)
    rack = f.RackFactory(name="R-BER")
    _, gpu = f.twin_port_device(
        "gpu-b", rack=rack, role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}"
    )
    _, leaf = f.twin_port_device("leaf-b", rack=rack, u=30)
    cable = f.jumper("J-B", gpu[0], leaf[0])
    f.rollups(leaf[0], now - timedelta(minutes=30), 30, ber=5e-5)
    measured = now - timedelta(hours=3)
    Alert.objects.create(
        key="fec_degradation:link:ber-moments",
        rule=AlertRule.FEC_DEGRADATION,
        severity=Severity.NOTIFY,
        state=AlertState.OPEN,
        cable=cable,
        opened_at=measured - timedelta(hours=1),
        updated_at=now,  # still holding: last seen now, its figures from 3 hours ago
        summary="FEC degradation: leaf-b:Ethernet1/1 <-> gpu-b:eth0: corrected FEC errors rising",
        recommendation="Clean both ends (pre-FEC BER 3.3e-05, 3,300x its reference 1.0e-08).",
        evidence={"history": [{"at": measured.isoformat(), "ends": {}}]},
    )
    html = tech_client.get("/c/J-B").content.decode()
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html.split("<main>", 1)[1]))
    assert f"At the alert, {when(measured)}: Clean both ends (pre-FEC BER 3.3e-05" in text, text
    assert re.search(r"pre-FEC BER 5\.0e-05 \(latest: today \d\d:\d\d, just now\), limit 2\.4e-04", text), (
        text
    )
