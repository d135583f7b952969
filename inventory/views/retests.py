"""Retest planning (desk and phone), its CSV/PDF exports, the on-demand sweep and the profile page.

Thin: parse the filters, call the selector or service, render.
"""

from __future__ import annotations

from urllib.parse import unquote, urlencode

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from inventory.access import authz
from inventory.core import csvsafe
from inventory.core.choices import ReminderMode, Weekday
from inventory.core.pdf import worklist as worklist_pdf
from inventory.forms.widgets import PlainSelect
from inventory.models import Rack, Row, Site, UserProfile
from inventory.selectors.decision import cable_decisions_by_id
from inventory.selectors.pages import step_links
from inventory.selectors.pages.ends import end_lines
from inventory.selectors.retests import worklist as sel
from inventory.services.retests import reminders as reminder_services

TODAY = "today"
BUCKETS = [
    ("due", "Overdue, this week and next"),
    (TODAY, "Today: overdue and due today"),
    (sel.OVERDUE, "Overdue"),
    (sel.THIS_WEEK, "Due this week"),
    (sel.NEXT_WEEK, "Due next week"),
]


class WorklistFilter(forms.Form):
    bucket = forms.ChoiceField(choices=BUCKETS, required=False)
    # "any", not Django's "---------": a person reads the empty choice as a word.
    site = forms.ModelChoiceField(
        queryset=Site.objects.all(), required=False, empty_label="any", widget=PlainSelect
    )
    row = forms.ModelChoiceField(
        queryset=Row.objects.select_related("room__site"),
        required=False,
        empty_label="any",
        widget=PlainSelect,
    )
    # Typed (or opened from a rack's page: ``?rack=A01``), not chosen from a list: a 131,072-GPU
    # site has 5,120 racks, and a <select> of them took about a second of every worklist page.
    rack = forms.ModelChoiceField(
        queryset=Rack.objects.all(),
        required=False,
        to_field_name="name",
        widget=forms.TextInput(attrs={"placeholder": "any", "autocapitalize": "off", "size": 10}),
        error_messages={"invalid_choice": "No rack named “%(value)s”."},
    )


def _worklist(request, counts: dict | None = None):
    """The filtered worklist; ``counts`` (when given) is filled with the counts of the rack, row
    or site filter before the bucket narrows it, so the numbers above the rows are the rows'."""
    form = WorklistFilter(request.GET or None)
    today = timezone.localdate()
    _, _, end_next = sel.week_bounds(today)
    if form.is_bound and not form.is_valid():
        return form, today, []
    data = form.cleaned_data if form.is_bound else {}
    items = sel.retest_worklist(
        today=today,
        until=end_next,
        site_id=data["site"].pk if data.get("site") else None,
        row_id=data["row"].pk if data.get("row") else None,
        rack_id=data["rack"].pk if data.get("rack") else None,
    )
    if counts is not None:
        counts.update(sel.worklist_counts(items, today=today))
    bucket = data.get("bucket") or "due"
    if bucket == TODAY:
        items = [i for i in items if i.due <= today]
    elif bucket != "due":
        items = [i for i in items if i.bucket == bucket]
    return form, today, items


# The cookie naming the last rack page opened: the worklist's "This rack" shortcut.
NEAR_RACK = "ct_near_rack"


def near_rack(request) -> str:
    return unquote(request.COOKIES.get(NEAR_RACK, ""))[:64]


def _shortcut(label: str, params: dict, current: dict) -> dict:
    return {"label": label, "query": urlencode(params), "on": params == current}


RETESTS_PER_PAGE = 50


def retests_plan(request):
    """The day's retests. Opened from a rack (``?rack=``) it is that rack's work, overdue first;
    the counts are those of the filter shown; "Today" and "This rack" (the rack last opened)
    are one tap."""
    counts: dict = {}
    form, today, items = _worklist(request, counts)
    current = {k: v for k, v in request.GET.items() if k != "page" and v}
    chosen = form.cleaned_data if form.is_bound and form.is_valid() else {}
    # The shortcuts name a rack that exists: the one chosen (valid even when another field is
    # not), else the one last opened. A mistyped ?rack= is an error on the form, not a chip.
    typed = form.cleaned_data.get("rack") if form.is_bound else None
    near = typed.name if typed else near_rack(request)
    shortcuts = [_shortcut("Today", {"bucket": TODAY}, current)]
    if near:
        shortcuts.append(_shortcut(f"This rack: {near}", {"rack": near}, current))
        shortcuts.append(_shortcut(f"{near} today", {"rack": near, "bucket": TODAY}, current))
    shortcuts.append(_shortcut("Everything due", {}, current))
    scope = {k: v for k, v in current.items() if k in ("site", "row", "rack")}
    scope_title = (
        f"in rack {chosen['rack'].name}"
        if chosen.get("rack")
        else f"in row {chosen['row'].name}"
        if chosen.get("row")
        else f"in {chosen['site'].name}"
        if chosen.get("site")
        else ""
    )
    query = request.GET.urlencode()
    page_query = request.GET.copy()
    page_query.pop("page", None)
    page = Paginator(items, RETESTS_PER_PAGE).get_page(request.GET.get("page"))
    page_ids = [i.cable_id for i in page.object_list]
    ends = end_lines(page_ids)
    # Each row says the cable's one decision (what the cable page says), read for the page's rows.
    decisions = cable_decisions_by_id(cable_ids=page_ids)
    # The next step is a link only for whom may take it, as on the cable page: a technician
    # outside the site's team reads it without a link to a form that would refuse them.
    linked = step_links(request.user, decisions)
    rows: list[dict] = []
    for group in sel.group_by_rack(list(page.object_list)):
        group.items = [
            {
                "item": i,
                "a": ends[i.cable_id][0],
                "b": ends[i.cable_id][1],
                "decision": decisions[i.cable_id],
                "link_step": i.cable_id in linked,
            }
            for i in group.items
        ]
        p = group.place
        row_title = f"{p.site} / {p.room} / row {p.row}" if p else "Not in a rack"
        if not rows or rows[-1]["title"] != row_title:
            rows.append({"title": row_title, "racks": []})
        rows[-1]["racks"].append(group)
    return render(
        request,
        "inventory/retests.html",
        {
            "form": form,
            "today": today,
            "items": items,
            "rows": rows,
            "counts": counts,
            "count_links": {
                key: urlencode({**scope, "bucket": key})
                for key in (sel.OVERDUE, TODAY, sel.THIS_WEEK, sel.NEXT_WEEK)
            },
            "shortcuts": shortcuts,
            "scope_title": scope_title,
            "filtered": bool(
                form.is_bound and any(current.get(k) for k in ("site", "row", "rack", "bucket"))
            ),
            "query": query,
            "page": page,
            "page_query": page_query.urlencode(),
            "can_sweep": authz.can(request.user, "sweep_retests"),
        },
    )


