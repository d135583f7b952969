"""Read-only requests on a real streaming replica, with read-your-writes (``inventory.db.replica``).

A private primary (``initdb``) and a hot standby made from it with ``pg_basebackup -R`` on their
own ports; cabletrack served by gunicorn in production settings with ``DATABASE_URL`` on the
primary and ``DATABASE_REPLICA_URL`` on the standby. With the standby's replay paused, an engineer
imports a cable through the API (a write: the primary) and then:

* opens the new cable's page and the API record at once: both there (read-your-writes: the
  replica has not replayed the write, so their reads go to the primary);
* a colleague logged in before the write, who wrote nothing since, gets "No cable" for the same
  page and a 404 from the API: their reads are served by the replica, which has not replayed it;
* once replay resumes, the colleague sees the cable too, and the engineer's reads move back to
  the replica (the read-your-writes cookie is dropped).
"""

from __future__ import annotations

import http.cookiejar
import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from tests.faults.conftest import ROOT, _load_schema, seed_site, serving, site_env
from tests.faults.servers import PrivateStandby
from tests.faults.test_postgres_restart import plan_body

pytestmark = pytest.mark.fault

PASSWORD = "replica-test-pass-1"


class _LoopbackPolicy(http.cookiejar.DefaultCookiePolicy):
    """Production settings mark the session and CSRF cookies Secure; the test serves plain HTTP on
    loopback (a TLS proxy's job in production), so the jar returns them over HTTP too."""

    def return_ok_secure(self, cookie, request):
        return True


class Browser:
    """A person at a browser: a cookie jar, a login, pages and the API with the session."""

    def __init__(self, base: str):
        self.base = base
        self.jar = http.cookiejar.CookieJar(policy=_LoopbackPolicy())
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def get(self, path: str) -> tuple[int, str]:
        try:
            with self.opener.open(self.base + path, timeout=10) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def csrf(self) -> str:
        return next(c.value for c in self.jar if c.name == "csrftoken")

    def login(self, username: str) -> None:
        _, page = self.get("/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        body = urllib.parse.urlencode(
            {"csrfmiddlewaretoken": token, "username": username, "password": PASSWORD}
        ).encode()
        with self.opener.open(urllib.request.Request(self.base + "/login/", data=body), timeout=10) as r:
            assert r.status == 200 and "Log in" not in r.read().decode()[:3000]

    def post_json(self, path: str, payload: bytes) -> int:
        request = urllib.request.Request(
            self.base + path,
            data=payload,
            headers={
                "Content-Type": "application/json",
                "X-CSRFToken": self.csrf(),
                "Referer": self.base + "/",
            },
        )
        try:
            with self.opener.open(request, timeout=30) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code

    def has_cookie(self, name: str) -> bool:
        return any(c.name == name for c in self.jar)


def _wait(predicate, timeout: float, what: str) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"{what} within {timeout}s")


@pytest.fixture
def replicated_site(transactional_db, private_pg, private_redis, server_dir):
    _load_schema(private_pg)
    env = site_env(private_pg.url("ct"), private_redis.url, server_dir)
    seed_site(env)
    for username in ("planner-a", "colleague-b"):
        subprocess.run(
            [sys.executable, "manage.py", "ensure_user", username, "--password", PASSWORD, "--role", "engineer"],
            cwd=ROOT, env=env, check=True, capture_output=True,
        )  # fmt: skip
    standby = PrivateStandby(server_dir, private_pg).init().start()
    try:
        users = private_pg.sql("SELECT count(*) FROM auth_user", db="ct")
        _wait(
            lambda: standby.sql("SELECT count(*) FROM auth_user", db="ct") == users, 30, "standby caught up"
        )
        with serving({**env, "DATABASE_REPLICA_URL": standby.url("ct")}, server_dir) as url:
            yield url, standby
    finally:
        standby.stop()


def test_pages_read_from_the_replica_and_a_writer_sees_their_own_write_at_once(replicated_site):
    url, standby = replicated_site
    planner, colleague = Browser(url), Browser(url)
    planner.login("planner-a")
    colleague.login("colleague-b")
    # Both logins are writes; let the replica replay them, then let each browser read once so that
    # its read-your-writes cookie is settled and dropped.
    _wait(
        lambda: colleague.get("/")[0] == 200 and not colleague.has_cookie("ct_wal"),
        30,
        "colleague on the replica",
    )
    _wait(
        lambda: planner.get("/")[0] == 200 and not planner.has_cookie("ct_wal"), 30, "planner on the replica"
    )

    standby.pause_replay()
    assert planner.post_json("/api/cables/import/?dry_run=0", plan_body(0)) == 201
    assert planner.has_cookie("ct_wal")
    label = json.loads(plan_body(0))["rows"][0]["label"]

    status, page = planner.get(f"/c/{label}")
    assert status == 200 and label in page, "the writer must see their own cable at once"
    assert planner.get(f"/api/cables/{label}/")[0] == 200

    status, page = colleague.get(f"/c/{label}")
    assert status == 404 and f"No cable {label}" in page, "the colleague's page must be read on the replica"
    assert colleague.get(f"/api/cables/{label}/")[0] == 404

    standby.resume_replay()
    _wait(lambda: colleague.get(f"/c/{label}")[0] == 200, 30, "the colleague sees the cable once replayed")
    status, _ = planner.get(f"/c/{label}")
    assert status == 200
    assert not planner.has_cookie("ct_wal"), "once the replica has the write, the writer reads it there"
