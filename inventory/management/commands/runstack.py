"""Start web, Celery worker, Celery beat and a loopback mail sink together (``make run``).

Development only: production runs each process on its own (see docker-compose.yml). The
worker and beat run the same task code as production, on whatever broker the settings name
(the filesystem broker by default, Redis when ``REDIS_URL`` is set).
"""

import os
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand


def stack_env(addr: str, environ: dict[str, str]) -> dict[str, str]:
    """The processes' environment: ``CABLETRACK_BASE_URL`` follows the address served (QR codes
    and mail links then open this server), unless it is set already."""
    env = dict(environ)
    if not env.get("CABLETRACK_BASE_URL"):
        env["CABLETRACK_BASE_URL"] = f"http://{addr}"
    return env


class Command(BaseCommand):
    help = "Run web + worker + beat (+ a loopback SMTP sink) until Ctrl-C."

    def add_arguments(self, parser):
        parser.add_argument("--addr", default="127.0.0.1:8000")
        parser.add_argument("--no-smtp", action="store_true", help="Do not start the loopback mail sink")

    def handle(self, *args, addr, no_smtp, **options):
        py = sys.executable
        beat_schedule = str(settings.VAR_DIR / "celerybeat-schedule")
        procs = {
            "web": [py, "manage.py", "runserver", addr, "--noreload"],
            "worker": [
                py,
                "-m",
                "celery",
                "-A",
                "cabletrack",
                "worker",
                "--loglevel=INFO",
                "--concurrency=2",
                "--pool=prefork",
            ],
            "beat": [py, "-m", "celery", "-A", "cabletrack", "beat", "--loglevel=INFO", "-s", beat_schedule],
        }
        if not no_smtp:
            host, port = settings.EMAIL_HOST, settings.EMAIL_PORT
            procs["smtp"] = [
                py,
                "-m",
                "aiosmtpd",
                "-n",
                "-l",
                f"{host}:{port}",
                "-c",
                "aiosmtpd.handlers.Debugging",
            ]
        running: dict[str, subprocess.Popen] = {}
        env = stack_env(addr, dict(os.environ))
        for name, cmd in procs.items():
            running[name] = subprocess.Popen(cmd, env=env)  # noqa: S603 - our own argv
        self.stdout.write(
            self.style.SUCCESS(
                f"cabletrack is up: http://{addr}/  (processes: {', '.join(running)}; "
                f"labels and mails link to {env['CABLETRACK_BASE_URL']})"
            )
        )

        def stop(*_):
            for p in running.values():
                if p.poll() is None:
                    p.send_signal(signal.SIGTERM)
            deadline = time.time() + 10
            for p in running.values():
                try:
                    p.wait(timeout=max(0.1, deadline - time.time()))
                except subprocess.TimeoutExpired:
                    p.kill()
            raise SystemExit(0)

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        while True:
            for name, p in running.items():
                if p.poll() is not None:
                    self.stderr.write(f"{name} exited with {p.returncode}; stopping the stack.")
                    stop()
            time.sleep(1)
