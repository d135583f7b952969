"""Draining and restoring an alert's link: recorded actions with the maintenance window they open.

On the seeded topology (16 GPUs: 2 nodes, 8 rail leaves):

[gpu-0001 eth3]--jumper--[leaf-s01-r4]   the alert's rail link: GPU 3 of gpu-0001 loses rail 4

A drain is safe while no job runs on GPU 3 of gpu-0001; with job j1 running on it, it is refused
unless an engineer overrides with a reason (journalled on the jumper).
"""

from __future__ import annotations

from datetime import UTC, date, timedelta

import pytest
from django.db.models import Q
from django.utils import timezone
from rest_framework.test import APIClient

from inventory.core.choices import AlertState, FieldNoteKind
from inventory.core.telemetry.rules.frames import Finding
from inventory.models import (
    Alert,
    AlertNotification,
    FieldNote,
    Link,
    LinkDrain,
    LinkSegment,
    MaintenanceWindow,
    Team,
)
from inventory.selectors.decision import cable_decisions
from inventory.services import alerts as alert_services
from inventory.services.collectives import RankSpec, job_register
from inventory.services.demo.seed import demo_seed
from tests import factories as f
from tests.seeded import seeded_module

pytestmark = pytest.mark.django_db


_demo = seeded_module(lambda: demo_seed(gpus=16, seed=3, as_of=date(2026, 11, 29)))


@pytest.fixture
def alert(_demo):
    link = Link.objects.get(
        Q(a_port__device__name="gpu-0001", a_port__name="eth3")
        | Q(b_port__device__name="gpu-0001", b_port__name="eth3"),
        active=True,
    )
    now = timezone.now()
    return Alert.objects.create(
        key=f"fec_degradation:link:{link.pk}",
        rule="fec_degradation",
        severity="notify",
        link=link,
        opened_at=now,
        updated_at=now,
        summary="FEC degradation",
        evidence={},
    )


@pytest.fixture
def api_as(user_with_role):
    """An API client of ``role``; the technician is in the seeded site's team ("Fabric ops")."""

    def make(role: str):
        user = user_with_role(role)
        if role == "technician":
            Team.objects.get(name="Fabric ops").members.add(user)
        client = APIClient()
        client.force_authenticate(user=user)
        return client

    return make


@pytest.fixture
def technician(user_with_role):
    user = user_with_role("technician", "tess")
    Team.objects.get(name="Fabric ops").members.add(user)
    return user


def run_job_on_gpu3() -> None:
    job_register(
        job_id="j1",
        ranks=[RankSpec(rank=0, host="gpu-0001", local_rank=3, gpu=3)],
        started_at=timezone.now() - timedelta(hours=1),
        now=timezone.now(),
    )


def cable_of(alert: Alert):
    return LinkSegment.objects.select_related("cable").get(link=alert.link).cable


def until_text(t) -> str:
    """How a window's end reads: ``16:30`` today, ``5 Dec 00:30`` when it ends tomorrow (a drain
    asked for late in the UTC day)."""
    t = t.astimezone(UTC)
    return f"{t:%H:%M}" if t.date() == timezone.localdate() else f"{t.day} {t:%b %H:%M}"


def written() -> tuple[int, int, int]:
    """Drains, maintenance windows and journal entries (the seed has windows and notes of its own)."""
    return LinkDrain.objects.count(), MaintenanceWindow.objects.count(), FieldNote.objects.count()


