from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError

from inventory.access.roles import ROLES
from inventory.models import Team


class Command(BaseCommand):
    help = "Create (or reset) a user with a role; used by `make run` for the demo login."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--password", required=True)
        parser.add_argument("--role", default="engineer", choices=list(ROLES))
        parser.add_argument("--superuser", action="store_true")
        parser.add_argument(
            "--team",
            default="",
            help="Add the user to this team (it must exist): a technician edits and reports faults "
            "only in the sites of their teams.",
        )
        parser.add_argument("--email", default="")

    def handle(self, *args, username, password, role, superuser, team, email, **options):
        the_team = None
        if team:
            the_team = Team.objects.filter(name=team).first()
            if the_team is None:
                names = ", ".join(Team.objects.values_list("name", flat=True)) or "none yet"
                raise CommandError(f"No team {team!r} (teams: {names}).")
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
        in_team = f", team {the_team.name}" if the_team else ""
        self.stdout.write(f"{'Created' if created else 'Updated'} {username} ({role}{in_team})")
