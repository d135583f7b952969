"""The cable page: its ends, the traced path, history, one-tap actions and the alert and test panels."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from django.contrib.auth import get_user_model
from django.db.models import Exists, OuterRef
from django.db.models.functions import Now
from django.urls import reverse
from django.utils import timezone

from inventory.access import authz
from inventory.core.choices import PASSING, SEVERITY_ORDER, CableKind, CableStatus, FieldNoteKind
from inventory.core.decision import ALERT_CARRIED, ELSEWHERE, Decision, FaultFact, cable_decide, fault_settled
from inventory.core.pathcheck import PathVerdict
from inventory.core.words import human_date, human_when, word
from inventory.db.compiled import CompiledRead
from inventory.models import (
    Cable,
    CableEnd,
    Cage,
    Device,
    FieldNote,
    Link,
    LinkSegment,
    Port,
    Rack,
    Site,
    Transceiver,
    TransceiverModel,
    TransceiverPlacement,
    Vendor,
)
from inventory.selectors.alerts.queries import cable_alerts_context, moved_alerts
from inventory.selectors.collectives.drain import drain_overdue, drained_until
from inventory.selectors.collectives.impact import cable_impact, page_impact, recent
from inventory.selectors.decision import alert_fact, cable_evidence, link_words, step_with_url
from inventory.selectors.pages.retest import retest_state
from inventory.selectors.plant.history import history_for
from inventory.selectors.plant.journal import journal_for
from inventory.selectors.plant.trace import Point, Segment, Trace, port_trace
from inventory.selectors.testing.latest import first_test_day
from inventory.selectors.testing.results import cable_tests_context
from inventory.selectors.testing.traces import cable_traces_context

_ISO_MOMENT = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")
_ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# A history change's field -> the vocabulary domain of its values.
CHANGE_DOMAINS = {"status": "status", "kind": "kind", "role": "role", "polarity": "polarity"}
END_RELATED = ("port__device__rack", "cage__device__rack", "cage__transceiver__model")
# The columns of an end's port, device, rack, cage and module that the page, its drawn path and
# its link verdicts read (the end's own columns all). ``select_related`` of the whole rows was 116
# columns: compiling the query and building nine model instances per end was a tenth of the
# page's time. Anything else read off these objects costs a query per end.
_PLACE = ("name", "role", "rack_id", "position_u", "height_u", "rack__name")
END_ONLY = (
    *(f.name for f in CableEnd._meta.concrete_fields),
    *(f"port__{f}" for f in ("name", "device_id", "cage_id", "connector", "kind", "fabric", "lane_start")),
    *(f"port__device__{f}" for f in _PLACE),
    *(f"cage__{f}" for f in ("name", "device_id", "index", "form_factor", "lanes")),
    *(f"cage__device__{f}" for f in _PLACE),
    *(f"cage__transceiver__{f}" for f in ("serial", "model_id", "cage_id", "status")),
    *(f"cage__transceiver__model__{f}" for f in ("part_number", "connector_count", "form_factor")),
)


@dataclass
class EndView:
    """One plug of the cable, as the phone page shows it."""

    end: CableEnd
    rack: Rack | None = None
    u: int | None = None
    device: Device | None = None
    where: str = ""
    ports: list[Port] = field(default_factory=list)
    transceiver: Transceiver | None = None
    placements: list[TransceiverPlacement] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.end.side}{self.end.leg or ''}"

    @property
    def module_cage(self) -> bool:
        """Does this end plug into a module cage, where a module can be swapped? Not a patch
        panel's port, not an RJ45 jack. The page offers "Swap a module" only for a cable with
        such an end, and the swap form lists exactly these ends."""
        return bool(self.end.cage_id and self.end.active)


# The logical ports and the module history of the cages this cable's ends plug into.
_CAGE_PORTS = CompiledRead(
    lambda cable_id: Port.objects.filter(
        cage_id__in=CableEnd.objects.filter(cable_id=cable_id).values("cage_id"), retired_at__isnull=True
    ).order_by("lane_start")
)
_CAGE_PLACEMENTS = CompiledRead(
    lambda cable_id: (
        TransceiverPlacement.objects.filter(
            cage_id__in=CableEnd.objects.filter(cable_id=cable_id).values("cage_id")
        )
        .select_related("transceiver__model", "installed_by", "removed_by")
        .order_by("-installed_at", "-id")
    )
)


def _end_views(cable_id: int, ends: list[CableEnd]) -> list[EndView]:
    views = []
    logical: dict[tuple[int, int], list[Port]] = {}
    placements: dict[int, list[TransceiverPlacement]] = {}
    if any(e.cage_id for e in ends):
        for p in _CAGE_PORTS(cable_id):
            logical.setdefault((p.cage_id, p.connector), []).append(p)
        for pl in _CAGE_PLACEMENTS(cable_id):
            placements.setdefault(pl.cage_id, []).append(pl)
    for e in ends:
        v = EndView(end=e)
        if e.port_id:
            dev = e.port.device
            v.device, v.ports, v.where = dev, [e.port], e.port.name
        elif e.cage_id:
            dev = e.cage.device
            v.device = dev
            v.where = e.cage.name + (f"/{e.connector}" if e.connector and e.connector > 1 else "")
            v.ports = logical.get((e.cage_id, e.connector), [])
            v.transceiver = getattr(e.cage, "transceiver", None)
            v.placements = placements.get(e.cage_id, [])
        if v.device is not None:
            v.rack, v.u = v.device.rack, v.device.position_u
        views.append(v)
    return views


def _port_point(port: Port) -> Point:
    dev = port.device
    return Point(
        dev.name,
        dev.rack.name if dev.rack_id else None,
        dev.position_u,
        port.name,
        port_id=port.pk,
        cage_id=port.cage_id,
        connector=port.connector,
        device_id=dev.pk,
    )


def _end_point(e: CableEnd) -> Point:
    if e.port_id:
        return _port_point(e.port)
    cage = e.cage
    dev = cage.device
    xcvr = getattr(cage, "transceiver", None)
    multi = bool(xcvr and xcvr.model.connector_count > 1)
    name = f"{cage.name}/{e.connector}" if multi or (e.connector or 1) > 1 else cage.name
    return Point(
        dev.name,
        dev.rack.name if dev.rack_id else None,
        dev.position_u,
        name,
        cage_id=cage.pk,
        connector=e.connector,
        device_id=dev.pk,
    )


def _page_ends(**where):
    """Ends as the page reads them: with their port or cage, device, rack and module."""
    return (
        CableEnd.objects.filter(**where).select_related(*END_RELATED).only(*END_ONLY).order_by("side", "leg")
    )


_LINK_SEGMENTS = CompiledRead(
    lambda link_id: LinkSegment.objects.filter(link_id=link_id).select_related("cable").order_by("seq")
)
# The ends of a link's other cables. Their ids as one array: a subquery here joined every end of
# the plant first (ten tables are past the planner's join_collapse_limit).
_OTHER_ENDS = CompiledRead(lambda cable_ids: _page_ends(cable_id__any=cable_ids))


@dataclass
class LinkRows:
    """One link's segments, their cables and every end of them (retired ends included), as
    the trace read them: ``link_verdicts`` takes them instead of reading them again."""

    segs: dict[int, list[int]]
    cables: dict[int, Cable]
    ends: dict[int, list[CableEnd]]


def _link_trace(
    link: Link, cable: Cable | None = None, cable_ends: list[CableEnd] | None = None
) -> tuple[Trace, LinkRows]:
    """The path of a recorded link, from its stored segments (no walk through the panels).

    ``links_refresh_for_ports`` keeps a link's segments and path verdict in step with the
    cabling, so the page reads them in two queries instead of tracing hop by hop. The page's
    own cable and its ends (already read, ``cable``/``cable_ends``) are not read again.
    """
    segs = _LINK_SEGMENTS(link.pk)
    for seg in segs:
        seg.link = link
    all_ends: dict[int, list[CableEnd]] = {}
    if cable is not None and cable_ends is not None:
        all_ends[cable.pk] = cable_ends
    others = sorted({s.cable_id for s in segs if s.cable_id not in all_ends})
    if others:
        for e in _OTHER_ENDS(others):
            all_ends.setdefault(e.cable_id, []).append(e)
    ends_by_cable = {cid: [e for e in ends if e.active] for cid, ends in all_ends.items()}
    rows = LinkRows(
        segs={link.pk: [s.cable_id for s in segs]},
        cables={s.cable_id: s.cable for s in segs},
        ends=all_ends,
    )

    def device_of(e: CableEnd) -> int | None:
        return e.port.device_id if e.port_id else (e.cage.device_id if e.cage_id else None)

    trace = Trace(start=_port_point(link.a_port))
    trace.far, trace.far_port_id, trace.complete = _port_point(link.b_port), link.b_port_id, True
    trace.verdict = PathVerdict(ok=link.path_ok, problems=[str(p) for p in (link.path_problems or [])])
    prev_dev = link.a_port.device_id
    for i, seg in enumerate(segs):
        ends = ends_by_cable.get(seg.cable_id, [])
        if not ends:
            continue
        if i + 1 < len(segs):
            next_devs = {device_of(e) for e in ends_by_cable.get(segs[i + 1].cable_id, [])}
        else:
            next_devs = {link.b_port.device_id}
        near = next((e for e in ends if device_of(e) == prev_dev), ends[0])
        others = [e for e in ends if e.side != near.side] or [near]
        far = next((e for e in others if device_of(e) in next_devs), others[0])
        c = seg.cable
        trace.segments.append(
            Segment(
                c.pk,
                c.label,
                c.kind,
                c.role,
                c.polarity,
                c.status,
                _end_point(near),
                _end_point(far),
                near.leg,
                far.leg,
            )
        )
        prev_dev = device_of(far)
    return trace, rows


# The columns of a link's two ports (with device and rack) that the page reads: its path, alert
# and verdict panels. Whole rows were 78 columns per link.
_LINK_PORT = ("name", "device_id", "cage_id", "connector", "kind", "fabric", "lane_start")
LINK_ONLY = (
    *(f.name for f in Link._meta.concrete_fields),
    *(
        f"{side}__{f}"
        for side in ("a_port", "b_port")
        for f in (*_LINK_PORT, *(f"device__{x}" for x in _PLACE))
    ),
)


_CABLE_LINKS = CompiledRead(
    lambda cable_id: (
        Link.objects.filter(
            active=True,
            pk__in=LinkSegment.objects.filter(cable_id=cable_id).values("link_id"),  # a subquery: no DISTINCT
        )
        .select_related("a_port__device__rack", "b_port__device__rack")
        .only(*LINK_ONLY)
        .annotate(  # the database's clock: a compiled read
            drained_until=drained_until(now=Now()),
            overdue_since=drain_overdue(now=Now(), field="drained_at"),
            overdue_ended=drain_overdue(now=Now(), field="window__ends_at"),
            overdue_alert=drain_overdue(now=Now(), field="alert_id"),
        )
        .order_by("pk")
    )
)


def cable_links(cable: Cable) -> list[Link]:
    """The active links this cable carries (its trace, alerts and test panels all need them)."""
    return _CABLE_LINKS(cable.pk)


def cable_trace(
    cable: Cable, ends: list[EndView], links: list[Link] | None = None, *, focus: int | None = None
) -> tuple[Trace | None, int, LinkRows | None]:
    """The channel this cable is part of, how many links it carries, and the link's rows.

    A cable on exactly one recorded link shows that link's whole path (and returns the rows
    it read, for the link's verdicts). A trunk carrying several shows one of them whole, from
    device end to device end: ``focus`` (the link its decision names, ``focus_link``), else the
    first. A cable on no complete link yet is traced from end A.
    """
    if links is None:
        links = cable_links(cable)
    if len(links) == 1:
        trace, rows = _link_trace(links[0], cable, [v.end for v in ends])
        return trace, 1, rows
    link_count = len(links)
    if links:
        link = next((lk for lk in links if lk.pk == focus), links[0])
        return _link_trace(link, cable, [v.end for v in ends])[0], link_count, None
    a = next((v for v in ends if v.end.side == "A" and v.end.active), None)
    if a is None or not a.ports:
        return None, link_count, None
    return port_trace(a.ports[0]), link_count, None


def _placement_entries(ends: list[EndView]) -> list[dict]:
    """Module moves in the cages this cable plugs into, as history lines."""
    out = []
    for v in ends:
        where = f"{v.device.name} {v.end.cage.name}" if v.end.cage_id and v.device else ""
        for pl in v.placements:
            serial = pl.transceiver.serial
            out.append(
                {
                    "when": pl.installed_at,
                    "who": pl.installed_by.get_username() if pl.installed_by else None,
                    "what": "installed module",
                    "subject": f"{serial} in {where}",
                    "reason": "",
                    "changes": [],
                }
            )
            if pl.removed_at:
                out.append(
                    {
                        "when": pl.removed_at,
                        "who": pl.removed_by.get_username() if pl.removed_by else None,
                        "what": f"removed module ({pl.get_end_reason_display().lower()})",
                        "subject": f"{serial} from {where}",
                        "reason": pl.notes,
                        "changes": [],
                    }
                )
    return out


# A journal entry and the record change its service made in the same transaction (a fault
# report marks the cable faulty; a production override puts it in production) are one action:
# the change is looked for this close to the entry's moment (a lock wait may part them).
SAME_ACTION = timedelta(seconds=60)


def _history(cable: Cable, notes: list[FieldNote], ends: list[EndView] = (), limit: int = 30) -> list[dict]:
    """Everything that happened to the cable, newest first, by when it happened (record changes,
    module moves in its cages, journal entries); each change in human words. One action is one
    entry: a journal entry that changed the status carries that change, and the record's own
    entry for it is left out (``_same_action``)."""
    records = history_for(cable)
    for e in records:
        e["when"] = datetime.fromisoformat(e["when"])
    subject = f"cable {cable.label}"
    entries = _placement_entries(list(ends))
    for n in notes:
        who = n.actor.get_username() if n.actor else None
        status = {"field": "status", "old": n.status_before, "new": n.status_after}
        if n.status_before != n.status_after:
            records = _same_action(records, subject=subject, who=who, at=n.at, change=status)
        entries.append(
            {
                "when": n.at,
                # a journal entry is a person's words: one with no user recorded (a script, the
                # demo) names "someone", as its open card above does, never "system"
                "who": who or "someone",
                "what": n.get_kind_display().lower(),
                "subject": subject,
                "reason": n.text,
                "changes": [status] if n.status_before != n.status_after else [],
                "note": True,
            }
        )
    entries += records
    entries.sort(key=lambda e: e["when"], reverse=True)
    entries = entries[:limit]
    return human_history(entries)


def human_history(entries: list[dict]) -> list[dict]:
    """History entries (``history_for``'s) with each change in human words (``_human_change``),
    another record named, never its id: the cable's and the module's pages say them alike."""
    names = _change_names(entries)
    for e in entries:
        e["changes"] = [_human_change(c, names.get(c["field"], {})) for c in e["changes"]]
    return entries


# Fields of a cable or an end that hold another record: a change says its name, never its id
# ("Replaced by: – → C000901", not "→ 855").
_CHANGE_NAMED = {
    "replaced_by": (Cable, "label"),
    "vendor": (Vendor, "name"),
    "site": (Site, "name"),
    "stock_site": (Site, "name"),
    "port": (Port, "name"),
    "cage": (Cage, "name"),
    "model": (TransceiverModel, "part_number"),
    "transceiver": (Transceiver, "serial"),
    "installed_by": (get_user_model(), "username"),
    "removed_by": (get_user_model(), "username"),
}


def _change_names(entries: list[dict]) -> dict[str, dict[int, str]]:
    """field -> {id: name} for the record fields the shown changes hold (a query per such field,
    none when no change holds one)."""
    wanted: dict[str, set[int]] = {}
    for e in entries:
        for c in e["changes"]:
            if c["field"] in _CHANGE_NAMED:
                ids = (v for v in (c["old"], c["new"]) if isinstance(v, int) and not isinstance(v, bool))
                wanted.setdefault(c["field"], set()).update(ids)
    out = {}
    for name, ids in wanted.items():
        model, attr = _CHANGE_NAMED[name]
        out[name] = dict(model.objects.filter(pk__in=ids).values_list("pk", attr)) if ids else {}
    return out


def _same_action(
    records: list[dict], *, subject: str, who: str | None, at: datetime, change: dict
) -> list[dict]:
    """``records`` without the status change a journal entry (by ``who`` at ``at``) made: the
    nearest record change of the cable that made that change, by that user (or by nobody named:
    a service called outside a request), within ``SAME_ACTION``. Its other changes, if any, stay."""
    near = [
        e
        for e in records
        if e["subject"] == subject
        and change in e["changes"]
        and e["who"] in (who, None)
        and abs(e["when"] - at) <= SAME_ACTION
    ]
    if not near:
        return records
    same = min(near, key=lambda e: abs(e["when"] - at))
    rest = [c for c in same["changes"] if c != change]
    return [e if e is not same else {**e, "changes": rest} for e in records if e is not same or rest]


def _human_change(change: dict, names: dict[int, str] | None = None) -> dict:
    """``status: in_production -> faulty`` as ``Status: In production -> Faulty``; a day or a
    moment (``retest_due``, ``retired_at``) as the page's ``day`` and ``when`` filters say it
    (``6 Mar 2027``, ``today 14:05``), never in ISO; a yes/no field (an end's ``active``) as
    yes or no, never ``True``; another record by its name (``names``: id -> name)."""
    domain = CHANGE_DOMAINS.get(change["field"], "")
    name = word(change["field"])
    today = timezone.localdate()

    def said(value):
        if value in (None, ""):
            return None
        if isinstance(value, bool):
            return "yes" if value else "no"
        if names and value in names:
            return names[value]
        try:
            if isinstance(value, str) and _ISO_MOMENT.match(value):  # retired_at and other moments
                return human_when(timezone.localtime(datetime.fromisoformat(value)), today=today)
            if isinstance(value, str) and _ISO_DAY.match(value):  # retest_due, install_date
                return human_date(date.fromisoformat(value), today=today)
        except ValueError:
            return value
        return word(value, domain)

    return {"field": name[:1].upper() + name[1:], "old": said(change["old"]), "new": said(change["new"])}


WHY_STATUSES = (CableStatus.DEGRADED, CableStatus.FAULTY)
# The reason an alert writes when it degrades a cable (``services.alerts.lifecycle``):
# "alert link_flap #12: ...".
_DEGRADED_BY = re.compile(r"alert \w+ #(\d+): ")


def status_why(
    cable: Cable, history: list[dict], shown: FaultFact | None = None, alerts: tuple[int, ...] = ()
) -> dict | None:
    """Why a degraded or faulty cable is so, for its first screen: the change that set the status
    (newest first in ``history``, already read for the page): its reason, who and when. A fault
    report's reason is what was seen ("jacket pinched at U12"), unless it is the fault the
    headline already says (``shown``, ``Decision.fault``): then ``above`` and who and when only.
    So too for a degradation by an alert the first screen shows (``alerts``, their ids): its
    summary stands in that alert's card already, and the phone's first screen has no room for it
    twice."""
    if cable.status not in WHY_STATUSES:
        return None
    now_word = word(cable.status, "status")
    setting = [
        e for e in history if any(c["field"] == "Status" and c["new"] == now_word for c in e["changes"])
    ]
    # A fault report writes a journal entry (what was seen) and the status change beside it:
    # the words of the person who saw it say more than the change's reason.
    e = next((e for e in setting if e.get("note")), setting[0] if setting else None)
    if e is not None:
        above = ""
        if e.get("note") and shown and (e["when"], e["reason"]) == (shown.at, shown.text):
            above = "the fault reported above"
        elif (by := _DEGRADED_BY.match(e["reason"] or "")) and int(by[1]) in alerts:
            above = f"the alert above (#{by[1]})"
        reason = "" if above else e["reason"]
        return {"when": e["when"], "who": e["who"], "reason": reason, "created": False, "above": above}
    # Never changed since it was recorded so: the record's creation says why, if anything does.
    created = next((e for e in reversed(history) if e["what"] == "created" and not e.get("note")), None)
    if created is not None:
        return {"when": created["when"], "who": created["who"], "reason": created["reason"], "created": True}
    return {"when": None, "who": None, "reason": "", "created": False}


def link_far_ends(trace) -> dict | None:
    """The two ends of the link a patched cable is one segment of (the first screen shows where
    the light really goes): only when the path runs through more than this cable."""
    if trace is None or trace.far is None or len(trace.segments) < 2:
        return None
    ends = [trace.start, trace.far]
    # The cage on the faceplate (what the technician looks for), then the logical port.
    cages = {
        pk: (cage, conn)
        for pk, cage, conn in Port.objects.filter(pk__in=[p.port_id for p in ends if p.port_id]).values_list(
            "pk", "cage__name", "connector"
        )
    }
    out = []
    for p in ends:
        cage, conn = cages.get(p.port_id, (None, None))
        spot = f"{cage}/{conn}" if cage and (conn or 1) > 1 else (cage or "")
        out.append({"rack": p.rack, "u": p.u, "device": p.device, "cage": spot, "port": p.name})
    return {"start": out[0], "far": out[1], "via": [s.label for s in trace.segments]}


def cable_actions(cable: Cable, ends: list[EndView] | None = None) -> dict:
    """The one-tap actions, each a URL (None on a retired cable; a swap only where an end
    plugs into a module cage and the module is not the cable itself, as it is on a DAC or AOC).
    ``ends`` None: the ends are not known, and a swap is offered on any cable not sealed."""
    label = cable.label
    live = cable.status != CableStatus.RETIRED
    optical = live and cable.kind in CableKind.fibre()  # sealed and copper cables take no optical test
    return {
        "olts": reverse("cable-test-olts", args=[label]) if optical else None,
        "otdr": reverse("cable-test-otdr", args=[label]) if optical else None,
        "inspect": reverse("cable-inspect", args=[label]) if optical else None,
        "fault": reverse("cable-fault", args=[label]) if live else None,
        "swap": reverse("cable-swap", args=[label])
        if live and not cable.is_sealed and (ends is None or any(v.module_cage for v in ends))
        else None,
        "replace": reverse("cable-replace", args=[label]) if live else None,
        "serviced": reverse("cable-serviced", args=[label]) if live else None,
        "edit": reverse("cable-edit", args=[label]) if live else None,
        "note": reverse("journal-add", args=["cable", label]) if live else None,
        "print": reverse("labels-print"),
        "status": reverse("cable-set-status", args=[label]) if live else None,
    }


_CABLE_ENDS = CompiledRead(lambda cable_id: _page_ends(cable_id=cable_id))


# Whether it replaced other cables rides along (an EXISTS), so most pages skip that read.
_CABLE_BY_LABEL = CompiledRead(
    lambda label: (
        Cable.objects.select_related("vendor", "replaced_by")
        .annotate(replaces_any=Exists(Cable.objects.filter(replaced_by=OuterRef("pk"))))
        .filter(label=label)
        .order_by()[:1]
    )
)


def cable_by_label(label: str) -> Cable | None:
    """The cable a label (a QR scan) names, with its vendor and replacement, or None."""
    found = _CABLE_BY_LABEL(label)
    return found[0] if found else None


def cable_page_ends(cable: Cable) -> list[EndView]:
    ends = _CABLE_ENDS(cable.pk)
    for e in ends:
        e.cable = cable  # as ``cable.ends`` would: no read of the cable per end
    return _end_views(cable.pk, ends)


def top_alert(alerts: list) -> object | None:
    """The most severe open alert (the newest among equals): the one the first screen shows."""
    if not alerts:
        return None
    return max(alerts, key=lambda a: (SEVERITY_ORDER.get(a.severity, 0), a.opened_at))


ACTION_WORDS = {
    "olts": "Record the power-meter test",
    "otdr": "Record the OTDR test",
    "inspect": "Inspect the end-faces",
    "fault": "Report a fault",
    "serviced": "Re-seated / cleaned",
    "swap": "Swap a module",
    "replace": "Replace the cable",
    "edit": "Edit",
    "note": "Add a note",
    "print": "Print label",
}


# The permission (``cable_actions`` key) each step of the decision needs; alert and segment
# steps are links anyone may follow.
_STEP_ACTION = {"status": "status", "olts": "olts", "otdr": "otdr", "replace": "replace"}

# Which permission (``authz.ACTIONS``) each of the cable page's actions needs.
ACTION_RULES = {
    "olts": "record_test",
    "otdr": "record_test",
    "inspect": "inspect",
    "fault": "report_fault",
    "note": "journal",
    "serviced": "service_cable",
    "swap": "swap_module",
    "replace": "replace_cable",
    "edit": "edit_cable",
    "status": "edit_cable",
}


def step_rule(step) -> str | None:
    """The permission (``authz.ACTIONS``) a decision's next step needs; None: a link anyone may
    follow (an alert, another segment)."""
    need = _STEP_ACTION.get(step.key) if step is not None else None
    return ACTION_RULES[need] if need else None


def step_links(user, decisions: dict[int, Decision]) -> set[int]:
    """The cables (of ``decisions``: cable id -> decision) whose next step a list row may link:
    one the user may take (the cable page's own rule, their sites read in one query per
    permission) and whose URL is a page (``Step.opens_a_page``)."""
    need: dict[str, list[int]] = {}
    out = set()
    for cid, d in decisions.items():
        if d.step is None or not d.step.opens_a_page:
            continue
        rule = step_rule(d.step)
        if rule is None:
            out.add(cid)
        else:
            need.setdefault(rule, []).append(cid)
    for rule, ids in need.items():
        out |= authz.allowed_cable_ids(user, rule, ids)
    return out


def page_step(decision: Decision, actions: dict) -> dict | None:
    """The decision's next step as the page draws it: with its button only when the user may take it."""
    step = decision.step
    if step is None:
        return None
    need = _STEP_ACTION.get(step.key)
    allowed = need is None or bool(actions.get(need))
    return {
        "key": step.key,
        "label": step.label,
        "reason": step.reason,
        "url": step.url,
        "status": step.status,
        "allowed": allowed and bool(step.url),
    }


def _action_list(actions: dict, step: dict | None) -> list[dict]:
    """Every action once, in the order a technician reaches for them; the next step is not repeated."""
    order = ("olts", "otdr", "inspect", "serviced", "swap", "fault", "note", "replace", "edit", "print")
    skip = step["key"] if step and step["allowed"] else None
    return [
        {"key": k, "label": ACTION_WORDS[k], "url": actions[k]} for k in order if actions.get(k) and k != skip
    ]


def focus_link(decision: Decision, top: object | None) -> int | None:
    """The link a trunk's page draws whole: the one its first failure is on, else the one of its
    most severe open alert (None: the trunk's first link)."""
    named = next((f.link_id for f in (*decision.elsewhere, *decision.fails) if f.link_id), None)
    return named or getattr(top, "link_id", None)


def cable_page(cable: Cable, *, may: dict[str, bool] | None = None) -> dict:
    """Everything the cable page shows. ``may``: action key -> whether the user may take it
    (the view asks ``authz``); actions the user may not take are not offered."""
    today = timezone.localdate()
    end_views = cable_page_ends(cable)
    links = cable_links(cable)  # read once: the trace, alerts and test panels share them
    live = cable.status != CableStatus.RETIRED
    # A trunk draws the link its decision names: after the decision (below).
    trace, link_count, link_rows = (
        cable_trace(cable, end_views, links)
        if live and len(links) < 2
        else (None, len(links) if live else 0, None)
    )
    journal = journal_for(cable)
    notes = journal["entries"]
    retest = retest_state(cable.retest_due, today, cable.status)
    actions = cable_actions(cable, end_views)
    if may is not None:
        actions = {k: (url if may.get(k, False) else None) for k, url in actions.items()}
    ctx = {
        "cable": cable,
        "ends": end_views,
        "trace": trace,
        "link_count": link_count,
        "today": today,
        "retest": retest,
        "overdue": retest == "overdue",
        "notes": notes,
        "journal": journal,
        "history": _history(cable, notes, end_views),
        # ``replaces_any``: the cable page's read says whether there is anything to list.
        "replaces": list(cable.replaces.all().only("label")) if getattr(cable, "replaces_any", True) else [],
        "actions": actions,
        "is_trunk": link_count > 1,
        "links": links,
        "is_sealed": cable.kind in CableKind.sealed(),
    }
    ctx.update(cable_alerts_context(cable, links=links))
    ctx.update(cable_tests_context(cable, links=links, link_rows=link_rows))
    ctx.update(cable_traces_context(cable, otdr_tested=ctx["cable_tests"]["otdr"] is not None))
    ct = ctx["cable_tests"]
    evidence = cable_evidence(
        cable,
        own=ct["own_latest"],
        links=ct["links"],
        missing=ct["gate_missing"],
        alerts=[alert_fact(a) for a in ctx["cable_alerts"]],
        faults=[FaultFact(n.text, n.at) for n in journal["open"] if n.kind == FieldNoteKind.FAULT],
        today=today,
        replaced_by=cable.replaced_by.label if cable.replaced_by_id else "",
        drained_until=max((lk.drained_until for lk in links if lk.drained_until), default=None),
        drained_links=[
            link_words(
                f"{lk.a_port.device.name}:{lk.a_port.name}", f"{lk.b_port.device.name}:{lk.b_port.name}"
            )
            for lk in links
            if lk.drained_until
        ],
        drain_overdue=max(
            ((lk.overdue_since, lk.overdue_ended, lk.overdue_alert) for lk in links if lk.overdue_since),
            default=None,
        ),
    )
    decision = cable_decide(evidence)
    # an open fault no test has settled yet is not closed by hand (``fault_settled``): its card
    # says what settles it instead of offering "Close"
    for n in journal["open"]:
        n.awaits_test = (
            n.kind == FieldNoteKind.FAULT
            and evidence.gated
            and not fault_settled(n.at, evidence.last_test_at)
        )
    decision.step = step_with_url(decision.step, cable.label)
    step = page_step(decision, actions)
    # An engineer may put the cable in production over an open alert, with a reason for the journal.
    override = bool(
        decision.state == "alert"
        and may is not None
        and may.get("override")
        and actions.get("status")
        and not decision.fails
        and not evidence.missing
        and cable.status != CableStatus.IN_PRODUCTION
    )
    top = top_alert(ctx["cable_alerts"])
    if live and link_count > 1:
        trace = cable_trace(cable, end_views, links, focus=focus_link(decision, top))[0]
    ctx.update(
        trace=trace,
        elsewhere_lead=ELSEWHERE,
        alert_carried_lead=ALERT_CARRIED,
        status_why=status_why(cable, ctx["history"], decision.fault, tuple(a.id for a in decision.alerts)),
        link_ends=link_far_ends(trace),
        decision=decision,
        next_step=step,
        # "Mark installed" offers the day of its first test when it has one (it was in by then)
        install_day=(first_test_day(cable.pk) or today)
        if step and step.get("status") == CableStatus.INSTALLED
        else None,
        override=override,
        moved_alerts=moved_alerts(cable) if cable.status == CableStatus.RETIRED else [],
        action_list=_action_list(actions, step),
        top_alert=top,
        other_alerts=[a for a in ctx["cable_alerts"] if a is not top],
        passing=PASSING,
        impact=page_impact(cable_impact(cable=cable, **recent()), "cable"),
    )
    return ctx
