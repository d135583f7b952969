"""The web process's database sessions run without parallel workers (``inventory.db.web``);
other processes keep the server's setting."""

import importlib

import pytest
from django.db import connection, connections
from django.db.backends.signals import connection_created

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def _fresh_session_setting() -> str:
    wrapper = connections["default"]
    fresh = type(wrapper)(dict(wrapper.settings_dict), wrapper.alias)
    try:
        with fresh.cursor() as cur:
            cur.execute("SHOW max_parallel_workers_per_gather")
            return cur.fetchone()[0]
    finally:
        fresh.close()


@pytest.fixture
def server_default() -> str:
    with connection.cursor() as cur:
        cur.execute("SELECT reset_val FROM pg_settings WHERE name = 'max_parallel_workers_per_gather'")
        return cur.fetchone()[0]


def test_a_session_opened_by_the_web_process_plans_without_parallel_workers(server_default, settings):
    assert server_default != "0"  # else this test could not tell the two apart
    assert _fresh_session_setting() == server_default  # a worker's or a command's session
    importlib.import_module("cabletrack.wsgi")  # what gunicorn and runserver load
    try:
        assert _fresh_session_setting() == "0"
        settings.CABLETRACK_WEB_PARALLEL_WORKERS = 1
        assert _fresh_session_setting() == "1"
    finally:
        connection_created.disconnect(dispatch_uid="cabletrack.web_session")
    assert _fresh_session_setting() == server_default
