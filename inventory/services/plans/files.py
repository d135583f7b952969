"""Plan files: the cable plan engineers write (YAML or CSV), and NetBox's bulk-import CSV.

All of them read into the same rows ``cable_plan_import`` takes (dry run, then apply), and
write back out from the recorded plant, so a round trip is lossless.
"""

from __future__ import annotations

import csv
import io
from decimal import InvalidOperation

import yaml

from inventory.core import csvsafe
from inventory.core.choices import CableStatus
from inventory.core.interop.netbox_vocab import (
    CABLE_TYPE_FROM_NETBOX,
    LengthUnitError,
    cable_to_netbox,
    length_in_m,
)
from inventory.models import Cable, CableEnd, ExternalRef
from inventory.services.plans.cable_plan import MAX_ROWS

PLAN_COLUMNS = [
    "label",
    "kind",
    "role",
    "a_device",
    "a_port",
    "b_device",
    "b_port",
    "polarity",
    "length_m",
    "vendor",
    "part_number",
    "serial_a",
    "serial_b",
    "lot",
    "install_date",
    "status",
    "notes",
    "a_connector",
    "a_fibres",
    "a_pinned",
    "a_polish",
    "b_connector",
    "b_fibres",
    "b_pinned",
    "b_polish",
]


class PlanFileError(ValueError):
    pass


# --- reading --------------------------------------------------------------------------------
# A YAML plan is read with limits before the work: at most YAML_MAX_BYTES (a 20,000-cable plan
# as ``plan_export`` writes it is about 6 MB), no aliases or anchors (a 567-byte "billion
# laughs" expands to gigabytes), cables counted as they are parsed (refused at MAX_ROWS + 1,
# before the rest is read), nesting and nodes bounded. The parser's events are turned into rows
# directly (no node tree of the whole document: that tree cost about 80 bytes per byte of YAML).
YAML_MAX_BYTES = 16 * 1024 * 1024
YAML_MAX_DEPTH = 8
YAML_NODES_PER_ROW = 80
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser when it is built


class _PlanYaml:
    def __init__(self, text: str):
        self.loader = _Loader(text)
        self.nodes = 0
        self.budget = (MAX_ROWS + 1) * YAML_NODES_PER_ROW

    def document(self):
        ld = self.loader
        ld.get_event()  # stream start
        if ld.check_event(yaml.StreamEndEvent):
            return None
        ld.get_event()  # document start
        data = self.value(0, cables=True)
        ld.get_event()  # document end
        if not ld.check_event(yaml.StreamEndEvent):
            raise PlanFileError("A plan is one YAML document.")
        return data

    def value(self, depth: int, *, cables: bool = False):
        ld = self.loader
        event = ld.get_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise PlanFileError("YAML aliases and anchors (*name, &name, <<) are not accepted in a plan.")
        self.nodes += 1
        if self.nodes > self.budget:
            raise PlanFileError(f"The YAML plan is larger than any plan of {MAX_ROWS:,} cables.")
        if depth > YAML_MAX_DEPTH:
            raise PlanFileError("The YAML plan is nested too deeply.")
        if isinstance(event, yaml.ScalarEvent):
            tag = event.tag
            if tag is None or tag == "!":
                tag = ld.resolve(yaml.ScalarNode, event.value, event.implicit)
            if tag == "tag:yaml.org,2002:timestamp":
                # As written: the row reads the date, and names one that is none (2026-02-30),
                # which YAML's own reading raised as a 500 for the whole file.
                return event.value
            build = ld.yaml_constructors.get(tag, ld.yaml_constructors[None])
            return build(ld, yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style))
        if isinstance(event, yaml.SequenceStartEvent):
            items = []
            while not ld.check_event(yaml.SequenceEndEvent):
                items.append(self.value(depth + 1))
                if cables and len(items) > MAX_ROWS:
                    raise PlanFileError(
                        f"The plan has more than {MAX_ROWS:,} cables; at most {MAX_ROWS:,} per import."
                    )
            ld.get_event()
            return items
        if isinstance(event, yaml.MappingStartEvent):
            out = {}
            while not ld.check_event(yaml.MappingEndEvent):
                key = self.value(depth + 1)
                if isinstance(key, (list, dict)):
                    raise PlanFileError("A YAML key must be a plain name.")
                out[key] = self.value(depth + 1, cables=depth == 0 and key == "cables")
            ld.get_event()
            return out
        raise PlanFileError(f"Unexpected YAML {type(event).__name__}.")  # pragma: no cover - libyaml's order


