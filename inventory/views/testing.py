"""Test pages: record a power-meter test, upload OTDR files, inspect an end, download the
original files, and the commissioning report. Thin: forms check shape, services decide."""

from __future__ import annotations

from types import SimpleNamespace

from django.contrib import messages
from django.core.exceptions import BadRequest, PermissionDenied, ValidationError
from django.core.files.storage import default_storage
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET

from inventory.access import authz
from inventory.conf import app_settings
from inventory.core.choices import Verdict
from inventory.core.pdf.commissioning import commissioning_pdf
from inventory.core.safetext import safe_filename
from inventory.core.validators import is_whole_number
from inventory.core.words import verdict_tone
from inventory.forms.testing import InspectionForm, OltsForm, OtdrForm
from inventory.models import Cable, Inspection, OtdrTrace, Rack, Row, Site
from inventory.selectors.pages.commissioning import commissioning_report as report_of
from inventory.selectors.testing import forms as form_reads
from inventory.selectors.testing.facts import fibres_in_use, sor_max_bytes
from inventory.services import testing as svc
from inventory.services.testing import import_uploads, tester_import


def _add_errors(form, exc: ValidationError, fields: dict[str, str] | None = None) -> None:
    """The service's errors on the form: by field where the key is one (or ``fields`` maps it
    to one), above the form otherwise."""
    if hasattr(exc, "error_dict"):
        for key, errs in exc.message_dict.items():
            key = (fields or {}).get(key, key)
            target = key if key in form.fields else None
            for e in errs:
                form.add_error(target, e)
    else:
        for e in exc.messages:
            form.add_error(None, e)


def recorded_message(request, text: str, verdict: str) -> None:
    """The banner after a test is recorded, in its verdict's tone (``core.words.verdict_tone``,
    the colour the pages give it): a failed test recorded is not a success to show in green, an
    unjudged one is neutral."""
    level = _LEVEL_OF_TONE.get(verdict_tone(verdict), messages.INFO)
    messages.add_message(request, level, text)


_LEVEL_OF_TONE = {"ok": messages.SUCCESS, "warn": messages.WARNING, "bad": messages.ERROR}


def _cable(label: str) -> Cable:
    return get_object_or_404(Cable, label=label)


def _cable_of(request, label: str) -> Cable:
    """The cable a ``/c/<label>/test/...`` page is about, for ``requires_action``."""
    return _cable(label)


@authz.requires_action("record_test", obj=_cable_of)
def cable_test_olts(request, label: str):
    cable = _cable(label)
    fibres = fibres_in_use(cable)
    instruments = form_reads.instruments_of(request.user)
    form = OltsForm(
        request.POST or None,
        fibres=fibres,
        wavelengths=form_reads.olts_wavelengths(cable),
        multimode=form_reads.is_multimode(cable),
        # The instrument as this technician last used it: its details start filled in.
        initial=instruments[0] if instruments else None,
    )
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        readings = [
            svc.FibreReading(
                fibre=i,
                wavelength_nm=d["wavelength_nm"],
                loss_db=d[f"loss_{i}"],
                direction=d["direction"],
                reference_dbm=d.get("reference_dbm"),
            )
            for i in range(1, fibres + 1)
            if d.get(f"loss_{i}") is not None
        ]
        try:
            test = svc.cable_test_record_olts(
                cable=cable,
                data=svc.OltsInput(
                    readings=readings,
                    tested_at=timezone.now(),
                    technician=request.user,
                    instrument=d["instrument"],
                    instrument_serial=d["instrument_serial"],
                    calibration_date=d["calibration_date"],
                    reference_method=d["reference_method"],
                    launch_condition=d["launch_condition"],
                    notes=d["notes"],
                ),
            )
        except ValidationError as exc:
            # the service names readings by their place in the session: put each by its fibre
            _add_errors(
                form, exc, fields={f"readings[{n}]": f"loss_{r.fibre}" for n, r in enumerate(readings)}
            )
        else:
            recorded_message(
                request, f"Power-meter test recorded: {test.get_verdict_display()}.", test.verdict
            )
            return redirect(cable)
    return render(
        request,
        "inventory/test_olts.html",
        {
            "cable": cable,
            "form": form,
            "budgets": form_reads.olts_budgets(cable),
            "instruments": instruments,
            "ends": form_reads.inspection_ends(cable),
        },
    )


