"""Desk page: the open NetBox/Nautobot sync conflicts, each with its two resolutions.

Thin: the selector lists, the service resolves (``inventory.services.interop.netbox_conflicts``),
with the API's policy (``import``; taking the source's ends also ``edit_cable`` on the cable).
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import permission_required
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from inventory.access import authz
from inventory.core.validators import is_whole_number
from inventory.models import Cable
from inventory.selectors.interop.conflicts import sync_conflicts_open
from inventory.services.interop.netbox_conflicts import sync_conflict_resolve


@permission_required("inventory.view_syncrun", raise_exception=True)
def conflicts(request):
    may = authz.can(request.user, "import")
    return render(request, "inventory/sync_conflicts.html", {"conflicts": sync_conflicts_open(), "may": may})


@require_POST
@authz.requires_action("import")
def conflict_resolve(request):
    label, take = request.POST.get("cable", ""), request.POST.get("take", "")
    cable = Cable.objects.filter(label=label).first()
    if take == "take_source" and cable is not None:
        authz.check(request.user, "edit_cable", cable)
    run = request.POST.get("run", "")
    try:
        if not is_whole_number(run):
            raise ValidationError("No such sync run.")
        sync_conflict_resolve(run_id=int(run), cable_label=label, take=take, actor=request.user)
    except ValidationError as exc:
        for m in exc.messages:
            messages.error(request, m)
        return redirect("sync-conflicts")
    done = "took the source's ends" if take == "take_source" else "kept ours"
    messages.success(request, f"{label}: {done}.")
    return redirect("sync-conflicts")
