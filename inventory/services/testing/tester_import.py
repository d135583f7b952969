"""Import tester exports: a CSV (one row per fibre per wavelength) with a column mapping the
user confirms once per instrument, and a whole tester project (a zip of SOR files and CSVs)
matched to cables by cable ID and fibre number. Preview first (matched / unmatched / errors by
row), then apply all-or-nothing.
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from inventory.conf import app_settings
from inventory.core.choices import Direction
from inventory.core.optics.sor.data import SorError
from inventory.core.optics.sor.parse import parse_sor
from inventory.models import Cable, InstrumentMapping
from inventory.services.testing import records as svc

FIELDS = {
    "cable": "Cable ID / label",
    "fibre": "Fibre (MPO position)",
    "wavelength_nm": "Wavelength (nm)",
    "loss_db": "Loss (dB)",
    "direction": "Direction",
    "reference_dbm": "Reference power (dBm)",
    "measured_dbm": "Measured power (dBm)",
    "tested_at": "Date / time",
    "reference_method": "Reference method",
}
REQUIRED = ("cable", "fibre", "wavelength_nm")
GUESSES = {
    "cable": ("cableid", "cable", "cablelabel", "label", "cablename", "linkid", "link", "id"),
    "fibre": (
        "fibre",
        "fiber",
        "fibreno",
        "fiberno",
        "fibrenumber",
        "fibernumber",
        "fibre#",
        "fiber#",
        "position",
        "pos",
        "strand",
    ),
    "wavelength_nm": ("wavelength", "wavelengthnm", "lambda", "wl", "nm"),
    "loss_db": ("loss", "lossdb", "insertionloss", "il", "ildb", "measuredloss"),
    "direction": ("direction", "dir"),
    "reference_dbm": ("reference", "ref", "referencedbm", "refdbm", "referencepower"),
    "measured_dbm": ("measured", "measureddbm", "power", "powerdbm", "rxpower", "measuredpower"),
    "tested_at": ("date", "datetime", "time", "testedat", "timestamp", "testdate"),
    "reference_method": ("referencemethod", "refmethod", "method"),
}
MAX_ROWS = 50_000
MAX_MEMBERS = 5_000


def _norm(h: str) -> str:
    return re.sub(r"[^a-z0-9#]", "", (h or "").lower().replace("(", "").replace(")", ""))


def guess_mapping(headers: list[str]) -> dict[str, str]:
    """Our field -> their column, by name. The user confirms (or fixes) it once."""
    by_norm = {_norm(h): h for h in headers}
    out = {}
    for key, names in GUESSES.items():
        for n in names:
            if n in by_norm and by_norm[n] not in out.values():
                out[key] = by_norm[n]
                break
    return out


def _read_csv(data: bytes) -> tuple[list[str], list[dict], str]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    sample = text[:4096]
    try:
        dialect = csv.Sniffer().sniff(sample, delimiters=",;\t")
        delim = dialect.delimiter
    except csv.Error:
        delim = ","
    # newline=None: universal newlines, so a lone CR (old Mac exports) ends a row instead of
    # making the csv module refuse the file.
    reader = csv.DictReader(io.StringIO(text, newline=None), delimiter=delim)
    rows = []
    try:
        headers = [h.strip() for h in (reader.fieldnames or []) if h]
        for i, row in enumerate(reader):
            if i >= MAX_ROWS:
                raise ValidationError({"file": f"More than {MAX_ROWS:,} rows; split the export."})
            rows.append({(k or "").strip(): (v or "").strip() for k, v in row.items() if k})
    except csv.Error as exc:  # e.g. a field over the csv module's size limit, a NUL byte
        raise ValidationError({"file": f"Not a readable CSV file (line {reader.line_num}): {exc}."}) from None
    return headers, rows, delim


def _num(value: str, delim: str) -> float:
    v = value.strip().replace(" ", "")
    if delim != "," and "," in v and "." not in v:
        v = v.replace(",", ".")
    v = re.sub(r"(?i)(db[m]?|nm)$", "", v)
    return float(v)


def _direction(value: str) -> str:
    v = re.sub(r"[^a-z]", "", value.lower())
    if v in ("", "ab", "atob", "ab1", "forward", "fwd"):
        return Direction.A_TO_B
    if v in ("ba", "btoa", "reverse", "rev", "backward"):
        return Direction.B_TO_A
    if v in ("bidi", "bidirectional", "average", "avg", "both"):
        return Direction.BIDIRECTIONAL
    raise ValueError(f"unknown direction {value!r}")


@dataclass
class ParsedRow:
    line: int
    cable: str
    reading: svc.FibreReading
    tested_at: datetime | None
    reference_method: str = ""


@dataclass
class ImportResult:
    instrument: str
    mapping: dict = field(default_factory=dict)
    headers: list[str] = field(default_factory=list)
    needs_mapping: bool = False
    matched: dict[str, dict] = field(default_factory=dict)  # cable label -> {"readings": n, "sor": n}
    unmatched: list[dict] = field(default_factory=list)  # {"where", "cable", "why"}
    errors: list[dict] = field(default_factory=list)  # {"where", "errors": {...}}
    applied: bool = False
    tests: list[int] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors and not self.unmatched and not self.needs_mapping

    def as_dict(self) -> dict:
        return {
            "instrument": self.instrument,
            "mapping": self.mapping,
            "headers": self.headers,
            "needs_mapping": self.needs_mapping,
            "fields": FIELDS,
            "matched": self.matched,
            "unmatched": self.unmatched,
            "errors": self.errors,
            "applied": self.applied,
            "tests": self.tests,
        }


def _parse_rows(
    rows: list[dict], mapping: dict, delim: str, where: str, result: ImportResult
) -> list[ParsedRow]:
    out = []
    for n, row in enumerate(rows, start=2):  # line 1 is the header
        errs: dict[str, str] = {}

        def get(k: str, row: dict = row) -> str:
            return row.get(mapping[k], "") if mapping.get(k) else ""

        cable = get("cable")
        if not cable:
            errs["cable"] = "no cable ID"
        try:
            fibre = int(re.sub(r"(?i)^(f|fibre|fiber)\s*", "", get("fibre")))
        except ValueError:
            errs["fibre"] = f"fibre {get('fibre')!r} is not a number"
            fibre = 0
        try:
            wl = int(round(_num(get("wavelength_nm"), delim)))
        except ValueError:
            errs["wavelength_nm"] = f"wavelength {get('wavelength_nm')!r} is not a number"
            wl = 0
        values = {}
        for key in ("loss_db", "reference_dbm", "measured_dbm"):
            raw = get(key)
            if raw:
                try:
                    values[key] = _num(raw, delim)
                except ValueError:
                    errs[key] = f"{FIELDS[key].lower()} {raw!r} is not a number"
        if "loss_db" not in values and not ("reference_dbm" in values and "measured_dbm" in values):
            errs.setdefault("loss_db", "no loss (and no reference and measured power)")
        try:
            direction = _direction(get("direction"))
        except ValueError as exc:
            errs["direction"] = str(exc)
            direction = Direction.A_TO_B
        when = None
        if get("tested_at"):
            raw = get("tested_at")
            when = parse_datetime(raw.replace("/", "-"))
            if when is None and (d := parse_date(raw.replace("/", "-"))):
                when = datetime(d.year, d.month, d.day, tzinfo=UTC)
            if when is None:
                errs["tested_at"] = f"date {raw!r} is not ISO (YYYY-MM-DD [HH:MM])"
            elif timezone.is_naive(when):
                when = when.replace(tzinfo=UTC)
        method = get("reference_method")
        if method and method[:1] not in ("1", "2", "3"):
            errs["reference_method"] = f"reference method {method!r}: use 1, 2 or 3 (jumpers)"
        if errs:
            result.errors.append({"where": f"{where} line {n}", "errors": errs})
            continue
        out.append(
            ParsedRow(
                n,
                cable,
                svc.FibreReading(
                    fibre=fibre,
                    wavelength_nm=wl,
                    loss_db=values.get("loss_db"),
                    direction=direction,
                    reference_dbm=values.get("reference_dbm"),
                    measured_dbm=values.get("measured_dbm"),
                ),
                when,
                method[:1],
            )
        )
    return out


def _resolve_mapping(instrument: str, headers: list[str], mapping: dict | None, result: ImportResult) -> dict:
    saved = InstrumentMapping.objects.filter(instrument=instrument).first() if instrument else None
    if mapping:
        unknown = [k for k in mapping if k not in FIELDS]
        missing_cols = [v for v in mapping.values() if v and v not in headers]
        if unknown or missing_cols:
            raise ValidationError(
                {
                    "mapping": [f"unknown field {k!r}" for k in unknown]
                    + [f"column {c!r} is not in the file" for c in missing_cols]
                }
            )
    elif saved and all(v in headers for v in saved.mapping.values() if v):
        mapping = saved.mapping
    else:
        result.needs_mapping = True
        mapping = guess_mapping(headers)
    missing = [k for k in REQUIRED if not mapping.get(k)]
    if not mapping.get("loss_db") and not (mapping.get("reference_dbm") and mapping.get("measured_dbm")):
        missing.append("loss_db")
    if missing and not result.needs_mapping:
        raise ValidationError({"mapping": [f"map a column to {FIELDS[k]!r}" for k in missing]})
    if missing:
        result.errors.append(
            {"where": "mapping", "errors": {k: f"no column for {FIELDS[k]}" for k in missing}}
        )
    result.mapping = mapping
    result.headers = headers
    return mapping


_SEP = re.compile(r"[_\- .]")


def _sor_candidates(stem: str) -> list[str]:
    """Every prefix of a file name that ends at a separator: label candidates."""
    out = [stem]
    out += [stem[: m.start()] for m in _SEP.finditer(stem) if m.start() > 0]
    return out


def _fibre_from(rest: str) -> int | None:
    m = re.search(r"(?i)(?:f|fib|fibre|fiber)?0*(\d{1,3})", rest)
    return int(m.group(1)) if m else None


def _apply(
    *,
    readings_by_cable: dict[str, list[ParsedRow]],
    sors_by_cable: dict[str, list[svc.SorUpload]],
    cables: dict[str, Cable],
    instrument: str,
    technician,
    now: datetime,
    result: ImportResult,
    apply: bool,
) -> None:
    written: list[str] = []
    try:
        with transaction.atomic():
            for label, rows in sorted(readings_by_cable.items()):
                cable = cables[label]
                when = min((r.tested_at for r in rows if r.tested_at), default=now)
                data = svc.OltsInput(
                    readings=[r.reading for r in rows],
                    tested_at=when,
                    technician=technician,
                    instrument=instrument,
                    reference_method=next((r.reference_method for r in rows if r.reference_method), "1"),
                    source="import",
                )
                try:
                    if apply:
                        result.tests.append(svc.cable_test_record_olts(cable=cable, data=data, now=now).pk)
                    else:
                        svc.olts_validate(cable=cable, data=data, ends=list(cable.ends.all()))
                except ValidationError as exc:
                    lines = {r.line for r in rows}
                    result.errors.append(
                        {
                            "where": f"{label} (lines {min(lines)}-{max(lines)})",
                            "errors": _fix_rows(exc, rows),
                        }
                    )
            for label, files in sorted(sors_by_cable.items()):
                if not apply:
                    continue
                test = svc.cable_test_upload_otdr(
                    cable=cables[label], files=files, technician=technician, now=now, source="import"
                )
                written += [t.file.name for t in test.traces.all()]
                result.tests.append(test.pk)
            if result.errors:
                raise _Rollback
    except _Rollback:
        result.tests = []
    except Exception:
        for name in written:
            default_storage.delete(name)
        raise
    if result.errors:
        for name in written:
            default_storage.delete(name)
        return
    result.applied = apply


class _Rollback(Exception):
    pass


def _fix_rows(exc: ValidationError, rows: list[ParsedRow]) -> dict:
    """Turn ``readings[i]`` keys into the file's line numbers."""
    out = {}
    for key, msgs in exc.message_dict.items():
        m = re.match(r"readings\[(\d+)\]", key)
        out[f"line {rows[int(m.group(1))].line}" if m else key] = "; ".join(msgs)
    return out


