"""``/docs/``: the documentation site that ``make docs`` builds, served to anyone (it holds no
plant data), so the "?" of every page and the ``help`` of API errors open on the same server."""

from pathlib import Path

from django.contrib.auth.decorators import login_not_required
from django.http import Http404
from django.shortcuts import render
from django.views.static import serve

from inventory.conf import app_settings


@login_not_required
def docs_page(request, path: str = ""):
    root = Path(app_settings.docs_site_dir)
    if not (root / "index.html").is_file():
        return render(request, "inventory/docs_missing.html", status=404)
    if path == "" or path.endswith("/"):
        path += "index.html"
    try:
        return serve(request, path, document_root=str(root))
    except Http404:
        return render(
            request, "404.html", {"message": "No such documentation page", "path": request.path}, status=404
        )