def test_a_safe_drain_is_recorded_with_its_window_and_silences_the_link(alert, api_as):
    api = api_as("technician")
    before = timezone.now()
    r = api.post(f"/api/alerts/{alert.pk}/drain/", {"hours": 2}, format="json")
    assert r.status_code == 201, r.content
    d = LinkDrain.objects.get()
    assert (d.alert, d.link, d.drained_by.username, d.safe) == (alert, alert.link, "technician-user", True)
    assert d.window.starts_at == d.drained_at >= before
    assert d.window.ends_at == d.drained_at + timedelta(hours=2)
    assert list(d.window.links.all()) == [alert.link]
    assert r.json()["window_ends_at"] and r.json()["restored_at"] is None

    # the alert API shows it
    shown = api.get(f"/api/alerts/{alert.pk}/").json()["drains"]
    assert [(x["id"], x["drained_by"], x["restored_at"]) for x in shown] == [(d.pk, "technician-user", None)]

    # the one decision says the cable's link is drained, and until when (with the day when the
    # window ends on another: a drain asked for after 22:00 UTC ends tomorrow)
    until = until_text(d.window.ends_at)
    decision = cable_decisions(cables=[cable_of(alert)])[cable_of(alert).pk]
    assert decision.drained == f"drained, in maintenance until {until} UTC"
    assert decision.reasons[0] == decision.drained and decision.drained in decision.words
    assert api.get(f"/api/cables/{cable_of(alert).label}/").json()["next_step"]["drained"] == decision.drained

    # drained twice: refused, nothing more written
    r = api.post(f"/api/alerts/{alert.pk}/drain/", {}, format="json")
    assert r.status_code == 409 and "drained already" in r.json()["detail"]
    assert (
        LinkDrain.objects.count() == 1 and MaintenanceWindow.objects.filter(drain__isnull=False).count() == 1
    )

    # the link going down while drained is recorded silently: no mail, nobody paged
    flap = Finding(
        key=f"link_flap:link:{alert.link_id}",
        rule="link_flap",
        severity="page",
        link_id=alert.link_id,
        port_id=alert.link.a_port_id,
        headline="link down 3 times",
        recommendation="",
        recommendation_code="",
    )
    alert_services.alerts_apply(
        findings=[flap], holding=set(), reporting_port_ids=set(), now=timezone.now(), resolve=False
    )
    down = Alert.objects.get(key=flap.key, state=AlertState.OPEN)
    assert down.silenced
    assert not AlertNotification.objects.filter(alert=down).exists()


def test_an_unsafe_drain_is_refused_with_the_reasons_and_nothing_is_written(alert, api_as):
    before = written()
    run_job_on_gpu3()
    r = api_as("engineer").post(f"/api/alerts/{alert.pk}/drain/", {"hours": 1}, format="json")
    assert r.status_code == 409
    body = r.json()
    assert body["safe"] is False
    assert body["reasons"] == [
        "GPU 3 of gpu-0001 loses rail 4 while job j1 (rank 0) runs on it: wait for the job to end or move it first"
    ]
    assert written() == before


def test_an_engineers_override_drains_and_is_journalled_a_technicians_is_refused(alert, api_as):
    before = written()
    run_job_on_gpu3()
    r = api_as("technician").post(
        f"/api/alerts/{alert.pk}/drain/", {"override_reason": "the job is being drained too"}, format="json"
    )
    assert r.status_code == 403
    assert written() == before

    r = api_as("engineer").post(
        f"/api/alerts/{alert.pk}/drain/", {"override_reason": "job j1 checkpoints in 2 min"}, format="json"
    )
    assert r.status_code == 201, r.content
    d = LinkDrain.objects.get()
    assert (d.safe, d.override_reason) == (False, "job j1 checkpoints in 2 min")
    assert d.reasons[0].startswith("GPU 3 of gpu-0001 loses rail 4 while job j1")
    note = FieldNote.objects.get(cable=cable_of(alert))  # the drain's one entry, with the override
    assert note.kind == FieldNoteKind.NOTE and note.closed_at is not None
    assert note.actor.username == "engineer-user"
    assert f"for alert #{alert.pk} (fec degradation)" in note.text and " drained until " in note.text
    assert "although the safety check refused it: GPU 3 of gpu-0001 loses rail 4 while job j1" in note.text
    assert note.text.endswith("Override: job j1 checkpoints in 2 min")


def test_restore_closes_the_window_and_the_link_is_no_longer_drained(alert, api_as):
    api = api_as("technician")
    assert api.post(f"/api/alerts/{alert.pk}/drain/", {}, format="json").status_code == 201
    d = LinkDrain.objects.get()
    assert d.window.ends_at - d.window.starts_at == timedelta(hours=4)  # CABLETRACK_DRAIN_HOURS

    r = api.post(f"/api/alerts/{alert.pk}/restore/")
    assert r.status_code == 200, r.content
    d.refresh_from_db()
    d.window.refresh_from_db()
    assert d.restored_by.username == "technician-user"
    assert d.window.ends_at == d.restored_at  # the window ended with the restore
    assert not MaintenanceWindow.objects.filter(links=alert.link, ends_at__gt=timezone.now()).exists()
    cable = cable_of(alert)
    assert cable_decisions(cables=[cable])[cable.pk].drained == ""

    assert api.post(f"/api/alerts/{alert.pk}/restore/").status_code == 409  # nothing drained
    assert api.post(f"/api/alerts/{alert.pk}/drain/", {}, format="json").status_code == 201  # again


