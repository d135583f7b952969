"""Desk cable pages: the list (the API's FilterSet) and its CSV, bulk status, create and edit."""

from __future__ import annotations

from itertools import islice

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from inventory.access import authz
from inventory.core.choices import CableKind, CableStatus
from inventory.forms.plant import BulkStatusForm, CableCreateForm, CableEditForm, apply_errors
from inventory.models import Cable, Site, Vendor
from inventory.selectors import pages as page_selectors
from inventory.selectors.decision import alerted_cable_ids
from inventory.selectors.filters import CableFilter
from inventory.services.plant import cables as cable_services
from inventory.views.desk.lists import _columns, _csv_response, _filtered, _page, _query_without, _safe_next

CABLE_COLUMNS = [
    ("Label", "label"),
    ("Status", "status"),
    ("Kind", "kind"),
    ("Length", "length"),
    ("A end", None),
    ("B end", None),
    ("Vendor", None),  # filter, not sort: see CABLE_SORTS
    ("Installed", "installed"),
    ("Retest due", "retest"),
    ("Next step", None),
]


def cable_list(request):
    filterset = CableFilter(request.GET or None, queryset=Cable.objects.all())
    csv = request.GET.get("format") == "csv"
    sort, qs = page_selectors.cable_list_queryset(
        _filtered(filterset),
        sort=request.GET.get("sort", "label"),
        prefetch_ends=csv,
        within_site=filterset.within_site,
    )
    if csv:
        return _cable_csv(qs)
    page = _page(request, qs)
    page.object_list = list(page.object_list)
    page_selectors.attach_end_cells(page.object_list)
    page_selectors.attach_decisions(page.object_list)
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
            # The ticked rows' actions, offered only to whom they would not refuse (a viewer
            # gets the list without the checkboxes): the bulk view's and the print view's rules.
            "may_set_status": authz.can(request.user, "edit_cable"),
            "may_print_labels": authz.may_print_labels(request.user),
            "labels_print_url": reverse("labels-print"),
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
        # The alert flag is the decision's (its open alerts), read for each chunk in one query.
        cables = qs.iterator(chunk_size=2000)
        while chunk := list(islice(cables, 2000)):
            alerted = alerted_cable_ids(chunk)
            for c in chunk:
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
                    "yes" if c.pk in alerted else "",
                ]

    return _csv_response(f"cables-{timezone.localdate()}.csv", header, rows())


@authz.requires_action("edit_cable")
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
    authz.check_each(request.user, "edit_cable", data["cable"])  # all or nothing: 403
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


@authz.requires_action("install_cable")
@require_http_methods(["GET", "POST"])
def cable_create(request):
    # ``?label=C000123``: the friendly 404 of an unknown label offers to record it.
    form = CableCreateForm(request.POST or None, initial={"label": request.GET.get("label", "")[:40]})
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


def _cable_of(request, label: str) -> Cable:
    """The cable a ``/c/<label>/edit`` is about, for ``requires_action``."""
    return get_object_or_404(Cable, label=label)


@authz.requires_action("edit_cable", obj=_cable_of)
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
