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


def post(site, n: int) -> tuple[int, dict]:
    """One POST; returns (status, headers) or (0, {}) for a connection that failed."""
    req = urllib.request.Request(
        f"{site.url}/api/telemetry/",
        data=batch_body(site, n),
        method="POST",
        headers={
            "Authorization": f"Bearer {site.token}",
            "Content-Type": "application/json",
            "Idempotency-Key": f"batch-{n}",
        },
    )
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            body = json.loads(r.read())
            if body["stored"] + body["duplicates"] != len(site.ports) * SAMPLES:
                return -1, dict(r.headers)  # a 200 that did not take the whole batch
            return r.status, dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers)
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return 0, {}


def rows_per_batch(site) -> dict[int, int]:
    counts = dict.fromkeys(range(COLLECTORS * BATCHES_EACH), 0)
    for minute, n in site.sql(
        f"SELECT floor(extract(epoch FROM ts - '{BASE.isoformat()}'::timestamptz) / 60)::int, count(*) "
        "FROM inventory_telemetrysample GROUP BY 1"
    ):
        counts[minute] = n
    return counts


def test_restarts_under_load_leave_every_batch_whole_or_absent(private_site):
    site = private_site
    whole = len(site.ports) * SAMPLES
    answers: dict[int, int] = {}
    stored = threading.Semaphore(0)

    def collector(first: int) -> None:
        for n in range(first, first + BATCHES_EACH):
            answers[n], _ = post(site, n)
            if answers[n] == 200:
                stored.release()

    threads = [threading.Thread(target=collector, args=(c * BATCHES_EACH,)) for c in range(COLLECTORS)]
    for t in threads:
        t.start()
    for _ in range(2):  # two restarts, each after 15 more batches were stored
        for _ in range(15):
            assert stored.acquire(timeout=60)
        site.pg.restart()
    for t in threads:
        t.join(timeout=120)
        assert not t.is_alive()

    counts = rows_per_batch(site)
    assert set(counts.values()) <= {0, whole}, counts  # never a half-written batch
    failed = sorted(n for n, status in answers.items() if status != 200)
    assert all(answers[n] in (0, 503) for n in failed), answers  # refused cleanly, or cut off
    assert [n for n in failed if counts[n]] == [], "an error was answered for a batch that was stored"
    assert [n for n, c in counts.items() if c == 0] == failed, "a 200 for a batch that is not stored"

    # The collectors retry what failed, and one that had succeeded, with the same keys.
    retried = failed + [n for n in answers if n not in failed][:1]
    replays, seen = {}, []
    for n in retried:
        for _ in range(20):
            status, headers = post(site, n)
            seen.append(status)
            if status == 200:
                replays[n] = headers.get("Idempotent-Replayed")
                break
            assert status in (0, 503), status  # never "still in progress"
            time.sleep(float(headers.get("Retry-After", "0.5")) if status else 0.5)
        else:
            raise AssertionError(f"batch {n} not accepted after the restarts: {seen[-20:]}")
    counts = rows_per_batch(site)
    assert set(counts.values()) == {whole}
    assert sum(counts.values()) == COLLECTORS * BATCHES_EACH * whole
    assert [n for n in retried if replays[n] == "true"] == retried[len(failed) :]  # the stored answer
    print(f"answers: {Counter(answers.values())}, failed: {failed}, retries: {Counter(seen)}")
