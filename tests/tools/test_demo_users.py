"""The demo's users come from one list (``services.demo.users.DEMO_USERS``): ``make run`` and
``make screenshots`` both create them with ``manage.py ensure_demo_users``, and the screenshots
are taken as the role whose page it is: the phone's as ``tech``, the desk's as ``engineer``."""

import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from inventory.models import Team
from inventory.services.demo.users import DEMO_PASSWORD, DEMO_USERS

ROOT = Path(__file__).resolve().parents[2]


def _run_target(makefile: str) -> str:
    return re.search(r"^run:.*?(?=^\S)", makefile, flags=re.S | re.M).group(0)


def test_make_run_and_the_screenshots_create_the_demo_users_with_the_one_command():
    run = _run_target((ROOT / "Makefile").read_text())
    assert "manage.py ensure_demo_users" in run and "ensure_user " not in run
    shots = (ROOT / "tools" / "screenshots.py").read_text()
    assert '_manage("ensure_demo_users")' in shots and '"ensure_user"' not in shots


@pytest.mark.django_db
def test_ensure_demo_users_creates_one_user_for_each_role_with_the_demo_password(capsys):
    Team.objects.create(name="Fabric ops")  # the demo hall's team, as seed_demo writes it
    call_command("ensure_demo_users")
    users = {
        u.username: (
            list(u.groups.values_list("name", flat=True)),
            u.is_superuser,
            u.check_password(DEMO_PASSWORD),
        )
        for u in get_user_model().objects.all()
    }
    assert users == {
        "demo": (["admin"], True, True),
        "engineer": (["engineer"], False, True),
        "tech": (["technician"], False, True),
        "viewer": (["viewer"], False, True),
        "visitor": (["technician"], False, True),
    }
    team = Team.objects.get(name="Fabric ops")
    assert sorted(team.members.values_list("username", flat=True)) == ["demo", "engineer", "tech"]
    said = capsys.readouterr().out
    assert "Created tech (technician, team Fabric ops)" in said
    assert "visitor (a technician in no team)" in said
    call_command("ensure_demo_users")  # a second run resets them: nothing new
    assert "Updated engineer (engineer, team Fabric ops)" in capsys.readouterr().out
    assert get_user_model().objects.count() == 5


@pytest.mark.django_db
def test_ensure_demo_users_before_the_demo_is_seeded_says_what_to_run():
    with pytest.raises(CommandError, match="No team 'Fabric ops' .* Run seed_demo first."):
        call_command("ensure_demo_users")


def test_each_screenshot_is_taken_as_the_role_whose_page_it_is():
    pytest.importorskip("playwright")
    from tools import screenshots

    roles = {u.username: (u.role, u.team) for u in DEMO_USERS}
    assert screenshots.shot_as("cable", "phone") == "tech"
    assert roles["tech"] == ("technician", "Fabric ops")  # a technician of the demo hall's team
    assert screenshots.shot_as("cable", "desk") == "engineer"
    assert roles["engineer"][0] == "engineer"
    # a replacement records a new cable: an engineer's, on the phone too (a technician gets a 403)
    assert screenshots.shot_as("form-replace", "phone") == "engineer"
    assert screenshots.shot_as("form-serviced", "phone") == "tech"
