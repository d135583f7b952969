"""The search box in every page's header, at 360 px in real Chromium: its hint is read whole
("Label, seria" was all a technician saw of "Label, serial…")."""

import pytest

from tests import factories as f
from tests.inventory.e2e.test_cable_page_phone import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The placeholder's text width against the box's content width, in the box's own font.
FITS_JS = """() => {
  const box = document.querySelector('header input[name=q]');
  const cs = getComputedStyle(box);
  const ph = getComputedStyle(box, '::placeholder');
  const ctx = document.createElement('canvas').getContext('2d');
  ctx.font = `${ph.fontStyle} ${ph.fontWeight} ${ph.fontSize} ${ph.fontFamily}`;
  // Chromium keeps about 10 px of a search box for its clear button, even under a hint: the
  // measure alone read "Label, serial" as fitting while a phone drew "Label, seria"
  const room = box.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - 10;
  return {hint: box.placeholder, text: ctx.measureText(box.placeholder).width, room};
}"""


def test_the_header_search_hint_is_read_whole_on_a_phone(live_server, plant, phone):
    f.UserFactory(username="walker", role="technician")
    log_in(phone, live_server.url, "walker")
    for path in ("/", "/c/J-102", "/r/A01"):
        phone.goto(live_server.url + path)
        fit = phone.evaluate(FITS_JS)
        assert fit["hint"], path
        assert fit["text"] <= fit["room"], (
            f"{path}: the hint {fit['hint']!r} is cut ({fit['text']:.0f} px in {fit['room']:.0f})"
        )
