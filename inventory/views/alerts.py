"""Alert pages (list, detail with acknowledge/silence), maintenance form, vendor comparison,
bring-up report, topology exports and ``/metrics``. Thin: forms validate, services write."""

from __future__ import annotations

import ipaddress
import secrets
from datetime import timedelta

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db.models import Q
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from inventory.access import authz
from inventory.conf import app_settings
from inventory.core.choices import AlertRule, AlertState, RepairAction, RepairEnd, Severity
from inventory.core.decision import until_words
from inventory.core.repairs import end_words, symptom_words
from inventory.core.validators import is_whole_number
from inventory.forms.plant import apply_errors
from inventory.models import Alert, Device, Link, Rack, Site
from inventory.selectors.alerts import queries as alert_selectors
from inventory.selectors.alerts import repairs as repair_selectors
from inventory.selectors.alerts.page import alert_page
from inventory.selectors.collectives import impact as impact_selectors
from inventory.selectors.filters import AlertFilter
from inventory.selectors.plant import wiring as wiring_selectors
from inventory.selectors.telemetry.metrics import metrics_exposition
from inventory.services import alerts as alert_services
from inventory.services.collectives import (
    DrainConflict,
    drain_panel,
    link_drain,
    link_drain_extend,
    link_restore,
)

ALERTS_PER_PAGE = 50


def alert_list(request):
    """The alert list: the API's FilterSet; no rows when its input is bad (the errors are shown)."""
    filterset = AlertFilter(request.GET, queryset=alert_selectors.alerts_for_list())
    page = Paginator(
        filterset.qs if filterset.is_valid() else Alert.objects.none(), ALERTS_PER_PAGE
    ).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "inventory/alerts.html",
        {
            "form": filterset.form,
            "alerts": page.object_list,
            "page": page,
            "query": query.urlencode(),
            # The filters as the form shows them: open alerts unless the query names a state.
            "state": request.GET.get("state", AlertState.OPEN),
            "states": AlertState.choices,
            "rules": AlertRule.choices,
            "severities": Severity.choices,
            "selected_rules": request.GET.getlist("rule"),
            "selected_severities": request.GET.getlist("severity"),
        },
    )


def _alert_of(request, pk: int) -> Alert:
    """The alert an acknowledge, silence or repair is about, for ``requires_action`` (its site)."""
    return get_object_or_404(Alert, pk=pk)


class HoursField(forms.FloatField):
    """A number of hours, 15 minutes to two weeks, written one way in every form: "4", "0.25",
    "1.5" (never "4.0", whether the default is a whole number or a float setting)."""

    def __init__(self, **kwargs):
        super().__init__(min_value=0.25, max_value=336, **kwargs)

    def prepare_value(self, value):
        if isinstance(value, int | float) and not isinstance(value, bool):
            return f"{value:g}"
        return super().prepare_value(value)


class SilenceForm(forms.Form):
    hours = HoursField(initial=4, label="Silence for (hours)")
    reason = forms.CharField(max_length=200, required=False)


class _WhereField(forms.ChoiceField):
    """The ends the page shows; a bare end (``A``, as the API takes it) is valid too: it means the
    end the alert page calls so (``core.alert_ends.repair_target``)."""

    def valid_value(self, value):
        return value in RepairEnd.values or super().valid_value(value)


