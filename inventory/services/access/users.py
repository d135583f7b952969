"""Accounts made from the command line: ``manage.py ensure_user`` (one user with a role), and
the demo's users (``services.demo.users``)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError

from inventory.access.roles import ROLES
from inventory.models import Team


def user_ensure(
    *, username: str, password: str, role: str, superuser: bool = False, team: str = "", email: str = ""
):
    """Create (or reset) ``username`` with ``role``'s group and this password; ``team`` (which
    must exist) adds them to it: a technician edits and reports faults only in its sites.
    Returns (user, created, team or None)."""
    if role not in ROLES:
        raise ValidationError({"role": f"No role {role!r} (roles: {', '.join(ROLES)})."})
    the_team = None
    if team:
        the_team = Team.objects.filter(name=team).first()
        if the_team is None:
            names = ", ".join(Team.objects.values_list("name", flat=True)) or "none yet"
            raise ValidationError({"team": f"No team {team!r} (teams: {names})."})
    user, created = get_user_model().objects.get_or_create(username=username)
    user.set_password(password)
    user.is_staff = superuser or role == "admin"
    user.is_superuser = superuser
    if email:
        user.email = email
    user.save()
    user.groups.add(Group.objects.get(name=role))
    if the_team is not None:
        the_team.members.add(user)
    return user, created, the_team


def ensured_words(*, username: str, role: str, created: bool, team=None) -> str:
    """``Created tech (technician, team Fabric ops)``: what the commands print of a user ensured."""
    in_team = f", team {team.name}" if team is not None else ""
    return f"{'Created' if created else 'Updated'} {username} ({role}{in_team})"
