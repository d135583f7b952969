"""Technician pages (the phone at the rack): thin, they call selectors and services and render."""

from urllib.parse import quote

from django.contrib import messages
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import ValidationError
from django.db import connection
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.templatetags.static import static
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods

from inventory.access import authz
from inventory.core.choices import CableStatus, FieldNoteKind, PlacementEnd
from inventory.core.words import alerts_named, and_list, human_date, word
from inventory.forms.plant import (
    FaultForm,
    InstalledForm,
    JournalForm,
    ReplaceForm,
    ServicedForm,
    SwapForm,
    apply_errors,
)
from inventory.models import Cable, Cage, Device, FieldNote, Port, Rack, Transceiver
from inventory.selectors import pages as page_selectors
from inventory.selectors.alerts.repairs import cable_service_alerts
from inventory.services import journal
from inventory.services.plant import cables as cable_services
from inventory.services.plant import fieldwork
from inventory.services.plant import transceivers as xcvr_services
from inventory.views.retests import NEAR_RACK, near_rack


@login_not_required
@require_GET
def healthz(request):
    """Liveness and database reachability, for load balancers. No login."""
    with connection.cursor() as cur:
        cur.execute("SELECT 1")
    return JsonResponse({"status": "ok"})


@login_not_required
@require_GET
def favicon(request):
    """``/favicon.ico``: browsers ask for it on every site; the icon, never a 404 page."""
    response = redirect(static("cabletrack/favicon.ico"), permanent=True)
    response["Cache-Control"] = "public, max-age=86400"
    return response


def home(request):
    return render(request, "inventory/home.html", page_selectors.dashboard())


def search(request):
    q = request.GET.get("q", "").strip()[:100]
    results = page_selectors.search(q) if q else None
    if results:
        target = page_selectors.search_single_target(results)
        if target:
            return redirect(target)
    total = sum(len(v) for v in results.values()) if results else 0
    return render(request, "inventory/search.html", {"q": q, "results": results, "total": total})


def _cable(label: str) -> Cable:
    return _found(
        Cable.objects.select_related("vendor", "replaced_by"), f"No cable {label[:80]}", label=label
    )


def _cable_of(request, label: str) -> Cable:
    """The cable a ``/c/<label>/...`` action is about, for ``requires_action``."""
    return _cable(label)


# Which permission each of the cable page's actions needs (``authz.ACTIONS``).
PAGE_ACTION_RULES = page_selectors.ACTION_RULES


def _may_print(user, cable) -> bool:
    """The print view's own decision (``labels_check_permission``): any selection, or this one
    cable's labels in the user's sites, so the page never offers a print the view refuses."""
    return authz.can(user, "print_labels") or authz.can(user, "print_cable_label", cable)


def cable_page(request, label: str):
    """The page a cable's QR label opens. An unknown label gets a friendly page (a handled 404,
    so not Django's technical page even with DEBUG on) offering search and, for roles that may,
    recording the label."""
    cable = page_selectors.cable_by_label(label)
    if cable is None:
        return render(
            request,
            "inventory/cable_missing.html",
            {"label": label[:80], "may_record": authz.can(request.user, "install_cable")},
            status=404,
        )
    may = {key: authz.can(request.user, rule, cable) for key, rule in PAGE_ACTION_RULES.items()}
    may["print"] = _may_print(request.user, cable)
    may["override"] = authz.can(request.user, "override_alert", cable)
    ctx = page_selectors.cable_page(cable, may=may)
    # A role that may report faults, refused here by the site scope, is told why in one sentence
    # (not on a retired cable: no one reports a fault there, so there is nothing to refuse).
    if (
        not may["fault"]
        and page_selectors.cable_actions(cable)["fault"]
        and authz.can(request.user, "report_fault")
    ):
        ctx["refused"] = authz.refusal(request.user, "report_fault", cable)
    return render(request, "inventory/cable.html", ctx)


@authz.requires_action("edit_cable", obj=_cable_of)
@require_http_methods(["POST"])
def cable_set_status(request, label: str):
    """The cable page's status button: "Mark installed" (a planned cable, with the day it went
    in), "Mark in production" (the test gate decides) or "Mark degraded" (when a link fails while
    the record says in production)."""
    cable = _cable(label)
    status = request.POST.get("status", "")
    override = request.POST.get("override_reason", "").strip()[:500]
    if override and not authz.can(request.user, "override_alert", cable):
        messages.error(
            request, "Your role does not allow you to put a cable in production over an open alert."
        )
        return redirect(cable)
    try:
        if status == CableStatus.INSTALLED:
            form = InstalledForm(request.POST)
            if not form.is_valid():
                raise ValidationError(list(form.errors["install_date"]))
            cable = fieldwork.cable_mark_installed(
                cable=cable, actor=request.user, install_date=form.cleaned_data["install_date"]
            )
            day = human_date(cable.install_date, today=timezone.localdate())
            messages.success(request, f"{cable.label} is now installed ({day}).")
            return redirect(cable)
        elif status == CableStatus.IN_PRODUCTION:
            planned = cable.status == CableStatus.PLANNED
            cable = fieldwork.cable_mark_in_production(
                cable=cable, actor=request.user, override_reason=override
            )
            if planned:  # it went in too: say the day it took (``install_date_for``)
                day = human_date(cable.install_date, today=timezone.localdate())
                messages.success(request, f"{cable.label} is now in production, installed {day}.")
                return redirect(cable)
        elif status == CableStatus.DEGRADED:
            cable_services.cable_set_status(
                cable=cable, status=status, reason=f"marked degraded by {request.user.get_username()}"
            )
        else:
            messages.error(request, "Choose installed, in production or degraded.")
            return redirect(cable)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, f"{cable.label} is now {CableStatus(status).label.lower()}.")
    return redirect(cable)


