"""Phone pages for tests: power meter, OTDR upload, inspection, downloads, the test panel
include and the commissioning report (HTML and PDF)."""

import re
from decimal import Decimal

import pytest
from django.template.loader import render_to_string
from django.urls import reverse

from inventory.core.choices import DeviceRole, Polarity, Verdict
from inventory.models import Cable, CableTest, OtdrTrace
from inventory.selectors.testing.results import cable_tests_context
from inventory.selectors.testing.traces import cable_traces_context
from tests import factories as f
from tests.inventory.views.conftest import without_name_spans
from tests.paths import TEST_DATA

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("media")]
SOR = TEST_DATA / "sor"


@pytest.fixture
def tech(client):
    tina = f.UserFactory(username="tina", role="technician")
    f.field_crew(tina)  # a technician records tests in their team's sites
    client.force_login(tina)
    return client


@pytest.fixture
def jumper():
    """[gpu-1 eth0]--J-1 (3 m OS2)--[leaf-1 Ethernet1/1]"""
    _, gpu = f.twin_port_device("gpu-1", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    _, leaf = f.twin_port_device("leaf-1", u=20)
    return f.jumper("J-1", gpu[0], leaf[0], polarity=Polarity.B, length_m=Decimal("3"))


def test_url_names_are_the_agreed_ones():
    assert reverse("cable-test-olts", kwargs={"label": "C1"}) == "/c/C1/test/power-meter"
    assert reverse("cable-test-otdr", kwargs={"label": "C1"}) == "/c/C1/test/otdr"
    assert reverse("cable-inspect", kwargs={"label": "C1"}) == "/c/C1/inspect"


def test_power_meter_form_records_a_test(tech, jumper):
    url = reverse("cable-test-olts", kwargs={"label": "J-1"})
    page = tech.get(url)
    assert page.status_code == 200 and b"Fibre 8 loss" in page.content
    form = {"wavelength_nm": "1310", "direction": "AB", "reference_method": "1"}
    form.update({f"loss_{i}": "0.35" for i in range(1, 9)})
    resp = tech.post(url, form)
    assert resp.status_code == 302 and resp["Location"] == "/c/J-1"
    test = CableTest.objects.get()
    assert test.verdict == Verdict.PASS and test.fibres.count() == 8 and test.technician.username == "tina"


def test_the_cable_page_lists_each_fibre_of_a_power_meter_test_in_words(tech, jumper):
    form = {"wavelength_nm": "1550", "direction": "BA", "reference_method": "1"}
    form.update({f"loss_{i}": "0.35" for i in range(1, 9)})
    form["loss_5"] = "3.2"  # over a 3 m jumper's budget: this fibre fails, the rest pass
    assert tech.post(reverse("cable-test-olts", kwargs={"label": "J-1"}), form).status_code == 302
    html = tech.get("/c/J-1").content.decode()
    table = html[
        html.index('<table class="fibres">') : html.index("</table>", html.index('<table class="fibres">'))
    ]
    rows = re.findall(
        r"<tr><td>(\d+)</td><td>(\d+)</td><td>([^<]+)</td><td>([^<]+)</td><td class=\"verdict t-(\w+)\">([^<]+)</td></tr>",
        table,
    )
    assert [r[0] for r in rows] == [str(i) for i in range(1, 9)]
    assert {r[1:3] for r in rows} == {("1550", "B to A")}
    assert rows[4][3:] == ("3.20", "bad", "Fail")
    assert rows[0][3:] == ("0.35", "ok", "Pass")
    assert "8 fibre results" in html


def test_power_meter_form_shows_errors_next_to_fields(tech, jumper):
    url = reverse("cable-test-olts", kwargs={"label": "J-1"})
    resp = tech.post(
        url, {"wavelength_nm": "1310", "direction": "AB", "reference_method": "1", "loss_1": "abc"}
    )
    assert resp.status_code == 200
    assert b"Enter a number" in resp.content
    assert not CableTest.objects.exists()


def test_a_power_meter_test_of_some_fibres_records_nothing_and_names_the_blank_ones(tech, jumper):
    """One fibre of eight filled in was recorded as "Pass" and restarted the 90-day retest clock,
    while the gate went on asking for "power-meter results on all 8 fibres (only 1 pass)"."""
    url = reverse("cable-test-olts", kwargs={"label": "J-1"})
    due = Cable.objects.get(label="J-1").retest_due
    form = {
        "wavelength_nm": "1310",
        "direction": "AB",
        "reference_method": "1",
        "loss_1": "0.4",
        "loss_3": "0.4",
    }
    resp = tech.post(url, form)
    html = resp.content.decode()
    assert resp.status_code == 200 and not CableTest.objects.exists()
    assert Cable.objects.get(label="J-1").retest_due == due
    assert "Fibre 2 and 4-8 have no loss: a power-meter test counts only with all 8 fibres measured." in html
    grid = html.split('data-testid="olts-fibres"', 1)[1].split("</fieldset>", 1)[0]
    assert grid.count('class="has-error"') == 6 and grid.count("Enter this fibre&#x27;s loss.") == 6
    assert 'name="loss_1" value="0.4"' in grid  # what was typed stays


def test_an_implausible_loss_is_named_by_its_fibre(tech, jumper):
    url = reverse("cable-test-olts", kwargs={"label": "J-1"})
    form = {"wavelength_nm": "1310", "direction": "AB", "reference_method": "1"}
    form.update({f"loss_{i}": "0.4" for i in range(1, 9)}, loss_3="45")
    html = tech.post(url, form).content.decode()
    assert not CableTest.objects.exists()
    fibre_3 = html.split('name="loss_3"', 1)[1].split("</label>", 1)[0]
    # what is wrong, and how to put it right: the range a reading can take
    assert (
        "A loss of 45 dB is not plausible: enter -1 to 40 dB (check the meter and its reference)." in fibre_3
    )
    assert 'name="loss_3" value="45"' in html  # what was typed stays, to correct it
    assert html.split('name="loss_3"', 1)[0].rsplit("<label", 1)[1].startswith(' class="has-error"')


@pytest.mark.parametrize(("loss_5", "tone"), [("0.35", "msg-success"), ("3.2", "msg-error")])
def test_the_banner_after_a_power_meter_test_is_in_its_verdicts_tone(tech, jumper, loss_5, tone):
    form = {"wavelength_nm": "1310", "direction": "AB", "reference_method": "1"}
    form.update({f"loss_{i}": "0.35" for i in range(1, 9)}, loss_5=loss_5)
    page = tech.post(reverse("cable-test-olts", kwargs={"label": "J-1"}), form, follow=True).content.decode()
    banner = page.split('<ul class="messages"', 1)[1].split("</ul>", 1)[0]
    assert f'class="msg {tone}">Power-meter test recorded: ' in banner


def test_viewer_cannot_record(client, jumper):
    client.force_login(f.UserFactory(username="val", role="viewer"))
    assert client.get(reverse("cable-test-olts", kwargs={"label": "J-1"})).status_code == 403


def test_otdr_upload_then_download_as_attachment(tech, jumper, client):
    data = (SOR / "anritsu-mt9090a_1310_example3.sor").read_bytes()
    with open(SOR / "anritsu-mt9090a_1310_example3.sor", "rb") as fh:
        resp = tech.post(reverse("cable-test-otdr", kwargs={"label": "J-1"}), {"files": fh, "fibre": "2"})
    assert resp.status_code == 302
    trace = OtdrTrace.objects.get()
    assert trace.fibre == 2
    dl = tech.get(reverse("otdr-download", kwargs={"pk": trace.pk}))
    assert dl.status_code == 200
    assert dl["Content-Disposition"].startswith("attachment;")
    assert dl["Content-Type"] == "application/octet-stream"
    assert b"".join(dl.streaming_content) == data
    tech.logout()
    anon = tech.get(reverse("otdr-download", kwargs={"pk": trace.pk}))
    assert anon.status_code == 302 and "/login/" in anon["Location"]


def test_otdr_upload_of_an_html_page_shows_the_reason_and_stores_nothing(tech, jumper, media):
    from django.core.files.uploadedfile import SimpleUploadedFile

    page = SimpleUploadedFile("trace.sor", b"<!doctype html><html><body>Sign in</body></html>")
    resp = tech.post(reverse("cable-test-otdr", kwargs={"label": "J-1"}), {"files": page, "fibre": "1"})
    assert resp.status_code == 200
    assert b"web page (HTML), not an OTDR file" in resp.content
    assert not CableTest.objects.exists()
    assert not media.exists() or not any(p.is_file() for p in media.rglob("*"))


def test_inspection_form(tech, jumper):
    from django.core.files.uploadedfile import SimpleUploadedFile

    end = jumper.ends.get(side="B")
    p = f"e{end.pk}_"
    photo = SimpleUploadedFile("p.png", b"\x89PNG\r\n\x1a\n" + b"\0" * 32, content_type="image/png")
    resp = tech.post(
        reverse("cable-inspect", kwargs={"label": "J-1"}),
        {p + "result": "fail", p + "zone_core": "fail", p + "cleaned": "on", p + "photo": photo},
    )
    assert resp.status_code == 302
    insp = end.inspections.get()
    assert not insp.passed and insp.zones == {"core": "fail"} and insp.cleaned
    dl = tech.get(reverse("inspection-photo", kwargs={"pk": insp.pk}))
    assert dl["Content-Disposition"].startswith("attachment;")


def test_inspection_of_both_ends_in_one_submission_shows_each_result(tech, jumper):
    """A fails, B passes, in one visit: one inspection test that fails (B, recorded with it, never
    hides A), one inspection per end, and the form then shows each end's own last result."""
    a, b = jumper.ends.get(side="A"), jumper.ends.get(side="B")
    url = reverse("cable-inspect", kwargs={"label": "J-1"})
    page = tech.get(url).content.decode()
    assert page.count("Not inspected yet") == 2
    resp = tech.post(url, {f"e{a.pk}_result": "fail", f"e{b.pk}_result": "pass"})
    assert resp.status_code == 302
    test = CableTest.objects.get(kind="inspection")
    assert test.verdict == Verdict.FAIL and test.details["ends"] == {"A": "fail", "B": "pass"}
    assert not a.inspections.get().passed and b.inspections.get().passed
    page = tech.get(url).content.decode()
    # the banner is the failing verdict's, not a green success
    assert '<li class="msg msg-error">Inspection recorded: A fail, B pass.</li>' in page
    last_a = page.split('data-testid="inspect-last-A">', 1)[1].split("</p>", 1)[0]
    last_b = page.split('data-testid="inspect-last-B">', 1)[1].split("</p>", 1)[0]
    assert "fail" in last_a and "by tina" in last_a and "pass" in last_b


def test_the_cable_page_names_the_instrument_a_power_meter_test_was_taken_with(tech, jumper):
    """Typed on the form ("Instrument: EXFO FOT-930"), then said nowhere on the cable page."""
    form = {"wavelength_nm": "1310", "direction": "AB", "reference_method": "1", "instrument": "EXFO FOT-930"}
    form.update({f"loss_{i}": "0.4" for i in range(1, 9)})
    assert tech.post(reverse("cable-test-olts", kwargs={"label": "J-1"}), form).status_code == 302
    page = without_name_spans(tech.get("/c/J-1").content.decode())
    when = page.split('<span class="when"', 1)[1].split(">", 1)[1].split("</span>", 1)[0]
    assert when.endswith(" · tina · EXFO FOT-930 · baseline")


def test_the_cable_pages_failed_inspection_says_which_end_to_clean(tech, jumper):
    """The cable page said "End-face inspection Fail" (and its headline "failed on ..."), not
    which end: the technician at the rack had two to choose from."""
    a, b = jumper.ends.get(side="A"), jumper.ends.get(side="B")
    tech.post(
        reverse("cable-inspect", kwargs={"label": "J-1"}),
        {f"e{a.pk}_result": "fail", f"e{b.pk}_result": "pass"},
    )
    page = tech.get("/c/J-1").content.decode()
    card = page.split('data-testid="inspection-ends">', 1)[1].split("</span>", 1)[0]
    assert card == "End A fail · End B pass"


def test_inspection_with_no_end_chosen_says_so_and_writes_nothing(tech, jumper):
    resp = tech.post(reverse("cable-inspect", kwargs={"label": "J-1"}), {})
    assert resp.status_code == 200 and b"Choose pass or fail for at least one end." in resp.content
    assert not CableTest.objects.exists()


def test_cable_tests_include_plots_the_trace_with_events(tech, jumper, client):
    from inventory.services import testing as svc

    data = (SOR / "anritsu-mt9090a_1310_example3.sor").read_bytes()
    svc.cable_test_upload_otdr(cable=jumper, files=[svc.SorUpload("t.sor", data)])
    html = render_to_string("inventory/_cable_tests.html", cable_tests_context(jumper))
    assert "power-meter (OLTS) test of all 8 fibres" in html
    plot = render_to_string("inventory/_cable_traces.html", cable_traces_context(jumper))
    assert "<svg" in plot and "otdr-plot" in plot
    assert "1F9999" not in plot  # the table shows kinds in words
    assert "reflective" in plot
    page = tech.get("/c/J-1").content.decode()
    assert page.count("/c/J-1/test/power-meter") == 1  # the test form is offered once, as a page action


def test_commissioning_report_html_and_pdf(tech, jumper):
    html = tech.get(reverse("commissioning-report"))
    assert html.status_code == 200
    assert b"gpu-1:eth0" in html.content and b"J-1: needs a power-meter" in html.content
    pdf = tech.get(reverse("commissioning-report-pdf"))
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")


def test_commissioning_report_is_a_desk_page_dated_as_people_read_it(tech, jumper):
    """The desk layout (full width, whole words in the columns, as the cable list) and the time
    it was made as the other pages say one ("today 05:02 UTC"), not "2026-12-06 05:02"."""
    html = tech.get(reverse("commissioning-report")).content.decode()
    assert '<body class="desk">' in html
    head = html.split("<h1>", 1)[1].split("</form>", 1)[0]
    assert not re.search(r"\d{4}-\d{2}-\d{2}", head)
    assert "today " in head and " UTC" in head
    assert '<div class="tablewrap">' in html and '<table class="list report">' in html


def test_import_page_preview_confirm_mapping_then_apply(tech, jumper, media):
    from django.core.files.uploadedfile import SimpleUploadedFile

    csv_text = "Cable,Fibre,Lambda,IL\nJ-1,1,1310,0.41\nJ-1,2,1310,0.39\n"
    url = reverse("test-import")
    assert tech.get(url).status_code == 200
    first = tech.post(
        url, {"instrument": "Acme OLTS", "file": SimpleUploadedFile("e.csv", csv_text.encode())}
    )
    assert first.status_code == 200
    result = first.context["result"]
    assert result.needs_mapping and result.mapping["loss_db"] == "IL"
    token = first.context["token"]
    mapping = {f"map_{k}": v for k, v in result.mapping.items()}
    applied = tech.post(url, {"instrument": "Acme OLTS", "token": token, "apply": "1", **mapping})
    assert applied.status_code == 302
    assert CableTest.objects.get().fibres.count() == 2
    assert not any(p.is_file() for p in (media / "imports").rglob("*"))


def test_import_page_first_preview_with_a_guessed_mapping_shows_the_real_counts(tech, jumper):
    """A new instrument, every column recognised: the first Preview reads the rows with the
    proposed mapping (no second "Preview again" needed) and offers Apply, which confirms it."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    csv_text = "Cable,Fibre,Lambda,IL\nJ-1,1,1310,0.41\nJ-1,2,1310,0.39\n"
    first = tech.post(
        reverse("test-import"),
        {"instrument": "Acme OLTS", "file": SimpleUploadedFile("e.csv", csv_text.encode())},
    )
    html = re.sub(r"\s+", " ", first.content.decode())
    assert first.context["result"].matched == {"J-1": {"readings": 2, "sor": 0}}
    assert "<strong>1</strong> cable matched · 0 unmatched · 0 with errors" in html
    assert 'class="bad"' not in html  # nothing is wrong: no count in red
    assert "Fix the file or the mapping" not in html
    assert 'name="apply" value="1"' in html


def test_import_page_preview_counts_unmatched_rows_in_red(tech, jumper):
    from django.core.files.uploadedfile import SimpleUploadedFile

    csv_text = "Cable,Fibre,Lambda,IL\nJ-1,1,1310,0.41\nJ-9,1,1310,0.39\nJ-8,1,1310,0.39\n"
    first = tech.post(
        reverse("test-import"),
        {"instrument": "Acme OLTS", "file": SimpleUploadedFile("e.csv", csv_text.encode())},
    )
    html = re.sub(r"\s+", " ", first.content.decode())
    assert '<strong>1</strong> cable matched · <span class="bad">2 unmatched</span> · 0 with errors' in html
    assert "Fix the file or the mapping" in html and 'name="apply" value="1"' not in html


def test_import_page_refuses_a_forged_token(tech):
    resp = tech.post(reverse("test-import"), {"instrument": "x", "token": "../../etc/passwd"})
    assert resp.status_code == 200 and "Choose the export file" in resp.content.decode()


def test_power_meter_form_fibres_first_budget_beside_no_launch_condition_on_os2(tech, jumper):
    """J-1 is 3 m of OS2: the single-mode wavelengths only, no multi-mode launch condition, the
    TIA-568.3 budget the readings are judged against, and the fibres before the instrument."""
    html = tech.get(reverse("cable-test-olts", kwargs={"label": "J-1"})).content.decode()
    assert 'name="launch_condition"' not in html
    assert 'value="1310"' in html and 'value="1550"' in html and 'value="850"' not in html
    budget = html.split('data-testid="olts-budget"', 1)[1].split("</aside>", 1)[0]
    assert "1310 nm" in budget and "1.50 dB" in budget  # two mated pairs at 0.75 dB, 3 m of fibre
    assert html.index('name="loss_1"') < html.index('name="instrument"')


def test_power_meter_form_refuses_a_calibration_after_the_test_at_its_field(tech, jumper):
    """A calibration date of 9999-12-31 was recorded (and then offered as the instrument's, on
    every later session): it is the field's error, in words, and nothing is recorded."""
    url = reverse("cable-test-olts", kwargs={"label": "J-1"})
    form = {
        "wavelength_nm": "1310",
        "direction": "AB",
        "reference_method": "2",
        "instrument": "EXFO FOT-930",
        "calibration_date": "9999-12-31",
        **{f"loss_{i}": "0.4" for i in range(1, 9)},
    }
    resp = tech.post(url, form)
    assert resp.status_code == 200
    errors = resp.context["form"].errors
    assert list(errors) == ["calibration_date"]
    assert errors["calibration_date"][0].startswith(
        "The instrument's calibration date is after the test (9999-12-31, tested "
    )
    assert "is after the test (9999-12-31, tested " in resp.content.decode().replace("&#x27;", "'")
    assert not CableTest.objects.exists()


def test_power_meter_form_remembers_the_instrument_as_last_used(tech, jumper):
    url = reverse("cable-test-olts", kwargs={"label": "J-1"})
    form = {
        "wavelength_nm": "1310",
        "direction": "AB",
        "reference_method": "2",
        "instrument": "EXFO FOT-930",
        "instrument_serial": "FOT-7781",
        "calibration_date": "2026-03-01",
        **{f"loss_{i}": "0.4" for i in range(1, 9)},
    }
    assert tech.post(url, form).status_code == 302
    html = tech.get(url).content.decode()
    meta = html.split('data-testid="olts-meta"', 1)[1].split("</details>", 1)[0]
    assert 'value="EXFO FOT-930"' in meta and 'value="FOT-7781"' in meta and 'value="2026-03-01"' in meta
    assert "Instrument: EXFO FOT-930 FOT-7781 · reference 2 jumpers" in meta
