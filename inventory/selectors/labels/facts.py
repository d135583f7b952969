"""What goes on labels: selections resolved to ids, and label facts gathered set-based.

``cable_label_facts`` reads any number of cables in a fixed number of queries per chunk of
``CHUNK`` cables (cables with their install date, ends with rack/U/device/cage/port, the logical
ports of cage ends; no test result: it lives behind the QR code) and returns the pure ``inventory.core.labels`` dataclasses the renderers take.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime

from django.core.exceptions import ValidationError
from django.db.models import Q

from inventory.core.choices import CableStatus
from inventory.core.labels import CableLabel, EndInfo, RackLabel
from inventory.core.links import cable_url, rack_url
from inventory.core.validators import is_whole_number
from inventory.models import Cable, CableEnd, Port, Rack, Row

CHUNK = 1000


@dataclass(frozen=True)
class LabelSelection:
    """Which labels to print. ``cables``, ``racks`` and ``rows`` add up (a union);
    ``changed_since`` narrows them, or on its own selects every cable changed since then."""

    cables: tuple[str, ...] = ()  # cable labels or ids
    racks: tuple[str, ...] = ()  # rack names
    rows: tuple[str, ...] = ()  # row id, "Row", "Room/Row" or "Site/Room/Row"
    changed_since: datetime | None = None

    @property
    def empty(self) -> bool:
        return not (self.cables or self.racks or self.rows or self.changed_since)

    def describe(self) -> str:
        parts = []
        if self.cables:
            parts.append(f"{len(self.cables)} cable(s)" if len(self.cables) > 3 else ", ".join(self.cables))
        if self.racks:
            parts.append("rack " + ", ".join(self.racks))
        if self.rows:
            parts.append("row " + ", ".join(self.rows))
        if self.changed_since:
            parts.append(f"changed since {self.changed_since:%Y-%m-%d %H:%M}")
        return "; ".join(parts)[:200]


def _racks_by_name(names: tuple[str, ...]) -> list[Rack]:
    racks = {r.name: r for r in Rack.objects.filter(name__in=names)}
    missing = [n for n in names if n not in racks]
    if missing:
        raise ValidationError({"rack": f"No rack named {', '.join(missing)}."})
    return [racks[n] for n in names]


MAX_ID = 2**63 - 1  # the largest id a bigint key holds: a larger number names nothing


def rows_resolve(*, specs: tuple[str, ...]) -> list[Row]:
    """Rows by id, ``Row``, ``Room/Row`` or ``Site/Room/Row``; ambiguous or unknown is an error."""
    found, errors = [], []
    for spec in specs:
        parts = [p.strip() for p in spec.split("/")]
        if is_whole_number(spec.strip()) and int(spec) <= MAX_ID:
            qs = Row.objects.filter(pk=int(spec))
        elif len(parts) == 1:
            qs = Row.objects.filter(name=parts[0])
        elif len(parts) == 2:
            qs = Row.objects.filter(room__name=parts[0], name=parts[1])
        elif len(parts) == 3:
            qs = Row.objects.filter(room__site__name=parts[0], room__name=parts[1], name=parts[2])
        else:
            qs = Row.objects.none()
        rows = list(qs.select_related("room__site")[:5])
        if not rows:
            errors.append(f"No row {spec!r}.")
        elif len(rows) > 1:
            names = ", ".join(f"{r.room.site.name}/{r.room.name}/{r.name}" for r in rows)
            errors.append(f"Row {spec!r} is ambiguous ({names}); give Room/Row or Site/Room/Row.")
        else:
            found.append(rows[0])
    if errors:
        raise ValidationError({"row": errors})
    return found


def _cables_by_ref(refs: tuple[str, ...]) -> list[int]:
    """Cable ids for labels or ids (a value is a label first, an id if no cable has that label)."""
    refs = tuple(r.strip() for r in refs if r.strip())
    by_label = dict(Cable.objects.filter(label__in=refs).values_list("label", "pk"))
    rest = [r for r in refs if r not in by_label]
    numeric = {int(r) for r in rest if is_whole_number(r) and int(r) <= MAX_ID}
    by_id = set(Cable.objects.filter(pk__in=numeric).values_list("pk", flat=True)) if numeric else set()
    missing = [r for r in rest if not (is_whole_number(r) and int(r) in by_id)]
    if missing:
        shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
        raise ValidationError({"cable": f"No cable {shown}."})
    ids = [by_label[r] if r in by_label else int(r) for r in refs]
    return list(dict.fromkeys(ids))


def _on_racks(rack_filter: Q) -> Q:
    ends = CableEnd.objects.filter(active=True).filter(rack_filter).values("cable_id")
    return Q(pk__in=ends)


def label_cable_ids(*, selection: LabelSelection) -> list[int]:
    """The cables a selection names, ordered by label. Raises ValidationError per field."""
    if selection.empty:
        raise ValidationError({"__all__": "Choose cables, a rack, a row or a date to print labels for."})
    where = Q(pk__in=[])
    explicit: list[int] = []
    if selection.cables:
        explicit = _cables_by_ref(selection.cables)
        where |= Q(pk__in=explicit)
    if selection.racks:
        racks = _racks_by_name(selection.racks)
        where |= _on_racks(Q(port__device__rack__in=racks) | Q(cage__device__rack__in=racks))
    if selection.rows:
        rows = rows_resolve(specs=selection.rows)
        where |= _on_racks(Q(port__device__rack__row__in=rows) | Q(cage__device__rack__row__in=rows))
    qs = Cable.objects.all()
    if selection.cables or selection.racks or selection.rows:
        qs = qs.filter(where)
    if selection.changed_since:
        t = selection.changed_since
        # What a label prints: the record and its ends. A new test changes no label (its result
        # is behind the QR code), so it is no reason to reprint.
        changed_ends = CableEnd.history.filter(history_date__gte=t).values("cable_id")
        qs = qs.filter(Q(updated_at__gte=t) | Q(pk__in=changed_ends))
    if not explicit:
        # Retired cables are off the plant; only an explicit request prints their labels.
        qs = qs.exclude(status=CableStatus.RETIRED)
    return list(qs.order_by("label").values_list("pk", flat=True))


def label_rack_ids(*, selection: LabelSelection) -> list[int]:
    """Racks for rack labels: the named racks and every rack in the named rows."""
    if not (selection.racks or selection.rows):
        raise ValidationError({"rack": "Rack labels need a rack or a row."})
    ids = [r.pk for r in _racks_by_name(selection.racks)] if selection.racks else []
    if selection.rows:
        rows = rows_resolve(specs=selection.rows)
        ids += list(
            Rack.objects.filter(row__in=rows)
            .order_by("row_id", "position", "name")
            .values_list("pk", flat=True)
        )
    return list(dict.fromkeys(ids))


def label_count(*, cable_ids: list[int]) -> int:
    """Printed labels for these cables: one per plug (A end, B end or every breakout leg)."""
    return sum(
        CableEnd.objects.filter(cable_id__in=cable_ids[i : i + CHUNK]).count()
        for i in range(0, len(cable_ids), CHUNK)
    )


_END_FIELDS = (
    "cable_id",
    "side",
    "leg",
    "label",
    "cage_id",
    "connector",
    "cage__name",
    "cage__device__name",
    "cage__device__position_u",
    "cage__device__rack__name",
    "port__name",
    "port__cage__name",
    "port__device__name",
    "port__device__position_u",
    "port__device__rack__name",
)


def _end_info(e: dict, logical: dict) -> EndInfo:
    if e["port__name"] is not None:
        return EndInfo(
            rack=e["port__device__rack__name"] or "",
            u=e["port__device__position_u"],
            device=e["port__device__name"] or "",
            port=e["port__name"],
            cage=e["port__cage__name"] or "",
        )
    if e["cage_id"] is not None:
        cage = e["cage__name"] + (f"/{e['connector']}" if e["connector"] and e["connector"] > 1 else "")
        return EndInfo(
            rack=e["cage__device__rack__name"] or "",
            u=e["cage__device__position_u"],
            device=e["cage__device__name"] or "",
            port=logical.get((e["cage_id"], e["connector"])) or "",
            cage=cage,
        )
    return EndInfo()


def _legs_summary(legs: list[EndInfo]) -> EndInfo:
    def common(values):
        return values[0] if len(set(values)) == 1 else None

    return EndInfo(
        rack=common([leg.rack for leg in legs]) or "",
        u=common([leg.u for leg in legs]),
        device=common([leg.device for leg in legs]) or f"{len(legs)} devices",
        port=f"{len(legs)} legs: " + ", ".join(leg.port or leg.cage for leg in legs),
    )


@dataclass(frozen=True, slots=True)
class _CableEnds:
    label: str
    installed: date | None
    a_end: dict | None
    b_ends: list[dict]
    a: EndInfo
    b_infos: list[EndInfo]
    b: EndInfo  # the B end, or a summary of the breakout's legs


def _chunk_ends(ids: list[int]) -> dict[int, _CableEnds]:
    """Each cable's ends as its labels say them, in four queries for the chunk."""
    # No test result: it goes stale with the next retest; the QR code opens the live one.
    cables = Cable.objects.filter(pk__in=ids).values("pk", "label", "install_date")
    cables = {c["pk"]: c for c in cables}
    ends = list(
        CableEnd.objects.filter(cable_id__in=ids).values(*_END_FIELDS).order_by("cable_id", "side", "leg")
    )
    cage_ids = {e["cage_id"] for e in ends if e["cage_id"] is not None}
    logical: dict[tuple[int, int], str] = {}
    if cage_ids:
        for p in (
            Port.objects.filter(cage_id__in=cage_ids, retired_at__isnull=True)
            .order_by("cage_id", "connector", "-lane_start")
            .values("cage_id", "connector", "name")
        ):
            logical[(p["cage_id"], p["connector"])] = p["name"]  # the lowest lane wins (last)
    by_cable: dict[int, list[dict]] = defaultdict(list)
    for e in ends:
        by_cable[e["cable_id"]].append(e)
    out: dict[int, _CableEnds] = {}
    for pk, c in cables.items():
        cable_ends = by_cable.get(pk, [])
        a_end = next((e for e in cable_ends if e["side"] == "A"), None)
        b_ends = [e for e in cable_ends if e["side"] == "B"]
        b_infos = [_end_info(e, logical) for e in b_ends]
        out[pk] = _CableEnds(
            label=c["label"],
            installed=c["install_date"],
            a_end=a_end,
            b_ends=b_ends,
            a=_end_info(a_end, logical) if a_end else EndInfo(),
            b_infos=b_infos,
            b=_legs_summary(b_infos) if len(b_ends) > 1 else (b_infos[0] if b_infos else EndInfo()),
        )
    return out