def _journal_target(request, kind: str, key: str):
    target = page_selectors.journal_target(kind=kind, key=key)
    if target is None:
        raise Http404("No such cable, module, device or rack.")
    return target


def _back(request, target) -> str:
    nxt = request.POST.get("next") or request.GET.get("next") or ""
    if nxt and url_has_allowed_host_and_scheme(nxt, allowed_hosts={request.get_host()}):
        return nxt
    if hasattr(target, "get_absolute_url"):
        return target.get_absolute_url()
    rack = getattr(target, "rack", None)
    return rack.get_absolute_url() if rack is not None else "/"


@authz.requires_action("journal", obj=_journal_target)
@require_http_methods(["GET", "POST"])
def journal_add(request, kind: str, key: str):
    """Add a note (or a fault seen, or a service action) to a cable, module, device or rack."""
    target = _journal_target(request, kind, key)
    form = JournalForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            journal.journal_add(target=target, actor=request.user, **form.cleaned_data)
        except ValidationError as exc:
            apply_errors(form, exc)
        else:
            messages.success(request, "Added to the journal.")
            return redirect(_back(request, target))
    ctx = {"form": form, "target": target, "kind": kind, "next": _back(request, target)}
    return render(request, "inventory/journal_add.html", ctx, status=400 if form.errors else 200)


def _entry_target(request, pk: int):
    entry = get_object_or_404(
        FieldNote.objects.select_related("cable", "transceiver", "device", "rack"), pk=pk
    )
    return entry.cable or entry.transceiver or entry.device or entry.rack


@authz.requires_action("journal", obj=_entry_target)
@require_http_methods(["POST"])
def journal_close(request, pk: int):
    """Settle an open fault or note: it leaves the top of its page and stays in the history."""
    entry = get_object_or_404(FieldNote, pk=pk)
    target = _entry_target(request, pk)
    try:
        journal.journal_close(entry=entry, actor=request.user, reason=request.POST.get("reason", ""))
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, "Closed.")
    return redirect(_back(request, target))


def _found(qs, what: str, **lookup):
    """The object, or a 404 that says what was not found ("No rack R-99"): the friendly page
    (``middleware/notfound.py``) shows the sentence and fills its search box."""
    obj = qs.filter(**lookup).first()
    if obj is None:
        raise Http404(what)
    return obj


def rack_page(request, name: str):
    rack = _found(Rack.objects.select_related("row__room__site"), f"No rack {name[:80]}", name=name)
    response = render(request, "inventory/rack.html", page_selectors.rack_page(rack))
    # The retest worklist's "This rack" shortcut: a cookie, not the session (no write per page).
    if near_rack(request) != rack.name:
        response.set_cookie(
            NEAR_RACK,
            quote(rack.name),
            max_age=12 * 3600,
            samesite="Lax",
            httponly=True,
            secure=request.is_secure(),
        )
    return response


def rack_list(request):
    """Every rack, by site, hall and row, in walking order: one tap to a rack's page."""
    return render(request, "inventory/racks.html", page_selectors.rack_list(request.GET.get("site", "")))


def device_page(request, name: str):
    device = _found(
        Device.objects.select_related("rack__row__room__site"), f"No device {name[:80]}", name=name
    )
    ctx = page_selectors.device_page(device)
    # A row's next step is a link only for whom may take it (as on the cable page and the worklist).
    cables = ctx["row"].cables
    linked = page_selectors.step_links(
        request.user, {c["cable"]["pk"]: c["decision"] for c in cables if c["decision"]}
    )
    for c in cables:
        c["link_step"] = c["cable"]["pk"] in linked
    return render(request, "inventory/device.html", ctx)


def port_page(request, name: str, port: str):
    port_obj = _found(
        Port.objects.select_related("device__rack", "cage__transceiver__model"),
        f"No port {port[:60]} on {name[:80]}",
        device__name=name,
        name=port,
        retired_at__isnull=True,
    )
    return render(request, "inventory/port.html", page_selectors.port_page(port_obj))


def transceiver_detail(request, pk: int):
    xcvr = _found(
        Transceiver.objects.select_related("model__vendor", "cage__device__rack", "stock_site"),
        f"No module #{pk}",
        pk=pk,
    )
    return render(request, "inventory/transceiver.html", page_selectors.transceiver_page(xcvr))


