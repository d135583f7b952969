"""PostgreSQL restarts (``pg_ctl restart -m fast``, twice) while three collectors post telemetry
batches to cabletrack served by gunicorn with production settings: no batch is half-written.

Everything is private: a PostgreSQL cluster initdb'ed into a temp dir on a free port (schema
copied from the migrated test database), a redis-server, the web server. Each batch has its own
Idempotency-Key and its own timestamps (4 ports x 10 samples), so the rows of every batch can be
counted afterwards:

* every batch is stored whole (40 rows) or not at all (0), never partly;
* an error the collector saw (5xx, a dropped connection) means the batch is absent; a 200 means
  it is all there;
* the collector retries what failed, with the same key, once the database is back: then every
  batch is there exactly once, and a retry of one that had succeeded writes nothing again.
"""

import json
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

pytestmark = pytest.mark.fault

COLLECTORS = 3
BATCHES_EACH = 30
SAMPLES = 10
PLANS = 40  # cable-plan imports, at most (seed_private has the ports for 40)
PLAN_CABLES = 2
BASE = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(hours=12)


def batch_body(site, n: int) -> bytes:
    start = BASE + timedelta(minutes=n)
    samples = [
        {
            "device": site.device,
            "port": port,
            "ts": (start + timedelta(seconds=5 * i)).isoformat(),
            "fec_corrected_bits": 1000 * (n * SAMPLES + i),
            "fec_uncorrectable_codewords": 0,
        }
        for port in site.ports
        for i in range(SAMPLES)
    ]
    return json.dumps({"samples": samples}).encode()


def plan_body(n: int) -> bytes:
    rows = [
        {
            "label": f"PL-{n}-{i}",
            "kind": "SMF_OS2",
            "a_device": "gpu-pg",
            "a_port": f"eth{PLAN_CABLES * n + i}",
            "b_device": "spine-pg",
            "b_port": f"Ethernet{PLAN_CABLES * n + i + 1}/1",
            "polarity": "B",
            "length_m": 12.5,
        }
        for i in range(PLAN_CABLES)
    ]
    return json.dumps({"rows": rows}).encode()


def post(site, n: int) -> tuple[int, dict]:
    """One telemetry batch; returns (status, headers) or (0, {}) for a connection that failed."""
    status, headers, body = _send(site, "/api/telemetry/", site.token, f"batch-{n}", batch_body(site, n))
    if status == 200 and body["stored"] + body["duplicates"] != len(site.ports) * SAMPLES:
        return -1, headers  # a 200 that did not take the whole batch
    return status, headers


def post_plan(site, n: int) -> tuple[int, dict]:
    """One cable-plan import (applied, all-or-nothing) of PLAN_CABLES cables."""
    status, headers, body = _send(
        site, "/api/cables/import/?dry_run=0", site.plan_token, f"plan-{n}", plan_body(n)
    )
    if status == 201 and body["summary"]["create"] + body["summary"]["unchanged"] != PLAN_CABLES:
        return -1, headers
    return (200 if status == 201 else status), headers


def _send(site, path: str, token: str, key: str, data: bytes) -> tuple[int, dict, dict]:
    req = urllib.request.Request(
        f"{site.url}{path}",
        data=data,
        method="POST",
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Idempotency-Key": key,
        },
    )
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            return r.status, dict(r.headers), json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), {}
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return 0, {}, {}


def cables_per_import(site) -> dict[int, int]:
    counts = dict.fromkeys(range(PLANS), 0)
    for n, c in site.sql(
        "SELECT split_part(label, '-', 2)::int, count(*) FROM inventory_cable WHERE label LIKE 'PL-%' GROUP BY 1"
    ):
        counts[n] = c
    return counts


def retry_until_stored(site, send, failed: list[int], also_ok: list[int]) -> tuple[dict, list]:
    """The client's retries after the restarts, same keys; returns Idempotent-Replayed per item."""
    replays, seen = {}, []
    for n in failed + also_ok:
        for _ in range(20):
            status, headers = send(site, n)
            seen.append(status)
            if status == 200:
                replays[n] = headers.get("Idempotent-Replayed")
                break
            assert status in (0, 503), status  # never "still in progress"
            time.sleep(float(headers.get("Retry-After", "0.5")) if status else 0.5)
        else:
            raise AssertionError(f"{send.__name__} {n} not accepted after the restarts: {seen[-20:]}")
    assert [n for n in failed + also_ok if replays[n] == "true"] == also_ok  # the stored answer
    return replays, seen