@authz.requires_action("record_test", obj=_cable_of)
def cable_test_otdr(request, label: str):
    cable = _cable(label)
    form = OtdrForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        cap = sor_max_bytes()
        uploads, too_big = [], []
        for f in d["files"]:
            if f.size > cap:
                too_big.append(f"{f.name}: the file is {f.size:,} bytes, over the {cap:,}-byte limit.")
                continue
            uploads.append(svc.SorUpload(name=f.name, data=f.read(), fibre=d["fibre"]))
        try:
            if too_big:
                raise ValidationError({"files": too_big})
            test = svc.cable_test_upload_otdr(
                cable=cable, files=uploads, technician=request.user, notes=d["notes"]
            )
        except ValidationError as exc:
            for key, errs in exc.message_dict.items():
                for e in errs:
                    form.add_error("files" if key.startswith("file") else None, e)
        else:
            unjudged = svc.not_judged_words(test.details.get("not_judged", []))
            recorded_message(
                request,
                f"OTDR trace stored: {test.get_verdict_display()}." + (f" {unjudged}" if unjudged else ""),
                test.verdict,
            )
            return redirect(cable)
    return render(request, "inventory/test_otdr.html", {"cable": cable, "form": form})


@authz.requires_action("inspect", obj=_cable_of)
def cable_inspect(request, label: str):
    """Every end of the cable on one screen, each with its latest result; one submission records
    the ends given a result (one inspection test, the worst end's verdict)."""
    cable = _cable(label)
    ends = form_reads.inspection_ends(cable)
    posted = request.method == "POST"
    form = InspectionForm(
        request.POST if posted else None,
        request.FILES if posted else None,
        ends=[(e.end, e.words) for e in ends],
    )
    if posted and form.is_valid():
        try:
            svc.cable_inspect_ends(
                cable=cable,
                inspections=[
                    svc.EndInspection(
                        end=i["end"],
                        passed=i["passed"],
                        zones=i["zones"],
                        cleaned=i["cleaned"],
                        photo=i["photo"].read() if i["photo"] else None,
                    )
                    for i in form.inspected()
                ],
                technician=request.user,
            )
        except ValidationError as exc:
            _add_errors(form, exc)
        else:
            said = ", ".join(
                f"{i['end'].side}{i['end'].leg or ''} {'pass' if i['passed'] else 'fail'}"
                for i in form.inspected()
            )
            failed = any(not i["passed"] for i in form.inspected())
            recorded_message(
                request, f"Inspection recorded: {said}.", Verdict.FAIL if failed else Verdict.PASS
            )
            return redirect(cable)
    latest = {e.end.pk: e.latest for e in ends}
    groups = [{**g, "latest": latest.get(g["end"].pk)} for g in form.end_groups()]
    return render(request, "inventory/test_inspect.html", {"cable": cable, "form": form, "groups": groups})


def _attachment(name: str, path_name: str, fallback: str) -> FileResponse:
    if not path_name or not default_storage.exists(path_name):
        raise Http404("The file is not in storage.")
    safe = safe_filename(name, fallback=fallback)
    resp = FileResponse(
        default_storage.open(path_name, "rb"),
        as_attachment=True,
        filename=safe,
        content_type="application/octet-stream",
    )
    resp["X-Content-Type-Options"] = "nosniff"
    resp["Content-Security-Policy"] = "default-src 'none'; sandbox"
    return resp


@require_GET
def otdr_download(request, pk: int):
    """The original .sor file, to logged-in users only (the middleware), as an attachment."""
    trace = get_object_or_404(OtdrTrace, pk=pk)
    return _attachment(trace.original_name, trace.file.name, f"trace-{pk}.sor")


@require_GET
def inspection_photo(request, pk: int):
    insp = get_object_or_404(Inspection, pk=pk)
    ext = insp.photo.name.rsplit(".", 1)[-1] if insp.photo else "jpg"
    return _attachment(f"inspection-{pk}.{ext}", insp.photo.name, f"inspection-{pk}.{ext}")


MAX_ROW_ID = (1 << 63) - 1  # a bigint key: a larger number is no row (PostgreSQL would refuse it)


def _scope(request):
    site = row = rack = None
    if request.GET.get("rack"):
        rack = get_object_or_404(Rack, name=request.GET["rack"])
    elif request.GET.get("row"):
        raw = request.GET["row"]
        if not (is_whole_number(raw) and int(raw) <= MAX_ROW_ID):
            raise BadRequest("row: a row id (a whole number).")
        row = get_object_or_404(Row, pk=int(raw))
    elif request.GET.get("site"):
        site = get_object_or_404(Site, slug=request.GET["site"])
    return site, row, rack


