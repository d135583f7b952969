"""What every page must hold at phone size (360x740), checked in real Chromium.

One checker for every page test, so each page is held to the same four rules:

- no horizontal overflow: the page never scrolls sideways;
- no visible text under 12 CSS px (SVG text is measured as drawn, after the SVG's scaling);
- touch targets at least 44x44 CSS px (links, buttons, inputs, selects, summaries); a link in
  the middle of a sentence is exempt, as WCAG 2.5.8 exempts inline targets;
- no raw code or ISO timestamp in the visible text (``in_production``, ``SMF_OS2``,
  ``2026-12-01T10:00:00``), nor Django's ``---------`` as a select's choice;
- no list item numbered twice (an ``<ol>``'s marker "1." before the item's own "1.");
- no word broken mid-word across two lines ("(maintenan" / "ce)"): words wrap between words.
  A word here is a run of letters, lower case after the first, standing alone or between
  hyphens; codes and serials (``MM2521FT000177``, ``Ethernet20/1``) may break where they must;
- no name split across two lines at its hyphens ("leaf-s01-" / "r1"): a technician reads the
  whole name or none of it. A name here is a run of letters, digits, dots, hyphens and
  underscores that holds a hyphen and a digit: device and port names (``gpu-0001``,
  ``leaf-r01-a``, ``pp-s01-n01-1``), serials (``T-2526FT000014``), part numbers
  (``MTP12-APC-B``), dates (``2026-12-06``); hyphenated prose ("re-seat", "end-face") holds no
  digit. A name wider than the whole line it stands in may wrap (the last resort), except in a
  table's cell, whose column can grow. ``desk_problems(page)`` holds desk pages to this rule too.

Use ``phone_problems(page)`` for the list (empty when the page is fine) or
``assert_phone_friendly(page)``, whose failure message names every offending element.
"""

from __future__ import annotations

import re
from typing import Any

PHONE = {"width": 360, "height": 740}
DESK = {"width": 1440, "height": 900}
MIN_TEXT_PX = 12
MIN_TARGET_PX = 44

# A timestamp as the database prints it, with or without the "T" and the offset.
ISO_TIMESTAMP = re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
# snake_case codes (in_production, otdr_loss) and upper-case ones (SMF_OS2, LINK_FLAP).
RAW_CODE = re.compile(r"\b(?:[a-z]{2,}(?:_[a-z0-9]+)+|[A-Z][A-Z0-9]+(?:_[A-Z0-9]+)+)\b")
# Django's empty choice ("---------") in a select: a placeholder, not a word ("any").
RAW_PLACEHOLDER = re.compile(r"-{5,}")

_OVERFLOW_JS = """
() => {
  const width = document.documentElement.clientWidth;
  const out = [];
  if (document.documentElement.scrollWidth > width + 1) {
    out.push({what: 'page', scrollWidth: document.documentElement.scrollWidth, width});
    for (const el of document.body.querySelectorAll('*')) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.right <= width + 1) continue;
      // Only the outermost offenders: a child of an offender says nothing new.
      const parent = el.parentElement;
      if (parent && parent !== document.body && parent.getBoundingClientRect().right > width + 1) continue;
      out.push({what: el.tagName.toLowerCase() + (el.className && typeof el.className === 'string'
        ? '.' + el.className.trim().split(/\\s+/).join('.') : ''), right: Math.round(r.right),
        text: (el.innerText || el.textContent || '').trim().slice(0, 60)});
      if (out.length > 12) break;
    }
  }
  return out;
}
"""

_SMALL_TEXT_JS = """
(minPx) => {
  const out = [];
  const seen = new Set();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (!node.textContent.trim()) continue;
    const el = node.parentElement;
    if (!el || seen.has(el)) continue;
    seen.add(el);
    if (el.closest('script,style,noscript,template,title')) continue;
    if (!el.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    const rects = range.getClientRects();
    if (!rects.length || rects[0].width === 0) continue;
    let size = parseFloat(getComputedStyle(el).fontSize);
    if (el instanceof SVGElement && el.getScreenCTM) {
      const m = el.getScreenCTM();
      if (m) size = size * Math.sqrt(Math.abs(m.a * m.d - m.b * m.c));
    }
    if (size < minPx - 0.01) {
      out.push({text: node.textContent.trim().slice(0, 40), px: Math.round(size * 10) / 10,
                tag: el.tagName.toLowerCase()});
    }
  }
  return out;
}
"""

