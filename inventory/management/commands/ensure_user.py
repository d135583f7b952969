from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand

from inventory.access.roles import ROLES


class Command(BaseCommand):
    help = "Create (or reset) a user with a role; used by `make run` for the demo login."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--password", required=True)
        parser.add_argument("--role", default="engineer", choices=list(ROLES))
        parser.add_argument("--superuser", action="store_true")

    def handle(self, *args, username, password, role, superuser, **options):
        user, created = get_user_model().objects.get_or_create(username=username)
        user.set_password(password)
        user.is_staff = superuser or role == "admin"
        user.is_superuser = superuser
        user.save()
        user.groups.add(Group.objects.get(name=role))
        self.stdout.write(f"{'Created' if created else 'Updated'} {username} ({role})")
