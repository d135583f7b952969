"""An engineer at a desk (1440x900), in real Chromium: the vendor comparison's tables break lines
between words only, never inside one ("Coheren" / "t", "Port" / "s", "unknow" / "n", a part
number at its hyphens), and say what every "per 100" is of.

Plant: one switch per module model, its two cages holding that model; of each switch's four
ports one reports at 45 °C, one at 55 °C, one without a temperature ("unknown") and one nothing.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.services.plant.transceivers import transceiver_swap
from tests import factories as f

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MODELS = [
    ("Coherent", "FTCD8613E1PCM"),
    ("Eoptolink", "EOLO-1682HG-05"),
    ("Innolight", "T-OS8FNT-N00-FLT"),
    ("NVIDIA", "MMS4X00-NM-FLT"),
]

# Every place a cell's text goes on to a new line between two letters of one word (a hyphen
# counts as a letter: a part number reads whole): [cell text, ...].
BROKEN_WORDS = """() => {
  const broken = [];
  for (const cell of document.querySelectorAll('table.grid th, table.grid td')) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    let node, top = null, prev = ' ';
    while ((node = walker.nextNode())) {
      const text = node.textContent;
      for (let i = 0; i < text.length; i++) {
        const range = document.createRange(); range.setStart(node, i); range.setEnd(node, i + 1);
        const rect = range.getClientRects()[0];
        if (!rect) continue;
        if (top !== null && rect.top > top + 2 && /\\S/.test(prev) && /\\S/.test(text[i])) broken.push(cell.textContent.trim());
        top = rect.top; prev = text[i];
      }
    }
  }
  return broken;
}"""


def test_the_tables_break_lines_between_words_at_the_desk(live_server, browser, artifacts):
    now = timezone.now().replace(second=0, microsecond=0)
    for i, (vendor, part) in enumerate(MODELS):
        model = f.twin_dr4_model(vendor=vendor, part=part)
        _, ports = f.twin_port_device(f"leaf-{i}", u=i + 1)
        for c, port in enumerate(ports[::2]):
            transceiver_swap(cage=port.cage, new=f.module(model=model, serial=f"{part}-{c}"))
        for port, temperature in zip(ports, (45.0, 55.0, None), strict=False):
            f.rollups(port, now - timedelta(hours=2), 30, temperature_max_c=temperature)
    f.UserFactory(username="erin", role="engineer")
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20_000)
    base = live_server.url
    page.goto(base + "/vendors/compare/")
    page.fill("input[name=username]", "erin")
    page.fill("input[name=password]", "pw-for-tests-1")
    page.click("button[type=submit]")
    page.wait_for_url(base + "/vendors/compare/")
    page.screenshot(path=str(artifacts / "vendor-comparison-desk.png"), full_page=True)
    assert page.locator("table.grid").count() == 3
    assert page.locator("table.grid td", has_text="unknown").count() >= 1
    assert page.evaluate(BROKEN_WORDS) == []
    assert page.locator("th", has_text="per 100 reporting ports").count() == 3
    context.close()