def rows_per_batch(site) -> dict[int, int]:
    counts = dict.fromkeys(range(COLLECTORS * BATCHES_EACH), 0)
    for minute, n in site.sql(
        f"SELECT floor(extract(epoch FROM ts - '{BASE.isoformat()}'::timestamptz) / 60)::int, count(*) "  # noqa: S608 - the test's own constant timestamp
        "FROM inventory_telemetrysample GROUP BY 1"
    ):
        counts[minute] = n
    return counts


def test_restarts_under_load_leave_every_batch_whole_or_absent(private_site):
    site = private_site
    whole = len(site.ports) * SAMPLES
    answers: dict[int, int] = {}
    plans: dict[int, int] = {}
    stored = threading.Semaphore(0)
    waits: list[str | None] = []  # Retry-After of every 503
    collectors_done = threading.Event()

    def collector(first: int) -> None:
        for n in range(first, first + BATCHES_EACH):
            answers[n], headers = post(site, n)
            if answers[n] == 503:
                waits.append(headers.get("Retry-After"))
            if answers[n] in (0, 503):
                # A collector backs off while the service is down (Retry-After, capped here) rather
                # than spending every batch it holds on the outage; what failed is retried below.
                time.sleep(min(float(headers.get("Retry-After") or 1), 1.0))
            if answers[n] == 200:
                stored.release()

    def planner() -> None:  # an engineer importing cable plans meanwhile
        for n in range(PLANS):
            if collectors_done.is_set():
                break
            plans[n], headers = post_plan(site, n)
            if plans[n] == 503:
                waits.append(headers.get("Retry-After"))

    threads = [threading.Thread(target=collector, args=(c * BATCHES_EACH,)) for c in range(COLLECTORS)]
    importer = threading.Thread(target=planner)
    for t in [*threads, importer]:
        t.start()
    for _ in range(2):  # two restarts, each after 15 more batches were stored
        for _ in range(15):
            # A web worker's kept connection may take up to its age limit (DATABASE_CONN_MAX_AGE,
            # 60 s) to be replaced after a restart; the batches are retried until then.
            assert stored.acquire(timeout=150), (
                f"no batch stored for 150 s; answers so far: {Counter(answers.values())}"
            )
        site.pg.restart()
    for t in threads:
        t.join(timeout=120)
        assert not t.is_alive()
    collectors_done.set()
    importer.join(timeout=120)
    assert not importer.is_alive()

    # Telemetry: whole or absent; an error only for an absent batch, a 200 only for a stored one.
    counts = rows_per_batch(site)
    assert set(counts.values()) <= {0, whole}, counts
    failed = sorted(n for n, status in answers.items() if status != 200)
    assert all(answers[n] in (0, 503) for n in failed), answers  # refused cleanly, or cut off
    assert [n for n in failed if counts[n]] == [], "an error was answered for a batch that was stored"
    assert [n for n, c in counts.items() if c == 0] == failed, "a 200 for a batch that is not stored"
    assert waits and all(w is not None and int(w) > 0 for w in waits), waits  # 503s say when to retry
    # Cable-plan imports: the same, per import.
    cables = {n: c for n, c in cables_per_import(site).items() if n in plans}
    assert set(cables.values()) <= {0, PLAN_CABLES}, cables
    plan_failed = sorted(n for n, status in plans.items() if status != 200)
    assert all(plans[n] in (0, 503) for n in plan_failed), plans
    assert [n for n, c in cables.items() if c == 0] == plan_failed

    # The clients retry what failed, and one that had succeeded, with the same keys.
    _, seen = retry_until_stored(site, post, failed, [n for n in answers if n not in failed][:1])
    _, plan_seen = retry_until_stored(
        site, post_plan, plan_failed, [n for n in plans if n not in plan_failed][:1]
    )
    counts = rows_per_batch(site)
    assert set(counts.values()) == {whole}
    assert sum(counts.values()) == COLLECTORS * BATCHES_EACH * whole
    assert set(cables_per_import(site)[n] for n in plans) == {PLAN_CABLES}
    print(
        f"telemetry: {Counter(answers.values())}, failed {failed}, retries {Counter(seen)}; "
        f"plans: {Counter(plans.values())}, failed {plan_failed}, retries {Counter(plan_seen)}"
    )
