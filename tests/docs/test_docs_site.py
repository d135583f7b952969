"""The documentation site: it builds in strict mode, its generated reference covers every setting,
and the links the application hands out (the "?" of every page, the ``help`` of API errors) land
on pages and anchors the built site has."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest
from django.test import Client
from django.urls import reverse

from inventory.core import help as help_links
from tests.factories import UserFactory
from tools import docs as docs_gen

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def built_site(tmp_path_factory) -> Path:
    """``mkdocs build --strict``, as ``make docs`` and CI run it, into a temp dir."""
    site = tmp_path_factory.mktemp("site")
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return site


def _anchors(html: str) -> set[str]:
    return set(re.findall(r'\bid="([^"]+)"', html))


def _lands(site: Path, topic: str) -> bool:
    path, _, anchor = topic.partition("#")
    page = site / path / "index.html" if path.endswith("/") or not path else site / path
    if not page.is_file():
        return False
    return not anchor or anchor in _anchors(page.read_text())


def test_every_help_link_lands_on_a_page_and_anchor_the_site_has(built_site):
    topics = {
        *help_links.PAGE_TOPICS.values(),
        *help_links.API_STATUS_TOPICS.values(),
        help_links.TELEMETRY_TOPIC,
        help_links.CSRF_TOPIC,
    }
    broken = sorted(t for t in topics if not _lands(built_site, t))
    assert not broken, f"these help links land nowhere in the built site: {broken}"


def test_the_site_has_the_generated_pages_with_their_contents(built_site):
    config = (built_site / "operator" / "configuration" / "index.html").read_text()
    for name in ("CABLETRACK_RETEST_INTERVAL_DAYS", "DATABASE_URL", "CABLETRACK_DOCS_URL"):
        assert name in config
    api = (built_site / "integrator" / "openapi" / "index.html").read_text()
    assert "/api/cables/" in api and "/api/telemetry/" in api
    perf = (built_site / "developer" / "performance" / "index.html").read_text()
    assert "131,072 GPUs" in perf and "4,096 GPUs" in perf


def test_a_setting_nobody_documented_fails_the_build(monkeypatch):
    from inventory import conf

    monkeypatch.delitem(conf.ENVIRONMENT, "DATABASE_URL")
    with pytest.raises(docs_gen.DocsError, match="DATABASE_URL"):
        docs_gen.configuration_reference()


def test_a_documented_setting_settings_py_no_longer_reads_fails_the_build(monkeypatch):
    from inventory import conf

    monkeypatch.setitem(conf.ENVIRONMENT, "DJANGO_GONE", "A setting that was removed.")
    with pytest.raises(docs_gen.DocsError, match="DJANGO_GONE"):
        docs_gen.configuration_reference()


def test_the_performance_page_marks_a_miss_and_says_what_limits_it():
    page = docs_gen.performance_page()
    assert "**missed**" in page
    # Every missed figure in the snapshots carries its explanation.
    assert "*not yet explained*" not in page


def test_targets_are_read_both_ways():
    assert docs_gen.verdict(136.6, "< 180 s") == "met"
    assert docs_gen.verdict(39.2, "<= 30 ms") == "missed"
    assert docs_gen.verdict(5068, ">= 5,000 cables/s") == "met"
    assert docs_gen.verdict(4547, ">= 5,000 cables/s") == "missed"


@pytest.mark.django_db
def test_every_page_header_has_a_help_link_to_its_part(client, user_with_role):
    client.force_login(user_with_role("technician"))
    page = client.get(reverse("retests-plan")).content.decode()
    assert 'class="help" href="/docs/technician/retests/"' in page


def _docs_part(topic: str) -> str:
    """The Markdown a help topic lands on: its page, or from its anchor (a heading's slug, or a
    paragraph ending in ``{: #anchor }``) to the next heading or paragraph."""
    path, _, anchor = topic.partition("#")
    top = path.endswith("/") and path.count("/") == 1  # "engineer/": the part's index page
    md = ROOT / "docs" / (path + "index.md" if top else path.rstrip("/") + ".md")
    text = md.read_text()
    if not anchor:
        return text
    blocks = re.split(r"\n\s*\n", text)
    for i, block in enumerate(blocks):
        heading = re.match(r"(#+)\s+(.*)", block)
        if heading and re.sub(r"[^a-z0-9]+", "-", heading.group(2).lower()).strip("-") == anchor:
            rest, level = blocks[i + 1 :], len(heading.group(1))
            end = next((k for k, b in enumerate(rest) if re.match(rf"#{{1,{level}}}\s", b)), len(rest))
            return "\n\n".join([block, *rest[:end]])
        if block.rstrip().endswith(f"{{: #{anchor} }}"):
            return block
    raise AssertionError(f"{topic}: no such part in {md.name}")


# A page -> what its part of the documentation must be about (the page's own address).
HELP_PARTS = {
    "impact-report": "/reports/impact/",
    "repair-report": "/repairs/report/",
    "vendor-compare": "/vendors/compare/",
    "rack-bringup": "/r/<rack>/bringup",
    "maintenance": "/maintenance/",
    "reconciliation": "/reconciliation/",
    "forecast": "/forecast/",
    "cable-import": "/cables/import",
    "cable-list": "/cables/",
    "retests-plan": "/retests/",
    "commissioning-report": "/reports/commissioning/",
    "labels-print": "/labels/print/",
    "sync-conflicts": "/sync/conflicts/",
}


@pytest.mark.parametrize(("page", "address"), HELP_PARTS.items())
def test_a_pages_help_link_lands_on_the_part_that_describes_it(page, address):
    """The "?" of the impact and repair reports opened the documentation's home, the vendor
    comparison's the forecast page and the bring-up report's the test results page, none of
    which says a word about them."""
    topic = help_links.PAGE_TOPICS.get(page, help_links.HOME)
    assert topic != help_links.HOME, f"{page}: its ? opens the documentation's home"
    assert address in _docs_part(topic), f"{page}: {topic} does not describe {address}"


@pytest.mark.django_db
def test_the_help_link_follows_a_docs_url_hosted_elsewhere(client, user_with_role, settings):
    settings.CABLETRACK_DOCS_URL = "https://docs.example.com/cabletrack"
    client.force_login(user_with_role("technician"))
    page = client.get(reverse("home")).content.decode()
    assert 'href="https://docs.example.com/cabletrack/technician/"' in page


@pytest.mark.django_db
def test_docs_are_served_to_anyone_from_the_built_site(client, built_site, settings):
    settings.CABLETRACK_DOCS_SITE_DIR = str(built_site)
    home = client.get("/docs/")  # not logged in: the site holds no plant data
    assert home.status_code == 200
    assert b"Find your part" in b"".join(home.streaming_content)
    tests = client.get("/docs/technician/tests/")
    assert tests.status_code == 200
    assert client.get("/docs/no/such/page/").status_code == 404


@pytest.mark.django_db
def test_without_a_built_site_the_docs_say_how_to_build_it(client, tmp_path, settings):
    settings.CABLETRACK_DOCS_SITE_DIR = str(tmp_path)
    answer = client.get("/docs/")
    assert answer.status_code == 404
    assert b"make docs" in answer.content


@pytest.mark.django_db
def test_an_api_error_with_a_documented_fix_links_to_it(client):
    answer = client.get("/api/cables/")  # no credentials
    assert answer.status_code in (401, 403)
    link = answer.json()["help"]
    assert urlparse(link).path.startswith("/docs/")
    assert urlparse(link).fragment in ("tokens", "roles-and-what-they-may-do")


@pytest.mark.django_db
def test_a_session_write_without_its_csrf_token_links_to_how_a_session_authenticates():
    """Not to the roles: no role would let it through."""
    user = UserFactory(username="desk-eng", role="engineer")
    session = Client(enforce_csrf_checks=True)
    session.force_login(user)
    answer = session.post("/api/cables/", {}, content_type="application/json")
    assert answer.status_code == 403 and answer.json()["detail"].startswith("CSRF Failed")
    assert urlparse(answer.json()["help"]).fragment == "authentication"


@pytest.mark.django_db
def test_an_error_without_a_documented_fix_carries_no_link(engineer_api):
    answer = engineer_api.get("/api/cables/C999999/")
    assert answer.status_code == 404
    assert "help" not in answer.json()
