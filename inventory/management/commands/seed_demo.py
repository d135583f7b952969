import time
from datetime import date

from django.core.management.base import BaseCommand, CommandError

from inventory.services.demo.seed import demo_seed


class Command(BaseCommand):
    help = "Build a realistic, deterministic demo cluster (safe to run twice: the second run does nothing)."

    def add_arguments(self, parser):
        parser.add_argument("--gpus", type=int, default=256, help="GPUs in the cluster (8 per node)")
        parser.add_argument(
            "--seed", type=int, default=1, help="Random seed; the same seed gives the same cluster"
        )
        parser.add_argument(
            "--as-of", type=date.fromisoformat, default=None, help="Reference day (YYYY-MM-DD)"
        )

    def handle(self, *args, gpus, seed, as_of, **options):
        started = time.perf_counter()
        try:
            report = demo_seed(gpus=gpus, seed=seed, as_of=as_of)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if report.skipped:
            self.stdout.write(f"{report.site} already exists; nothing to do.")
            return
        took = time.perf_counter() - started
        counts = ", ".join(f"{v} {k}" for k, v in report.counts.items())
        self.stdout.write(self.style.SUCCESS(f"Seeded {report.site} in {took:.1f}s: {counts}"))
