"""Reads for retests: the worklist (where each due cable is, in walking order) and digest content."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta

from django.db.models import Count, F, Q
from django.db.models.functions import Coalesce

from inventory.core import retest_rules as rules
from inventory.core.choices import CableStatus, ReminderKind
from inventory.core.decision import Decision
from inventory.core.links import cable_url
from inventory.models import Cable, CableEnd, Device, Rack, ReminderDigest
from inventory.selectors.decision import cable_decisions_by_id
from inventory.selectors.plant.cable_ends import cables_in_rack
from inventory.selectors.retests.overdue import NOT_RETESTED, retest_overdue

OVERDUE, THIS_WEEK, NEXT_WEEK, LATER = "overdue", "this_week", "next_week", "later"
BUCKET_LABELS = {
    OVERDUE: "Overdue",
    THIS_WEEK: "Due this week",
    NEXT_WEEK: "Due next week",
    LATER: "Due later",
}


@dataclass(frozen=True)
class RackPlace:
    rack_id: int
    rack: str
    position: int
    row_id: int
    row: str
    room: str
    site_id: int
    site: str
    team_id: int | None  # rack's team, else row's, else site's


@dataclass(frozen=True)
class WorkItem:
    cable_id: int
    label: str
    kind: str
    status: str
    due: date
    days_overdue: int
    bucket: str
    what: str  # "OLTS/OTDR", "link qualification"
    device: str
    u: int | None
    place: RackPlace | None
    url: str

    @property
    def sort_key(self) -> tuple:
        """Walking order between racks (site, room, row, position along the row, rack); within a
        rack the most urgent first (oldest due date, so every overdue cable before anything
        merely due), then U from the bottom and label."""
        p = self.place
        if p is None:
            return (1, "", "", "", 0, "", self.due, 0, self.label)
        return (0, p.site, p.room, p.row, p.position, p.rack, self.due, self.u or 0, self.label)


def week_bounds(today: date) -> tuple[date, date, date]:
    """(end of this week, start of next week, end of next week); weeks run Monday to Sunday."""
    end_this = today + timedelta(days=6 - today.weekday())
    return end_this, end_this + timedelta(days=1), end_this + timedelta(days=7)


def bucket_of(due: date, today: date, bounds: tuple[date, date, date] | None = None) -> str:
    end_this, _, end_next = bounds or week_bounds(today)
    if due < today:
        return OVERDUE
    if due <= end_this:
        return THIS_WEEK
    if due <= end_next:
        return NEXT_WEEK
    return LATER


def rack_places() -> dict[int, RackPlace]:
    """Every rack with its row, room, site and responsible team, in one query of plain values
    (5,120 racks and their rows, rooms and sites as model instances took 0.9 s at 131,072 GPUs)."""
    rows = Rack.objects.order_by().values_list(
        "pk",
        "name",
        "position",
        "row_id",
        "row__name",
        "row__room__name",
        "row__room__site_id",
        "row__room__site__name",
        "team_id",
        "row__team_id",
        "row__room__site__team_id",
    )
    return {
        pk: RackPlace(
            rack_id=pk,
            rack=name,
            position=position,
            row_id=row_id,
            row=row,
            room=room,
            site_id=site_id,
            site=site,
            team_id=rack_team or row_team or site_team,
        )
        for pk, name, position, row_id, row, room, site_id, site, rack_team, row_team, site_team in rows
    }


def retest_worklist(
    *,
    today: date,
    until: date | None = None,
    site_id: int | None = None,
    row_id: int | None = None,
    rack_id: int | None = None,
    cable_ids: list[int] | None = None,
    places: dict[int, RackPlace] | None = None,
) -> list[WorkItem]:
    """Cables due by ``until`` (and all overdue ones), in the order a technician walks them:
    site, room, row, rack position along the row, rack; within a rack overdue first (oldest due
    date first), then U from the bottom, label (``WorkItem.sort_key``).

    ``rack_id`` keeps the cables with any active end in that rack (a cable whose A end is in the
    next rack is work here too), all placed in that rack. Two queries whatever the count: the
    racks, and the A ends of the due cables with their device position.
    """
    places = places if places is not None else rack_places()
    ends = CableEnd.objects.filter(side="A", leg=0).exclude(
        cable__status__in=[CableStatus.PLANNED, CableStatus.RETIRED]
    )
    if rack_id:
        devices = Device.objects.filter(rack_id=rack_id).values("pk")
        ends = ends.filter(cable_id__any=cables_in_rack(devices, active_only=True))
    if cable_ids is not None:
        ends = ends.filter(cable_id__in=cable_ids)
    else:
        ends = ends.filter(cable__retest_due__isnull=False)
        if until is not None:
            ends = ends.filter(cable__retest_due__lte=until)
    rows = ends.annotate(
        rack_id_=Coalesce(F("cage__device__rack_id"), F("port__device__rack_id")),
        u=Coalesce(F("cage__device__position_u"), F("port__device__position_u")),
        device=Coalesce(F("cage__device__name"), F("port__device__name")),
    ).values_list(
        "cable_id",
        "cable__label",
        "cable__kind",
        "cable__status",
        "cable__retest_due",
        "rack_id_",
        "u",
        "device",
    )
    items = []
    bounds = week_bounds(today)
    for cable_id, label, kind, status, due, rack, u, device in rows:
        if due is None:
            continue
        place = places.get(rack_id or rack)
        if site_id and (place is None or place.site_id != site_id):
            continue
        if row_id and (place is None or place.row_id != row_id):
            continue
        items.append(
            WorkItem(
                cable_id=cable_id,
                label=label,
                kind=kind,
                status=status,
                due=due,
                days_overdue=max(0, (today - due).days),
                bucket=bucket_of(due, today, bounds),
                what=rules.retest_kind_label(kind),
                device=device or "",
                u=u,
                place=place,
                url=cable_url(label),
            )
        )
    items.sort(key=lambda i: i.sort_key)
    return items


def cables_due_between(ranges: list[tuple[date, date]]) -> set[int]:
    """Ids of the cables due within any of the inclusive ``(first, last)`` day ranges (each an
    index range on ``cable_retest_id``; an empty range reads nothing)."""
    ids: set[int] = set()
    for first, last in ranges:
        if first <= last:
            ids.update(Cable.objects.filter(retest_due__range=(first, last)).values_list("pk", flat=True))
    return ids


def retest_due_owners(*, until: date, only: set[int] | None = None) -> list[tuple[int, date, int | None]]:
    """(cable id, due date, responsible team id) of every live cable due by ``until``, or of
    those among ``only`` (read in chunks by id).

    The lean read behind the reminder claim: one query for the racks' teams, one for the cables,
    no per-cable objects.
    """
    team_of_rack = {
        pk: rack_team or row_team or site_team
        for pk, rack_team, row_team, site_team in Rack.objects.values_list(
            "pk", "team_id", "row__team_id", "row__room__site__team_id"
        )
    }
    rows = (
        CableEnd.objects.filter(side="A", leg=0, cable__retest_due__lte=until)
        .exclude(cable__status__in=[CableStatus.PLANNED, CableStatus.RETIRED])
        .annotate(rack_id_=Coalesce(F("cage__device__rack_id"), F("port__device__rack_id")))
        .values_list("cable_id", "cable__retest_due", "rack_id_")
    )
    if only is None:
        return [(cable_id, due, team_of_rack.get(rack)) for cable_id, due, rack in rows]
    ids = sorted(only)
    return [
        (cable_id, due, team_of_rack.get(rack))
        for start in range(0, len(ids), 5000)
        for cable_id, due, rack in rows.filter(cable_id__in=ids[start : start + 5000])
    ]


@dataclass
class RackGroup:
    place: RackPlace | None
    items: list = field(default_factory=list)

    @property
    def title(self) -> str:
        p = self.place
        return f"{p.site} / {p.room} / row {p.row} / rack {p.rack}" if p else "Not in a rack"


def group_by_rack(items: list) -> list[RackGroup]:
    """Consecutive items (already in walking order) grouped by rack."""
    groups: list[RackGroup] = []
    for it in items:
        place = it.place
        if not groups or groups[-1].place != place:
            groups.append(RackGroup(place=place))
        groups[-1].items.append(it)
    return groups


@dataclass(frozen=True)
class DigestLine:
    item: WorkItem
    kind: str  # the reminder kind claimed
    #: The cable's one decision, as its page and the worklist's row say it ("alert open · Open
    #: the alert"): a mail never says only "due" of a cable with an alert or a fault.
    decision: Decision | None = None

    @property
    def place(self) -> RackPlace | None:
        return self.item.place


@dataclass
class DigestContent:
    recipient: str
    lines: list[DigestLine]
    stale_ids: list[int]  # reminders resolved since they were claimed (retested, retired)

    def count(self, kind: str) -> int:
        return sum(1 for line in self.lines if line.kind == kind)

    @property
    def overdue(self) -> list[DigestLine]:
        return [ln for ln in self.lines if ln.kind != ReminderKind.DUE_SOON]

    @property
    def due_soon(self) -> list[DigestLine]:
        return [ln for ln in self.lines if ln.kind == ReminderKind.DUE_SOON]

    @property
    def overdue_groups(self) -> list[RackGroup]:
        return group_by_rack(self.overdue)

    @property
    def due_soon_groups(self) -> list[RackGroup]:
        return group_by_rack(self.due_soon)


def digest_content(*, digest: ReminderDigest, today: date, now: datetime | None = None) -> DigestContent:
    """What a digest says now: its claimed reminders that still hold, in walking order.

    A reminder whose cable has since been retested (its due date moved) or retired is stale and
    left out; a digest left with nothing is not sent at all.
    """
    reminders = list(digest.reminders.values_list("pk", "cable_id", "due_date", "kind"))
    items = {i.cable_id: i for i in retest_worklist(today=today, cable_ids=sorted({r[1] for r in reminders}))}
    lines, stale = [], []
    for pk, cable_id, due, kind in reminders:
        item = items.get(cable_id)
        if item is None or item.due != due:
            stale.append(pk)
            continue
        lines.append(DigestLine(item=item, kind=kind))
    # One line per cable per section: an escalation and the plain overdue of the same cable merge.
    rank = {ReminderKind.ESCALATION: 2, ReminderKind.OVERDUE: 1, ReminderKind.DUE_SOON: 0}
    best: dict[int, DigestLine] = {}
    for ln in lines:
        cur = best.get(ln.item.cable_id)
        if cur is None or rank[ln.kind] > rank[cur.kind]:
            best[ln.item.cable_id] = ln
    decisions = cable_decisions_by_id(cable_ids=list(best), now=now)
    merged = sorted(
        (replace(ln, decision=decisions.get(ln.item.cable_id)) for ln in best.values()),
        key=lambda ln: ln.item.sort_key,
    )
    return DigestContent(recipient=digest.recipient, lines=merged, stale_ids=stale)


def worklist_counts(items: list[WorkItem], *, today: date) -> dict[str, int]:
    """Counts of a worklist as filtered (the numbers above the rows agree with the rows):
    overdue, due today, this week and next week (due today is also in this week)."""
    counts = {OVERDUE: 0, "today": 0, THIS_WEEK: 0, NEXT_WEEK: 0}
    for i in items:
        if i.bucket in counts:
            counts[i.bucket] += 1
        if i.due == today:
            counts["today"] += 1
    return counts


def retest_counts(*, today: date) -> dict[str, int]:
    """Counts for the dashboard and the planning page header."""
    end_this, start_next, end_next = week_bounds(today)
    live = Cable.objects.exclude(status__in=NOT_RETESTED)
    return live.aggregate(
        overdue=Count("pk", filter=retest_overdue(today)),
        this_week=Count("pk", filter=Q(retest_due__gte=today, retest_due__lte=end_this)),
        next_week=Count("pk", filter=Q(retest_due__gte=start_next, retest_due__lte=end_next)),
    )