def instrument_csv_import(
    *,
    data: bytes,
    instrument: str,
    mapping: dict | None = None,
    apply: bool = False,
    technician=None,
    now: datetime | None = None,
) -> ImportResult:
    """Preview (``apply=False``) or apply a tester's CSV export, all-or-nothing."""
    return instrument_project_import(
        files=[("export.csv", data)],
        instrument=instrument,
        mapping=mapping,
        apply=apply,
        technician=technician,
        now=now,
    )


def instrument_project_import(
    *,
    files: list[tuple[str, bytes]] | None = None,
    zip_data: bytes | None = None,
    instrument: str,
    mapping: dict | None = None,
    apply: bool = False,
    technician=None,
    now: datetime | None = None,
) -> ImportResult:
    """A whole tester project: CSVs and SOR files (loose or in a zip), matched to cables by
    cable ID and fibre number. SOR files match by the cable/fibre IDs inside the file, else by
    file name (``<cable label>_<fibre>...sor``). Nothing is written unless everything matches."""
    now = now or timezone.now()
    instrument = (instrument or "").strip()[:100]
    result = ImportResult(instrument=instrument)
    if zip_data is not None:
        files = _unzip(zip_data)
    files = files or []
    csvs = [(n, d) for n, d in files if n.lower().endswith((".csv", ".txt"))]
    sors = [(n, d) for n, d in files if n.lower().endswith(".sor")]
    for n, _ in files:
        if not n.lower().endswith((".csv", ".txt", ".sor")):
            result.unmatched.append({"where": n, "cable": "", "why": "neither a .csv nor a .sor file"})
    parsed_rows: list[ParsedRow] = []
    for name, data in csvs:
        headers, rows, delim = _read_csv(data)
        if not headers:
            result.errors.append({"where": name, "errors": {"file": "no header line"}})
            continue
        m = _resolve_mapping(instrument, headers, mapping, result)
        if result.needs_mapping:
            continue
        parsed_rows += _parse_rows(rows, m, delim, name, result)
    parsed_sors = []
    for name, data in sors:
        try:
            sor = parse_sor(data, max_bytes=svc.sor_max_bytes())
        except SorError as exc:
            result.errors.append({"where": name, "errors": {"file": exc.reason}})
            continue
        parsed_sors.append((name, data, sor))
    # One query for every label any row or file could mean.
    wanted = {r.cable for r in parsed_rows}
    for name, _, sor in parsed_sors:
        stem = name.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        wanted.update(_sor_candidates(stem))
        if sor.cable_id:
            wanted.add(sor.cable_id)
    cables = {c.label: c for c in Cable.objects.filter(label__in=wanted)}
    readings_by_cable: dict[str, list[ParsedRow]] = {}
    for r in parsed_rows:
        if r.cable in cables:
            readings_by_cable.setdefault(r.cable, []).append(r)
        else:
            result.unmatched.append(
                {"where": f"line {r.line}", "cable": r.cable, "why": "no cable with this ID"}
            )
    sors_by_cable: dict[str, list[svc.SorUpload]] = {}
    for name, data, sor in parsed_sors:
        stem = name.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        label, fibre = None, None
        if sor.cable_id in cables:
            label = sor.cable_id
            fibre = _fibre_from(sor.fibre_id or "")
        else:
            label = next(
                (c for c in sorted(_sor_candidates(stem), key=len, reverse=True) if c in cables), None
            )
            if label:
                fibre = _fibre_from(stem[len(label) :])
        if label is None:
            result.unmatched.append(
                {"where": name, "cable": sor.cable_id or stem, "why": "no cable with this ID"}
            )
        elif fibre is None:
            result.unmatched.append(
                {"where": name, "cable": label, "why": "no fibre number in the file or its name"}
            )
        else:
            sors_by_cable.setdefault(label, []).append(svc.SorUpload(name.rsplit("/", 1)[-1], data, fibre))
    for label, rows in readings_by_cable.items():
        result.matched.setdefault(label, {"readings": 0, "sor": 0})["readings"] = len(rows)
    for label, ups in sors_by_cable.items():
        result.matched.setdefault(label, {"readings": 0, "sor": 0})["sor"] = len(ups)
    if result.needs_mapping:
        return result
    if apply and not result.ok:
        return result
    _apply(
        readings_by_cable=readings_by_cable,
        sors_by_cable=sors_by_cable,
        cables=cables,
        instrument=instrument,
        technician=technician,
        now=now,
        result=result,
        apply=apply,
    )
    if apply and result.applied and mapping and instrument:
        instrument_mapping_save(instrument=instrument, mapping=mapping, user=technician)
    return result