def plan_rows_from_yaml(text: str) -> list[dict]:
    """``cables:`` list of mappings with the plan columns; ``a:``/``b:`` may be nested."""
    if len(text) > YAML_MAX_BYTES:
        raise PlanFileError(
            f"A YAML plan is at most {YAML_MAX_BYTES // (1024 * 1024)} MiB; split it, or send CSV."
        )
    reader = _PlanYaml(text)
    try:
        doc = reader.document()
    except yaml.YAMLError as exc:
        raise PlanFileError(f"Not valid YAML: {exc}") from exc
    finally:
        reader.loader.dispose()
    items = doc.get("cables") if isinstance(doc, dict) else doc
    if not isinstance(items, list):
        raise PlanFileError("Expected a list under 'cables:'.")
    rows = []
    for item in items:
        if not isinstance(item, dict):
            raise PlanFileError("Every cable is a mapping of columns.")
        row = {k: v for k, v in item.items() if k not in ("a", "b")}
        for side in ("a", "b"):
            end = item.get(side)
            if isinstance(end, dict):
                for k, v in end.items():
                    row[f"{side}_{'port' if k == 'port' else k}"] = v
        if isinstance(row.get("b_port"), list):
            row["b_port"] = ";".join(map(str, row["b_port"]))
        rows.append({k: "" if v is None else str(v) for k, v in row.items()})
    return rows


PLAN_CSV_REQUIRED = ("label", "a_device", "a_port", "b_device", "b_port")


def csv_dict_rows(text: str) -> list[dict]:
    """CSV text -> one dict per row, or ``PlanFileError`` in words.

    Universal newlines (a lone CR ends a row, as old spreadsheet exports write them), and the
    csv module's own refusals (a NUL byte, an over-long field) become a clear error instead of
    escaping as a server error. Cells beyond the header row are dropped (``DictReader`` would
    keep them as a list under the key ``None``). A cell our exports neutralised against formula
    injection (``'=...``, ``csvsafe``) reads back as it was recorded."""
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff"), newline=None))
    try:
        return [
            {k: csvsafe.unescape(v) if isinstance(v, str) else v for k, v in row.items() if k is not None}
            for row in reader
        ]
    except csv.Error as exc:
        raise PlanFileError(f"Not a readable CSV file (line {reader.line_num}): {exc}.") from None


def plan_rows_from_csv(text: str) -> list[dict]:
    """The plan CSV, read alike for the desk import page and ``POST /api/cables/import/``.

    Headers are stripped and lower-cased (a spreadsheet's ``" Label"`` or ``"A_Device"`` is
    the ``label`` / ``a_device`` column), every cell is stripped (a missing trailing cell reads
    as ``""``), and rows with no value at all (a spreadsheet's ``,,,,`` line) are dropped
    instead of each failing the whole import as a cable without a label."""
    rows = []
    for row in csv_dict_rows(text):
        clean = {k.strip().lower(): (v or "").strip() for k, v in row.items()}
        if any(clean.values()):
            rows.append(clean)
    if rows and (missing := [c for c in PLAN_CSV_REQUIRED if c not in rows[0]]):
        # A file whose header names none (or not all) of the columns: one error that says
        # which, not "Required." five times on every row.
        raise PlanFileError(
            f"The header lacks the column{'s' if len(missing) > 1 else ''} {', '.join(missing)}; "
            f"a plan CSV needs {', '.join(PLAN_CSV_REQUIRED)} (as the plan export writes them)."
        )
    return rows


def plan_rows_from_netbox_csv(text: str) -> list[dict]:
    """NetBox's cable bulk-import CSV (``side_a_device, side_a_type, side_a_name, ...``)."""
    rows = []
    for raw in csv_dict_rows(text):
        unit = (raw.get("length_unit") or "m").strip()
        length = (raw.get("length") or "").strip()
        errors = {}
        try:
            length_m = str(length_in_m(length, unit)) if length else ""
        except InvalidOperation:  # not a number (or past any length): the row's error says so
            length_m = length
        except LengthUnitError as exc:  # never read as metres: the row's error names the unit
            length_m, errors["length_m"] = "", str(exc)
        status = (raw.get("status") or "connected").strip()
        install = (raw.get("cf_install_date") or "").strip()
        rows.append(
            {
                "label": (raw.get("label") or "").strip(),
                "kind": CABLE_TYPE_FROM_NETBOX.get(
                    (raw.get("type") or "").strip(), (raw.get("type") or "").strip()
                ),
                "a_device": raw.get("side_a_device", ""),
                "a_port": raw.get("side_a_name", ""),
                "b_device": raw.get("side_b_device", ""),
                "b_port": raw.get("side_b_name", ""),
                "length_m": length_m,
                "install_date": install,
                "status": "planned" if status == "planned" else ("installed" if install else "planned"),
                "notes": raw.get("description", ""),
                "polarity": (raw.get("cf_polarity") or "").strip(),
                **({"_errors": errors} if errors else {}),
            }
        )
    return rows


