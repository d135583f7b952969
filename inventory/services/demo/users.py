"""The demo's users, one for each role: ``DEMO_USERS`` is the one list ``make run`` and ``make
screenshots`` create (``manage.py ensure_demo_users``), after ``seed_demo`` (its team)."""

from __future__ import annotations

from dataclasses import dataclass

from inventory.services.access.users import ensured_words, user_ensure
from inventory.services.demo.catalogue import DEMO_TEAM

DEMO_PASSWORD = "demo-cabletrack"  # noqa: S105 - the demo's, printed by `make run`; never a real site's


@dataclass(frozen=True)
class DemoUser:
    username: str
    role: str
    team: str = ""
    superuser: bool = False
    words: str = ""  # who they are, as ``make run`` prints it


DEMO_USERS: tuple[DemoUser, ...] = (
    DemoUser("demo", "admin", DEMO_TEAM, superuser=True, words="admin"),
    DemoUser("engineer", "engineer", DEMO_TEAM, words="engineer"),
    DemoUser("tech", "technician", DEMO_TEAM, words=f"technician, team {DEMO_TEAM}"),
    DemoUser("viewer", "viewer", words="viewer"),
    DemoUser("visitor", "technician", words="a technician in no team"),
)


def demo_users_ensure() -> list[str]:
    """Every user of ``DEMO_USERS``, with ``DEMO_PASSWORD`` (the demo hall's team must exist:
    ``seed_demo`` first). One line per user, as the command prints it."""
    out = []
    for u in DEMO_USERS:
        _, created, team = user_ensure(
            username=u.username, password=DEMO_PASSWORD, role=u.role, superuser=u.superuser, team=u.team
        )
        out.append(ensured_words(username=u.username, role=u.role, created=created, team=team))
    return out


def demo_users_words() -> str:
    """``demo (admin), engineer (engineer), ...``: the demo's users, as ``make run`` prints them."""
    return ", ".join(f"{u.username} ({u.words})" for u in DEMO_USERS)