def _chunk_facts(ids: list[int], base_url: str) -> list[CableLabel]:
    found = _chunk_ends(ids)
    out: list[CableLabel] = []
    for pk in ids:
        c = found.get(pk)
        if c is None:
            continue
        a, b, b_ends = c.a, c.b, c.b_ends
        breakout = len(b_ends) > 1
        url = cable_url(c.label, base_url=base_url)
        common = dict(installed=c.installed)
        if c.a_end is not None or not b_ends:
            out.append(CableLabel(identifier=c.label, url=url, this_end="A", a=a, b=b, **common))
        for e, info in zip(b_ends, c.b_infos, strict=True):
            if breakout:
                ident = e["label"] or f"{c.label}-{e['leg']}"
                out.append(
                    CableLabel(identifier=ident, url=url, this_end=f"B{e['leg']}", a=a, b=info, **common)
                )
            else:
                out.append(CableLabel(identifier=c.label, url=url, this_end="B", a=a, b=info, **common))
    return out


def cable_ends_words(*, cable_ids: list[int]) -> dict[int, str]:
    """Where each cable runs, in the words its printed labels use, for a mail that sends someone
    to it: ``A R-FN U3 gpu-fn OSFP1 eth0 · B R-FN U40 leaf-fn OSFP1 Ethernet1/1``."""
    out: dict[int, str] = {}
    for i in range(0, len(cable_ids), CHUNK):
        for pk, c in _chunk_ends(cable_ids[i : i + CHUNK]).items():
            out[pk] = f"A {c.a.text()} \u00b7 B {c.b.text()}"
    return out


def cable_label_facts(*, cable_ids: list[int], base_url: str) -> list[CableLabel]:
    """One ``CableLabel`` per plug of each cable, in ``cable_ids`` order (A, then B / legs)."""
    out: list[CableLabel] = []
    for i in range(0, len(cable_ids), CHUNK):
        out += _chunk_facts(cable_ids[i : i + CHUNK], base_url)
    return out


def rack_label_facts(*, rack_ids: list[int], base_url: str) -> list[RackLabel]:
    racks = {r.pk: r for r in Rack.objects.filter(pk__in=rack_ids).select_related("row__room__site")}
    return [
        RackLabel(
            name=r.name,
            url=rack_url(r.name, base_url=base_url),
            location=f"{r.row.room.site.name} \u00b7 {r.row.room.name} \u00b7 Row {r.row.name}",
        )
        for pk in rack_ids
        if (r := racks.get(pk))
    ]
