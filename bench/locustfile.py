"""Locust users for ``bench/load.py`` (run by it as ``locust -f bench/locustfile.py --headless``).

Technicians browse like the phone pages are used (cable page by QR, rack page, the cable list
and a search) and record insertion-loss tests; collectors post telemetry batches for real ports.
What to use (labels, racks, session cookies, the ingest token, ports) comes from the JSON file
named by ``CABLETRACK_LOAD_PLAN``, written by ``bench/load.py`` before the run.
"""

from __future__ import annotations

import itertools
import json
import os
import random
from datetime import UTC, datetime, timedelta

from locust import HttpUser, between, task

PLAN = json.loads(open(os.environ["CABLETRACK_LOAD_PLAN"]).read())  # noqa: SIM115
_sessions = itertools.cycle(PLAN["sessions"])
_tokens = itertools.cycle(PLAN["tech_tokens"])
_collector_ids = itertools.count()


class Technician(HttpUser):
    weight = PLAN["technicians"]
    fixed_count = PLAN["technicians"]
    wait_time = between(1, 3)  # a person reading the page before the next tap

    def on_start(self):
        self.client.cookies.set(PLAN["session_cookie"], next(_sessions))
        self.token = next(_tokens)
        self.rng = random.Random()

    def page(self, url: str, name: str) -> None:
        """GET a page; a redirect to the login page (a lost session) is a failure, not a hit."""
        with self.client.get(url, name=name, catch_response=True) as r:
            if r.status_code != 200 or "/login/" in r.url:
                r.failure(f"{r.status_code} at {r.url}")

    @task(5)
    def cable_page(self):
        self.page(f"/c/{self.rng.choice(PLAN['labels'])}", "/c/<label>")

    @task(2)
    def rack_page(self):
        self.page(f"/r/{self.rng.choice(PLAN['racks'])}", "/r/<rack>")

    @task(2)
    def cable_list(self):
        self.page(f"/cables/?page={self.rng.randint(1, PLAN['list_pages'])}", "/cables/?page")

    @task(1)
    def cable_search(self):
        label = self.rng.choice(PLAN["labels"])
        self.page(f"/cables/?q={label[:-1]}", "/cables/?q")

    @task(1)
    def record_test(self):
        label, wavelength = self.rng.choice(PLAN["fibres"])  # a wavelength that fits the fibre
        body = {
            "cable": label,
            "readings": [
                {"fibre": 1, "wavelength_nm": wavelength, "loss_db": round(self.rng.uniform(0.1, 0.6), 2)},
                {"fibre": 2, "wavelength_nm": wavelength, "loss_db": round(self.rng.uniform(0.1, 0.6), 2)},
            ],
        }
        with self.client.post(
            "/api/tests/",
            json=body,
            headers={"Authorization": f"Bearer {self.token}"},
            name="POST /api/tests/",
            catch_response=True,
        ) as r:
            if r.status_code != 201:
                r.failure(f"{r.status_code}: {r.text[:200]}")


class Collector(HttpUser):
    """A telemetry collector: one batch for its share of the ports every few seconds."""

    weight = PLAN["collectors"]
    fixed_count = PLAN["collectors"]
    wait_time = between(4, 6)

    def on_start(self):
        n = next(_collector_ids)
        ports = PLAN["ports"]
        self.ports = ports[n :: PLAN["collectors"]][: PLAN["batch"]]
        self.ts = datetime.now(UTC) - timedelta(hours=1) + timedelta(milliseconds=n)
        self.counter = 0

    @task
    def post_batch(self):
        self.ts += timedelta(seconds=10)
        self.counter += 1
        ts = self.ts.isoformat()
        samples = [
            {
                "device": dev,
                "port": port,
                "ts": ts,
                "fec_corrected_codewords": 1_000_000 + self.counter * 997 + i,
                "fec_uncorrectable_codewords": 0,
                "fec_corrected_bits": 2_000_000 + self.counter * 1013,
                "fec_symbol_errors": 1_100_000 + self.counter * 991,
                "rx_bits": 10**12 + self.counter * 10**9,
                "rx_power_dbm": [-2.1, -2.0, -2.2, -1.9],
                "temperature_c": 45.5,
            }
            for i, (dev, port) in enumerate(self.ports)
        ]
        with self.client.post(
            "/api/telemetry/",
            json={"samples": samples},
            headers={"Authorization": f"Bearer {PLAN['ingest_token']}"},
            name="POST /api/telemetry/",
            catch_response=True,
        ) as r:
            if r.status_code != 200 or r.json().get("rejected"):
                r.failure(f"{r.status_code}: {r.text[:200]}")
