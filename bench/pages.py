"""Technician and desk pages: server time of ``/c/<label>``, the cable list and ``/r/<rack>``.

Measured through a real gunicorn worker with a logged-in session, on the seeded cluster, served
as in production (``DJANGO_DEBUG=false``, collected static files: ``bench.load``'s environment);
``BENCH_PAGES_DEBUG=1`` serves the development configuration instead (DEBUG on: every query is
also logged). The load average is reported with the figures: on a shared machine the same code
measures 3-5x slower at a load of 6 than on a quiet one.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile

from django.conf import settings
from django.test import override_settings

from bench.common import ROOT, Http, WebServer, percentile
from bench.load import LOAD_SECRET_KEY, _prod_env


# What this benchmark needs of the machine (bench/__main__.py skips it, saying so, without).
def NEEDS() -> tuple[str, ...]:  # noqa: N802 - read by bench/__main__.py like the other modules' NEEDS
    """The development configuration (``BENCH_PAGES_DEBUG=1``) needs nothing more."""
    return () if os.environ.get("BENCH_PAGES_DEBUG", "") == "1" else ("redis",)


def _session_cookie(username: str = "bench-pages", role: str = "engineer") -> str:
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
    from django.contrib.auth.models import Group
    from django.contrib.sessions.backends.db import SessionStore

    user, _ = get_user_model().objects.get_or_create(username=username)
    user.groups.add(Group.objects.get(name=role))
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[-1]
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.save()
    return f"{settings.SESSION_COOKIE_NAME}={session.session_key}"


def _timed(http: Http, paths: list[str], headers: dict) -> list[float]:
    times = []
    for path in paths:
        status, body, ms = http.request("GET", path, headers=headers)
        assert status == 200, (path, status, body[:300])
        times.append(ms)
    return times


def _report(report, name: str, times: list[float], target: str) -> None:
    report(f"{name}: p50", percentile(times, 50), "ms")
    report(f"{name}: p95", percentile(times, 95), "ms", target)


def run(report) -> None:
    from inventory.core.choices import CableStatus
    from inventory.models import Cable, Rack, Site
    from inventory.selectors.pages.lists import CABLE_SORTS
    from inventory.selectors.paging import DESK_COUNT_CAP

    report("load average (1 min) before the page figures", os.getloadavg()[0], "", "")
    rng = random.Random(11)
    labels = list(
        Cable.objects.exclude(status=CableStatus.RETIRED).order_by("pk").values_list("label", flat=True)
    )
    sample = rng.sample(labels, min(300, len(labels)))
    racks = list(Rack.objects.values_list("name", flat=True))
    site = Site.objects.order_by("pk").values_list("slug", flat=True).first()
    debug = os.environ.get("BENCH_PAGES_DEBUG", "") == "1"
    static = tempfile.TemporaryDirectory()
    env = None
    if not debug:
        env = _prod_env(static.name)
        subprocess.run(
            [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"], cwd=ROOT, env=env, check=True
        )
    with override_settings(SECRET_KEY=LOAD_SECRET_KEY if not debug else settings.SECRET_KEY):
        headers = {"Cookie": _session_cookie()}  # signed with the key the server checks it with
    print(f"  server: {'development (DEBUG on)' if debug else 'production settings (DEBUG off)'}", flush=True)
    with static, WebServer(env=env) as web:
        http = Http(web.port)
        _timed(http, [f"/c/{label}" for label in sample[:20]] + ["/cables/"] * 5, headers)  # warm up
        _report(
            report, "/c/<label> cable page", _timed(http, [f"/c/{x}" for x in sample], headers), "<= 30 ms"
        )
        pages = max(1, min(len(labels), DESK_COUNT_CAP) // 50)  # numbered pages stop at the count's cap
        list_paths = [f"/cables/?page={rng.randint(1, pages)}" for _ in range(60)]
        _report(report, "/cables/ list, page of 50", _timed(http, list_paths, headers), "<= 60 ms")
        filtered = [
            f"/cables/?site={site}&status=in_production&sort=-retest&page={rng.randint(1, 20)}",
            "/cables/?retest_overdue=true",
            "/cables/?kind=SMF_OS2&sort=installed",
            "/cables/?q=C0012",
        ] * 10
        _report(report, "/cables/ list, filtered and sorted", _timed(http, filtered, headers), "<= 60 ms")
        # Every sort the desk offers, both ways, under the site and status filters, pages 1-20.
        by_sort = [
            f"/cables/?site={site}&status=in_production&sort={d}{key}&page={rng.randint(1, 20)}"
            for key in CABLE_SORTS
            for d in ("", "-")
            for _ in range(4)
        ]
        _report(
            report, "/cables/ list, filtered, every offered sort", _timed(http, by_sort, headers), "<= 60 ms"
        )
        rack_paths = [f"/r/{rng.choice(racks)}" for _ in range(40)]
        _report(report, "/r/<rack> rack page", _timed(http, rack_paths, headers), "< 60 ms")
        # The leaf/network racks are the big pages (about 800 cables each): measured on their own.
        big = [r for r in racks if "-N" in r] or racks
        big_paths = [f"/r/{rng.choice(big)}" for _ in range(20)]
        _report(report, "/r/<rack> rack page, network racks", _timed(http, big_paths, headers), "< 60 ms")
    # The machine may be shared: the figures mean little without the load they were taken under.
    load1, load5, _ = os.getloadavg()
    report("load average (1 min) after the page figures", load1, "", "")
    report("load average (5 min) after the page figures", load5, "", "")