class RepairForm(forms.Form):
    """Two taps: where (preset to the end to look at first), an optional note, then the action
    button.

    Each end the alert page shows is a choice of its own, named as its card names it, with the
    cable plugged there ("End A of J-100 · gpu-0001 OSFP1"): on a link through a panel the two
    ends are two cables' ends, so the choice carries the cable (``A:J-100``), and the repair lands
    on that cable end. Both ends and "No particular end" name no end."""

    end = _WhereField(widget=forms.RadioSelect)
    action = forms.ChoiceField(choices=RepairAction.choices)
    # Before the action buttons, and a text area: Enter starts a new line, it never submits the
    # form with whichever button comes first.
    note = forms.CharField(
        max_length=300, required=False, label="Note (optional)", widget=forms.Textarea(attrs={"rows": 2})
    )

    def __init__(self, *args, ends=(), **kwargs):
        super().__init__(*args, **kwargs)
        named = [
            (f"{e.name[:1]}:{e.cable}", f"{end_words(e.name[:1], e.cable)} · {e.device} {e.cage or e.port}")
            for e in ends
            if e.cable and e.name[:1] in (RepairEnd.A, RepairEnd.B)
        ]
        plain = [(RepairEnd.A, RepairEnd.A.label), (RepairEnd.B, RepairEnd.B.label)] if not named else []
        self.fields["end"].choices = [
            *named,
            *plain,
            (RepairEnd.BOTH, RepairEnd.BOTH.label),
            (RepairEnd.NA, RepairEnd.NA.label),
        ]

    def where(self) -> tuple[str, str]:
        """(end, cable label) of the choice made."""
        end, _, cable = self.cleaned_data["end"].partition(":")
        return end, cable


class ExtendForm(forms.Form):
    hours = HoursField(label="Keep it out for (hours from now)")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["hours"].initial = app_settings.drain_hours


