"""Poison at the door: what one oversized or hostile request costs the web worker.

Each case runs in a fresh gunicorn (one sync worker, so its peak RSS is this request's and the
worker's own start-up), posts once, and reports the answer's time and the worker's peak RSS:

* ``POST /api/telemetry/``: a 33 MB JSON body of 1,000,000 items (over the 50,000-item cap;
  the cap is checked while msgspec reads the array, so the items are never built); 500,000
  Prometheus text lines (counted as they are read, refused at the first sample over the cap).
* ``POST /api/cables/import/``: a 24 MB YAML plan (over the 16 MiB YAML cap, refused before
  parsing) and the 567-byte "billion laughs" alias bomb (aliases refused at the first one).

Targets: refused (400), each well inside the request timeout, worker peak < 300 MB.
"""

from __future__ import annotations

import os
import time

from bench.common import Http, WebServer, make_token

ITEM = b'{"device":"d","port":"p","ts":1},'

BOMB = b"""a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
cables: [{label: *h, kind: SMF_OS2}]
"""


def _json_million() -> bytes:
    body = b'{"samples":[' + ITEM * 1_000_000
    return body[:-1] + b"]}"


def _prometheus_lines(n: int) -> bytes:
    return b"".join(b'cabletrack_link_down_events{device="l%d",port="p"} 1\n' % i for i in range(n))


def _yaml_24mb() -> bytes:
    row = (
        "- label: C{i:07d}\n  kind: SMF_OS2\n"
        "  a: {{device: gpu-{i}, port: eth0, connector: MPO12, fibres: 12, polish: APC}}\n"
        "  b: {{device: leaf-{i}, port: Ethernet1/1, connector: MPO12, fibres: 12, polish: APC}}\n"
        "  length_m: 3\n  polarity: B\n  part_number: MFP7E10-N003\n  status: planned\n"
    )
    out, size, i = ["cables:\n"], 8, 0
    while size < 24_000_000:
        line = row.format(i=i)
        out.append(line)
        size += len(line)
        i += 1
    return "".join(out).encode()


def _case(report, name: str, token: str, path: str, body: bytes, ctype: str) -> None:
    with WebServer(workers=1) as web:
        before = web.peak_rss_mb()
        status, data, ms = Http(web.port, token).request("POST", path, body, {"Content-Type": ctype})
        peak = web.peak_rss_mb()
    report(f"poison: {name} ({len(body) / 1e6:.1f} MB): answer {status}", ms / 1000, "s", "400, quickly")
    report(f"poison: {name}: worker peak RSS (idle worker {before:.0f} MB)", peak, "MB", "< 300 MB")
    if status != 400:
        raise RuntimeError(f"{name}: expected a 400, got {status}: {data[:200]!r}")


def run(report) -> None:
    report("poison bench: load average (1 min) at start", os.getloadavg()[0], "")
    collector = make_token("bench-poison-collector", role="collector", kind="ingest")
    engineer = make_token("bench-poison-engineer", role="engineer", kind="full")
    t = time.perf_counter()
    cases = [
        (
            "telemetry JSON, 1,000,000 items",
            collector,
            "/api/telemetry/",
            _json_million(),
            "application/json",
        ),
        (
            "telemetry Prometheus text, 500,000 lines",
            collector,
            "/api/telemetry/",
            _prometheus_lines(500_000),
            "text/plain; version=0.0.4",
        ),
        ("YAML plan, 24 MB", engineer, "/api/cables/import/?dry_run=1", _yaml_24mb(), "application/yaml"),
        (
            "YAML alias bomb (billion laughs)",
            engineer,
            "/api/cables/import/?dry_run=1",
            BOMB,
            "application/yaml",
        ),
    ]
    report("poison bench: bodies built", time.perf_counter() - t, "s")
    for case in cases:
        _case(report, *case)
    report("poison bench: load average (1 min) at end", os.getloadavg()[0], "")
