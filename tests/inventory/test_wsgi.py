"""The web entry point (gunicorn, runserver) starts a process ready to serve."""

import subprocess
import sys

from django.conf import settings


def test_a_web_process_has_its_views_imported_before_its_first_request():
    """Django imports the URLconf on a process's first request (every view, scipy for the
    forecast: about a second), which that request, after each worker start or recycle, waited
    for. ``cabletrack.wsgi`` imports it as the worker starts."""
    probe = (
        "import sys; import cabletrack.wsgi; from django.urls import get_resolver; "
        "print('url_patterns' in get_resolver().__dict__, 'scipy.stats' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=settings.BASE_DIR
    )
    assert out.stdout.split() == ["True", "True"]
