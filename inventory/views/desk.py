"""Desk pages: cable and module lists (the API's FilterSets), forms, bulk actions, plan import."""

from __future__ import annotations

import csv
import hashlib
import uuid
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import permission_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.db import transaction
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods, require_POST

from inventory.core.choices import CableKind, CableStatus, TransceiverStatus
from inventory.forms.plant import (
    BulkStatusForm,
    CableCreateForm,
    CableEditForm,
    CablePlanForm,
    TransceiverCreateForm,
    TransceiverEditForm,
    apply_errors,
)
from inventory.models import Cable, Site, Transceiver, Vendor
from inventory.selectors.filters import CableFilter, TransceiverFilter
from inventory.selectors.plant import pages as page_selectors
from inventory.services.plans import files as plan_files
from inventory.services.plant import cables as cable_services
from inventory.services.plant import transceivers as xcvr_services

MAX_PAGE_SIZE = 500


def _page(request, qs):
    try:
        size = int(request.GET.get("per_page", 50))
    except ValueError:
        size = 50
    size = min(max(size, 1), MAX_PAGE_SIZE)
    return Paginator(qs, size).get_page(request.GET.get("page"))


def _query_without(request, *keys) -> str:
    q = request.GET.copy()
    for k in keys:
        q.pop(k, None)
    return q.urlencode()


def _columns(request, sort: str, columns: list[tuple[str, str | None]]) -> list[dict]:
    """Table headers: a sort link per sortable column, flipping direction on the active one."""
    base = _query_without(request, "page", "sort")
    out = []
    for title, key in columns:
        col = {"title": title, "url": None, "dir": ""}
        if key:
            active = sort.lstrip("-") == key
            desc = sort.startswith("-")
            target = f"-{key}" if active and not desc else key
            col["url"] = f"?{base}&sort={target}" if base else f"?sort={target}"
            col["dir"] = ("desc" if desc else "asc") if active else ""
        out.append(col)
    return out


CABLE_COLUMNS = [
    ("Label", "label"),
    ("Status", "status"),
    ("Kind", "kind"),
    ("Length", "length"),
    ("A end", None),
    ("B end", None),
    ("Vendor", "vendor"),
    ("Installed", "installed"),
    ("Retest due", "retest"),
]
TRANSCEIVER_COLUMNS = [
    ("Serial", "serial"),
    ("Status", "status"),
    ("Vendor", "vendor"),
    ("Part", "part"),
    ("Where", "device"),
]


class _Echo:
    def write(self, value):
        return value


def _csv_response(filename: str, header: list[str], rows) -> StreamingHttpResponse:
    writer = csv.writer(_Echo())

    def stream():
        yield writer.writerow(header)
        for row in rows:
            yield writer.writerow(row)

    resp = StreamingHttpResponse(stream(), content_type="text/csv; charset=utf-8")
    resp["Content-Disposition"] = f'attachment; filename="{filename}"'
    return resp