class DrainForm(forms.Form):
    hours = HoursField(label="Out of service for (hours)", required=False)
    override_reason = forms.CharField(
        max_length=200, required=False, label="Drain anyway, because (engineers; written in the journal)"
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["hours"].initial = app_settings.drain_hours


def _detail(request, alert: Alert, *, status: int = 200, **bound_forms):
    """The alert page: the alert, its ends and path, safe to drain with the drains recorded, the
    ranked repairs and the repairs recorded (each with its verdict), and the forms (a form that
    failed validation is passed back in ``bound_forms``, with its errors)."""
    now = timezone.now()
    page = alert_page(alert, now=now)
    ctx, ranking = repair_selectors.alert_ranking(alert)
    worst = page["worst_end"]
    initial_end = (
        f"{worst.name[:1]}:{worst.cable}"
        if worst is not None and worst.cable and worst.name[:1] in ("A", "B")
        else RepairEnd.NA
    )
    context = {
        "alert": alert,
        "silence_form": SilenceForm(),
        "repair_form": RepairForm(initial={"end": initial_end}, ends=page["ends"]),
        "drain_form": DrainForm(),
        "extend_form": ExtendForm(),
        "ev": alert.evidence,
        "ranking": ranking,
        "symptoms": symptom_words(ctx.symptoms),
        "repairs": repair_selectors.alert_repairs(alert, now=now),
        "may_repair": authz.can(request.user, "record_repair", alert),
        "repair_refusal": authz.refusal(request.user, "record_repair", alert),
        "may_drain": authz.can(request.user, "drain", alert),
        "may_acknowledge": authz.can(request.user, "acknowledge_alert", alert),
        "may_silence": authz.can(request.user, "silence", alert),
        "may_override_drain": authz.can(request.user, "override_drain", alert),
        **drain_panel(alert=alert, now=now),
        **page,
        **bound_forms,
    }
    return render(request, "inventory/alert_detail.html", context, status=status)


def alert_detail(request, pk: int):
    alert = get_object_or_404(
        Alert.objects.select_related(
            "link__a_port__device", "link__b_port__device", "cable", "acknowledged_by"
        ),
        pk=pk,
    )
    return _detail(request, alert)


@require_POST
@authz.requires_action("record_repair", obj=_alert_of)
def alert_repair(request, pk: int):
    """Record a repair from the alert page (``services.alerts.repair_record``)."""
    alert = get_object_or_404(
        Alert.objects.select_related(
            "link__a_port__device", "link__b_port__device", "cable", "acknowledged_by"
        ),
        pk=pk,
    )
    form = RepairForm(request.POST, ends=alert_page(alert)["ends"])
    if form.is_valid():
        end, cable = form.where()
        try:
            repair, created = alert_services.repair_record(
                alert=alert,
                action=form.cleaned_data["action"],
                end=end,
                cable=cable,
                note=form.cleaned_data["note"],
                actor=request.user,
                now=timezone.now(),
            )
        except ValidationError as exc:
            apply_errors(form, exc)
        else:
            what = f"{repair.get_action_display()} ({repair.where})"
            messages.success(
                request,
                f"Recorded: {what}. Watching the telemetry: the outcome shows here."
                if created
                else f"Already recorded: {what}.",
            )
            return redirect("alert-detail", pk=pk)
    return _detail(request, alert, repair_form=form, status=400)


@require_POST
@authz.requires_action("acknowledge_alert", obj=_alert_of)
def alert_acknowledge(request, pk: int):
    alert = get_object_or_404(Alert, pk=pk)
    alert_services.alert_acknowledge(alert=alert, actor=request.user, now=timezone.now())
    messages.success(request, "Acknowledged.")
    return redirect("alert-detail", pk=pk)


@require_POST
@authz.requires_action("silence", obj=_alert_of)
def alert_silence(request, pk: int):
    alert = get_object_or_404(Alert.objects.select_related("link", "port__device"), pk=pk)
    form = SilenceForm(request.POST)
    if form.is_valid():
        try:
            alert_services.alert_silence(
                alert=alert,
                hours=form.cleaned_data["hours"],
                reason=form.cleaned_data["reason"],
                actor=request.user,
                now=timezone.now(),
            )
        except ValidationError as exc:
            apply_errors(form, exc)
        else:
            messages.success(request, f"Silenced for {form.cleaned_data['hours']:g} h.")
            return redirect("alert-detail", pk=pk)
    return _detail(request, alert, silence_form=form, status=400)


@require_POST
@authz.requires_action("drain", obj=_alert_of)
def alert_drain(request, pk: int):
    """Drain the alert's link (``link_drain``); an override reason only from those who may override."""
    alert = get_object_or_404(Alert.objects.select_related("link", "port__device"), pk=pk)
    form = DrainForm(request.POST)
    if form.is_valid():
        override = form.cleaned_data["override_reason"].strip()
        if override:
            authz.check(request.user, "override_drain", alert)
        now = timezone.now()
        hours = form.cleaned_data["hours"]
        try:
            drain = link_drain(
                alert=alert,
                actor=request.user,
                now=now,
                ends_at=now + timedelta(hours=hours) if hours else None,
                override_reason=override,
            )
        except DrainConflict as exc:
            form.add_error(None, exc.message)
            status = 409
        except ValidationError as exc:
            for errs in exc.message_dict.values():
                form.add_error(None, errs)
            status = 400
        else:
            messages.success(
                request,
                f"Drained: the link is in maintenance until {until_words(drain.window.ends_at, timezone.localdate())} UTC.",
            )
            return redirect("alert-detail", pk=pk)
    else:
        status = 400
    return _detail(request, alert, drain_form=form, status=status)


@require_POST
@authz.requires_action("drain", obj=_alert_of)
def alert_restore(request, pk: int):
    alert = get_object_or_404(Alert, pk=pk)
    try:
        link_restore(alert=alert, actor=request.user, now=timezone.now())
    except DrainConflict as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, "Restored: the link is back in service and its maintenance window ended.")
    return redirect("alert-detail", pk=pk)