def plan_rows_from_topology(text: str, *, kind: str = "") -> tuple[list[dict], int]:
    """The expected-topology port list (``GET /api/topology/txt/``) read back as plan rows.

    Each line is ``a_device a_port b_device b_port cables``. A line with one cable becomes
    that cable's row: a cable recorded here keeps its recorded attributes (so an unchanged
    plant reads back *unchanged*, and moved ends show as a change), a new one takes ``kind``.
    A line through patch panels names several cables but not the panel ports between them:
    when all its cables are recorded here it is counted as already recorded, otherwise it is an
    error row (import such paths from the YAML plan). Returns (rows, paths already recorded).
    """
    lines = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 5:
            raise PlanFileError(
                f"Line {n}: expected 'a_device a_port b_device b_port cables', got {len(parts)} fields."
            )
        lines.append((parts, [c for c in parts[4].split(",") if c and c != "-"]))
    labels = {label for _, cables in lines for label in cables}
    recorded = (
        Cable.objects.exclude(status=CableStatus.RETIRED).filter(label__in=labels).select_related("vendor")
    )
    known = {r["label"]: r for r in _plan_dicts(list(recorded))}
    rows, already = [], 0
    for (a_dev, a_port, b_dev, b_port, names), cables in lines:
        if len(cables) == 1:
            row = dict(known.get(cables[0]) or {"label": cables[0], "kind": kind})
            row.update(a_device=a_dev, a_port=a_port, b_device=b_dev, b_port=b_port)
            if cables[0] in known and (known[cables[0]]["a_device"], known[cables[0]]["a_port"]) == (
                b_dev,
                b_port,
            ):
                row.update(
                    a_device=b_dev, a_port=b_port, b_device=a_dev, b_port=a_port
                )  # listed switch first
            if not row.get("kind"):
                row["_error"] = "A new cable needs a kind: give ?kind= (e.g. SMF_OS2, AOC, DAC)."
            rows.append(row)
        elif cables and all(c in known for c in cables):
            already += 1
        else:
            rows.append(
                {
                    "label": names,
                    "_error": f"{a_dev} {a_port} to {b_dev} {b_port} runs through patch panels "
                    f"(cables {', '.join(cables) or 'unlabelled'}); a port list cannot say which panel "
                    "ports: import this path from the YAML plan.",
                }
            )
    return rows, already


# --- writing --------------------------------------------------------------------------------
def _plan_dicts(cables) -> list[dict]:
    ends = (
        CableEnd.objects.filter(cable__in=cables, active=True)
        .select_related("port__device", "cage__device")
        .order_by("cable_id", "side", "leg")
    )
    by_cable: dict[int, list[CableEnd]] = {}
    for e in ends:
        by_cable.setdefault(e.cable_id, []).append(e)
    out = []
    for c in cables:
        row = {k: "" for k in PLAN_COLUMNS}
        row.update(
            label=c.label,
            kind=str(c.kind),
            role=str(c.role),
            polarity=str(c.polarity),
            length_m=str(c.length_m) if c.length_m is not None else "",
            vendor=c.vendor.name if c.vendor else "",
            part_number=c.part_number,
            serial_a=c.serial_a,
            serial_b=c.serial_b,
            lot=c.lot,
            install_date=c.install_date.isoformat() if c.install_date else "",
            status="planned" if c.status == CableStatus.PLANNED else "installed",
            notes=c.notes,
        )
        for side in ("A", "B"):
            legs = [e for e in by_cable.get(c.pk, []) if e.side == side]
            if not legs:
                continue
            s = side.lower()
            names = [_port_name(e) for e in legs]
            row[f"{s}_device"] = names[0][0]
            row[f"{s}_port"] = ";".join(n for _, n in names)
            e = legs[0]
            row[f"{s}_connector"] = str(e.connector_type)
            row[f"{s}_fibres"] = str(e.fibre_count) if e.fibre_count else ""
            row[f"{s}_pinned"] = "" if e.pinned is None else ("yes" if e.pinned else "no")
            row[f"{s}_polish"] = str(e.polish)
        out.append(row)
    return out


def _port_name(end: CableEnd) -> tuple[str, str]:
    if end.port_id:
        return end.port.device.name, end.port.name
    port = (
        end.cage.ports.filter(connector=end.connector, retired_at__isnull=True).order_by("lane_start").first()
    )
    return end.cage.device.name, port.name if port else f"{end.cage.name}/{end.connector}"


