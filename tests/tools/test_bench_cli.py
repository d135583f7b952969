"""``make bench`` / ``python -m bench``: asked for help or for a topic that does not exist, it says
which topics there are, before building and seeding a benchmark database (a minute or more)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bench", *args], cwd=ROOT, capture_output=True, text=True, timeout=60
    )


def test_help_lists_the_topics_and_seeds_nothing():
    done = _bench("--help")
    assert done.returncode == 0, done.stderr
    topics = done.stdout.rsplit("topics:", 1)[1].split()
    assert {"pages", "telemetry", "collectives", "foundation"} <= set(topics)
    assert "seed_demo" not in done.stdout


def test_an_unknown_topic_is_refused_naming_the_topics():
    done = _bench("pages", "nosuch")
    assert done.returncode == 2
    assert "no such topic: nosuch" in done.stderr and "pages" in done.stderr
    assert "seed_demo" not in done.stdout
