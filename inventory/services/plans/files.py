"""Plan files: the cable plan engineers write (YAML or CSV), and NetBox's bulk-import CSV.

All of them read into the same rows ``cable_plan_import`` takes (dry run, then apply), and
write back out from the recorded plant, so a round trip is lossless.
"""

from __future__ import annotations

import csv
import io
from decimal import Decimal

import yaml

from inventory.core import csvsafe
from inventory.core.choices import CableStatus
from inventory.core.interop.netbox_vocab import CABLE_TYPE_FROM_NETBOX, CABLE_TYPE_TO_NETBOX
from inventory.models import Cable, CableEnd

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

NETBOX_STATUS = {"planned": "planned"}
UNIT_M = {
    "m": Decimal(1),
    "cm": Decimal("0.01"),
    "km": Decimal(1000),
    "ft": Decimal("0.3048"),
    "in": Decimal("0.0254"),
}


class PlanFileError(ValueError):
    pass


# --- reading --------------------------------------------------------------------------------
def plan_rows_from_yaml(text: str) -> list[dict]:
    """``cables:`` list of mappings with the plan columns; ``a:``/``b:`` may be nested."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise PlanFileError(f"Not valid YAML: {exc}") from exc
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
    return rows


def plan_rows_from_netbox_csv(text: str) -> list[dict]:
    """NetBox's cable bulk-import CSV (``side_a_device, side_a_type, side_a_name, ...``)."""
    rows = []
    for raw in csv_dict_rows(text):
        unit = (raw.get("length_unit") or "m").strip()
        length = (raw.get("length") or "").strip()
        length_m = (
            str((Decimal(length) * UNIT_M.get(unit, Decimal(1))).quantize(Decimal("0.01"))) if length else ""
        )
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


def netbox_csv_export(*, cables=None) -> str:
    """Cables in NetBox's bulk-import CSV, for sites without API access."""
    cables = list(
        (cables if cables is not None else Cable.objects.exclude(status=CableStatus.RETIRED))
        .select_related("vendor")
        .order_by("label")
    )
    rows = _plan_dicts(cables)
    by_label = {c.label: c for c in cables}
    buf = io.StringIO()
    cols = [
        "side_a_device",
        "side_a_type",
        "side_a_name",
        "side_b_device",
        "side_b_type",
        "side_b_name",
        "type",
        "status",
        "label",
        "color",
        "length",
        "length_unit",
        "description",
        "cf_install_date",
    ]
    w = csvsafe.DictWriter(buf, fieldnames=cols, lineterminator="\r\n")
    w.writeheader()
    nb_type = {"front": "dcim.frontport", "rear": "dcim.rearport"}
    end_kind = {
        (cid, side): nb_type.get(kind or "", "dcim.interface")
        for cid, side, kind in CableEnd.objects.filter(cable__in=cables, active=True).values_list(
            "cable_id", "side", "port__kind"
        )
    }
    for r in rows:
        c = by_label[r["label"]]
        if ";" in r["a_port"] or ";" in r["b_port"]:
            continue  # NetBox CSV takes one termination per side

        def term(side, cable_id=c.pk):
            return end_kind.get((cable_id, side.upper()), "dcim.interface")

        w.writerow(
            {
                "side_a_device": r["a_device"],
                "side_a_type": term("a"),
                "side_a_name": r["a_port"],
                "side_b_device": r["b_device"],
                "side_b_type": term("b"),
                "side_b_name": r["b_port"],
                "type": CABLE_TYPE_TO_NETBOX.get(c.kind, ""),
                "status": "planned" if c.status == CableStatus.PLANNED else "connected",
                "label": c.label,
                "color": c.color,
                "length": r["length_m"],
                "length_unit": "m" if r["length_m"] else "",
                "description": c.notes,
                "cf_install_date": r["install_date"],
            }
        )
    return buf.getvalue()