def test_a_viewer_and_a_technician_of_another_site_may_not_drain_or_restore(alert, api_as):
    before = written()
    assert api_as("viewer").post(f"/api/alerts/{alert.pk}/drain/", {}, format="json").status_code == 403
    elsewhere = f.api_token_client(f.UserFactory(username="tom", role="technician"))  # in no team
    r = elsewhere.post(f"/api/alerts/{alert.pk}/drain/", {}, format="json")
    assert r.status_code == 403 and "sites your team is assigned to" in r.json()["detail"]
    assert written() == before

    assert api_as("technician").post(f"/api/alerts/{alert.pk}/drain/", {}, format="json").status_code == 201
    assert api_as("viewer").post(f"/api/alerts/{alert.pk}/restore/").status_code == 403
    assert elsewhere.post(f"/api/alerts/{alert.pk}/restore/").status_code == 403
    assert LinkDrain.objects.get().restored_at is None


def test_bad_input_is_a_400_and_writes_nothing(alert, api_as):
    before = written()
    api = api_as("engineer")
    r = api.post(f"/api/alerts/{alert.pk}/drain/", {"hours": 0}, format="json")
    assert r.status_code == 400
    r = api.post(
        f"/api/alerts/{alert.pk}/drain/",
        {"ends_at": (timezone.now() - timedelta(hours=1)).isoformat()},
        format="json",
    )
    assert r.status_code == 400 and "ends_at" in r.json()
    assert written() == before


def test_the_alert_page_drains_and_restores_for_those_who_may(alert, client, user_with_role, technician):
    client.force_login(user_with_role("viewer", "eve"))
    page = client.get(f"/alerts/{alert.pk}/").content.decode()
    assert "Safe to take this link out of service." in page and 'data-testid="drain-form"' not in page
    assert client.post(f"/alerts/{alert.pk}/drain", {"hours": "1"}).status_code == 403

    client.force_login(technician)
    page = client.get(f"/alerts/{alert.pk}/").content.decode()
    assert 'data-testid="drain-form"' in page
    r = client.post(f"/alerts/{alert.pk}/drain", {"hours": "1"})
    assert r.status_code == 302
    d = LinkDrain.objects.get()
    page = client.get(f"/alerts/{alert.pk}/").content.decode()
    until = until_text(d.window.ends_at)
    assert f"in maintenance until {until}" in page and 'data-testid="restore"' in page
    # the path row of the alert's cable says it, in the decision's words
    assert f"drained, in maintenance until {until} UTC" in page
    cable_page = client.get(f"/c/{cable_of(alert).label}").content.decode()
    assert f"Drained, in maintenance until {until} UTC." in cable_page
    assert client.post(f"/alerts/{alert.pk}/restore").status_code == 302
    d.refresh_from_db()
    assert d.restored_at is not None


def test_the_alert_page_refuses_an_unsafe_drain_and_offers_engineers_the_override(
    alert, client, user_with_role, technician
):
    before = written()
    run_job_on_gpu3()
    client.force_login(technician)
    page = client.get(f"/alerts/{alert.pk}/").content.decode()
    assert "Not safe to take this link out of service now." in page and 'data-testid="drain-form"' not in page
    assert "An engineer may drain it anyway" in page
    client.force_login(user_with_role("engineer", "ed"))
    assert "Drain anyway" in client.get(f"/alerts/{alert.pk}/").content.decode()
    r = client.post(f"/alerts/{alert.pk}/drain", {"hours": "1"})
    assert r.status_code == 409 and "Not safe to take this link out of service now." in r.content.decode()
    assert written() == before
    r = client.post(
        f"/alerts/{alert.pk}/drain", {"hours": "1", "override_reason": "job j1 is stalled anyway"}
    )
    assert r.status_code == 302
    assert LinkDrain.objects.get().override_reason == "job j1 is stalled anyway"
    assert written() == (before[0] + 1, before[1] + 1, before[2] + 1)
