"""A small plant for the page tests, a logged-in technician and a real SMTP sink on loopback."""

from __future__ import annotations

import re
import socket
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from inventory.core.choices import CableStatus, DeviceRole, Polarity, TestKind, Verdict
from inventory.models import CableTest, Team
from tests import factories as f

_NAME = re.compile(r'<span class="nm">([^<]*)</span>')
_NAME_TEXT = re.compile(r'<span class="nmtext">((?:(?!</?span\b).)*)</span>', re.S)


def without_name_spans(html: str) -> str:
    """The page's HTML without the spans that keep names whole on a phone (``names_whole``):
    "leaf-01 OSFP1" as the page reads, to find a phrase in it."""
    return _NAME_TEXT.sub(r"\1", _NAME.sub(r"\1", html))


@pytest.fixture
def plant(db):
    """
    Rack A01: gpu-0001 (U10, two twin-port OSFP cages, modules in), panel pp-a (U40).
    Rack B01: leaf-01 (U46), panel pp-b (U40).
    [gpu-0001 eth1]--J-100--[pp-a Front 1]==T-100==[pp-b Front 1]--J-101--[leaf-01 Ethernet2/1]
    [gpu-0001 eth0]--J-102 (retest overdue, one OLTS pass)--[leaf-01 Ethernet1/1]
    Team "Hall A" (mailbox + one member) looks after rack A01.
    """
    rack_a, rack_b = f.RackFactory(name="A01"), f.RackFactory(name="B01")
    team = Team.objects.create(name="Hall A", email="hall-a@example.com")
    member = f.UserFactory(username="tina", email="tina@example.com")
    team.members.add(member)
    rack_a.team = team
    rack_a.save()
    _, gpu = f.twin_port_device(
        "gpu-0001", rack=rack_a, u=10, role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}"
    )
    _, leaf = f.twin_port_device("leaf-01", rack=rack_b, u=46)
    _, pa_rear, pa_front = f.patch_panel("pp-a", rack=rack_a)
    _, pb_rear, pb_front = f.patch_panel("pp-b", rack=rack_b)
    j100 = f.jumper("J-100", gpu[1], pa_front[0], polarity=Polarity.A, install_date=timezone.localdate())
    t100 = f.trunk("T-100", pa_rear[0], pb_rear[0], polarity=Polarity.B)
    j101 = f.jumper("J-101", pb_front[0], leaf[2], polarity=Polarity.A)
    j102 = f.jumper("J-102", gpu[0], leaf[0], status=CableStatus.IN_PRODUCTION)
    j102.retest_due = timezone.localdate() - timedelta(days=3)
    j102.save()
    CableTest.objects.create(
        cable=j102,
        kind=TestKind.OLTS,
        tested_at=timezone.now() - timedelta(days=93),
        wavelength_nm=1310,
        loss_db=1.2,
        budget_db=3.0,
        margin_db=1.8,
        verdict=Verdict.PASS,
    )
    return {
        "gpu": gpu,
        "leaf": leaf,
        "pa_front": pa_front,
        "pb_front": pb_front,
        "cables": {c.label: c for c in (j100, t100, j101, j102)},
        "team": team,
        "member": member,
        "racks": (rack_a, rack_b),
    }


@pytest.fixture
def tech_client(user_with_role):
    client = Client()
    client.force_login(user_with_role("technician", "tech"))
    return client


@pytest.fixture
def site_tech_client(plant, user_with_role):
    """A technician of the team the plant's site is assigned to: site-scoped edits (replace,
    edit) are theirs to make there."""
    site = plant["racks"][0].row.room.site
    site.team = Team.objects.create(name="Site crew")
    site.save()
    user = user_with_role("technician", "site-tech")
    site.team.members.add(user)
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def engineer_client(user_with_role):
    client = Client()
    client.force_login(user_with_role("engineer", "eng"))
    return client


@pytest.fixture
def viewer_client(user_with_role):
    client = Client()
    client.force_login(user_with_role("viewer", "view"))
    return client


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def smtp_sink(settings):
    """A real SMTP server (aiosmtpd) on loopback; Django's SMTP backend points at it."""
    from aiosmtpd.controller import Controller
    from aiosmtpd.handlers import Message

    received = []

    class Collect(Message):
        def handle_message(self, message):
            received.append(message)

    port = _free_port()
    controller = Controller(Collect(), hostname="127.0.0.1", port=port)
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", port
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
    yield received
    controller.stop()
