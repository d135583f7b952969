"""The screenshot tool's story checks (``tests/inventory/story_checks.py``) catch each
contradiction of issue 31 on a page built to have it, and pass the page once it is mended."""

from __future__ import annotations

import pytest

from tests.inventory.story_checks import disagreements, page_decisions, story_problems

STATUS = '<section class="summary" aria-label="Status" data-state="{state}"><h1 class="label">J-100</h1>{body}</section>'
PAGE_ALERT = '<section class="top-alert sev-page"><a href="/alerts/3/">Page · Link flap</a></section>'
MARK = (
    '<form method="post" action="/c/J-100/status"><input type="hidden" name="status" value="in_production">'
    '<button type="submit">Mark in production</button></form>'
)


def _cell(state: str, words: str, step: str = "", title: str = "") -> str:
    return (
        f'<li><a class="rowlink" href="/c/J-100"><span class="next-step" data-testid="row-next-step" '
        f'data-state="{state}" title="{title}"><span class="bad">{words}</span>'
        f"{f' · <span>{step}</span>' if step else ''}</span></a></li>"
    )


@pytest.mark.parametrize(
    ("html", "expect"),
    [
        # 1. "Mark in production" beside an open page alert.
        (STATUS.format(state="ready", body=MARK) + PAGE_ALERT, "offers 'Mark in production'"),
        # 1. A row offering it in another state.
        (_cell("alert", "alert open", "Mark in production"), "offers 'Mark in production' in the state"),
        # 2. The alert moved here, but the page says there is none.
        (
            STATUS.format(state="alert", body="Alert open")
            + '<p class="muted">No open alerts on this cable.</p>',
            "No open alerts on this cable",
        ),
        # 3. "Tests fail" naming no segment, no figure.
        (
            STATUS.format(state="fails", body="<p>Tests fail: the link fails.</p>"),
            "without naming the segment",
        ),
        (
            _cell("fails", "tests fail", "Mark degraded", title="Tests fail"),
            "without the segment and the figure",
        ),
        (
            "<p>The channel is within its PMD limit, but a segment fails its TIA-568.3 component budget.</p>",
            "a failure without its figure",
        ),
        # 3. The Tests card's words against the status.
        (
            STATUS.format(state="fails", body="trunk T-100 segment: 3.10 dB, over its 2.60 dB budget")
            + '<p class="gate gate-ok">Tests complete: ready for production.</p>',
            "says 'ready for production'",
        ),
        # a cable already in production is not "ready for" it: the Tests card says its tests are complete
        (
            STATUS.format(state="ok", body="<p>In production: every test passes.</p>")
            + '<p class="gate gate-ok">Tests complete: ready for production.</p>',
            "says 'ready for production' while its status is 'in production, tests pass'",
        ),
        (_cell("alert", "ready for production"), "says 'ready for production' for the state 'alert'"),
        # 4. The alert page does not say where to go.
        (
            '<p data-testid="alert-times">Open · last seen 3 Dec (25 hours ago)</p>'
            '<p data-testid="alert-summary">Link went down and up 7 times in the last hour</p>',
            "'in the last hour' on an alert last seen 25 hours ago",
        ),
        (
            '<p data-testid="alert-times">Open (just now)</p><div data-testid="alert-end-A">'
            '<div class="where">no rack · U? · gpu-0001</div></div>',
            "alert-end-A: no rack link or U",
        ),
        (
            '<p data-testid="alert-times">Open (just now)</p><p>Swap the module at the flapping end.</p>',
            "without naming the end",
        ),
        (
            '<p data-testid="alert-times">Open (just now)</p><table><tr data-testid="path-row"><td>0</td>'
            '<td><a href="/c/J-100">J-100</a></td></tr></table>',
            "path rows numbered from 0",
        ),
        (
            '<p data-testid="alert-times">Open (just now)</p><dl><dt>Link class</dt><dd>Direction</dd></dl>',
            "Link class: Direction",
        ),
    ],
)
def test_each_contradiction_is_caught(html, expect):
    found = story_problems(html)
    assert any(expect in p for p in found), found


def test_a_page_that_tells_one_story_passes():
    html = (
        STATUS.format(
            state="alert",
            body='<div class="top-alert-inline sev-page"><a class="button" href="/alerts/3/">Open the alert</a></div>'
            '<details data-testid="override"><form><input type="hidden" name="status" value="in_production">'
            "<button>Put in production over the open alert</button></form></details>",
        )
        + '<p class="gate gate-blocked">Not ready for production: page alert open.</p>'
        + _cell(
            "fails",
            "tests fail",
            "Open T-100",
            title="Tests fail: trunk T-100 segment: 3.10 dB, over its 2.60 dB",
        )
        + '<p data-testid="alert-times">Open (25 hours ago)</p>'
        + '<p data-testid="alert-summary">As last seen, 3 Dec: 7 times in the last hour</p>'
        + '<div data-testid="alert-end-A"><div class="where"><a href="/r/A01">A01</a> · U10 · gpu-0001</div></div>'
        + "<p>Swap the module at the flapping end (End A, gpu-0001 OSFP1).</p>"
    )
    assert story_problems(html) == []


def test_the_pages_of_a_run_are_compared_cable_by_cable():
    cable_page = STATUS.format(state="alert", body="")
    rack_row = _cell("ready", "ready for production", "Mark in production")
    seen: dict[str, dict[str, str]] = {}
    for name, html in (("cable", cable_page), ("rack", rack_row)):
        for label, state in page_decisions(html).items():
            seen.setdefault(label, {})[name] = state
    assert disagreements(seen) == ["J-100: cable says 'alert', rack says 'ready'"]
    seen["J-100"]["rack"] = "alert"
    assert disagreements(seen) == []