def plan_export(*, cables=None, fmt: str = "yaml") -> str:
    """The recorded plant as a plan file (``yaml`` or ``csv``) that imports back unchanged."""
    cables = list(
        (cables if cables is not None else Cable.objects.exclude(status=CableStatus.RETIRED))
        .select_related("vendor")
        .order_by("label")
    )
    rows = _plan_dicts(cables)
    if fmt == "csv":
        buf = io.StringIO()
        w = csvsafe.DictWriter(buf, fieldnames=PLAN_COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
        return buf.getvalue()
    if fmt != "yaml":
        raise PlanFileError("Format is yaml or csv.")
    compact = [{k: v for k, v in r.items() if v != ""} for r in rows]
    return yaml.safe_dump({"cables": compact}, sort_keys=False, allow_unicode=True)


NETBOX_CSV_COLUMNS = [
    "side_a_site",
    "side_a_device",
    "side_a_type",
    "side_a_name",
    "side_b_site",
    "side_b_device",
    "side_b_type",
    "side_b_name",
    "type",
    "status",
    "profile",
    "label",
    "color",
    "length",
    "length_unit",
    "description",
    "cf_install_date",
    "cf_polarity",
    "tags",
    "comments",
]


def netbox_csv_export(*, cables=None) -> tuple[str, list[dict]]:
    """Cables in NetBox's bulk-import CSV, for sites without API access, and what it left out.

    Returns ``(csv text, not exported)``: NetBox's cable CSV takes one termination per side, so
    a harness with several terminations on a side is never written as something else (one row
    per leg would be several cables in NetBox): it is listed, with why, for the API or by hand.
    Type, status, length and unit, and profile are NetBox's own values where the cable came
    from NetBox and still is what it became here (``netbox_vocab.cable_to_netbox``).
    """
    cables = list(
        (cables if cables is not None else Cable.objects.exclude(status=CableStatus.RETIRED))
        .select_related("vendor")
        .order_by("label")
    )
    rows = _plan_dicts(cables)
    by_label = {c.label: c for c in cables}
    kept: dict[int, dict] = {}
    for object_id, attributes in (
        ExternalRef.objects.filter(kind="cable", object_id__in=[c.pk for c in cables])
        .order_by("seen_at")
        .values_list("object_id", "attributes")
    ):
        kept[object_id] = attributes  # the most recently seen source wins
    buf = io.StringIO()
    w = csvsafe.DictWriter(buf, fieldnames=NETBOX_CSV_COLUMNS, lineterminator="\r\n")
    w.writeheader()
    nb_type = {"front": "dcim.frontport", "rear": "dcim.rearport"}
    end_kind, end_site = {}, {}
    for cid, side, kind, port_site, cage_site in CableEnd.objects.filter(
        cable__in=cables, active=True
    ).values_list(
        "cable_id",
        "side",
        "port__kind",
        "port__device__rack__row__room__site__name",
        "cage__device__rack__row__room__site__name",
    ):
        end_kind[(cid, side)] = nb_type.get(kind or "", "dcim.interface")
        # NetBox names a device within its site: the site qualifies the device name.
        end_site.setdefault((cid, side), port_site or cage_site or "")
    not_exported = []
    for r in rows:
        c = by_label[r["label"]]
        legs = {side: len([n for n in r[f"{side}_port"].split(";") if n]) for side in ("a", "b")}
        if legs["a"] > 1 or legs["b"] > 1:
            not_exported.append(
                {
                    "label": c.label,
                    "reason": f"{legs['a']} terminations on side A and {legs['b']} on side B: NetBox's "
                    "cable CSV takes one termination per side (one row per leg would make separate "
                    "cables); add it through NetBox's API or UI",
                }
            )
            continue

        def term(side, cable_id=c.pk):
            return end_kind.get((cable_id, side.upper()), "dcim.interface")

        netbox = cable_to_netbox(kind=c.kind, status=c.status, length_m=c.length_m, kept=kept.get(c.pk))
        nb_kept = (kept.get(c.pk) or {}).get("netbox") or {}
        w.writerow(
            {
                "side_a_site": end_site.get((c.pk, "A"), ""),
                "side_b_site": end_site.get((c.pk, "B"), ""),
                "tags": nb_kept.get("tags") or "",
                "comments": nb_kept.get("comments") or "",
                "side_a_device": r["a_device"],
                "side_a_type": term("a"),
                "side_a_name": r["a_port"],
                "side_b_device": r["b_device"],
                "side_b_type": term("b"),
                "side_b_name": r["b_port"],
                **netbox,
                "label": c.label,
                "color": c.color,
                "description": c.notes,
                "cf_install_date": r["install_date"],
                # NetBox has no polarity field: a custom field, so the CSV imports back unchanged.
                "cf_polarity": r["polarity"],
            }
        )
    return buf.getvalue(), not_exported
