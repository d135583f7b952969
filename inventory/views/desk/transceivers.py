"""Desk module pages: the list (the API's FilterSet) and its CSV, create and edit."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods

from inventory.access import authz
from inventory.core.choices import TransceiverStatus
from inventory.forms.plant import TransceiverCreateForm, TransceiverEditForm, apply_errors
from inventory.models import Site, Transceiver, Vendor
from inventory.selectors import pages as page_selectors
from inventory.selectors.filters import TransceiverFilter
from inventory.services.plant import transceivers as xcvr_services
from inventory.views.desk.lists import _columns, _csv_response, _filtered, _page, _query_without

TRANSCEIVER_COLUMNS = [
    ("Serial", "serial"),
    ("Status", "status"),
    ("Vendor", None),  # filters, not sorts: see TRANSCEIVER_SORTS
    ("Part", None),
    ("Where", None),
]


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


@authz.requires_action("add_module")
@require_http_methods(["GET", "POST"])
def transceiver_create(request):
    form = TransceiverCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            with transaction.atomic():  # recorded only where the user may record it (else 403)
                xcvr = xcvr_services.transceiver_create(actor=request.user, **form.cleaned_data)
                authz.check(request.user, "add_module", xcvr)
        except ValidationError as exc:
            apply_errors(form, exc)
        else:
            messages.success(request, f"Module {xcvr.serial} recorded as a spare.")
            return redirect("transceiver-detail", pk=xcvr.pk)
    return render(request, "inventory/transceiver_form.html", {"form": form, "creating": True})


def _transceiver_of(request, pk: int) -> Transceiver:
    return get_object_or_404(Transceiver, pk=pk)


@authz.requires_action("edit_module", obj=_transceiver_of)
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
