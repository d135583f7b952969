"""``make screenshots``: every page a technician or engineer opens, at phone and desk size.

Seeds the demo (unless this database already holds it) and its users (``ensure_demo_users``, as
``make run``), starts the development server on a free loopback port and, in real Chromium,
writes ``var/screenshots/<page>-phone.png`` (360x740, full page) logged in as ``tech`` (a
technician in the demo hall's team: what a technician at the rack sees) and ``<page>-desk.png``
(1440x900) as ``engineer`` (the desk); a page a technician may not open (``ENGINEER_ONLY``) is
shot on the phone as ``engineer`` too. Plus ``var/screenshots/problems.txt``: who each picture
was taken as, and what the phone checks of
``tests/inventory/phone_checks.py`` (at desk size, its ``desk_problems``: no name split over two
lines) and the story checks of ``tests/inventory/story_checks.py``
(issue 31: "Mark in production" beside an open alert, "fails" without a named segment, status
words that disagree with the decision, an alert page that does not say where to go) found on each
page, and the cables whose pages disagree about their state (nothing, ideally).

    make screenshots                      # SQLite by default; DATABASE_URL is honoured
    .venv/bin/python -m tools.screenshots --only rack,device
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import django
from playwright.sync_api import sync_playwright

from tests.inventory.phone_checks import DESK, PHONE, desk_problems, phone_problems
from tests.inventory.story_checks import disagreements, page_decisions, story_problems

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "var" / "screenshots"
# The technician's part of the documentation shows the first phone screen of these pages, taken
# by every ``make screenshots`` (docs/assets/screenshots/<name>.png, committed with the docs).
DOCS_SHOTS = ROOT / "docs" / "assets" / "screenshots"
DOCS_PAGES = {
    "cable",
    "trunk",
    "rack-gpu",
    "rack-leaf",
    "device-node",
    "port",
    "search",
    "retests",
    "alerts",
    "alert",
    "labels",
    "404",
    "home",
    "form-power-meter",
    "form-otdr",
    "form-inspect",
    "form-fault",
    "form-serviced",
    "form-swap",
    "form-replace",
    "racks",
    "retests-rack",
    "retests-today",
    "search-cage",
    "cable-faulty",
    "cable-patched",
    "404-rack",
    "spike",
    "spike-cable",
}
# The story of a slow all-reduce (docs/engineer/collectives.md, README) shows parts of two desk
# pages, in its order: <picture name>: (page, the part's selector), taken by every run.
DOCS_DESK_PARTS = {
    "spike-job": ("spike", "[data-testid=alert-collective]"),
    "spike-suspects": ("spike", "[data-testid=alert-suspects]"),
    "spike-cable-evidence": ("spike-cable", "section.cable-alerts"),
    "spike-drain": ("spike", "[data-testid=alert-drain]"),
}
# Who each picture is taken as (``services.demo.users.DEMO_USERS``): the phone's are the
# technician's, the desk's the engineer's. The pages a technician may not open (403 to them)
# are an engineer's on the phone too: the plant import and a cable replacement (a new cable).
PHONE_USER, DESK_USER = "tech", "engineer"
ENGINEER_ONLY = {"import", "form-replace"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _manage(*args: str) -> None:
    subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, check=True)


def pages() -> list[tuple[str, str]]:
    """(name, path) of every page to shoot, picked from the seeded demo.

    The models are imported here, not at the top: this script calls ``django.setup()`` itself.
    """
    from django.db.models import Count

    from inventory.core.choices import AlertRule, CableKind, CableRole, DeviceRole
    from inventory.models import Alert, Cable, Device, Port, Rack

    def first_cable(**kw) -> str:
        return (
            Cable.objects.filter(**kw)
            .exclude(status="retired")
            .order_by("label")
            .values_list("label", flat=True)[0]
        )

    jumper = first_cable(kind=CableKind.SMF_OS2, role=CableRole.JUMPER)
    trunk = first_cable(role=CableRole.TRUNK)
    dac = first_cable(kind=CableKind.DAC)
    bmc = first_cable(kind=CableKind.CAT6A)  # out-of-band copper: no test gate
    leaf_rack = (
        Rack.objects.annotate(n=Count("devices"))
        .filter(devices__role=DeviceRole.PATCH_PANEL)
        .order_by("name")[0]
    )
    gpu_rack = Rack.objects.filter(devices__role=DeviceRole.GPU_NODE).order_by("name")[0]
    node = Device.objects.filter(role=DeviceRole.GPU_NODE).order_by("name")[0]
    leaf = Device.objects.filter(role=DeviceRole.LEAF).order_by("name")[0]
    port = Port.objects.filter(device=node, cage__isnull=False).order_by("cage__index", "name")[0]
    # the newest open alert of the hall's incidents; the demo job's spike has pages of its own
    open_alerts = Alert.objects.filter(state="open").order_by("-pk")
    alert = open_alerts.exclude(rule=AlertRule.TAIL_LATENCY_SPIKE).first()
    spike = open_alerts.filter(rule=AlertRule.TAIL_LATENCY_SPIKE, cable__isnull=False).first()
    faulty = first_cable(status="faulty")
    # A leaf's uplink jumper to a patch panel: its page names the two real ends of the link.
    patched = first_cable(role=CableRole.JUMPER, ends__port__device__role=DeviceRole.PATCH_PANEL)
    twin = node.cages.order_by("index").values_list("name", flat=True)[0]
    out = [
        ("home", "/"),
        ("cable", f"/c/{jumper}"),
        ("trunk", f"/c/{trunk}"),
        ("dac", f"/c/{dac}"),
        ("cat6a", f"/c/{bmc}"),
        ("rack-leaf", f"/r/{leaf_rack.name}"),
        ("rack-gpu", f"/r/{gpu_rack.name}"),
        ("device-node", node.get_absolute_url()),
        ("device-leaf", leaf.get_absolute_url()),
        ("port", port.get_absolute_url()),
        ("search", "/search/?q=eth1"),
        ("cables", "/cables/"),
        ("modules", "/transceivers/"),
        ("retests", "/retests/"),
        ("alerts", "/alerts/"),
        ("forecast", "/forecast/"),
        ("reconciliation", "/reconciliation/"),
        ("import", "/cables/import"),
        ("labels", "/labels/print/"),
        ("commissioning", "/reports/commissioning/?page=2"),
        ("404", "/c/C999999"),
        # The technician's day (issue 31) and the forms, one tap from the cable page.
        ("racks", "/racks/"),
        ("retests-rack", f"/retests/?rack={gpu_rack.name}"),
        ("retests-today", "/retests/?bucket=today"),
        ("search-cage", f"/search/?q={node.name}+{twin}"),
        ("cable-faulty", f"/c/{faulty}"),
        ("cable-patched", f"/c/{patched}"),
        ("form-power-meter", f"/c/{jumper}/test/power-meter"),
        ("form-otdr", f"/c/{trunk}/test/otdr"),
        ("form-inspect", f"/c/{jumper}/inspect"),
        ("form-fault", f"/c/{jumper}/fault"),
        ("form-serviced", f"/c/{jumper}/serviced"),
        ("form-swap", f"/c/{jumper}/swap"),
        ("form-replace", f"/c/{jumper}/replace"),
        ("404-rack", "/r/NO-SUCH-RACK"),
    ]
    if alert:
        out.insert(14, ("alert", f"/alerts/{alert.pk}/"))
    if spike:
        out += [("spike", f"/alerts/{spike.pk}/"), ("spike-cable", f"/c/{spike.cable.label}")]
    return out


def _shoot_part(page, selector: str, path: Path, margin: int = 12) -> None:
    """One part of the page with a margin of the page around it (a bare element's picture cuts
    its border and heading flush)."""
    box = page.locator(selector).first.bounding_box()  # the page is at its top: page coordinates
    x, y = max(0.0, box["x"] - margin), max(0.0, box["y"] - margin)
    clip = {"x": x, "y": y, "width": box["width"] + 2 * margin, "height": box["height"] + 2 * margin}
    page.screenshot(path=str(path), full_page=True, clip=clip)


def shot_as(name: str, size: str) -> str:
    """The demo user a page's picture at this size is taken as."""
    return PHONE_USER if size == "phone" and name not in ENGINEER_ONLY else DESK_USER


