"""Tester CSV exports: the import's fields, guessing and checking the column mapping, reading
the file (any encoding and delimiter) and turning its rows into fibre readings."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.core.exceptions import ValidationError
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from inventory.core.choices import Direction
from inventory.models import InstrumentMapping
from inventory.services.testing.olts import FibreReading

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


def read_csv(data: bytes) -> tuple[list[str], list[dict], str]:
    """Headers, rows (stripped strings) and delimiter of a CSV export, whatever its encoding and dialect."""
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
    reading: FibreReading
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
    # the OTDR traces recorded but not judged: {"cable", "file", "fibre", "why"} (``otdr``)
    not_judged: list[dict] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        """Every row and file matched, none with an error: applying would write all of it."""
        return not self.errors and not self.unmatched

    @property
    def ok(self) -> bool:
        """Clean, and with a mapping the user confirmed (or saved): what ``apply`` requires.
        A clean preview on a proposed mapping is applied by sending the mapping back."""
        return self.clean and not self.needs_mapping

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
            "not_judged": self.not_judged,
        }


def parse_rows(
    rows: list[dict], mapping: dict, delim: str, where: str, result: ImportResult
) -> list[ParsedRow]:
    """Mapped rows as readings; a row with a bad value is an error naming its line, not a reading."""
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
        except (ValueError, OverflowError):  # "1e400" is infinite: no whole number either
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
            try:
                when = parse_datetime(raw.replace("/", "-"))
                if when is None and (d := parse_date(raw.replace("/", "-"))):
                    when = datetime(d.year, d.month, d.day, tzinfo=UTC)
            except ValueError:  # shaped like a date, but none: 30 Feb, 25:99, an offset of +99:00
                when = None
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
                FibreReading(
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


def resolve_mapping(
    instrument: str, headers: list[str], mapping: dict | None, result: ImportResult
) -> dict | None:
    """The column mapping to use: the one given, the instrument's saved one, or a guess to confirm.

    A guess (``result.needs_mapping``) is used for the preview when it names a column for every
    required field, so the first preview already shows what the file holds; when it does not,
    the missing fields are errors and None is returned (the rows cannot be read)."""
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
    return None if missing else mapping
