"""The production start path, as the Dockerfile, docker-compose.yml and CI run it (issue 14).

The image runs as an unprivileged user with the application directory read-only: settings must
not write there at import, static files are collected at build (not at every start), migrations
run once in their own one-shot service (not on every web start), data lives in one volume, and the
image says how to check it is healthy. ``.ci/prod-start`` runs that path for real without Docker
(package installed non-editable into a fresh virtualenv, gunicorn + worker + beat as an
unprivileged user); CI calls it after the two ``make test`` runs, the embedded defaults first,
exactly as a newcomer types it.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _import_settings(env_extra: dict, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "REDIS_URL", "CABLETRACK_"))
    }
    env.update({"DJANGO_SETTINGS_MODULE": "cabletrack.settings", "PYTHONDONTWRITEBYTECODE": "1", **env_extra})
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from django.conf import settings; print(settings.VAR_DIR)",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_production_settings_write_nothing_at_import(tmp_path):
    var = tmp_path / "not-writable-here" / "var"
    done = _import_settings(
        {
            "DJANGO_DEBUG": "false",
            "DJANGO_SECRET_KEY": "x" * 50,
            "DATABASE_URL": "postgres://nobody@127.0.0.1:1/none",
            "REDIS_URL": "redis://127.0.0.1:1/0",
            "CABLETRACK_VAR_DIR": str(var),
        },
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert not var.exists() and not var.parent.exists()


def test_the_embedded_defaults_still_make_their_data_directory(tmp_path):
    var = tmp_path / "var"
    done = _import_settings({"CABLETRACK_VAR_DIR": str(var)}, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (var / "broker" / "queue").is_dir()


def _compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_a_soak_minimum_no_qualification_could_meet_stops_the_start_naming_the_setting(tmp_path):
    """A minimum soak above the longest soak recorded (a week) would refuse every qualification."""
    done = _import_settings(
        {"CABLETRACK_VAR_DIR": str(tmp_path / "var"), "CABLETRACK_BER_SOAK_MINUTES": "20000"}, tmp_path
    )
    assert done.returncode != 0
    assert "CABLETRACK_BER_SOAK_MINUTES must be from 0 to 10,080 (a week), not 20000" in done.stderr
    week = _import_settings(
        {"CABLETRACK_VAR_DIR": str(tmp_path / "var"), "CABLETRACK_BER_SOAK_MINUTES": "10080"}, tmp_path
    )
    assert week.returncode == 0, week.stderr[-2000:]


def test_compose_migrates_once_in_a_one_shot_service_and_web_only_serves():
    services = _compose()["services"]
    assert "migrate" in services["migrate"]["command"] and services["migrate"]["restart"] == "no"
    for name in ("web", "worker", "beat"):
        command = str(services[name].get("command", ""))
        assert "migrate" not in command and "collectstatic" not in command, name
        assert services[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"


def test_compose_runs_read_only_with_one_data_volume():
    compose = _compose()
    for name in ("migrate", "web", "worker", "beat"):
        service = compose["services"][name]
        assert service["read_only"] is True, name
        assert "data:/data" in service["volumes"], name
        assert service["environment"]["CABLETRACK_VAR_DIR"] == "/data"
    assert "data" in compose["volumes"]


def test_the_image_collects_static_at_build_runs_unprivileged_and_has_a_healthcheck():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^RUN .*collectstatic --noinput", dockerfile, re.M | re.S)
    assert re.search(r"^USER (?!root)\w+", dockerfile, re.M)
    assert re.search(r"^HEALTHCHECK .*/healthz", dockerfile, re.M | re.S)
    assert "CABLETRACK_VAR_DIR=/data" in dockerfile


def test_ci_runs_the_readme_defaults_then_postgresql_then_the_production_start():
    script = (ROOT / ".ci" / "run").read_text()
    embedded = script.index("unset DATABASE_URL REDIS_URL CABLETRACK_VAR_DIR\n  make test")
    postgres = script.index("make test", embedded + 40)
    prod = script.index("bash .ci/prod-start")
    assert embedded < postgres < prod
    start = (ROOT / ".ci" / "prod-start").read_text()
    for step in (
        "--require-hashes -r",
        "install --quiet --no-deps .",
        "migrate --noinput",
        "setpriv",
        "chmod -R a-w",
    ):
        assert step in start, step
