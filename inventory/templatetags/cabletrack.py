import html
import re
from datetime import date, datetime

from django import template
from django.template.defaultfilters import date as date_filter
from django.template.defaultfilters import floatformat
from django.utils import timezone
from django.utils.safestring import SafeData, mark_safe

from inventory.core import words as vocabulary

register = template.Library()


@register.filter
def cable_status_label(value: str) -> str:
    """``in_production`` -> ``In production``."""
    return vocabulary.word(value, "status")


@register.filter
def words(value, domain: str = "") -> str:
    """Human words for a code (``inventory.core.words``): ``{{ c.kind|words }}``, ``{{ v|words:"verdict" }}``."""
    return vocabulary.word(value, domain)


@register.filter
def reason(value) -> str:
    """A history reason in words (``inventory.core.words.human_reason``): no raw codes."""
    return vocabulary.human_reason(value)


@register.filter
def tone(verdict: str) -> str:
    """The colour class of a verdict: ``ok``, ``warn``, ``bad`` or ``none`` (unknown is never green)."""
    return vocabulary.verdict_tone(verdict)


@register.filter
def percent(value, digits=1) -> str:
    """``29.7 %``: a probability or a rate as a percentage (``core.words.percent``)."""
    return vocabulary.percent(value, int(digits))


@register.filter
def metres(value) -> str:
    """``3.5 m``, ``4 m``: a cable's length (``core.words.metres``)."""
    return vocabulary.metres(value)


@register.filter
def message_size(value) -> str:
    """``256 MiB``: the unit the headline and NCCL use (Django's filesizeformat says "256.0 MB")."""
    try:
        return vocabulary.message_size(int(value))
    except (TypeError, ValueError):
        return ""


@register.filter
def when(value) -> str:
    """A moment as people read it (``today 14:05``, ``3 Nov 09:00``), in the site's time zone."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return value
    if isinstance(value, datetime) and timezone.is_aware(value):
        value = timezone.localtime(value)
    return vocabulary.human_when(value, today=timezone.localdate())


@register.filter
def day(value) -> str:
    """A calendar day as people read it (``today``, ``3 Nov``, ``3 Nov 2025``)."""
    if isinstance(value, str) and value:
        try:  # an ISO date kept in JSON (alert evidence): read it, never show it raw
            value = date.fromisoformat(value[:10])
        except ValueError:
            return value
    if isinstance(value, datetime) and timezone.is_aware(value):
        value = timezone.localtime(value)
    if not isinstance(value, (date, datetime)):
        return value or ""
    return vocabulary.human_date(value, today=timezone.localdate())


@register.filter
def month(value) -> str:
    """A calendar month as people read it: ``December 2026`` for ``2026-12``."""
    return vocabulary.human_month(value)


@register.simple_tag
def factor(value, *, times, product, places: int = 1) -> str:
    """A factor of a product the page writes out (``a × b = c``), with as many decimals as make
    the shown figures multiply to the shown ``product`` (``floatformat:places``): see
    ``inventory.core.words.factor_places``. Grouped thousands, as the page's other figures."""
    if value is None or times is None or product is None:
        return ""
    n = vocabulary.factor_places(float(value), times=float(times), product=float(product), places=places)
    return floatformat(value, f"{n}g")


# A run of characters between spaces that holds a hyphen: a device name ("gpu-node-0012"), a
# port on a device ("leaf-s01-r1:Ethernet1/1"), a name in brackets ("(pp-a)").
_HYPHENATED_RUN = re.compile(r"[^\s<>]*-[^\s<>]*")
_TAG = re.compile(r"(<[^>]*>)")


@register.filter
def names_whole(value) -> str:
    """Text whose names read whole on a phone: each run between spaces that holds a hyphen in
    ``<span class="nm">``, which the browser never breaks at its hyphens (app.css ``.nm``), so a
    technician never reads "leaf-s01-" at the end of a line and "r1" on the next; lines still
    break between words. For a bare device or port name (``{{ v.device.name|names_whole }}``),
    a sentence that names them (an alert's summary, a journal line) and a list already joined
    (``{{ ends|join:", "|names_whole }}``): safe HTML keeps its tags, only the text between them
    is read. With a name in it, the text comes in one ``<span class="nmtext">``: where it stands
    in a flex box (a thumb-sized link), it stays one line of text, its spaces kept, not a row of
    pieces."""
    if value is None:
        return ""
    text = str(value) if isinstance(value, SafeData) else html.escape(str(value))
    parts = _TAG.split(text)  # even indexes: text; odd: a tag, left as it is
    found = False
    for i in range(0, len(parts), 2):
        parts[i], n = _HYPHENATED_RUN.subn(lambda m: f'<span class="nm">{m.group(0)}</span>', parts[i])
        found = found or n > 0
    out = "".join(parts)
    return mark_safe(f'<span class="nmtext">{out}</span>' if found else out)  # noqa: S308 - text escaped above (or safe already), tags kept


def _esc(value) -> str:
    """What ``{{ value }}`` prints: escaped unless already safe (``html.escape`` is what Django's
    ``escape`` calls, without its lazy-string wrapper)."""
    return value.__html__() if hasattr(value, "__html__") else html.escape(str(value))