@require_POST
@authz.requires_action("drain", obj=_alert_of)
def alert_extend(request, pk: int):
    """Keep the alert's drained link out longer (``link_drain_extend``): its window ends later."""
    alert = get_object_or_404(Alert.objects.select_related("link", "port__device"), pk=pk)
    form = ExtendForm(request.POST)
    status = 400
    if form.is_valid():
        now = timezone.now()
        try:
            drain = link_drain_extend(
                alert=alert,
                actor=request.user,
                now=now,
                ends_at=now + timedelta(hours=form.cleaned_data["hours"]),
            )
        except DrainConflict as exc:
            form.add_error(None, exc.message)
            status = 409
        except ValidationError as exc:
            apply_errors(form, exc, {"ends_at": "hours"})
        else:
            messages.success(
                request,
                f"Extended: the link stays out, in maintenance until {until_words(drain.window.ends_at, timezone.localdate())} UTC.",
            )
            return redirect("alert-detail", pk=pk)
    return _detail(request, alert, extend_form=form, status=status)


class MaintenanceForm(forms.Form):
    """Phone-friendly: type names (rack, device, or a port as device:port) and a duration."""

    targets = forms.CharField(
        label="Racks, devices or links (device:port)",
        widget=forms.Textarea(attrs={"rows": 3, "autocapitalize": "none"}),
        help_text="One per line or separated by commas.",
    )
    hours = HoursField(initial=2, label="For (hours)")
    reason = forms.CharField(max_length=200)

    def clean_targets(self):
        names = [t.strip() for t in self.cleaned_data["targets"].replace(",", "\n").splitlines() if t.strip()]
        racks, devices, links, unknown = [], [], [], []
        rack_by = {r.name: r for r in Rack.objects.filter(name__in=names)}
        dev_by = {d.name: d for d in Device.objects.filter(name__in=names)}
        for n in names:
            if n in rack_by:
                racks.append(rack_by[n])
            elif n in dev_by:
                devices.append(dev_by[n])
            elif ":" in n:
                dev, port = n.split(":", 1)
                link = (
                    Link.objects.filter(active=True)
                    .filter(
                        Q(a_port__device__name=dev, a_port__name=port)
                        | Q(b_port__device__name=dev, b_port__name=port)
                    )
                    .first()
                )
                if link:
                    links.append(link)
                else:
                    unknown.append(n)
            else:
                unknown.append(n)
        if unknown:
            raise forms.ValidationError(f"Not a rack, device or cabled port: {', '.join(unknown)}")
        if not (racks or devices or links):
            raise forms.ValidationError("Name at least one rack, device or link.")
        return {"racks": racks, "devices": devices, "links": links}


@require_http_methods(["GET", "POST"])
def maintenance(request):
    """The windows in force (every role reads them) and the form that starts one."""
    now = timezone.now()
    initial = {"targets": request.GET.get("targets", "")}
    form = MaintenanceForm(request.POST or None, initial=initial)
    refused = False  # a target outside the user's sites: still a 403 (nothing written), the form kept
    if request.method == "POST":
        authz.check(request.user, "silence")  # the role first, then every target's site
    if request.method == "POST" and form.is_valid():
        t = form.cleaned_data["targets"]
        try:
            # A target in a site the user may not silence is that field's error (the policy's
            # sentence, naming the site), with what was typed kept: not a bare "Not allowed".
            authz.check_each(request.user, "silence", [*t["links"], *t["devices"], *t["racks"]])
            alert_services.maintenance_start(
                starts_at=now,
                ends_at=now + timedelta(hours=form.cleaned_data["hours"]),
                reason=form.cleaned_data["reason"],
                actor=request.user,
                now=now,
                **t,
            )
        except PermissionDenied as exc:
            form.add_error("targets", str(exc))
            refused = True
        except ValidationError as exc:
            for errs in exc.message_dict.values():
                form.add_error(None, errs)
        else:
            messages.success(request, "Maintenance window started: alerts there are recorded silently.")
            return redirect("maintenance")
    status = 403 if refused else 400 if request.method == "POST" else 200
    return render(
        request,
        "inventory/maintenance.html",
        {"form": form, "windows": alert_selectors.maintenance_windows(now=now), "now": now},
        status=status,
    )