_TARGETS_JS = """
(minPx) => {
  const out = [];
  const sel = 'a[href], button, input:not([type=hidden]), select, textarea, summary, [role=button]';
  for (const el of document.querySelectorAll(sel)) {
    if (!el.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    // Inline links inside running text (WCAG 2.5.8's inline exception).
    const style = getComputedStyle(el);
    if (el.tagName === 'A' && style.display === 'inline' && el.parentElement) {
      const ownText = Array.from(el.parentElement.childNodes)
        .filter(n => n.nodeType === Node.TEXT_NODE).map(n => n.textContent.trim()).join('');
      if (ownText.length > 0) continue;
    }
    // A checkbox or radio counts by the label wrapped around it (the whole row is the target).
    let box = r;
    if (el.tagName === 'INPUT' && (el.type === 'checkbox' || el.type === 'radio' || el.type === 'file')) {
      const label = el.closest('label') || (el.id && document.querySelector('label[for="' + el.id + '"]'));
      const lr = label && label.getBoundingClientRect();
      if (lr && lr.width * lr.height > r.width * r.height) box = lr;
    }
    if (Math.round(box.height) < minPx || Math.round(box.width) < minPx) {
      out.push({tag: el.tagName.toLowerCase(), text: (el.innerText || el.value || el.getAttribute('aria-label')
        || el.textContent || '').trim().slice(0, 40), w: Math.round(box.width), h: Math.round(box.height)});
    }
  }
  return out;
}
"""


# Tokens of a text node drawn over two lines: ``source``, a regular expression for the tokens;
# ``names``: only those holding a hyphen and a digit (device and port names, "leaf-s01-r1", serials,
# part numbers, dates). A token wider than the line it stands in may wrap (the last resort, not
# a fault), unless it stands in a table's cell: a table column grows to hold it.
_DRAWN_OVER_TWO_LINES_JS = """
({source, names}) => {
  const out = [];
  const token = new RegExp(source, 'g');
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  const shown = (rects) => Array.from(rects).filter(r => r.width > 0);
  const lines = (rects) => new Set(shown(rects).map(r => Math.round(r.top)));
  const lineBox = (el) => {  // the nearest box that lays out lines (not an inline, inline-grid, ...)
    let box = el;
    while (box.parentElement && box !== document.body) {
      const display = getComputedStyle(box).display;
      if (!display.startsWith('inline') && display !== 'contents') break;
      box = box.parentElement;
    }
    return box;
  };
  // The run of text around a token, between spaces ("leaf-r01-a:Ethernet1/1", "(pp-a),"): what
  // the template keeps whole, and what has to fit the line for the token not to wrap.
  const runWidth = (node, start, end) => {
    const text = node.textContent;
    while (start > 0 && !/\\s/.test(text[start - 1])) start--;
    while (end < text.length && !/\\s/.test(text[end])) end++;
    range.setStart(node, start);
    range.setEnd(node, end);
    return shown(range.getClientRects()).reduce((sum, r) => sum + r.width, 0);
  };
  const widerThanItsLine = (el, width) => {
    const box = lineBox(el);
    const style = getComputedStyle(box);
    if (style.display === 'table-cell') return false;
    const room = box.getBoundingClientRect().width - ['paddingLeft', 'paddingRight', 'borderLeftWidth',
      'borderRightWidth'].reduce((sum, side) => sum + parseFloat(style[side]), 0);
    return width > room - 1;
  };
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const el = node.parentElement;
    if (!el || !node.textContent.trim() || el.closest('script,style,noscript,template,title')) continue;
    if (names && !node.textContent.includes('-')) continue;
    range.selectNodeContents(node);
    if (lines(range.getClientRects()).size < 2) continue;  // all on one line: nothing to break
    if (!el.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})) continue;
    for (const m of node.textContent.matchAll(token)) {
      if (names && (!m[0].includes('-') || !/\\d/.test(m[0]))) continue;
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      if (lines(range.getClientRects()).size > 1
          && !widerThanItsLine(el, runWidth(node, m.index, m.index + m[0].length))) {
        out.push({word: m[0], tag: el.tagName.toLowerCase(), text: node.textContent.trim().slice(0, 60)});
        if (out.length > 12) return out;
      }
    }
  }
  return out;
}
"""
_WORD = r"(?<![A-Za-z0-9_])[A-Za-z][a-z]+(?![A-Za-z0-9_])"
_NAME = r"(?<![\w.-])[A-Za-z0-9]\w*(?:[.-]\w+)+"


