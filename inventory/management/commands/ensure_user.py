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
            "--team", help="make the user a member of this team (a technician acts in its sites only)"
        )

    def handle(self, *args, username, password, role, superuser, team=None, **options):
        crew = None
        if team:
            crew = Team.objects.filter(name=team).first()
            if crew is None:
                raise CommandError(
                    f"No team named {team!r}: create it first (the demo seed makes 'Fabric ops')."
                )
        user, created = get_user_model().objects.get_or_create(username=username)
        user.set_password(password)
        user.is_staff = superuser or role == "admin"
        user.is_superuser = superuser
        user.save()
        user.groups.add(Group.objects.get(name=role))
        if crew is not None:
            crew.members.add(user)
        self.stdout.write(f"{'Created' if created else 'Updated'} {username} ({role})")