def _log_in(ctx, base: str, user: str, password: str):
    page = ctx.new_page()
    page.goto(base + "/login/")
    page.fill("input[name=username]", user)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_load_state()
    if "/login/" in page.url:
        raise SystemExit(f"could not log in as {user}: run `manage.py ensure_demo_users`")
    return page


def shoot(base: str, targets: list[tuple[str, str]], password: str) -> list[str]:
    chromium = os.environ.get("CABLETRACK_CHROMIUM", "/usr/bin/chromium")
    report = []
    seen: dict[str, dict[str, str]] = {}  # cable label -> {page: the state it shows}
    OUT.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        for size, viewport, extra in (
            ("phone", PHONE, {"device_scale_factor": 2, "has_touch": True, "is_mobile": True}),
            ("desk", DESK, {}),
        ):
            # one browser context (its own session cookie) per user shot at this size
            contexts = {}
            for name, path in targets:
                user = shot_as(name, size)
                if user not in contexts:
                    ctx = browser.new_context(viewport=viewport, **extra)
                    contexts[user] = (ctx, _log_in(ctx, base, user, password))
                page = contexts[user][1]
                resp = page.goto(base + path)
                if resp is not None and resp.status == 403:
                    report.append(f"{name} {path} ({size}): refused to {user} (403): add it to ENGINEER_ONLY")
                page.screenshot(path=str(OUT / f"{name}-{size}.png"), full_page=True)
                if size == "phone" and name in DOCS_PAGES:
                    DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
                    page.screenshot(path=str(DOCS_SHOTS / f"{name}.png"))  # the first screen
                if size == "desk":
                    for part, (of, selector) in DOCS_DESK_PARTS.items():
                        if of == name:
                            DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
                            _shoot_part(page, selector, DOCS_SHOTS / f"{part}.png")
                if size == "phone":
                    html = page.content()
                    found = phone_problems(page)
                    story = story_problems(html)
                    if story:
                        found["one story"] = story
                    for label, state in page_decisions(html).items():
                        seen.setdefault(label, {})[name] = state
                    report.append(
                        f"{name} {path} (as {user}): " + ("ok" if not found else repr(found)[:1500])
                    )
                else:
                    found = desk_problems(page)
                    report.append(
                        f"{name} {path} (desk, as {user}): " + ("ok" if not found else repr(found)[:1500])
                    )
            for ctx, _ in contexts.values():
                ctx.close()
        browser.close()
    differ = disagreements(seen)
    shared = sum(1 for states in seen.values() if len(states) > 1)
    report.append(
        f"one state per cable across the pages ({shared} cables on two pages or more): "
        + ("ok" if not differ else repr(differ)[:1500])
    )
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated page names")
    parser.add_argument("--gpus", default=os.environ.get("DEMO_GPUS", "256"))
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cabletrack.settings")
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    os.environ.setdefault("CABLETRACK_CLUSTER_GPUS", args.gpus)  # the demo's run, as ``make run`` has it
    _manage("migrate", "--noinput", "-v0")
    _manage("seed_demo", "--gpus", args.gpus, "--seed", "1")
    _manage("ensure_demo_users")  # the same users as ``make run``: tech and engineer among them
    django.setup()
    from inventory.services.demo.users import DEMO_PASSWORD

    targets = pages()
    if args.only:
        wanted = set(args.only.split(","))
        targets = [t for t in targets if t[0] in wanted]
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload", "--nothreading"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        # The server's system checks take a while on a busy machine: wait for it, up to 2 minutes.
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(base + "/healthz", timeout=2)  # noqa: S310 - loopback, our own server
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit(
                        f"the development server did not answer on {base} within 2 minutes"
                    ) from None
                time.sleep(0.3)
        report = shoot(base, targets, DEMO_PASSWORD)
    finally:
        server.terminate()
        server.wait(timeout=10)
    (OUT / "problems.txt").write_text("\n".join(report) + "\n")
    print("\n".join(report))
    print(f"screenshots in {OUT}")


if __name__ == "__main__":
    main()
