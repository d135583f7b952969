"""Import tester exports: a CSV (one row per fibre per wavelength) with a column mapping the
user confirms once per instrument, and a whole tester project (a zip of SOR files and CSVs)
matched to cables by cable ID and fibre number. Preview first (matched / unmatched / errors by
row), then apply all-or-nothing.
"""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from datetime import datetime

from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from inventory.access import authz
from inventory.conf import app_settings
from inventory.core.optics import trace_checks
from inventory.core.optics.sor.data import SorError
from inventory.core.optics.sor.parse import parse_sor
from inventory.models import Cable, InstrumentMapping, OtdrTrace
from inventory.selectors.testing.facts import sor_max_bytes
from inventory.services.testing.olts import OltsInput, cable_test_record_olts, olts_validate
from inventory.services.testing.otdr import OtdrSession, SorUpload, otdr_sessions_upload
from inventory.services.testing.tester_csv import (
    FIELDS,
    ImportResult,
    ParsedRow,
    parse_rows,
    read_csv,
    resolve_mapping,
)

MAX_MEMBERS = 5_000


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
    sors_by_cable: dict[str, list[SorUpload]],
    cables: dict[str, Cable],
    instrument: str,
    technician,
    now: datetime,
    result: ImportResult,
    apply: bool,
) -> None:
    if technician is not None:
        # The person importing records every one of these tests: each cable's site is decided
        # by the one policy (all or nothing, before anything is read into the database).
        authz.check_each(
            technician,
            "record_test",
            [cables[label] for label in sorted({*readings_by_cable, *sors_by_cable})],
        )
    written: list[str] = []
    try:
        with transaction.atomic():
            for label, rows in sorted(readings_by_cable.items()):
                cable = cables[label]
                when = min((r.tested_at for r in rows if r.tested_at), default=now)
                data = OltsInput(
                    readings=[r.reading for r in rows],
                    tested_at=when,
                    technician=technician,
                    instrument=instrument,
                    reference_method=next((r.reference_method for r in rows if r.reference_method), "1"),
                    source="import",
                )
                try:
                    if apply:
                        result.tests.append(cable_test_record_olts(cable=cable, data=data, now=now).pk)
                    else:
                        olts_validate(cable=cable, data=data, ends=list(cable.ends.all()), now=now)
                except ValidationError as exc:
                    lines = {r.line for r in rows}
                    result.errors.append(
                        {
                            "where": f"{label} (lines {min(lines)}-{max(lines)})",
                            "errors": _fix_rows(exc, rows),
                        }
                    )
            if apply and sors_by_cable:
                # One batch for every SOR file of the project: a fixed number of queries, the
                # retest dates recomputed once.
                sessions = [
                    OtdrSession(cables[label], files) for label, files in sorted(sors_by_cable.items())
                ]
                try:
                    tests = otdr_sessions_upload(
                        sessions=sessions, technician=technician, now=now, source="import"
                    )
                except ValidationError as exc:
                    result.errors.append({"where": "SOR files", "errors": _joined(exc)})
                    tests = []
                written += list(
                    OtdrTrace.objects.filter(test__in=[t.pk for t in tests]).values_list("file", flat=True)
                )
                result.tests += [t.pk for t in tests]
                result.not_judged += [
                    {"cable": t.cable.label, **x} for t in tests for x in t.details.get("not_judged", [])
                ]
            if result.errors:
                raise _Rollback
    except _Rollback:
        result.tests = []
        result.not_judged = []
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


def _joined(exc: ValidationError) -> dict:
    return {key: "; ".join(msgs) for key, msgs in exc.message_dict.items()}


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
        headers, rows, delim = read_csv(data)
        if not headers:
            result.errors.append({"where": name, "errors": {"file": "no header line"}})
            continue
        m = resolve_mapping(instrument, headers, mapping, result)
        if m is None:  # no column for a required field: the error says which
            continue
        parsed_rows += parse_rows(rows, m, delim, name, result)
    parsed_sors = []
    for name, data in sors:
        try:
            sor = parse_sor(data, max_bytes=sor_max_bytes())
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
    sors_by_cable: dict[str, list[SorUpload]] = {}
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
        elif why := trace_checks.wavelength_misfit(cables[label].kind, sor.wavelength_nm):
            # Shown in the preview already; the upload service refuses it again on apply.
            result.errors.append({"where": name, "errors": {"file": f"{why} ({label})."}})
        else:
            sors_by_cable.setdefault(label, []).append(SorUpload(name.rsplit("/", 1)[-1], data, fibre, sor))
    for label, rows in readings_by_cable.items():
        result.matched.setdefault(label, {"readings": 0, "sor": 0})["readings"] = len(rows)
    for label, ups in sors_by_cable.items():
        result.matched.setdefault(label, {"readings": 0, "sor": 0})["sor"] = len(ups)
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
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError):
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
        try:
            with zf.open(i) as fh:
                blob = fh.read(cap + 1)
        except (
            zipfile.BadZipFile,
            zlib.error,
            EOFError,
            NotImplementedError,
            RuntimeError,
            ValueError,
        ) as exc:
            # a member header that contradicts the directory, a bad CRC, a truncated or encrypted
            # member, an unsupported compression method: the archive is unreadable, a 400
            raise ValidationError({"file": f"The archive cannot be read at {i.filename!r}: {exc}"}) from None
        if len(blob) > i.file_size:  # the header lied (zip bomb)
            raise ValidationError({"file": f"{i.filename} is larger than the archive says."})
        out.append((i.filename, blob))
    return out
