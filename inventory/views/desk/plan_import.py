"""Desk cable plan import: upload a CSV, dry run, then apply the very file that was checked."""

from __future__ import annotations

import contextlib
import hashlib
import uuid
from decimal import Decimal, InvalidOperation
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from inventory.access import authz
from inventory.forms.plant import CablePlanForm, apply_errors
from inventory.services.plans import cable_plan as plan_services
from inventory.services.plans import files as plan_files

PLAN_DIR = "plans"


def _plan_path(token: str) -> Path:
    if not token or not all(c in "0123456789abcdef" for c in token) or len(token) != 32:
        raise Http404("No such plan")
    return Path(settings.MEDIA_ROOT) / PLAN_DIR / f"{token}.csv"


def parse_plan(text: str) -> list[dict]:
    """The plan CSV read by the API's reader (``plan_rows_from_csv``), refusals said next to
    the file field."""
    try:
        rows = plan_files.plan_rows_from_csv(text)
    except plan_files.PlanFileError as exc:
        raise ValidationError({"file": str(exc)}) from None
    if not rows and not text.strip():
        raise ValidationError({"file": "The file is empty."})
    if not rows:
        raise ValidationError({"file": "The file has a header but no rows."})
    return rows


# The plan's columns as the page names them (errors and changes say these, not the CSV keys).
FIELD_WORDS = {
    "a_port": "End A",
    "b_port": "End B",
    "a_device": "End A device",
    "b_device": "End B device",
    "a_fibres": "End A fibres",
    "b_fibres": "End B fibres",
    "length_m": "Length",
    "part_number": "Part number",
    "serial_a": "Serial, end A",
    "serial_b": "Serial, end B",
    "install_date": "Installed",
    "vendor_id": "Vendor",
    "path": "Path",
}
UNITS = {"length_m": " m"}


def _field_words(key: str) -> str:
    return FIELD_WORDS.get(key) or key.replace("_", " ").capitalize()


def _value_words(key: str, value) -> str:
    if value is None or value == "":
        return "–"
    if key in UNITS:  # a number with its unit: "3.00" -> "3 m"
        with contextlib.suppress(InvalidOperation):
            value = f"{Decimal(str(value)).normalize():f}"
    return f"{value}{UNITS.get(key, '')}"


def plan_outcome(result) -> dict:
    """What the page shows of a ``PlanResult``: rows to create, rows that change (each change in
    words: ``Length: 3 m → 5 m``), errors by row naming the part that is wrong."""
    rows = result.rows
    changed = [r for r in rows if r.action == "change"]
    for r in changed:
        r.change_words = [
            f"{_field_words(k)}: {_value_words(k, v.get('old'))} → {_value_words(k, v.get('new'))}"
            for k, v in (r.changes or {}).items()
        ]
    return {
        "created": [r for r in rows if r.action == "create"],
        "changed": changed,
        "unchanged": sum(1 for r in rows if r.action == "unchanged"),
        "errors": [
            {
                "row": r.row or None,
                "label": r.label,
                "messages": [
                    f"{_field_words(k)}: {v}" if k not in ("rows", "__all__") else str(v)
                    for k, v in r.errors.items()
                ],
            }
            for r in rows
            if r.errors
        ],
    }


@authz.requires_action("install_cable")
@require_http_methods(["GET", "POST"])
def cable_plan_import(request):
    ctx: dict = {}
    if request.method == "POST" and request.POST.get("apply"):
        token = request.POST.get("token", "")
        path = _plan_path(token)
        if not path.exists() or request.session.get("cable_plan_token") != token:
            messages.error(request, "That dry run has expired; upload the plan again.")
            return redirect("cable-import")
        text = path.read_text(encoding="utf-8")
        if hashlib.sha256(text.encode()).hexdigest() != request.POST.get("sha256"):
            messages.error(request, "The plan changed since its dry run; upload it again.")
            return redirect("cable-import")
        with transaction.atomic():
            outcome = plan_outcome(
                plan_services.cable_plan_import(rows=parse_plan(text), dry_run=False, actor=request.user)
            )
            if outcome["errors"]:
                transaction.set_rollback(True)
        if outcome["errors"]:
            ctx.update(outcome=outcome, form=CablePlanForm(), applied=False)
            messages.error(
                request, "Nothing was imported: the plan has errors now (someone changed the plant?)."
            )
            return render(request, "inventory/cable_import.html", ctx)
        path.unlink(missing_ok=True)
        request.session.pop("cable_plan_token", None)
        messages.success(
            request, f"Imported: {len(outcome['created'])} created, {len(outcome['changed'])} changed."
        )
        # The result page: every created or changed cable, linked (a refresh finds the token spent).
        ctx.update(outcome=outcome, applied=True, form=CablePlanForm())
        return render(request, "inventory/cable_import.html", ctx)
    form = CablePlanForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        text = form.cleaned_data["file"]
        try:
            rows = parse_plan(text)
        except ValidationError as exc:
            apply_errors(form, exc)
        else:
            with transaction.atomic():
                outcome = plan_outcome(
                    plan_services.cable_plan_import(rows=rows, dry_run=True, actor=request.user)
                )
                transaction.set_rollback(True)  # a dry run writes nothing, whatever the service does
            ctx["outcome"] = outcome
            ctx["row_count"] = len(rows)
            ctx["checked_file"] = getattr(request.FILES.get("file"), "name", "")
            if not outcome["errors"]:
                token = uuid.uuid4().hex
                path = _plan_path(token)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
                request.session["cable_plan_token"] = token
                ctx["token"] = token
                ctx["sha256"] = hashlib.sha256(text.encode()).hexdigest()
    ctx["form"] = form
    return render(request, "inventory/cable_import.html", ctx)