@register.simple_tag
def decision_cell(d, link: bool = False) -> str:
    """One cable's decision in a row (rack, device, worklist): the state words, the open alerts and
    the next step; ``link``: the step as a link (not inside a row that is itself a link). Its
    plain-text twin for CSV, PDF and mail is ``Decision.line``. Built here, not by an included
    template: a network rack's page prints some 40 of them, and an ``{% include %}`` per row cost
    more than the rest of the row."""
    tone = "bad" if d.tone == "bad" else "warn" if d.tone == "warn" else "muted"
    words, alert_words = d.words, d.alert_words
    out = [
        f'\n<span class="next-step st-{_esc(d.state)}" data-testid="row-next-step" data-state="{_esc(d.state)}"'
        f' title="{_esc(d.headline)}"><span class="{tone}">{_esc(words)}</span>'
    ]
    if alert_words:
        out.append(f'{"," if words else ""} <span class="warn">{_esc(alert_words)}</span>')
    if d.elsewhere:  # a trunk whose own tests pass: where a link it carries fails
        out.append(f', <span class="warn" data-testid="row-elsewhere">{_esc(d.elsewhere_words)}</span>')
    if d.carried:  # a trunk an alert on one of its links does not hold: which cable it names
        out.append(f', <span class="warn" data-testid="row-carried">{_esc(d.carried_words)}</span>')
    step = d.step
    if step:
        if link and step.opens_a_page:
            out.append(f' · <a href="{_esc(step.url)}">{_esc(step.label)}</a>')
        else:
            out.append(f' · <span class="step">{_esc(step.label)}</span>')
    out.append("</span>\n")
    return mark_safe("".join(out))  # noqa: S308 - every interpolated value is escaped above


@register.simple_tag
def cable_list_row(c, today, bulk=True) -> str:
    """One row of the desk cable list (``views.desk.cables.cable_list``: a cable with its
    ``end_cells``, their names kept whole, and ``decision``), built here with the filters the
    template would apply:
    50 rows of a dozen cells each through the template engine were half of the page's time.
    ``bulk``: the row's checkbox, for a user offered the ticked rows' actions."""
    e = _esc
    d = c.decision
    alert = ' <span class="bad" title="open alert">alert</span>' if c.has_alert else ""
    length = vocabulary.metres(c.length_m) if c.length_m else ""
    a_lines, b_lines = c.end_cells
    vendor = c.vendor.name if c.vendor_id and c.vendor is not None else ""
    overdue = "bad" if c.retest_due and c.retest_due < today else ""
    step = (
        f', <span class="warn" data-testid="row-elsewhere">{e(d.elsewhere_words)}</span>'
        if d.elsewhere
        else ""
    )
    if d.carried:
        step += f', <span class="warn" data-testid="row-carried">{e(d.carried_words)}</span>'
    if d.step:
        label = e(d.step.label)
        step += "<br>" + (f'<a href="{e(d.step.url)}">{label}</a>' if d.step.opens_a_page else label)
    check = (
        f'        <td class="check"><label class="rowcheck"><input type="checkbox" name="cable" value="{c.pk}"'
        f' data-row-check aria-label="Select {e(c.label)}"></label></td>\n'
        if bulk
        else ""
    )
    return mark_safe(  # noqa: S308 - every interpolated value is escaped (or a filter's safe output)
        f'\n      <tr class="st-{e(c.status)}">\n'
        f"{check}"
        f'        <td><a class="mono" href="{e(c.get_absolute_url())}">{e(c.label)}</a>{alert}</td>\n'
        f'        <td><span class="status s-{e(c.status)}">{e(c.get_status_display())}</span></td>\n'
        f'        <td data-label="Kind">{e(c.get_kind_display())}</td>\n'
        f'        <td class="num" data-label="Length">{length}</td>\n'
        f'        <td class="endcell" data-label="A">{"<br>".join(names_whole(x) for x in a_lines)}</td>'
        f'<td class="endcell" data-label="B">{"<br>".join(names_whole(x) for x in b_lines)}</td>\n'
        f'        <td data-label="Vendor">{e(vendor)}</td>\n'
        f'        <td data-label="Installed">{e(date_filter(c.install_date, "j M Y"))}</td>\n'
        f'        <td data-label="Retest due" class="{overdue}">{e(date_filter(c.retest_due, "j M Y"))}</td>\n'
        f'        <td data-label="Next step" class="next-step st-{e(d.state)}" data-testid="row-next-step"'
        f' data-state="{e(d.state)}" title="{e(d.headline)}"><span class="{"bad" if d.tone == "bad" else "muted"}">'
        f"{e(d.words)}</span>{step}</td>\n"
        f"      </tr>\n    "
    )


@register.simple_tag
def fibre_rows(fibres) -> str:
    """The rows of an OLTS test's fibre table on the cable page (``cable_tests_context``'s
    ``fibres``), built here with the filters the template would apply: a 24-fibre MPO at two
    wavelengths, both ways, is 96 rows, and five filtered cells a row through the template engine
    were most of the tests panel's time."""
    e, word = _esc, vocabulary.word
    return mark_safe(  # noqa: S308 - every interpolated value is escaped (or floatformat's safe output)
        "".join(
            f"<tr><td>{e(f['fibre'])}</td><td>{e(f['wavelength_nm'])}</td>"
            f"<td>{e(word(f['direction'], 'direction'))}</td><td>{e(floatformat(f['loss_db'], 2))}</td>"
            f'<td class="verdict t-{e(vocabulary.verdict_tone(f["verdict"]))}">{e(word(f["verdict"], "verdict"))}</td></tr>'
            for f in fibres
        )
    )


@register.simple_tag
def rack_chips(racks) -> str:
    """A row's racks on the racks page, each a chip linking to its page (``(name, url)`` pairs from
    ``selectors.pages.racks``): a 131,072-GPU site lists 5,120 racks on it."""
    return mark_safe(  # noqa: S308 - every interpolated value is escaped
        "".join(f'<li><a class="chip mono" href="{_esc(url)}">{_esc(name)}</a></li>' for name, url in racks)
    )


@register.filter
def hidden_errors(form) -> list[str]:
    """The errors of a form's hidden fields (the version an editor loaded, damaged): no field on
    the page shows them, so the form's error box does."""
    return [e for f in form.hidden_fields() for e in f.errors]
