from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from inventory.access.roles import ROLES
from inventory.services.access.users import ensured_words, user_ensure


class Command(BaseCommand):
    help = "Create (or reset) a user with a role (the demo's users: ensure_demo_users)."

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
        try:
            _, created, the_team = user_ensure(
                username=username, password=password, role=role, superuser=superuser, team=team, email=email
            )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        self.stdout.write(ensured_words(username=username, role=role, created=created, team=the_team))
