"""A drain whose maintenance window runs out without a restore: the cable's one decision, the
alert page and the API say so ("drained since 09:12, window ended 13:12 UTC: restore it or
extend"), the periodic mail sweep raises it to the engineers once per window end, and "Extend"
moves the window on.

On the seeded topology (16 GPUs: 2 nodes, 8 rail leaves)::

    [gpu-0001 eth3]--jumper--[leaf-s01-r4]   the alert's rail link, drained by a technician
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

import pytest
from django.core import mail
from django.db.models import Q
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from inventory import tasks
from inventory.core.decision import drain_overdue_words
from inventory.models import Alert, AlertNotification, Link, LinkDrain, LinkSegment, Team
from inventory.selectors.decision import cable_decisions
from inventory.services import alerts as alert_services
from inventory.services.collectives import (
    drains_overdue_notify,
    link_drain,
    link_drain_extend,
    link_restore,
)
from inventory.services.demo.seed import demo_seed
from tests.seeded import seeded_module

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 12, 3, 9, 12, tzinfo=UTC)  # the fixed clock: drained at 09:12 for 4 hours


_demo = seeded_module(lambda: demo_seed(gpus=16, seed=3, as_of=date(2026, 11, 29)))


@pytest.fixture
def alert(_demo, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    link = Link.objects.get(
        Q(a_port__device__name="gpu-0001", a_port__name="eth3")
        | Q(b_port__device__name="gpu-0001", b_port__name="eth3"),
        active=True,
    )
    return Alert.objects.create(
        key=f"fec_degradation:link:{link.pk}",
        rule="fec_degradation",
        severity="notify",
        link=link,
        opened_at=T0 - timedelta(hours=1),
        updated_at=T0 - timedelta(hours=1),
        summary="FEC degradation",
        evidence={},
    )


@pytest.fixture
def people(user_with_role):
    """Tess drains (a technician of the seeded site's team); Emma is an engineer."""
    tess = user_with_role("technician", "tess")
    tess.email = "tess@example.com"
    tess.save()
    Team.objects.get(name="Fabric ops").members.add(tess)
    emma = user_with_role("engineer", "emma")
    emma.email = "emma@example.com"
    emma.save()
    return tess, emma


def _cable(alert: Alert):
    return LinkSegment.objects.select_related("cable").get(link=alert.link).cable


def _decision(alert: Alert, now: datetime):
    cable = _cable(alert)
    return cable_decisions(cables=[cable], now=now)[cable.pk]


def _text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_with_a_fixed_clock_the_decision_says_it_and_the_engineers_hear_of_it_once_per_window(alert, people):
    tess, emma = people
    AlertNotification.objects.update(sent_at=T0)  # the seed's own alert notices: sent
    drain = link_drain(alert=alert, actor=tess, now=T0, ends_at=T0 + timedelta(hours=4))

    inside = _decision(alert, T0 + timedelta(hours=3))
    assert inside.state != "drain" and inside.drained == "drained, in maintenance until 13:12 UTC"
    assert drains_overdue_notify(now=T0 + timedelta(hours=3)) == 0

    at = T0 + timedelta(hours=4, minutes=18)  # 13:30, nobody restored it
    d = _decision(alert, at)
    words = "drained since 09:12, window ended 13:12 UTC: restore it or extend"
    assert d.state == "drain" and d.drain_overdue == words
    assert d.headline == "Drained since 09:12, window ended 13:12 UTC: restore it or extend."
    assert d.reasons[0] == words and d.words == "drain overdue"
    assert (d.step.key, d.step.label, d.step.url) == (
        "drain",
        "Restore or extend the drain",
        f"/alerts/{alert.pk}/#drain",
    )
    assert not d.offers_production
    assert d.as_dict()["drain_overdue"] == words

    # The mail sweep: one notice per drain and window end, to the engineers and the drainer.
    assert drains_overdue_notify(now=at) == 1
    assert drains_overdue_notify(now=at + timedelta(minutes=5)) == 0  # a second run adds none
    assert alert_services.alert_notifications_send(now=at) == 1
    (msg,) = mail.outbox
    assert set(msg.to) == {"emma@example.com", "tess@example.com"}
    assert msg.subject.startswith("[cabletrack] Drain overdue: ") and "gpu-0001:eth3" in msg.subject
    assert words in msg.body and f"/alerts/{alert.pk}/#drain" in msg.body
    assert msg.body.rstrip().endswith(
        "You get this mail because you are an engineer, who may restore this link, extend its drain "
        "or override; or because you drained this link."
    )
    assert msg.message()["Auto-Submitted"] == "auto-generated"
    assert alert_services.alert_notifications_send(now=at + timedelta(minutes=5)) == 0

    # Extended to 15:00: not overdue until then; overdue again after, and told again.
    link_drain_extend(alert=alert, actor=emma, now=at, ends_at=T0 + timedelta(hours=5, minutes=48))
    drain.refresh_from_db()
    assert (drain.extended_at, drain.extended_by) == (at, emma)
    assert _decision(alert, at + timedelta(minutes=1)).state != "drain"
    later = T0 + timedelta(hours=6)  # 15:12
    again = _decision(alert, later)
    assert again.drain_overdue == "drained since 09:12, window ended 15:00 UTC: restore it or extend"
    assert drains_overdue_notify(now=later) == 1
    assert AlertNotification.objects.filter(alert=alert, kind__startswith="drain-").count() == 2

    # Restored: nothing overdue, nothing more to tell.
    link_restore(alert=alert, actor=tess, now=later + timedelta(minutes=5))
    assert _decision(alert, later + timedelta(minutes=10)).state != "drain"
    assert drains_overdue_notify(now=later + timedelta(hours=1)) == 0


def test_a_later_drain_of_the_link_is_what_counts(alert, people):
    """Draining the link again after the window ran out is another way to extend: the old drain
    is no longer overdue once a later one holds the link."""
    tess, _ = people
    link_drain(alert=alert, actor=tess, now=T0, ends_at=T0 + timedelta(hours=1))
    at = T0 + timedelta(hours=2)
    assert _decision(alert, at).state == "drain"
    link_drain(alert=alert, actor=tess, now=at, ends_at=at + timedelta(hours=2))
    d = _decision(alert, at + timedelta(minutes=1))
    assert d.state != "drain" and d.drained.startswith("drained, in maintenance until")


def test_the_alert_page_and_the_api_show_it_and_an_engineer_extends_it(alert, people):
    tess, emma = people
    now = timezone.now()
    drain = link_drain(
        alert=alert, actor=tess, now=now - timedelta(hours=5), ends_at=now - timedelta(hours=1)
    )
    words = drain_overdue_words(drain.drained_at, drain.window.ends_at, timezone.localdate(now))

    client = Client()
    client.force_login(emma)
    page = client.get(f"/alerts/{alert.pk}/").content.decode()
    panel = _text(page.split('data-testid="drain-overdue"', 1)[1].split("</p>", 1)[0])
    assert words[0].upper() + words[1:] in panel and "Drained by tess" in panel
    assert 'data-testid="extend-form"' in page and 'data-testid="restore"' in page
    cable_page = _text(client.get(f"/c/{_cable(alert).label}").content.decode())
    assert f"{words[0].upper()}{words[1:]}." in cable_page and "Restore or extend the drain" in cable_page

    api = APIClient()
    api.force_authenticate(user=emma)
    body = api.get(f"/api/alerts/{alert.pk}/").json()
    assert body["drains"][0]["overdue"] == words
    assert api.get(f"/api/cables/{_cable(alert).label}/").json()["next_step"]["drain_overdue"] == words

    # an end in the past is refused, nothing written
    r = api.post(
        f"/api/alerts/{alert.pk}/extend/",
        {"ends_at": (now - timedelta(minutes=5)).isoformat()},
        format="json",
    )
    assert r.status_code == 400 and "future" in str(r.json())
    drain.refresh_from_db()
    assert drain.extended_at is None

    r = client.post(f"/alerts/{alert.pk}/extend", {"hours": "2"})
    assert r.status_code == 302
    drain.refresh_from_db()
    drain.window.refresh_from_db()
    assert drain.extended_by == emma and drain.window.ends_at > timezone.now() + timedelta(minutes=110)
    page = client.get(f"/alerts/{alert.pk}/").content.decode()
    assert 'data-testid="drain-overdue"' not in page and 'data-testid="drained"' in page
    assert api.get(f"/api/alerts/{alert.pk}/").json()["drains"][0]["overdue"] is None


def test_the_periodic_mail_sweep_raises_it_once(alert, people):
    tess, _ = people
    now = timezone.now()
    link_drain(alert=alert, actor=tess, now=now - timedelta(hours=5), ends_at=now - timedelta(hours=1))
    assert tasks.alert_notifications_send_task() >= 1
    overdue = [m for m in mail.outbox if "Drain overdue" in m.subject]
    assert len(overdue) == 1 and "emma@example.com" in overdue[0].to
    tasks.alert_notifications_send_task()
    assert len([m for m in mail.outbox if "Drain overdue" in m.subject]) == 1
    assert LinkDrain.objects.get().restored_at is None  # telling is not restoring
