"""Checks for .ci/prod-start, against a running production stack: stdlib only.

usage: prod_check.py HOST:PORT SITE_HOST   (env: CT_USER, CT_PASSWORD, CT_TOKEN)

Speaks as the load balancer would (``X-Forwarded-Proto: https`` from a trusted proxy), so the
production settings (HTTPS redirect, secure cookies, CSRF origin checks) apply as they will.
Exits non-zero with the reason on the first failed check.
"""

import http.client
import json
import os
import re
import sys
import urllib.parse

addr, site = sys.argv[1], sys.argv[2]
host, port = addr.split(":")


def request(method, path, body=None, headers=None, cookies=None):
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    h = {"Host": site, "X-Forwarded-Proto": "https", **(headers or {})}
    if cookies:
        h["Cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
    conn.request(method, path, body=body, headers=h)
    resp = conn.getresponse()
    data = resp.read()
    jar = {}
    for name, value in resp.getheaders():
        if name.lower() == "set-cookie":
            k, v = value.split(";", 1)[0].split("=", 1)
            jar[k] = v
    return resp, data, jar


def fail(why):
    print(f"prod check: {why}", file=sys.stderr)
    raise SystemExit(1)


try:
    resp, data, _ = request("GET", "/healthz")
except OSError as exc:
    fail(f"not up yet ({exc})")
if resp.status != 200 or json.loads(data).get("status") != "ok":
    fail(f"/healthz answered {resp.status}: {data[:200]!r}")

resp, data, jar = request("GET", "/login/")
match = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', data)
if resp.status != 200 or not match or "csrftoken" not in jar:
    fail(f"/login/ answered {resp.status} without a CSRF token")
form = urllib.parse.urlencode(
    {
        "username": os.environ["CT_USER"],
        "password": os.environ["CT_PASSWORD"],
        "csrfmiddlewaretoken": match[1],
    }
)
resp, data, jar2 = request(
    "POST",
    "/login/",
    body=form,
    headers={"Content-Type": "application/x-www-form-urlencoded", "Origin": f"https://{site}"},
    cookies={"csrftoken": jar["csrftoken"]},
)
if resp.status != 302 or "sessionid" not in jar2:
    fail(f"logging in answered {resp.status}: {data[:300]!r}")
session = {"sessionid": jar2["sessionid"], "csrftoken": jar2.get("csrftoken", jar["csrftoken"])}

resp, data, _ = request("GET", "/cables/", cookies=session)
if resp.status != 200 or b"<table" not in data and b"cable" not in data.lower():
    fail(f"the cable list (logged in) answered {resp.status}")
if "private" not in (resp.getheader("Cache-Control") or ""):
    fail("a logged-in page is not Cache-Control: private")
if "default-src 'self'" not in (resp.getheader("Content-Security-Policy") or ""):
    fail("no Content-Security-Policy on a page")
resp, data, _ = request("GET", "/static/cabletrack/app.css")
if resp.status != 200:
    fail(f"the static files (collected at build) answered {resp.status}")

# A collector's ingest token, a chunked body (no Content-Length): read whole, answered per item.
sample = {"device": "no-such-leaf", "port": "Ethernet1/1", "ts": "2026-01-01T00:00:00Z"}
body = json.dumps({"samples": [sample]}).encode()
conn = http.client.HTTPConnection(host, int(port), timeout=30)
conn.request(
    "POST",
    "/api/telemetry/",
    body=iter([body[:10], body[10:]]),
    headers={
        "Host": site,
        "X-Forwarded-Proto": "https",
        "Content-Type": "application/json",
        "Authorization": f"Bearer {os.environ['CT_TOKEN']}",
    },
    encode_chunked=True,
)
resp = conn.getresponse()
answer = resp.read()
if resp.status != 200 or len(json.loads(answer).get("errors", [])) != 1:
    fail(f"a chunked telemetry POST answered {resp.status}: {answer[:300]!r}")
print("prod check: /healthz, login, a logged-in page, static files, a chunked telemetry POST: ok")
