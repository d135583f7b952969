"""One story on every page: the contradictions of issue 31 (points 1-4), found in a page's HTML.

``make screenshots`` runs these over every page of the seeded demo (besides the phone checks of
``phone_checks``) and the tests run them on pages they build. They read the rendered HTML only
(the markers the templates put on what the one decision, ``core.decision``, says: ``data-state``
on the cable page's status and on each row's next-step cell), so a page whose words drift from the
decision is caught wherever it is drawn:

1. "Mark in production" offered while an open alert of warning level or above is shown (on the
   cable page: outside the engineer's override with its reason), or on a row whose decision is
   not "ready for production";
2. a cable page that says "No open alerts on this cable" while its status says an alert is open
   (an alert orphaned by a replacement);
3. "fails" without a named segment and a figure (a state "tests fail" whose words or title name
   no segment or channel with its dB figure; a sentence "fails its ... budget" with no figure);
   status words that disagree with the decision (the Tests card "ready for production" under a
   status that is not; a row whose words are not its state's);
4. an alert page that does not say where to go: an end without its rack and U, the recommendation
   "at the flapping end" without naming the end, "... in the last hour" on an alert last seen
   hours ago, path rows numbered from 0, evidence words for the wrong key ("Link class:
   Direction").

``story_problems(html)`` lists what one page contradicts (empty when it tells one story);
``page_decisions(html)`` gives each cable's state as the page shows it, so that
``disagreements`` can compare the pages of a run with one another.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from inventory.core.choices import SEVERITY_ORDER, Severity
from inventory.core.decision import STATE_WORDS, UNGATED_STATE_WORDS

BLOCKING = {s for s, rank in SEVERITY_ORDER.items() if rank >= SEVERITY_ORDER[Severity.WARNING]}
DB_FIGURE = re.compile(r"\d+\.\d\d dB")
NAMED_FAILURE = re.compile(r"\b(?:segment|channel)\b")
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
_BLOCKS = {"p", "li", "td", "dd", "dt", "div", "section", "h1", "h2", "h3", "summary", "figcaption"}


@dataclass(eq=False)
class Node:
    tag: str
    attrs: dict[str, str]
    parent: Node | None = None
    children: list = field(default_factory=list)  # Node or str

    def iter(self):
        yield self
        for c in self.children:
            if isinstance(c, Node):
                yield from c.iter()

    @property
    def text(self) -> str:
        parts: list[str] = []

        def walk(n: Node) -> None:
            if n.tag in ("script", "style", "template"):
                return
            for c in n.children:
                if isinstance(c, Node):
                    walk(c)
                else:
                    parts.append(c)

        walk(self)
        return re.sub(r"\s+", " ", "".join(parts)).strip()

    def has_class(self, name: str) -> bool:
        return name in self.attrs.get("class", "").split()

    def ancestors(self):
        n = self.parent
        while n is not None:
            yield n
            n = n.parent


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        node = Node(tag, {k: v or "" for k, v in attrs}, self.stack[-1])
        self.stack[-1].children.append(node)
        if tag not in _VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag, attrs):
        self.stack[-1].children.append(Node(tag, {k: v or "" for k, v in attrs}, self.stack[-1]))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):
        self.stack[-1].children.append(data)


def parse(html: str) -> Node:
    b = _Builder()
    b.feed(html)
    b.close()
    return b.root


def cable_of_row(cell: Node) -> str | None:
    """The cable a row's decision cell belongs to: the first cable-page link of its row."""
    for row in cell.ancestors():
        if row.tag in ("li", "tr"):
            for n in row.iter():
                href = n.attrs.get("href", "") if n.tag == "a" else ""
                if href.startswith("/c/") and "/" not in href[3:].split("#")[0]:
                    return href[3:].split("#")[0]
            return None
    return None


def _status_section(root: Node) -> Node | None:
    return next(
        (n for n in root.iter() if n.tag == "section" and n.attrs.get("aria-label") == "Status"), None
    )


def _offers_production(node: Node) -> bool:
    """A button or link that puts the cable in production (the override's form aside)."""
    for n in node.iter():
        if n.attrs.get("data-testid") == "override":
            continue
        if any(a.attrs.get("data-testid") == "override" for a in n.ancestors()):
            continue
        if n.tag == "input" and n.attrs.get("name") == "status" and n.attrs.get("value") == "in_production":
            return True
        if n.tag in ("button", "a") and n.text == "Mark in production":
            return True
    return False


def decision_cells(root: Node) -> list[Node]:
    return [n for n in root.iter() if n.attrs.get("data-testid") == "row-next-step"]


def page_decisions(html: str | Node) -> dict[str, str]:
    """``{cable label: state}`` as this page shows it: the cable page's status, each row's cell
    (the desk list, the rack, device and worklist rows, the alert page's path rows)."""
    root = parse(html) if isinstance(html, str) else html
    out: dict[str, str] = {}
    status = _status_section(root)
    if status is not None:
        h1 = next((n for n in status.iter() if n.tag == "h1"), None)
        if h1 is not None and h1.text:
            out[h1.text] = status.attrs.get("data-state", "")
    for cell in root.iter():
        if cell is status or "data-state" not in cell.attrs:
            continue
        if cell.attrs.get("data-testid") != "row-next-step" and cell.tag != "td":
            continue
        label = cable_of_row(cell)
        if label:
            out.setdefault(label, cell.attrs["data-state"])
    return out


