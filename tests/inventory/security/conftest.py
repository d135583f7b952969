"""A small two-site plant and one user per role (the technician's team is assigned site North).

site North: [leaf-n OSFP1]--N-1--[leaf-n2 OSFP1]      site South: [leaf-s]--S-1--[leaf-s2]
"""

from dataclasses import dataclass

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from inventory.core.choices import TokenKind
from inventory.models import Cable, Rack, Room, Row, Site, Team
from inventory.services.access import tokens as token_services
from tests import factories as f

ROLES = ["viewer", "technician", "engineer", "admin", "collector"]


@dataclass
class Plant:
    north: Site
    south: Site
    north_cable: Cable
    south_cable: Cable
    users: dict


def _rack(site: Site, name: str) -> Rack:
    room = Room.objects.create(site=site, name="Hall 1")
    row = Row.objects.create(room=room, name="A")
    return Rack.objects.create(row=row, name=name)


@pytest.fixture
def plant(db):
    team = Team.objects.create(name="North crew")
    north = Site.objects.create(name="North", slug="north", team=team)
    south = Site.objects.create(name="South", slug="south")
    rn, rs = _rack(north, "N01"), _rack(south, "S01")
    _, n1 = f.twin_port_device("leaf-n", rack=rn, u=1)
    _, n2 = f.twin_port_device("leaf-n2", rack=rn, u=2)
    _, s1 = f.twin_port_device("leaf-s", rack=rs, u=1)
    _, s2 = f.twin_port_device("leaf-s2", rack=rs, u=2)
    north_cable = f.jumper("N-1", n1[0], n2[0])
    south_cable = f.jumper("S-1", s1[0], s2[0])
    users = {role: f.UserFactory(username=role, role=role) for role in ROLES}
    team.members.add(users["technician"])
    return Plant(north, south, north_cable, south_cable, users)


@pytest.fixture
def client_for(plant):
    """``client_for(role, via)``: an API client as that role, by session or by a token kind."""

    def make(role: str, via: str = "session") -> APIClient:
        client = APIClient()
        user = plant.users[role]
        if via == "session":
            client.force_login(user)
        else:
            kind = {"token": TokenKind.FULL, "read_only": TokenKind.READ_ONLY, "ingest": TokenKind.INGEST}[
                via
            ]
            _, raw = token_services.api_token_create(user=user, name=f"{role}-{via}", kind=kind)
            client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
        return client

    return make


@pytest.fixture
def raw_token(plant):
    def make(role: str, kind: str = TokenKind.FULL, **kw) -> str:
        return token_services.api_token_create(
            user=plant.users[role], name=f"t-{timezone.now()}", kind=kind, **kw
        )[1]

    return make


def one_sample_batch(port: str = "Ethernet1/1", fec: int = 1234) -> dict:
    """A telemetry batch of one valid sample on leaf-n (stored when the token may ingest)."""
    ts = timezone.now().replace(microsecond=0).isoformat()
    return {"samples": [{"device": "leaf-n", "port": port, "ts": ts, "fec_corrected_codewords": fec}]}