@require_GET
def repair_report(request):
    """First-time-fix rate of recorded repairs per month and per vendor (the desk's report)."""
    months = request.GET.get("months", "12")
    months = max(1, min(int(months), 120)) if is_whole_number(months) else 12
    since = timezone.now() - timedelta(days=31 * months)
    return render(
        request,
        "inventory/repair_report.html",
        {"months": months, "since": since, **repair_selectors.first_time_fix_report(since=since)},
    )


@require_GET
def impact_report(request):
    """Per site and month: stalls incurred against problems caught early, and the saving (the desk's
    report; the API's ``/api/reports/impact/`` is the same dict)."""
    params = request.GET.copy()
    sites = list(Site.objects.order_by("name").values_list("name", flat=True))
    if not params.get("site") and sites:
        params["site"] = sites[0]
    site, month, bounds, errors = impact_selectors.report_params(params)
    ctx = {"sites": sites, "site": params.get("site", ""), "month": month, "errors": errors}
    if not errors:
        start, end = bounds
        ctx["report"] = impact_selectors.impact_report(
            site=site, month=month, start=start, end=end, now=timezone.now()
        )
    return render(request, "inventory/impact_report.html", ctx, status=400 if errors else 200)


def vendor_comparison(request):
    days = int(request.GET.get("days", "7")) if is_whole_number(request.GET.get("days", "7")) else 7
    days = max(1, min(days, 90))  # the page says the days it shows ("Last 90 days", not "Last 500")
    data = alert_selectors.vendor_comparison(now=timezone.now(), days=days)
    return render(
        request,
        "inventory/vendors_compare.html",
        {
            **data,
            "days": days,
            "alerts_counted": alert_selectors.VENDOR_ALERTS_COUNTED,
            "per_100_base": alert_selectors.VENDOR_PER_100_BASE,
        },
    )


def bringup(request, name: str):
    rack = get_object_or_404(Rack, name=name)
    return render(
        request, "inventory/bringup.html", wiring_selectors.bringup_report(rack=rack, now=timezone.now())
    )


@require_GET
def topology_export(request, fmt: str):
    site = request.GET.get("site") or None
    if fmt == "txt":
        body = wiring_selectors.topology_port_list(site=site)
        resp = HttpResponse(body, content_type="text/plain; charset=utf-8")
        resp["Content-Disposition"] = 'attachment; filename="topology.txt"'
    elif fmt == "ufm":
        body = wiring_selectors.topology_ufm(site=site)
        resp = HttpResponse(body, content_type="text/plain; charset=utf-8")
        resp["Content-Disposition"] = 'attachment; filename="topology.topo"'
    elif fmt == "dot":
        body = wiring_selectors.topology_dot(site=site)
        resp = HttpResponse(body, content_type="text/vnd.graphviz; charset=utf-8")
        resp["Content-Disposition"] = 'attachment; filename="topology.dot"'
    else:
        raise Http404("Unknown format: use txt, ufm or dot.")
    return resp


# --- /metrics ------------------------------------------------------------------------------------


def _metrics_allowed(request) -> bool:
    token = app_settings.metrics_token
    if token:
        header = request.headers.get("Authorization", "")
        if header.lower().startswith("bearer ") and secrets.compare_digest(header[7:].strip(), token):
            return True
    nets = app_settings.metrics_networks
    if nets:
        try:
            addr = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
        except ValueError:
            return False
        return any(addr in ipaddress.ip_network(n, strict=False) for n in nets)
    return False


@login_not_required
@require_GET
def metrics(request):
    """Prometheus text exposition of link health. Only with the scrape token or from the
    configured networks; with neither configured it does not exist (404)."""
    if not (app_settings.metrics_token or app_settings.metrics_networks):
        raise Http404("metrics are not enabled")
    if not _metrics_allowed(request):
        resp = HttpResponse(
            "scrape token or allowed network required\n", status=401, content_type="text/plain"
        )
        resp["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return resp
    body, content_type = metrics_exposition(now=timezone.now())
    return HttpResponse(body, content_type=content_type)