def story_problems(html: str) -> list[str]:
    """What this page contradicts (issue 31, points 1-4); empty when it tells one story."""
    root = parse(html)
    found: list[str] = []
    text = root.text

    # 1 and 3: the cable page's first screen against its decision.
    status = _status_section(root)
    if status is not None:
        state = status.attrs.get("data-state", "")
        shown = sorted(
            {
                sev
                for n in root.iter()
                for sev in re.findall(r"\bsev-([a-z]+)\b", n.attrs.get("class", ""))
                if sev in BLOCKING
                and not n.has_class("status")  # an alert page's own badge, not an open alert here
            }
        )
        if shown and _offers_production(root):
            found.append(f"offers 'Mark in production' while a {'/'.join(shown)} alert is open on the page")
        if state != "ready" and re.search(r"(?<![Nn]ot )\bready for production\b", text):
            found.append(f"says 'ready for production' while its status is {STATE_WORDS.get(state, state)!r}")
        if state in ("ready", "ok", "none") and re.search(r"\bTests fail\b|\bAlert open\b", status.text):
            found.append(f"its status ({state}) and its words (tests fail / alert open) disagree")
        if state == "alert" and "No open alerts on this cable" in text:
            found.append("says 'No open alerts on this cable' while its status says an alert is open")
        if state == "fails" and not (NAMED_FAILURE.search(status.text) and DB_FIGURE.search(status.text)):
            found.append("says its tests fail without naming the segment and the figure")

    # 1 and 3: every row's decision cell.
    for cell in decision_cells(root):
        state = cell.attrs.get("data-state", "")
        label = cable_of_row(cell) or "?"
        words = cell.children[0].text if cell.children and isinstance(cell.children[0], Node) else ""
        if state in STATE_WORDS and words not in (STATE_WORDS[state], UNGATED_STATE_WORDS[state]):
            found.append(f"row {label}: says {words!r} for the state {state!r} ({STATE_WORDS[state]!r})")
        if "Mark in production" in cell.text and state != "ready":
            found.append(f"row {label}: offers 'Mark in production' in the state {state!r}")
        if state == "alert" and re.search(r"\bready for production\b", cell.text):
            found.append(f"row {label}: 'ready for production' beside an open alert")
        said = f"{cell.text} {cell.attrs.get('title', '')}"
        if state == "fails" and not (NAMED_FAILURE.search(said) and DB_FIGURE.search(said)):
            found.append(f"row {label}: 'tests fail' without the segment and the figure")

    # 3: any sentence that fails a budget or limit names the figure.
    for n in root.iter():
        if n.tag not in _BLOCKS or any(isinstance(c, Node) and c.tag in _BLOCKS for c in n.children):
            continue
        for sentence in re.split(r"(?<=[.;])\s+", n.text):
            failing = re.search(r"\bfails?\b", sentence) and re.search(r"\b(?:budget|limit)\b", sentence)
            if failing and not DB_FIGURE.search(sentence):
                found.append(f"'{sentence[:80]}': a failure without its figure")

    # 4: the alert page says where to go.
    times = next((n for n in root.iter() if n.attrs.get("data-testid") == "alert-times"), None)
    if times is not None:
        found.extend(_alert_page_problems(root, times))
    return found


def _alert_page_problems(root: Node, times: Node) -> list[str]:
    found = []
    for card in root.iter():
        if not card.attrs.get("data-testid", "").startswith("alert-end-"):
            continue
        where = next((n for n in card.iter() if n.has_class("where")), None)
        if where is None:
            continue
        racked = any(n.tag == "a" and n.attrs.get("href", "").startswith("/r/") for n in where.iter())
        if not racked or not re.search(r"\bU\d+\b", where.text):
            found.append(f"{card.attrs['data-testid']}: no rack link or U ({where.text[:60]!r})")
    text = root.text
    if re.search(r"\bat the flapping end\b(?!\s*\()", text) and not re.search(r"\bEnd [AB]\b", text):
        found.append("says 'the flapping end' without naming the end")
    hours = re.search(r"\((\d+) hours ago\)", times.text)
    summary = next((n for n in root.iter() if n.attrs.get("data-testid") == "alert-summary"), None)
    if (
        hours
        and summary is not None
        and re.search(r"\bin the last hour\b", summary.text)
        and not summary.text.startswith("As last seen")
    ):
        found.append(f"'in the last hour' on an alert last seen {hours.group(1)} hours ago")
    rows = [n for n in root.iter() if n.attrs.get("data-testid") == "path-row"]
    if rows:
        first = next((c for c in rows[0].children if isinstance(c, Node) and c.tag == "td"), None)
        if first is not None and first.text == "0":
            found.append("path rows numbered from 0")
    for dt in root.iter():
        if dt.tag == "dt" and dt.text == "Link class":
            dd = next(
                (c for c in dt.parent.children[dt.parent.children.index(dt) + 1 :] if isinstance(c, Node)),
                None,
            )
            if dd is not None and dd.text == "Direction":
                found.append("evidence 'Link class: Direction': the words of another key")
    return found


def disagreements(seen: dict[str, dict[str, str]]) -> list[str]:
    """``seen``: ``{cable label: {page name: state}}`` over a run. The cables whose pages say
    different states (the cable page, the desk list, the rack, the worklist must agree)."""
    out = []
    for label, states in sorted(seen.items()):
        if len(set(states.values())) > 1:
            out.append(f"{label}: " + ", ".join(f"{page} says {s!r}" for page, s in sorted(states.items())))
    return out
