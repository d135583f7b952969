"""A trunk between panels carrying several links, an alert (or a drain) on one of them: the trunk
is not held by an alert naming another cable, says it once and keeps its own state; the patch
cords of that link, and a trunk the alert names, are held as before.

Plant (``conftest.plant``, and a second link through the trunk; every cable passes)::

    [gpu-0001 eth1]--J-100--[pp-a Front 1]==T-100==[pp-b Front 1]--J-101--[leaf-01 Ethernet2/1]
    [gpu-0001 eth2]--J-103--[pp-a Front 2]==T-100==[pp-b Front 2]--J-104--[leaf-01 Ethernet2/2]
        (a page alert, link flap, on the first link; its suspect J-100 unless said otherwise)
"""

from datetime import UTC, timedelta

import pytest
from django.utils import timezone

from inventory.core.choices import CableStatus
from inventory.models import Alert, Cable, Link, LinkDrain, MaintenanceWindow
from tests import factories as f
from tests.inventory.views.conftest import without_name_spans
from tests.inventory.views.test_cable_page_evidence import olts

pytestmark = pytest.mark.django_db

CARRIED = "An alert is open on a link it carries:"


def _build(plant, suspect: str) -> Alert:
    f.jumper("J-103", plant["gpu"][2], plant["pa_front"][1])
    f.jumper("J-104", plant["pb_front"][1], plant["leaf"][3])
    now = timezone.now()
    for label, n in (("J-100", 8), ("J-101", 8), ("J-103", 8), ("J-104", 8), ("T-100", 24)):
        c = Cable.objects.get(label=label)
        olts(c, 0.4, n, now)
        c.status = CableStatus.TESTED
        c.length_m = 5  # within the OTDR's dead zone: the power-meter test is its gate
        c._change_reason = "test setup"
        c.save()
    link = Link.objects.get(active=True, segments__cable__label="J-100")
    alert = Alert.objects.create(
        key=f"link_flap:link:{link.pk}",
        rule="link_flap",
        severity="page",
        link=link,
        cable=Cable.objects.get(label=suspect),
        opened_at=now - timedelta(minutes=30),
        updated_at=now - timedelta(minutes=5),
        summary="12 flaps in 10 minutes",
        recommendation="Re-seat both ends.",
    )
    alert.cables.set([s.cable_id for s in link.segments.all()])
    return alert


def _status(client, label: str) -> str:
    html = without_name_spans(client.get(f"/c/{label}").content.decode())
    return html.split('aria-label="Status"', 1)[1].split("</section>", 1)[0]


def _row(client, label: str) -> str:
    html = without_name_spans(client.get(f"/cables/?q={label}").content.decode())
    return html.split('data-testid="row-next-step"', 1)[1].split("</td>", 1)[0]


def _mark_in_production(client, label: str) -> str:
    client.post(f"/c/{label}/status", {"status": CableStatus.IN_PRODUCTION})
    return Cable.objects.get(label=label).status


def test_a_trunk_under_an_alert_on_one_link_naming_a_patch_cord_keeps_its_own_state(
    plant, tech_client, engineer_api
):
    alert = _build(plant, "J-100")
    status = _status(tech_client, "T-100")
    assert 'data-state="ready"' in status and "Alert open" not in status
    assert "every test passes and no alert holds it: ready for production." in status
    assert f'{CARRIED} <a href="/alerts/{alert.pk}/">Page alert open: Link flap on J-100</a>.' in status
    assert status.count("Link flap") == 1 and ">Mark in production<" in status

    row = _row(tech_client, "T-100")
    assert 'data-state="ready"' in row and "alert on a link, at J-100" in row

    step = engineer_api.get("/api/cables/T-100/").json()["next_step"]
    assert step["state"] == "ready" and step["blocking_alerts"] == []
    assert step["step"]["status"] == CableStatus.IN_PRODUCTION
    assert step["headline"].endswith(f"{CARRIED} Page alert open: Link flap on J-100.")

    # the commissioning report blocks the alert's link only, not the trunk's other link
    report = without_name_spans(tech_client.get("/reports/commissioning/").content.decode())
    assert "T-100: Page alert open" not in report
    assert "J-100: Page alert open: Link flap" in report
    # three links: the alert's, the trunk's other (ready) and J-102's (untested)
    assert "3</strong> links" in report and "1 ready" in report and "2 blocked" in report

    assert _mark_in_production(tech_client, "T-100") == CableStatus.IN_PRODUCTION


