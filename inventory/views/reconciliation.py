"""Desk pages: the reconciliation report, and creating missing module records from it in one
reviewed step (tick rows or take all -> preview -> confirm). Thin: the selector reads, the
service writes (``inventory.services.telemetry.reconciliation``)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import permission_required
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.views.decorators.http import require_POST

from inventory.models import Site
from inventory.selectors.telemetry.reconciliation import reconciliation_report
from inventory.services.telemetry import reconciliation as recon_services

CREATE_PERMS = ["inventory.add_transceiver", "inventory.import_plant"]
PAGE_ROWS = 1000  # rows drawn on the page; "Preview all" still takes every missing record


def _capped(groups: list[dict], limit: int) -> tuple[list[dict], int]:
    """The first ``limit`` rows, rack by rack, and how many were left out."""
    out, left, hidden = [], limit, 0
    for g in groups:
        n = len(g["modules"]) + len(g["neighbours"])
        if left <= 0:
            hidden += n
            continue
        mods = g["modules"][:left]
        nbrs = g["neighbours"][: max(left - len(mods), 0)]
        hidden += n - len(mods) - len(nbrs)
        left -= len(mods) + len(nbrs)
        out.append({**g, "modules": mods, "neighbours": nbrs})
    return out, hidden


def _scope(data) -> dict:
    return {
        "site": (data.get("site") or "").strip() or None,
        "rack": (data.get("rack") or "").strip() or None,
    }


def _back(scope: dict) -> str:
    q = urlencode({k: v for k, v in scope.items() if v})
    return reverse("reconciliation") + (f"?{q}" if q else "")


def report(request):
    scope = _scope(request.GET)
    include_ok = request.GET.get("include_ok") in ("1", "true", "on")
    try:
        r = reconciliation_report(now=timezone.now(), include_ok=include_ok, **scope)
    except ValidationError as exc:
        for m in exc.messages:
            messages.error(request, m)
        r = reconciliation_report(now=timezone.now(), cage_ids=[])
    groups, hidden = _capped(r.by_rack(include_ok=include_ok), PAGE_ROWS)
    return render(
        request,
        "inventory/reconciliation.html",
        {
            "scope": scope,
            "include_ok": include_ok,
            "groups": groups,
            "hidden": hidden,
            "counts": r.counts(),
            "generated_at": r.generated_at,
            "sites": Site.objects.order_by("name").values_list("slug", "name"),
            "may_create": request.user.has_perms(CREATE_PERMS),
        },
    )


@require_POST
@permission_required(CREATE_PERMS, raise_exception=True)
def preview(request):
    scope = _scope(request.POST)
    take_all = request.POST.get("all") == "1"
    keys = request.POST.getlist("key")
    if not take_all and not keys:
        messages.error(request, "Select the rows to create, or take all missing records.")
        return redirect(_back(scope))
    try:
        p = recon_services.reconciliation_preview(
            actor=request.user, now=timezone.now(), keys=None if take_all else keys, **scope
        )
    except ValidationError as exc:
        for m in exc.messages:
            messages.error(request, m)
        return redirect(_back(scope))
    return render(
        request, "inventory/reconciliation_preview.html", {"preview": p, "scope": scope, "back": _back(scope)}
    )


@require_POST
@permission_required(CREATE_PERMS, raise_exception=True)
def apply(request):
    scope = _scope(request.POST)
    try:
        out = recon_services.reconciliation_apply(
            token=request.POST.get("token", ""), actor=request.user, now=timezone.now()
        )
    except recon_services.StaleRows as exc:
        return render(
            request,
            "inventory/reconciliation_preview.html",
            {"stale": exc.stale, "stale_message": exc.message, "scope": scope, "back": _back(scope)},
            status=409,
        )
    except ValidationError as exc:
        for m in exc.messages:
            messages.error(request, m)
        return redirect(_back(scope))
    if out.created:
        messages.success(
            request,
            f"{len(out.created)} module record(s) created and installed in their cages"
            + (f"; {len(out.already_recorded)} were already recorded." if out.already_recorded else "."),
        )
    else:
        messages.info(
            request, f"Nothing new: the {len(out.already_recorded)} module(s) were already recorded."
        )
    return redirect(_back(scope))
