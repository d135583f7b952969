"""The demo shows the correlation (issue 31): the links that carry the demo's alerts, and a sample
of healthy ones, have telemetry history, and the link health card, the sparkline and the alert's
evidence show the same numbers."""

from datetime import date, timedelta

import pytest
from django.db.models import Sum

from inventory.core.choices import AlertRule, AlertState
from inventory.models import Alert, Cable, Link, PortRollup
from inventory.selectors.alerts.queries import cable_alerts_context
from inventory.services.demo.builder import seed_now
from inventory.services.demo.seed import demo_seed
from inventory.services.demo.telemetry import HEALTHY_LINKS
from tests.seeded import seeded_module

pytestmark = pytest.mark.django_db

AS_OF = date(2026, 11, 29)


#: The 64-GPU demo, seeded once for the module (``tests/seeded.py``).
hall = seeded_module(lambda: demo_seed(gpus=64, seed=5, as_of=AS_OF))


def _cable_of(alert: Alert) -> Cable:
    return Cable.objects.filter(link_segments__link=alert.link).order_by("label").first()


def test_every_alerted_link_and_a_healthy_sample_have_history(hall):
    # the incidents' links (the demo job's spike brings its own telemetry: test_demo_job.py)
    alerts = list(
        Alert.objects.filter(state=AlertState.OPEN, link__isnull=False).exclude(
            rule=AlertRule.TAIL_LATENCY_SPIKE
        )
    )
    assert alerts
    ported = set(PortRollup.objects.values_list("port_id", flat=True).distinct())
    for a in alerts:
        assert {a.link.a_port_id, a.link.b_port_id} <= ported, a
    assert hall.counts["telemetry_links"] == len({a.link_id for a in alerts}) + HEALTHY_LINKS


def test_the_fec_health_card_quotes_the_ber_of_the_fec_alert(hall):
    now = seed_now(AS_OF)
    fec = [a for a in Alert.objects.filter(state=AlertState.OPEN, rule=AlertRule.FEC_DEGRADATION)]
    assert fec
    for a in fec:
        quoted = a.evidence["ends"]["a"]["value"] if "ends" in a.evidence else a.evidence["a"]["value"]
        ctx = cable_alerts_context(_cable_of(a), now=now + timedelta(minutes=1))
        assert ctx["fec_health"]["ber"] == pytest.approx(quoted, rel=0.01)
        assert ctx["fec_health"]["label"] == "margin shrinking"
        assert not ctx["fec_spark"]["empty"]


def test_a_healthy_link_in_the_sample_shows_a_healthy_card_not_no_data(hall):
    now = seed_now(AS_OF)
    alerted = set(Alert.objects.filter(state=AlertState.OPEN).values_list("link_id", flat=True))
    with_history = set(PortRollup.objects.values_list("port_id", flat=True).distinct())
    link = Link.objects.filter(a_port_id__in=with_history).exclude(pk__in=alerted).order_by("pk").first()
    cable = Cable.objects.filter(link_segments__link=link).order_by("label").first()
    ctx = cable_alerts_context(cable, now=now + timedelta(minutes=1))
    assert ctx["fec_health"]["label"] == "healthy" and ctx["fec_health"]["ber"] < 1e-7


def test_a_link_flap_shows_its_link_down_events_in_the_hour_before_it_opened(hall):
    flaps = list(Alert.objects.filter(state=AlertState.OPEN, rule=AlertRule.LINK_FLAP))
    assert flaps
    for a in flaps:
        said = a.evidence["ends"]["a"]["link_down"] if "ends" in a.evidence else a.evidence["a"]["link_down"]
        seen = PortRollup.objects.filter(
            port_id=a.port_id, bucket__gte=a.opened_at - timedelta(hours=1), bucket__lt=a.opened_at
        ).aggregate(n=Sum("link_down_events"))["n"]
        assert seen == said


def test_an_rx_power_drift_shows_the_drop_it_quotes(hall):
    drifts = list(Alert.objects.filter(state=AlertState.OPEN, rule=AlertRule.RX_POWER_DRIFT))
    assert drifts
    for a in drifts:
        ev = a.evidence["ends"]["a"] if "ends" in a.evidence else a.evidence["a"]
        rows = PortRollup.objects.filter(port_id=a.port_id)
        before = rows.filter(bucket__lt=a.opened_at - timedelta(hours=2)).order_by("-bucket").first()
        after = rows.filter(bucket__gte=a.opened_at).order_by("-bucket").first()
        assert before.rx_power_min_any_dbm == pytest.approx(ev["baseline_rx_dbm"])
        assert after.rx_power_min_any_dbm == pytest.approx(ev["rx_power_dbm"])