def _safe_next(request, default: str) -> str:
    nxt = request.POST.get("next") or request.GET.get("next") or ""
    ok = url_has_allowed_host_and_scheme(
        nxt, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return nxt if nxt and ok else default


# --- cables -------------------------------------------------------------------------------


def _filtered(filterset):
    """The FilterSet's rows; none at all when its input is bad (the errors are shown instead)."""
    if filterset.is_bound and not filterset.is_valid():
        return filterset.queryset.none()
    return filterset.qs


def cable_list(request):
    filterset = CableFilter(request.GET or None, queryset=Cable.objects.all())
    csv = request.GET.get("format") == "csv"
    sort, qs = page_selectors.cable_list_queryset(
        _filtered(filterset), sort=request.GET.get("sort", "label"), prefetch_ends=csv
    )
    if csv:
        return _cable_csv(qs)
    page = _page(request, qs)
    page.object_list = list(page.object_list)
    page_selectors.attach_end_cells(page.object_list)
    return render(
        request,
        "inventory/cable_list.html",
        {
            "filterset": filterset,
            "page": page,
            "sort": sort,
            "today": timezone.localdate(),
            "query": _query_without(request, "page"),
            "columns": _columns(request, sort, CABLE_COLUMNS),
            "sites": Site.objects.order_by("name").values_list("slug", "name"),
            "vendors": Vendor.objects.order_by("name").values_list("name", flat=True),
            "statuses": CableStatus.choices,
            "kinds": CableKind.choices,
            "selected_status": request.GET.getlist("status"),
            "selected_kind": request.GET.getlist("kind"),
            "bulk_form": BulkStatusForm(),
            "labels_print_url": page_selectors.optional_url("labels-print"),
            "next": request.get_full_path(),
        },
    )


def _cable_csv(qs):
    header = [
        "label",
        "status",
        "kind",
        "role",
        "length_m",
        "vendor",
        "part_number",
        "a_end",
        "b_end",
        "install_date",
        "retest_due",
        "open_alert",
    ]

    def rows():
        for c in qs.iterator(chunk_size=2000):
            ends = list(c.ends.all())
            a = [page_selectors.end_text(e) for e in ends if e.side == "A"]
            b = [page_selectors.end_text(e) for e in ends if e.side == "B"]
            yield [
                c.label,
                c.status,
                c.kind,
                c.role,
                c.length_m or "",
                c.vendor.name if c.vendor else "",
                c.part_number,
                " | ".join(a),
                " | ".join(b),
                c.install_date or "",
                c.retest_due or "",
                "yes" if c.has_alert else "",
            ]

    return _csv_response(f"cables-{timezone.localdate()}.csv", header, rows())


@permission_required("inventory.change_cable", raise_exception=True)
@require_POST
def cable_bulk_status(request):
    back = _safe_next(request, reverse("cable-list"))
    form = BulkStatusForm(request.POST)
    if not form.is_valid():
        for field, errs in form.errors.items():
            for e in errs:
                messages.error(
                    request, f"{form.fields[field].label or field}: {e}" if field != "__all__" else e
                )
        return redirect(back)
    data = form.cleaned_data
    try:
        changed = cable_services.cables_set_status(
            cables=list(data["cable"]), status=data["status"], reason=data["reason"] or "bulk status change"
        )
    except ValidationError as exc:
        for m in exc.messages:
            messages.error(request, m)
    else:
        label = CableStatus(data["status"]).label.lower()
        messages.success(request, f"{len(changed)} cable(s) set to {label}.")
    return redirect(back)


@permission_required("inventory.add_cable", raise_exception=True)
@require_http_methods(["GET", "POST"])
def cable_create(request):
    form = CableCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data

        def spec(side):
            return cable_services.EndSpec(
                port=d[f"{side}_port_obj"],
                connector_type=d[f"{side}_connector_type"],
                fibre_count=d[f"{side}_fibre_count"],
                pinned=d[f"{side}_pinned"],
                polish=d[f"{side}_polish"],
            )

        try:
            cable, warnings = cable_services.cable_install(
                label=d["label"],
                kind=d["kind"],
                a=spec("a"),
                b=[spec("b")],
                polarity=d["polarity"],
                length_m=d["length_m"],
                vendor=d["vendor"],
                part_number=d["part_number"],
                serial_a=d["serial_a"],
                serial_b=d["serial_b"],
                lot=d["lot"],
                install_date=d["install_date"],
                notes=d["notes"],
            )
        except ValidationError as exc:
            apply_errors(form, exc, {"a": "a_port", "b": "b_port", "b0": "b_port"})
        else:
            for w in warnings:
                messages.warning(request, w)
            messages.success(request, f"Cable {cable.label} recorded.")
            return redirect(cable)
    return render(request, "inventory/cable_form.html", {"form": form, "creating": True})


@permission_required("inventory.change_cable", raise_exception=True)
@require_http_methods(["GET", "POST"])
def cable_edit(request, label: str):
    cable = get_object_or_404(Cable.objects.select_related("vendor"), label=label)
    if request.method == "POST":
        form = CableEditForm(request.POST)
        if form.is_valid():
            data = dict(form.cleaned_data)
            version = data.pop("version")
            try:
                cable, warnings = cable_services.cable_update(
                    cable=cable,
                    expected_updated_at=version,
                    reason=f"edited by {request.user.get_username()}",
                    **data,
                )
            except ValidationError as exc:
                apply_errors(form, exc)
            else:
                for w in warnings:
                    messages.warning(request, w)
                messages.success(request, f"Cable {cable.label} saved.")
                return redirect(cable)
    else:
        initial = {k: getattr(cable, k) for k in cable_services.CABLE_EDITABLE}
        form = CableEditForm(initial={**initial, "version": cable.updated_at})
    return render(request, "inventory/cable_form.html", {"form": form, "cable": cable, "creating": False})


# --- transceivers -------------------------------------------------------------------------


def transceiver_list(request):
    filterset = TransceiverFilter(request.GET or None, queryset=Transceiver.objects.all())
    sort, qs = page_selectors.transceiver_list_queryset(
        _filtered(filterset), sort=request.GET.get("sort", "serial")
    )
    if request.GET.get("format") == "csv":
        return _transceiver_csv(qs)
    return render(
        request,
        "inventory/transceiver_list.html",
        {
            "filterset": filterset,
            "page": _page(request, qs),
            "sort": sort,
            "query": _query_without(request, "page"),
            "columns": _columns(request, sort, TRANSCEIVER_COLUMNS),
            "sites": Site.objects.order_by("name").values_list("slug", "name"),
            "vendors": Vendor.objects.order_by("name").values_list("name", flat=True),
            "statuses": TransceiverStatus.choices,
            "selected_status": request.GET.getlist("status"),
        },
    )


def _transceiver_csv(qs):
    header = [
        "serial",
        "vendor",
        "part_number",
        "pmd",
        "status",
        "rack",
        "device",
        "cage",
        "stock_site",
        "firmware",
    ]

    def rows():
        for t in qs.iterator(chunk_size=2000):
            dev = t.cage.device if t.cage_id else None
            yield [
                t.serial,
                t.model.vendor.name,
                t.model.part_number,
                t.model.pmd,
                t.status,
                dev.rack.name if dev and dev.rack_id else "",
                dev.name if dev else "",
                t.cage.name if t.cage_id else "",
                t.stock_site.name if t.stock_site_id else "",
                t.firmware,
            ]

    return _csv_response(f"transceivers-{timezone.localdate()}.csv", header, rows())


@permission_required("inventory.add_transceiver", raise_exception=True)
@require_http_methods(["GET", "POST"])
def transceiver_create(request):
    form = TransceiverCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            xcvr = xcvr_services.transceiver_create(actor=request.user, **form.cleaned_data)
        except ValidationError as exc:
            apply_errors(form, exc)
        else:
            messages.success(request, f"Module {xcvr.serial} recorded as a spare.")
            return redirect("transceiver-detail", pk=xcvr.pk)
    return render(request, "inventory/transceiver_form.html", {"form": form, "creating": True})


@permission_required("inventory.change_transceiver", raise_exception=True)
@require_http_methods(["GET", "POST"])
def transceiver_edit(request, pk: int):
    xcvr = get_object_or_404(Transceiver.objects.select_related("model__vendor"), pk=pk)
    if request.method == "POST":
        form = TransceiverEditForm(request.POST)
        if form.is_valid():
            data = dict(form.cleaned_data)
            version = data.pop("version")
            try:
                xcvr = xcvr_services.transceiver_update(transceiver=xcvr, expected_updated_at=version, **data)
            except ValidationError as exc:
                apply_errors(form, exc)
            else:
                messages.success(request, f"Module {xcvr.serial} saved.")
                return redirect("transceiver-detail", pk=xcvr.pk)
    else:
        initial = {k: getattr(xcvr, k) for k in xcvr_services.TRANSCEIVER_EDITABLE}
        form = TransceiverEditForm(initial={**initial, "version": xcvr.updated_at})
    return render(request, "inventory/transceiver_form.html", {"form": form, "xcvr": xcvr, "creating": False})


# --- cable plan import ----------------------------------------------------------------------

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


def plan_outcome(result) -> dict:
    """What the page shows of a ``PlanResult``: rows to create, rows that change, errors by row."""
    rows = result.rows
    return {
        "created": [r for r in rows if r.action == "create"],
        "changed": [r for r in rows if r.action == "change"],
        "unchanged": sum(1 for r in rows if r.action == "unchanged"),
        "errors": [
            {
                "row": r.row or None,
                "label": r.label,
                "messages": [
                    f"{k}: {v}" if k not in ("rows", "__all__") else str(v) for k, v in r.errors.items()
                ],
            }
            for r in rows
            if r.errors
        ],
    }


def _import_service():
    return page_selectors.optional("inventory.services.plans.cable_plan", "cable_plan_import")


@permission_required("inventory.add_cable", raise_exception=True)
@require_http_methods(["GET", "POST"])
def cable_plan_import(request):
    service = _import_service()
    ctx: dict = {"service_ready": service is not None}
    if request.method == "POST" and request.POST.get("apply") and service is not None:
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
            outcome = plan_outcome(service(rows=parse_plan(text), dry_run=False, actor=request.user))
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
        return redirect("cable-list")
    form = CablePlanForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        text = form.cleaned_data["file"]
        try:
            rows = parse_plan(text)
        except ValidationError as exc:
            apply_errors(form, exc)
        else:
            if service is None:
                form.add_error("file", "The import service is not installed yet; try again later.")
            else:
                with transaction.atomic():
                    outcome = plan_outcome(service(rows=rows, dry_run=True, actor=request.user))
                    transaction.set_rollback(True)  # a dry run writes nothing, whatever the service does
                ctx["outcome"] = outcome
                ctx["row_count"] = len(rows)
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
