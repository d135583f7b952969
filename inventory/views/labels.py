"""Label printing pages: thin (a form, one service call, a response)."""

from __future__ import annotations

from django import forms
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import FileResponse, Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods

from inventory.access import authz
from inventory.conf import app_settings
from inventory.core.choices import LabelBatchStatus, LabelKind
from inventory.core.labels import STOCKS
from inventory.models import LabelBatch
from inventory.selectors.labels.facts import LabelSelection
from inventory.services.labels import printing as label_services


def _split(values: list[str]) -> tuple[str, ...]:
    out = []
    for v in values:
        out += [p for p in v.replace(",", " ").split() if p]
    return tuple(dict.fromkeys(out))


class LabelPrintForm(forms.Form):
    """What the cable list's bulk action POSTs, and the desk form: cable (repeatable: ids or
    labels), rack, row, changed_since, stock, format, rack_label."""

    cable = forms.CharField(
        required=False, label="Cables", help_text="Labels or ids, separated by spaces or commas"
    )
    rack = forms.CharField(
        required=False, label="Racks", help_text="Rack names, separated by spaces or commas"
    )
    row = forms.CharField(required=False, label="Row", help_text="Row, Room/Row or Site/Room/Row")
    changed_since = forms.DateTimeField(
        required=False,
        label="Changed since",
        help_text="A date (YYYY-MM-DD) or date and time",
        input_formats=[
            "%Y-%m-%d",
            "%Y-%m-%dT%H:%M",
            "%Y-%m-%d %H:%M",
            "%Y-%m-%dT%H:%M:%S",
            "%Y-%m-%d %H:%M:%S",
        ],
    )
    stock = forms.ChoiceField(
        required=False,
        choices=[("", "Default (flag for cables, rack for racks)")]
        + [(k, s.title) for k, s in STOCKS.items()],
    )
    format = forms.ChoiceField(
        choices=[("pdf", "PDF"), ("zpl", "ZPL (Zebra)")], initial="pdf", required=False
    )
    rack_label = forms.BooleanField(required=False, label="Rack labels (instead of cable labels)")

    def __init__(self, data=None, *args, **kwargs):
        if data is not None:
            data = data.copy()
            for key in ("cable", "rack", "row"):
                values = data.getlist(key)
                if len(values) > 1:
                    data.setlist(key, [" ".join(values)])
        super().__init__(data, *args, **kwargs)

    def selection(self) -> LabelSelection:
        d = self.cleaned_data
        return LabelSelection(
            cables=_split([d.get("cable") or ""]),
            racks=_split([d.get("rack") or ""]),
            rows=tuple(r.strip() for r in (d.get("row") or "").split(",") if r.strip()),
            changed_since=d.get("changed_since"),
        )


def _apply_errors(form: forms.Form, exc: ValidationError) -> None:
    fields = {"cable", "rack", "row", "changed_since", "stock", "format"}
    for field, messages in exc.message_dict.items():
        form.add_error(field if field in fields else None, messages)


def _recent_batches(user):
    return (
        LabelBatch.objects.filter(created_by=user).order_by("-created_at")[:10]
        if user.is_authenticated
        else []
    )


@require_http_methods(["GET", "POST"])
def labels_print(request):
    """GET: the print form (fields prefilled from the query). POST: print. Small selections come
    back as the file; large ones become a background batch and redirect to its progress page."""
    can_print = authz.may_print_labels(request.user)
    if request.method == "GET":
        form = LabelPrintForm(initial=request.GET.dict())
        return render(
            request,
            "inventory/labels/print.html",
            {
                "form": form,
                "can_print": can_print,
                "batches": _recent_batches(request.user),
                "inline_max": app_settings.labels_inline_max,
            },
        )
    if not can_print:
        raise PermissionDenied("Printing labels needs the engineer or technician role.")
    form = LabelPrintForm(request.POST)
    plan = None
    if form.is_valid():
        selection = form.selection()
        kind = LabelKind.RACK if form.cleaned_data["rack_label"] else LabelKind.CABLE
        try:
            plan = label_services.labels_plan(
                selection=selection,
                kind=kind,
                stock=form.cleaned_data["stock"] or "",
                fmt=form.cleaned_data["format"] or "pdf",
            )
        except ValidationError as exc:
            _apply_errors(form, exc)
    if plan is None:
        ctx = {
            "form": form,
            "can_print": can_print,
            "batches": _recent_batches(request.user),
            "inline_max": app_settings.labels_inline_max,
        }
        return render(request, "inventory/labels/print.html", ctx, status=400)
    label_services.labels_check_permission(user=request.user, plan=plan, selection=selection)
    if plan.count <= app_settings.labels_inline_max or not request.user.has_perm("inventory.print_labels"):
        out = label_services.labels_render(plan=plan, now=timezone.now())
        response = HttpResponse(out.content, content_type=out.content_type)
        response["Content-Disposition"] = f'attachment; filename="{out.filename}"'
        response["X-Label-Count"] = str(out.count)
        return response
    batch = label_services.label_batch_create(plan=plan, user=request.user)
    return redirect(batch)


@require_GET
def label_batch(request, uid):
    batch = get_object_or_404(LabelBatch, uid=uid)
    return render(request, "inventory/labels/batch.html", {"batch": batch})


@require_GET
def label_batch_status(request, uid):
    batch = get_object_or_404(LabelBatch, uid=uid)
    return JsonResponse(
        {
            "status": batch.status,
            "status_display": batch.get_status_display(),
            "done": batch.done,
            "total": batch.total,
            "percent": batch.percent,
            "error": batch.error,
            "download": reverse("label-batch-download", kwargs={"uid": batch.uid})
            if batch.status == LabelBatchStatus.DONE
            else None,
        }
    )


@require_GET
def label_batch_download(request, uid):
    """The finished file, as an attachment, to logged-in users only (the login middleware)."""
    batch = get_object_or_404(LabelBatch, uid=uid)
    if batch.status != LabelBatchStatus.DONE or not batch.file:
        raise Http404("This batch has no file yet.")
    try:
        handle = batch.file.open("rb")
    except FileNotFoundError:
        raise Http404("The file of this batch is gone.") from None
    return FileResponse(
        handle,
        as_attachment=True,
        filename=batch.filename,
        content_type=label_services.CONTENT_TYPES.get(batch.fmt, "application/octet-stream"),
    )
