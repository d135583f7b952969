"""Server-rendered pages: thin, they call selectors and render."""

from django.contrib.auth.decorators import login_not_required
from django.db import connection
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET

from ..models import Cable, Rack
from ..selectors import pages as page_selectors


@login_not_required
@require_GET
def healthz(request):
    """Liveness and database reachability, for load balancers. No login."""
    with connection.cursor() as cur:
        cur.execute("SELECT 1")
    return JsonResponse({"status": "ok"})


def home(request):
    return render(request, "inventory/home.html", page_selectors.dashboard())


def search(request):
    q = request.GET.get("q", "").strip()
    results = page_selectors.search(q) if q else None
    if (
        results
        and len(results["cables"]) == 1
        and not any(results[k] for k in ("racks", "transceivers", "ports"))
    ):
        return redirect(results["cables"][0])
    return render(request, "inventory/search.html", {"q": q, "results": results})


def cable_page(request, label: str):
    cable = get_object_or_404(Cable.objects.select_related("vendor", "replaced_by"), label=label)
    return render(request, "inventory/cable.html", page_selectors.cable_page(cable))


def rack_page(request, name: str):
    rack = get_object_or_404(Rack.objects.select_related("row__room__site"), name=name)
    return render(request, "inventory/rack.html", page_selectors.rack_page(rack))