def _report_page(request) -> int:
    raw = request.GET.get("page", "1")
    if not (is_whole_number(raw) and 0 < int(raw) <= MAX_ROW_ID):
        raise BadRequest("page: a page number (1 or more).")
    return int(raw)


def _report_pager(report) -> SimpleNamespace:
    """The report's page in the shape ``_pager.html`` reads (a ``django.core.paginator.Page``'s)."""
    return SimpleNamespace(
        number=report.page,
        has_previous=report.page > 1,
        has_next=report.page < report.pages,
        previous_page_number=report.page - 1,
        next_page_number=report.page + 1,
        paginator=SimpleNamespace(count=report.counts["links"], count_exact=True, num_pages=report.pages),
    )


@require_GET
def commissioning_report(request):
    site, row, rack = _scope(request)
    report = report_of(site=site, row=row, rack=rack, page=_report_page(request))
    query = request.GET.copy()
    query.pop("page", None)
    pdf_query = query.copy()
    pdf_query["page"] = str(report.page)
    return render(
        request,
        "inventory/commissioning.html",
        {
            "report": report,
            "page": _report_pager(report),
            "query": query.urlencode(),
            "pdf_query": pdf_query.urlencode(),
            "sites": Site.objects.order_by("name"),
        },
    )


@require_GET
def commissioning_report_pdf(request):
    site, row, rack = _scope(request)
    report = report_of(site=site, row=row, rack=rack, page=_report_page(request))
    pdf = commissioning_pdf(report.as_dict())
    resp = HttpResponse(pdf, content_type="application/pdf")
    resp["Content-Disposition"] = 'attachment; filename="commissioning-report.pdf"'
    return resp


@authz.requires_action("record_test")
def test_import_page(request):
    """Import a tester CSV or project zip: upload, confirm the column mapping, preview, apply."""
    ctx: dict = {"fields": tester_import.FIELDS}
    if request.method != "POST":
        return render(request, "inventory/test_import.html", ctx)
    instrument = request.POST.get("instrument", "").strip()
    token = request.POST.get("token", "")
    upload = request.FILES.get("file")
    if upload is not None:
        if upload.size > app_settings.max_import_bytes:
            ctx["error"] = "The file is over the import size limit."
            return render(request, "inventory/test_import.html", ctx)
        data = upload.read()
        ext = (
            "zip" if data[:4] == b"PK\x03\x04" else ("sor" if upload.name.lower().endswith(".sor") else "csv")
        )
        token = import_uploads.import_upload_save(data=data, ext=ext, replaces=token)
    else:
        data = import_uploads.import_upload_read(token=token)
        if data is None:
            ctx["error"] = "Choose the export file to import."
            return render(request, "inventory/test_import.html", ctx)
    mapping = {
        k: request.POST[f"map_{k}"] for k in tester_import.FIELDS if request.POST.get(f"map_{k}")
    } or None
    apply = request.POST.get("apply") == "1"
    kwargs = dict(instrument=instrument, mapping=mapping, apply=apply, technician=request.user)
    try:
        if token.endswith(".zip"):
            result = tester_import.instrument_project_import(zip_data=data, **kwargs)
        elif token.endswith(".sor"):
            result = tester_import.instrument_project_import(files=[("upload.sor", data)], **kwargs)
        else:
            result = tester_import.instrument_csv_import(data=data, **kwargs)
    except PermissionDenied:
        import_uploads.import_upload_delete(token=token)  # a cable of another site: nothing kept
        raise
    except ValidationError as exc:
        ctx.update(
            {"error": "; ".join(f"{k}: {', '.join(v)}" for k, v in exc.message_dict.items()), "token": token}
        )
        return render(request, "inventory/test_import.html", ctx)
    if result.applied:
        import_uploads.import_upload_delete(token=token)
        unjudged = svc.not_judged_words(
            [{**x, "file": f"{x['file']} of {x['cable']}"} for x in result.not_judged]
        )
        messages.success(
            request,
            f"Imported {len(result.tests)} test session(s) for {len(result.matched)} cable(s)."
            + (f" {unjudged}" if unjudged else ""),
        )
        return redirect("test-import")
    ctx.update({"result": result, "token": token, "instrument": instrument})
    return render(request, "inventory/test_import.html", ctx)
