"""Shared fixtures. Under CI (``CI=true``), a skipped test fails the run: a missing service or
browser must not pass silently."""

import contextlib
import os
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings
from hypothesis.database import DirectoryBasedExampleDatabase
from rest_framework.test import APIClient

from tests import factories as f


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


# Property tests: the same examples on every CI run (``derandomize``: each test's seed is derived
# from the test itself, so a red CI run is red again on a re-run and on a laptop with
# ``HYPOTHESIS_PROFILE=ci``), and no example database to carry state between runs. Locally the
# ``dev`` profile draws new examples each run (and replays the failures it found) to dig deeper.
hypothesis_settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
# Explicitly random and with a database: hypothesis's own default turns derandomized with no
# database wherever a CI variable is set, and ``dev`` would inherit that.
hypothesis_settings.register_profile(
    "dev",
    derandomize=False,
    database=DirectoryBasedExampleDatabase(
        str(Path(__file__).resolve().parents[1] / ".hypothesis" / "examples")
    ),
    print_blob=True,
)
# Mutation runs (``tools/mutation.py`` sets ``HYPOTHESIS_PROFILE=mutation``): the CI profile's
# fixed examples, so a mutant is killed or not the same way on every run and its score is
# reproducible, and no deadline: a mutant's tests run on a loaded machine, and a slow example
# must not count as a test that noticed the change.
hypothesis_settings.register_profile("mutation", derandomize=True, database=None, deadline=None)
HYPOTHESIS_PROFILE = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if _in_ci() else "dev")
hypothesis_settings.load_profile(HYPOTHESIS_PROFILE)


def pytest_report_header(config):
    s = hypothesis_settings.default
    seed = "fixed per test (derandomize)" if s.derandomize else "random each run"
    return f"hypothesis profile: {HYPOTHESIS_PROFILE} (examples: {seed}; print_blob: {s.print_blob})"


def pytest_collection_modifyitems(config, items):
    """Tests marked ``postgres`` stage what only PostgreSQL does (a row lock another transaction
    waits on, read through ``pg_stat_activity``). On the embedded SQLite default they are
    deselected, not skipped: SQLite serialises writers, so the scenario cannot happen there.
    They run wherever ``DATABASE_URL`` is PostgreSQL (as in CI)."""
    from django.conf import settings

    if "sqlite" not in settings.DATABASES["default"]["ENGINE"]:
        return
    deselected = [item for item in items if item.get_closest_marker("postgres")]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if not item.get_closest_marker("postgres")]


def _tests_with_an_outcome(reporter) -> int:
    """Tests that reported an outcome: their call's, or their setup's when it never got there."""
    return sum(
        1
        for key in ("passed", "failed", "skipped", "xfailed", "xpassed", "error")
        for r in reporter.stats.get(key, [])
        if getattr(r, "when", None) == "call" or (getattr(r, "when", None) == "setup" and not r.passed)
    )


def pytest_sessionfinish(session, exitstatus):
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    # A run that loses tests must not pass: ``--dist loadgroup`` keys tests by node id, and the
    # schema fuzz's 120 operations share one, so it ran one of them and reported success. On the
    # xdist controller (or a run without xdist), not on its workers, which each run a share.
    if (
        reporter
        and session.exitstatus == 0
        and not hasattr(session.config, "workerinput")
        and not session.config.option.collectonly
        and (ran := _tests_with_an_outcome(reporter)) < session.testscollected
    ):
        reporter.write_line(
            f"{session.testscollected - ran} of {session.testscollected} collected tests reported no outcome.",
            red=True,
        )
        session.exitstatus = 1
    if _in_ci():
        skipped = reporter.stats.get("skipped", []) if reporter else []
        if skipped and session.exitstatus == 0:
            reporter.write_line(
                f"CI: {len(skipped)} test(s) skipped; under CI a skip is a failure.", red=True
            )
            session.exitstatus = 1


@pytest.fixture
def user_with_role(db):
    """A user of ``role``. A technician acts only in their team's sites (issue 32), so this one
    is in the team of every site that has none yet: the plant's field crew (tests of the site
    scope itself build their own teams, in ``tests/inventory/security/conftest.py``)."""

    def make(role: str, username: str | None = None):
        user = f.UserFactory(username=username or f"{role}-user", role=role)
        if role == "technician":
            f.field_crew(user)
        return user

    return make


@pytest.fixture
def media(settings, tmp_path):
    """Uploads (OTDR files, traces) into the test's own directory: ``usefixtures("media")``."""
    settings.MEDIA_ROOT = tmp_path / "uploads"
    return settings.MEDIA_ROOT


@pytest.fixture
def tech_api(api_as):
    """An API client logged in as a technician."""
    return api_as("technician")


@pytest.fixture
def api_as(user_with_role):
    """An API client logged in (session) with the given role."""

    def make(role: str):
        client = APIClient()
        client.force_authenticate(user=user_with_role(role))
        return client

    return make


@pytest.fixture
def engineer_api(api_as):
    return api_as("engineer")


@pytest.fixture
def celery_worker_proc(transactional_db):
    """A real Celery worker process on the test database (needs committed data)."""
    from tests.workers import Worker

    worker = Worker().start()
    yield worker
    worker.stop()


@pytest.fixture
def smtp_sink(settings):
    """A real SMTP server on loopback; Django's mail goes to it (not the in-memory backend)."""
    from tests.smtp import SmtpSink

    sink = SmtpSink().start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = sink.port
    settings.EMAIL_HOST_USER = ""
    settings.EMAIL_HOST_PASSWORD = ""
    settings.EMAIL_USE_TLS = False
    settings.EMAIL_USE_SSL = False
    yield sink
    sink.stop()


@pytest.fixture(autouse=True)
def _fresh_token_failure_count():
    """Every test starts with no failed token authentications counted for the test client's
    address (the count lives in the cache, which outlives a test)."""
    from django.core.cache import cache

    from inventory.api.auth import token_failures_key

    # A fault test's stopped Redis has no count to clear.
    with contextlib.suppress(Exception):
        cache.delete(token_failures_key("127.0.0.1"))


@pytest.fixture(autouse=True, scope="session")
def _fast_password_hashing():
    """PBKDF2 at production strength costs ~2 s per user on a loaded 2-core box: tests use MD5."""
    from django.conf import settings
    from django.contrib.auth import hashers

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    hashers.get_hashers.cache_clear()
    hashers.get_hashers_by_algorithm.cache_clear()