#: Decisions are read for this many worklist rows at a time (a fixed number of queries each).
DECISION_CHUNK = 2000


def _with_decisions(items: list[sel.WorkItem]):
    """Each item with its cable's one decision, read a chunk at a time: the exports say what the
    page's rows say, not only a due date."""
    for start in range(0, len(items), DECISION_CHUNK):
        chunk = items[start : start + DECISION_CHUNK]
        decisions = cable_decisions_by_id(cable_ids=[i.cable_id for i in chunk])
        for i in chunk:
            yield i, decisions[i.cable_id]


def retests_csv(request):
    _, today, items = _worklist(request)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="retests-{today:%Y-%m-%d}.csv"'
    w = csvsafe.writer(response)
    w.writerow(
        ["bucket", "due", "days_overdue", "site", "room", "row", "rack", "rack_position", "device", "u",
         "cable", "kind", "test", "state", "next_step", "url"]
    )  # fmt: skip
    for i, d in _with_decisions(items):
        p = i.place
        w.writerow(
            [
                i.bucket,
                i.due.isoformat(),
                i.days_overdue,
                p.site if p else "",
                p.room if p else "",
                p.row if p else "",
                p.rack if p else "",
                p.position if p else "",
                i.device,
                i.u or "",
                i.label,
                i.kind,
                i.what,
                d.state_line,
                d.step.label if d.step else "",
                i.url,
            ]
        )
    return response


def _note(item: sel.WorkItem) -> str:
    if item.days_overdue:
        return f"{item.days_overdue} day{'s' if item.days_overdue != 1 else ''} overdue"
    return sel.BUCKET_LABELS[item.bucket].lower()


def retests_pdf(request):
    _, today, items = _worklist(request)
    decided = dict((i.cable_id, d) for i, d in _with_decisions(items))
    groups = [
        worklist_pdf.WorklistGroup(
            heading=g.title,
            lines=[
                worklist_pdf.WorklistLine(
                    label=i.label,
                    url=i.url,
                    what=i.what,
                    due=i.due.isoformat(),
                    note=_note(i),
                    where=f"{i.device} U{i.u}" if i.u else i.device,
                    decision=decided[i.cable_id].line,
                )
                for i in g.items
            ],
        )
        for g in sel.group_by_rack(items)
    ]
    pdf = worklist_pdf.render_worklist_pdf(
        title="Retest worklist",
        subtitle=f"{len(items)} cables, printed {today:%Y-%m-%d}; in walking order (row, rack, U).",
        groups=groups,
    )
    response = HttpResponse(pdf, content_type="application/pdf")
    response["Content-Disposition"] = f'inline; filename="retests-{today:%Y-%m-%d}.pdf"'
    return response


@require_POST
@authz.requires_action("sweep_retests")
def retests_sweep_now(request):
    reminder_services.retests_sweep_request()
    messages.success(request, "Retest sweep queued: due dates are recomputed and reminders go out shortly.")
    return redirect("retests-plan")


class ProfileForm(forms.Form):
    reminder_mode = forms.ChoiceField(choices=ReminderMode.choices, label="Retest reminders")
    digest_weekday = forms.TypedChoiceField(choices=Weekday.choices, coerce=int, label="Weekly digest day")
    digest_hour = forms.IntegerField(min_value=0, max_value=23, label="Digest hour (UTC, 0-23)")


@authz.allow_any_user_write  # a user's own reminder settings: viewers too
def profile(request):
    current = UserProfile.objects.filter(user=request.user).first()
    initial = {
        "reminder_mode": current.reminder_mode if current else ReminderMode.IMMEDIATE,
        "digest_weekday": current.digest_weekday if current else Weekday.MONDAY,
        "digest_hour": current.digest_hour if current else 7,
    }
    form = ProfileForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            reminder_services.user_profile_update(user=request.user, **form.cleaned_data)
        except ValidationError as exc:
            for field, errs in exc.message_dict.items():
                for e in errs:
                    form.add_error(field if field in form.fields else None, e)
        else:
            messages.success(request, "Saved.")
            return redirect("reminder-preferences")
    return render(request, "inventory/reminder_preferences.html", {"form": form, "email": request.user.email})
