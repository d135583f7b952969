"""What an opening alert does to the cable it names, whatever the rule: one decision
(``core.decision.alert_degrades``), read by the alert lifecycle (the status), the cable page (its
badge and headline) and the impact figures ("while degraded").

    [gpu-s eth0]--J-S0--[leaf-s Ethernet1/1]   link 0: a ring's healthy link
    [gpu-s eth1]--J-S1--[leaf-s Ethernet1/2]   link 1: the slow ring's most likely cable
"""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from inventory.core.choices import AlertRule, AlertState, CableStatus, DeviceRole, Severity
from inventory.core.telemetry.rules.frames import Finding
from inventory.models import Alert, Cable, Link
from inventory.selectors.decision import cable_decisions
from inventory.services.alerts import Silence, alerts_apply
from inventory.services.collectives.evaluate import spike_key
from tests import factories as f
from tests.inventory.testing_scenes import olts

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
RULE = AlertRule.TAIL_LATENCY_SPIKE


@pytest.fixture
def ring():
    _, gpu = f.twin_port_device("gpu-s", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    _, leaf = f.twin_port_device("leaf-s", u=30)
    cables = {}
    for label, a, b in (("J-S0", gpu[0], leaf[0]), ("J-S1", gpu[1], leaf[1])):
        c = f.jumper(label, a, b, length_m=Decimal("3"))  # 3 m: a power-meter test is the gate
        olts(c, [0.4] * 8, when=T0 - timedelta(days=2))
        c.status = CableStatus.IN_PRODUCTION
        c.save()
        cables[label] = c
    links = {label: Link.objects.get(active=True, segments__cable=c) for label, c in cables.items()}
    return {"cables": cables, "links": links}


def spike(link: Link | None, *, comm: int = 7) -> Finding:
    """A ``tail_latency_spike`` as ``collectives_evaluate`` makes it: the link of its most likely
    cable only when physical evidence names one."""
    return Finding(
        key=spike_key(comm),
        rule=RULE,
        severity=Severity.PAGE,
        link_id=None if link is None else link.pk,
        port_id=None,
        headline="job 418201 dp-rail2 (AllReduce 256 MiB): slowest 26.0 ms = 10.0x its P99 2.6 ms",
        recommendation="Clean and re-seat both ends.",
        recommendation_code="clean_reseat" if link is not None else "check_host",
        evidence={
            "collective": {"job": "418201", "communicator": "dp-rail2", "sure": "high"},
            "suspects": []
            if link is None
            else [{"link_id": link.pk, "score": 4.0, "physical": 4.0, "congestion": 0.0, "reasons": ["FEC"]}],
            "host_ids": [],
        },
    )


def apply(findings, *, now, resolve_keys=()):
    return alerts_apply(
        findings=findings,
        holding=set(),
        reporting_port_ids=set(),
        now=now,
        rules_evaluated={RULE},
        reporting_keys=set(resolve_keys),
    )


def test_a_spike_that_names_a_cable_degrades_it_and_its_page_agrees(ring, client, user_with_role):
    """The spike names J-S1 (physical evidence on its link): J-S1 is degraded, as a physical alert
    would make it, with the alert in its history; the page's badge says Degraded under the page
    alert, never "In production" above "Not ready for production"."""
    apply([spike(ring["links"]["J-S1"])], now=T0)
    alert = Alert.objects.get(rule=RULE)
    assert alert.cable.label == "J-S1"
    cable = Cable.objects.get(label="J-S1")
    assert cable.status == CableStatus.DEGRADED
    assert cable.history.latest().history_change_reason.startswith(f"alert {RULE} #{alert.pk}")
    assert Cable.objects.get(label="J-S0").status == CableStatus.IN_PRODUCTION

    client.force_login(user_with_role("technician", "tina"))
    page = client.get("/c/J-S1").content.decode()
    assert 'data-testid="cable-status">Degraded<' in page
    assert "Page alert open: Tail latency spike (collectives). Not ready for production" in page


def test_a_spike_that_names_no_cable_changes_no_status(ring):
    apply([spike(None)], now=T0)
    assert Alert.objects.get(rule=RULE).cable is None
    assert set(Cable.objects.values_list("status", flat=True)) == {CableStatus.IN_PRODUCTION}


def _silenced_spike_on_j_s1(ring) -> None:
    """The spike on J-S1's link, inside a maintenance window covering everything."""
    alerts_apply(
        findings=[spike(ring["links"]["J-S1"])],
        holding=set(),
        reporting_port_ids=set(),
        now=T0,
        silence=Silence(set(), set(), set(), everything=True),
        rules_evaluated={RULE},
    )


def test_a_silenced_spike_leaves_the_cable_alone(ring, client, user_with_role):
    """Inside a maintenance window nothing moves, for the spike as for the physical rules; the
    page still shows the open alert, and says the cable stays in production under its "In
    production" badge instead of "Not ready for production"."""
    _silenced_spike_on_j_s1(ring)
    assert Cable.objects.get(label="J-S1").status == CableStatus.IN_PRODUCTION

    client.force_login(user_with_role("technician", "tina"))
    page = client.get("/c/J-S1").content.decode()
    assert 'data-testid="cable-status">In production<' in page
    assert (
        "Page alert open: Tail latency spike (collectives). It stays in production; the alert says what to check."
        in page
    )
    assert "Not ready for production" not in page
    # nor does its Tests card, below: its tests are complete and it stays in production
    assert "not ready for production" not in page.lower()


def test_under_an_alert_that_leaves_it_in_production_a_failing_test_is_not_told_it_stays(
    ring, client, user_with_role
):
    """A cable in production under such an alert whose own power-meter test then fails: the
    headline said "It stays in production" above a Tests card saying "Not ready for production"."""
    _silenced_spike_on_j_s1(ring)
    cable = Cable.objects.get(label="J-S1")
    olts(cable, [0.3] * 7 + [3.5], when=timezone.now())
    client.force_login(user_with_role("technician", "tina"))
    page = client.get("/c/J-S1").content.decode()
    assert "Page alert open: Tail latency spike (collectives). Its own test fails too (below)" in page
    assert "It stays in production" not in page and "Not ready for production" in page


def test_once_the_spike_resolves_the_cable_comes_back_as_after_a_physical_alert(ring):
    """Resolved (the ring is fast again): nothing holds J-S1 out any more; its decision offers
    "Mark in production", the way back after any alert that degraded a cable."""
    apply([spike(ring["links"]["J-S1"])], now=T0)
    apply([], now=T0 + timedelta(minutes=10), resolve_keys={spike_key(7)})
    assert Alert.objects.get(rule=RULE).state == AlertState.RESOLVED
    cable = Cable.objects.get(label="J-S1")
    decision = cable_decisions(cables=[cable], now=T0 + timedelta(minutes=11))[cable.pk]
    assert decision.state == "ready"
    assert decision.step is not None and decision.step.label == "Mark in production"