def instrument_mapping_save(*, instrument: str, mapping: dict, user=None) -> InstrumentMapping:
    """Remember a confirmed column mapping for an instrument."""
    if not instrument:
        raise ValidationError({"instrument": "Name the instrument the mapping is for."})
    unknown = [k for k in mapping if k not in FIELDS]
    if unknown:
        raise ValidationError({"mapping": [f"unknown field {k!r}" for k in unknown]})
    obj, _ = InstrumentMapping.objects.update_or_create(
        instrument=instrument, defaults={"mapping": mapping, "created_by": user}
    )
    return obj


def _unzip(data: bytes) -> list[tuple[str, bytes]]:
    cap = app_settings.max_import_bytes
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise ValidationError({"file": "This is not a zip archive."}) from None
    infos = [i for i in zf.infolist() if not i.is_dir() and not i.filename.startswith("__MACOSX/")]
    if len(infos) > MAX_MEMBERS:
        raise ValidationError(
            {"file": f"The archive has {len(infos):,} files; the limit is {MAX_MEMBERS:,}."}
        )
    total = sum(i.file_size for i in infos)
    if total > cap:
        raise ValidationError(
            {"file": f"The archive unpacks to {total:,} bytes, over the {cap:,}-byte limit."}
        )
    out = []
    for i in infos:
        with zf.open(i) as fh:
            blob = fh.read(cap + 1)
        if len(blob) > i.file_size:  # the header lied (zip bomb)
            raise ValidationError({"file": f"{i.filename} is larger than the archive says."})
        out.append((i.filename, blob))
    return out