def _action(request, cable: Cable, form, template: str, extra: dict | None = None):
    return render(request, template, {"cable": cable, "form": form, **(extra or {})})


@authz.requires_action("report_fault", obj=_cable_of)
@require_http_methods(["GET", "POST"])
def cable_fault(request, label: str):
    cable = _cable(label)
    form = FaultForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            note = fieldwork.cable_fault_report(cable=cable, actor=request.user, **form.cleaned_data)
        except ValidationError as exc:
            apply_errors(form, exc)
        else:
            delivered, told = fieldwork.fault_notice_told(note)
            (messages.success if delivered else messages.warning)(
                request,
                f"Fault recorded; {cable.label} is now {note.get_status_after_display().lower()}. {told}",
            )
            return redirect(cable)
    return _action(request, cable, form, "inventory/cable_fault.html")


@authz.requires_action("service_cable", obj=_cable_of)
@require_http_methods(["GET", "POST"])
def cable_serviced(request, label: str):
    """Re-seated / cleaned. With open alerts on the cable's links the page names each and offers
    the most severe one's repair form; recorded here, it is the repair of every one of them
    (``fieldwork.cable_serviced``), and the banner names the alerts it was recorded on."""
    cable = _cable(label)
    alerts = cable_service_alerts(cable)
    form = ServicedForm(request.POST or None, alerts=alerts)
    if request.method == "POST" and form.is_valid():
        try:
            done = fieldwork.cable_serviced(cable=cable, actor=request.user, **form.cleaned_data)
        except ValidationError as exc:
            apply_errors(form, exc)
        else:
            messages.success(request, _serviced_words(done))
            return redirect(cable)
    named = alerts_named(a.pk for a in alerts) if alerts else ""
    return _action(
        request,
        cable,
        form,
        "inventory/cable_serviced.html",
        {"service_alerts": alerts, "alerts_named": named},
    )


def _serviced_words(done: fieldwork.Serviced) -> str:
    """The banner after "Re-seated / cleaned": what was recorded, and on which alerts, each by
    its number and rule ("as the repair of alerts #4 (Link flap) and #7 (FEC tail): Clean, End B
    of J-102"); a double tap says where it was recorded already."""
    what = FieldNoteKind(done.kind).label.lower()
    if not done.repairs:
        return f"Recorded: {what}."
    first = done.repairs[0].repair
    how = f"{first.get_action_display()}, {first.where}"
    new = [d.alert for d in done.repairs if d.created]
    again = [d.alert for d in done.repairs if not d.created]
    out = []
    if new:
        named = and_list(f"#{a.pk} ({word(a.rule, 'rule')})" for a in new)
        watches = "The alert watches" if len(new) == 1 else "Each alert watches"
        out.append(
            f"Recorded: {what}, as the repair of alert{'s' if len(new) > 1 else ''} {named}: {how}. "
            f"{watches} the telemetry: the outcome shows on its page."
        )
    if again:
        out.append(f"Already recorded on {alerts_named(a.pk for a in again)}: {how}.")
    return " ".join(out)


@authz.requires_action("swap_module", obj=_cable_of)
@require_http_methods(["GET", "POST"])
def cable_swap(request, label: str):
    cable = _cable(label)
    ends = page_selectors.cable_page_ends(cable)
    form = SwapForm(request.POST or None, ends=ends)
    if not form.fields["cage"].choices:
        messages.error(request, f"{cable.label} does not end in a module cage; there is no module to swap.")
        return redirect(cable)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        cage = get_object_or_404(Cage.objects.select_related("device"), pk=data["cage"])
        authz.check(request.user, "swap_module", cage)  # a trunk's far end may be another site's
        try:
            old, new = xcvr_services.transceiver_swap(
                cage=cage,
                new=data["new_serial"],
                old_failed=data["old_to"] == PlacementEnd.FAILED,
                actor=request.user,
                notes=data["notes"],
            )
        except ValidationError as exc:
            apply_errors(form, exc, {"transceiver": "new_serial", "cage": "new_serial"})
        else:
            went = f"; {old.serial} is now {old.get_status_display().lower()}" if old else ""
            messages.success(request, f"Module {new.serial} installed in {cage}{went}.")
            return redirect(cable)
    return _action(request, cable, form, "inventory/cable_swap.html", {"ends": ends})


@authz.requires_action("replace_cable", obj=_cable_of)
@require_http_methods(["GET", "POST"])
def cable_replace(request, label: str):
    cable = _cable(label)
    form = ReplaceForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            new = cable_services.cable_replace(
                old=cable, new_label=data["new_label"], reason=data["reason"], actor=request.user
            )
        except ValidationError as exc:
            apply_errors(
                form, exc, {"label": "new_label", "a": "new_label", "b": "new_label", "status": None}
            )
        else:
            messages.success(request, f"{new.label} replaces {cable.label}, which is retired.")
            return redirect(new)
    return _action(request, cable, form, "inventory/cable_replace.html")
