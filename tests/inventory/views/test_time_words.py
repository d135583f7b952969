"""Moments on the pages read as people say them ("7 Dec 2025 00:30", "today 14:05"), the one way
the ``when`` filter spells them (``core.words.human_when``), never as ISO timestamps
("2025-12-07 00:30", "2025-12-07T00:30:00+00:00"): the sync conflicts, the port page's sensor
suspect line, the profile's API tokens, the telemetry pipeline page and the cable page's OTDR
traces.

    [gpu-0001 eth0]--J-102--[leaf-01 Ethernet1/1]   (the page tests' plant)
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

import pytest
from django.test import Client
from django.utils import timezone

from inventory.core.words import human_when
from inventory.models import (
    ApiToken,
    PortTelemetryState,
    RetestSweepRun,
    SyncRun,
    TelemetryIngestBatch,
)
from tests.inventory.views.test_cable_traces import shoot

pytestmark = pytest.mark.django_db

AT = datetime(2025, 12, 7, 0, 30, tzinfo=UTC)  # a moment of an earlier year: "7 Dec 2025 00:30"
ISO = re.compile(r"\d{4}-\d{2}-\d{2}")


def _page(user_with_role, path: str, role: str = "engineer", *, user=None) -> str:
    client = Client()
    client.force_login(user or user_with_role(role))
    r = client.get(path)
    assert r.status_code == 200
    return r.content.decode()


def _no_iso(text: str) -> None:
    assert not ISO.search(text), ISO.search(text).group(0)


def test_a_sync_conflict_says_when_its_sync_ran_in_words(user_with_role):
    SyncRun.objects.create(
        source="netbox:https://netbox.example.com",
        site="gpu-hall-1",
        started_at=AT,
        conflicts=[{"kind": "cable", "key": "C-1", "detail": {"message": "its ends differ"}}],
    )
    html = _page(user_with_role, "/sync/conflicts/")
    section = html[html.index('class="card conflict"') :]
    assert "gpu-hall-1 · 7 Dec 2025 00:30" in section
    _no_iso(section)


def test_the_port_page_says_since_when_a_sensor_is_suspect_in_words(plant, user_with_role):
    port = plant["gpu"][0]
    PortTelemetryState.objects.create(
        port=port, dom_suspect={"reasons": ["supply voltage 0.23 V"]}, dom_suspect_at=AT
    )
    html = _page(user_with_role, port.get_absolute_url())
    line = html[html.index("Sensor suspect") :][:200]
    assert "since 7 Dec 2025 00:30 UTC" in line
    _no_iso(line)


def test_the_profile_says_when_each_token_was_made_used_expires_and_was_revoked(user_with_role):
    user = user_with_role("engineer")
    live = ApiToken.objects.create(user=user, name="collector", key_hash="a" * 64, prefix="ct_aaaa")
    ApiToken.objects.filter(pk=live.pk).update(
        created_at=AT, last_used_at=AT + timedelta(days=1), expires_at=datetime(2030, 3, 1, 9, 0, tzinfo=UTC)
    )
    gone = ApiToken.objects.create(user=user, name="old", key_hash="b" * 64, prefix="ct_bbbb")
    ApiToken.objects.filter(pk=gone.pk).update(
        created_at=AT, revoked_at=datetime(2025, 12, 9, 8, 0, tzinfo=UTC)
    )
    html = _page(user_with_role, "/profile/", user=user)
    tokens = html[html.index('<table class="tokens">') :]
    assert "7 Dec 2025 00:30" in tokens and "8 Dec 2025 00:30" in tokens
    assert "1 Mar 2030 09:00" in tokens
    assert "revoked 9 Dec 2025" in tokens
    _no_iso(tokens[: tokens.index("</table>")])


def test_the_pipeline_page_says_its_moments_in_words(plant, user_with_role):
    TelemetryIngestBatch.objects.create(
        received_at=AT,
        min_ts=AT,
        max_ts=AT,
        port_ids=[plant["gpu"][0].pk],
        attempts=2,
        last_error="boom",
        next_attempt_at=AT + timedelta(minutes=5),
    )
    RetestSweepRun.objects.create(day=date(2025, 12, 6), started_at=AT, finished_at=AT + timedelta(minutes=2))
    html = _page(user_with_role, "/telemetry/pipeline/", role="viewer")
    body = html[html.index("<h1>Pipelines</h1>") :]
    assert "<td>7 Dec 2025 00:30</td>" in body and "<td>7 Dec 2025 00:35</td>" in body
    assert "Last run 6 Dec 2025, finished 7 Dec 2025 00:32 UTC." in body
    _no_iso(body[: body.index("</main>")])


@pytest.mark.usefixtures("media")
def test_the_cable_pages_traces_say_when_each_was_taken_in_words(plant, user_with_role):
    cable = plant["cables"]["J-102"]
    shoot(cable, days_ago=200, connector_loss=0.1, name="install.sor")
    shoot(cable, days_ago=100, connector_loss=0.15, name="retest-1.sor")
    html = _page(user_with_role, cable.get_absolute_url(), role="technician")
    card = html[html.index('id="otdr-history"') :]
    card = card[: card.index("</section>")]
    tested = sorted(
        timezone.localtime(t)
        for t in cable.tests.filter(kind="otdr").values_list("tested_at", flat=True).distinct()
    )
    assert tested
    for t in tested:
        assert f">{human_when(t, today=timezone.localdate())}</a>" in card
    _no_iso(re.sub(r'(href|title)="[^"]*"', "", card))
