"""The web entry point (gunicorn, runserver) starts a process ready to serve."""

import subprocess
import sys

from django.conf import settings


def test_a_web_process_has_its_views_imported_before_its_first_request_and_not_scipy():
    """Django imports the URLconf on a process's first request (every view: about a second),
    which that request, after each worker start or recycle, waited for. ``cabletrack.wsgi``
    imports it as the worker starts. ``scipy.stats`` (about 78 MB a process) is left out: only a
    forecast computation needs it, and a web worker serves the stored daily forecast."""
    probe = (
        "import sys; import cabletrack.wsgi; from django.urls import get_resolver; "
        "print('url_patterns' in get_resolver().__dict__, 'inventory.views.forecast' in sys.modules, "
        "'scipy.stats' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=settings.BASE_DIR
    )
    assert out.stdout.split() == ["True", "True", "False"]


def test_a_web_process_keeps_its_imports_out_of_full_collections():
    """A full garbage collection walks every tracked object; a web worker's tens of thousands of
    import-time objects (Django, the views, numpy) made one request in a few hundred wait 160-250
    ms for it. ``cabletrack.wsgi`` freezes them once imported (``gc.freeze``), so a full collection
    walks only what requests created."""
    probe = (
        "import gc; before = gc.get_freeze_count(); import cabletrack.wsgi; "
        "print(before, gc.get_freeze_count(), len(gc.get_objects(generation=2)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=settings.BASE_DIR
    )
    before, frozen, left = (int(x) for x in out.stdout.split())
    assert before == 0
    assert frozen > 50_000, frozen  # the imports' objects, set aside
    assert left < frozen / 100, (left, frozen)  # what a full collection still walks
