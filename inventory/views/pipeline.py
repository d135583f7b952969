"""``/telemetry/pipeline/``: the rollup queue and the last retest sweep, for the operator who
got the "pipeline stalled" or "set aside" alert. Thin: one selector."""

from __future__ import annotations

from django.contrib.auth.decorators import permission_required
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from inventory.selectors.telemetry.pipeline import pipeline_state


@require_GET
@permission_required("inventory.view_telemetryingestbatch", raise_exception=True)
def pipeline(request):
    return render(request, "inventory/pipeline.html", {"state": pipeline_state(now=timezone.now())})