def split_names(page) -> list[dict[str, Any]]:
    """Names split across two lines ("leaf-s01-" / "r1", "2026-12-" / "06"), each with its text."""
    return page.evaluate(_DRAWN_OVER_TWO_LINES_JS, {"source": _NAME, "names": True})


def overflow(page) -> list[dict[str, Any]]:
    """The page's sideways overflow, and the outermost elements sticking out past the viewport."""
    return page.evaluate(_OVERFLOW_JS)


def small_text(page, min_px: int = MIN_TEXT_PX) -> list[dict[str, Any]]:
    """Visible text drawn under ``min_px`` CSS pixels (SVG text after its scaling)."""
    return page.evaluate(_SMALL_TEXT_JS, min_px)


def small_targets(page, min_px: int = MIN_TARGET_PX) -> list[dict[str, Any]]:
    """Visible interactive elements smaller than ``min_px`` in either direction."""
    return page.evaluate(_TARGETS_JS, min_px)


_NUMBERED_TWICE_JS = """
() => Array.from(document.querySelectorAll('ol > li'))
  .filter(li => li.checkVisibility() && getComputedStyle(li).listStyleType !== 'none'
          && getComputedStyle(li).display === 'list-item' && /^\\s*\\d+[.)]\\s/.test(li.innerText))
  .slice(0, 8).map(li => li.innerText.trim().slice(0, 40))
"""


def numbered_twice(page) -> list[str]:
    """Items of a numbered list that also carry their own number ("1. 1. 0.041 in 30 days")."""
    return page.evaluate(_NUMBERED_TWICE_JS)


def broken_words(page) -> list[dict[str, Any]]:
    """Words split across two lines ("maintenan-" / "ce"), each with the text it is in."""
    return page.evaluate(_DRAWN_OVER_TWO_LINES_JS, {"source": _WORD, "names": False})


def raw_text(page) -> list[str]:
    """Raw codes and ISO timestamps in the page's visible text."""
    text = page.evaluate("() => document.body.innerText")
    found = [m.group(0) for m in ISO_TIMESTAMP.finditer(text)]
    found += [m.group(0) for m in RAW_CODE.finditer(text)]
    options = page.evaluate(
        "() => Array.from(document.querySelectorAll('select option'))"
        ".filter(o => o.closest('select').checkVisibility()).map(o => o.textContent)"
    )
    found += [o.strip() for o in options if RAW_PLACEHOLDER.search(o)]
    return sorted(set(found))


def phone_problems(page) -> dict[str, list]:
    """Every rule's offenders on the page as it is now; an empty dict means the page is fine."""
    page.wait_for_load_state()  # after a click, the new document may not exist yet
    problems = {
        "horizontal overflow": overflow(page),
        "text under 12 px": small_text(page),
        "touch targets under 44 px": small_targets(page),
        "raw codes or timestamps": raw_text(page),
        "words broken mid-word": broken_words(page),
        "device names split at a hyphen": split_names(page),
        "list items numbered twice": numbered_twice(page),
    }
    return {rule: found for rule, found in problems.items() if found}


def desk_problems(page) -> dict[str, list]:
    """What a desk page (1440x900) is held to as well: no name split over two lines (a table's
    column narrower than "gpu-0002"). Touch targets and the phone's width are the phone's rules."""
    page.wait_for_load_state()
    problems = {"device names split at a hyphen": split_names(page)}
    return {rule: found for rule, found in problems.items() if found}


def assert_phone_friendly(page) -> None:
    """Fail with every offender listed, so one run shows all there is to fix on the page."""
    problems = phone_problems(page)
    assert not problems, f"{page.url} at {page.viewport_size}: " + "; ".join(
        f"{rule}: {found[:8]}" for rule, found in problems.items()
    )


def phone_context(browser, **kwargs):
    """A 360x740 touch context, as the technician's phone opens the pages."""
    return browser.new_context(
        viewport=PHONE, device_scale_factor=2, has_touch=True, is_mobile=True, **kwargs
    )
