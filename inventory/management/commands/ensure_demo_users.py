from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from inventory.services.demo.users import DEMO_PASSWORD, demo_users_ensure, demo_users_words


class Command(BaseCommand):
    help = (
        "Create (or reset) the demo's users, one for each role (after seed_demo: its team must "
        "exist); used by `make run` and `make screenshots`."
    )

    def handle(self, *args, **options):
        try:
            lines = demo_users_ensure()
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages) + " Run seed_demo first.") from exc
        for line in lines:
            self.stdout.write(line)
        self.stdout.write(f"Password {DEMO_PASSWORD} for: {demo_users_words()}.")