def test_a_patch_cord_on_the_alerts_link_is_still_held(plant, tech_client, engineer_api):
    alert = _build(plant, "J-100")
    status = _status(tech_client, "J-101")
    assert 'data-state="alert"' in status and "Page alert open: Link flap on J-100." in status
    assert CARRIED not in status
    step = engineer_api.get("/api/cables/J-101/").json()["next_step"]
    assert step["state"] == "alert" and step["blocking_alerts"] == [alert.pk]
    assert 'data-state="alert"' in _row(tech_client, "J-101")
    assert _mark_in_production(tech_client, "J-101") == CableStatus.TESTED


def test_a_trunk_the_alert_names_is_still_held(plant, tech_client, engineer_api):
    alert = _build(plant, "T-100")
    status = _status(tech_client, "T-100")
    assert 'data-state="alert"' in status and ">Alert open<" in status
    assert "Page alert open: Link flap." in status and CARRIED not in status
    step = engineer_api.get("/api/cables/T-100/").json()["next_step"]
    assert step["state"] == "alert" and step["blocking_alerts"] == [alert.pk]
    assert 'data-state="alert"' in _row(tech_client, "T-100")
    report = without_name_spans(tech_client.get("/reports/commissioning/").content.decode())
    assert report.count("T-100: Page alert open: Link flap") == 2  # both its links
    assert _mark_in_production(tech_client, "T-100") == CableStatus.TESTED


def test_a_drain_of_one_link_says_which_on_the_trunk_and_drained_on_its_cords(
    plant, tech_client, engineer_api
):
    alert = _build(plant, "J-100")
    now = timezone.now()
    ends = now + timedelta(hours=4)
    window = MaintenanceWindow.objects.create(starts_at=now, ends_at=ends, reason="drain")
    LinkDrain.objects.create(alert=alert, link=alert.link, window=window, drained_at=now, safe=True)
    u = ends.astimezone(UTC)  # a window that ends after midnight UTC is given its day
    until = f"{u:%H:%M}" if u.date() == now.astimezone(UTC).date() else f"{u.day} {u:%b %H:%M}"
    which = f"gpu-0001:eth1 \u2194 leaf-01:Ethernet2/1, until {until} UTC"

    status = _status(tech_client, "T-100")
    assert f"One link it carries is drained ({which})." in status
    assert "Drained, in maintenance" not in status
    assert f"one link it carries is drained ({which})" in _row(tech_client, "T-100")
    step = engineer_api.get("/api/cables/T-100/").json()["next_step"]
    assert step["drained"] == f"one link it carries is drained ({which})"

    assert f"Drained, in maintenance until {until} UTC." in _status(tech_client, "J-101")
    assert engineer_api.get("/api/cables/J-101/").json()["next_step"]["drained"].startswith("drained, in")


def test_the_trunks_impact_does_not_count_an_alert_naming_a_patch_cord_as_degraded_time(plant, tech_client):
    _build(plant, "J-100")  # opened 30 minutes ago
    trunk = without_name_spans(tech_client.get("/c/T-100").content.decode())
    assert 'data-testid="impact"' not in trunk and "Degraded" not in trunk  # never degraded
    cord = without_name_spans(tech_client.get("/c/J-101").content.decode())
    assert "Degraded 0.5 h in the last 90 days (an alert at warning or worse on a link through it)" in cord


def test_a_trunk_the_alert_names_counts_it_as_degraded_time(plant, tech_client):
    _build(plant, "T-100")
    trunk = without_name_spans(tech_client.get("/c/T-100").content.decode())
    assert (
        "Degraded 0.5 h in the last 90 days (an alert at warning or worse on a link through it that names it or no cable)"
        in trunk
    )
