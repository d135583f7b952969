"""Real headless Chromium (Debian's ``chromium``) driven by Playwright's sync API.

Outside CI a missing browser skips these tests; under CI (``CI=true``) it fails them.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.inventory.views.conftest import plant  # noqa: F401 - the same small plant as the page tests

# Playwright's sync API runs an event loop in the test thread; the ORM calls the test makes
# around it are still synchronous and safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts"
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _chromium_path() -> str | None:
    for candidate in (os.environ.get("CABLETRACK_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(scope="session")
def _live_server_media_url():
    """Django's live server wraps a media-files handler that cannot take ``MEDIA_URL = None``
    (uploads are only served through a login-checked view); give it a path nothing links to."""
    from django.conf import settings

    before = settings.MEDIA_URL
    settings.MEDIA_URL = "/uploads-not-served/"
    yield
    settings.MEDIA_URL = before


@pytest.fixture(scope="session")
def live_server(_live_server_media_url, live_server):
    return live_server


@pytest.fixture(scope="session")
def browser():
    path = _chromium_path()
    if path is None:
        if _in_ci():
            pytest.fail("chromium is not installed (apt-get install -y chromium); CI needs it")
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=path, args=LAUNCH_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture
def phone(browser):
    context = browser.new_context(
        viewport={"width": 360, "height": 800}, device_scale_factor=2, has_touch=True, is_mobile=True
    )
    page = context.new_page()
    page.set_default_timeout(20_000)
    yield page
    context.close()


@pytest.fixture
def desktop(browser):
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20_000)
    yield page
    context.close()
