"""Run the benchmarks: ``python -m bench [topic ...]`` (``make bench``).

Builds a fresh benchmark database (PostgreSQL when ``DATABASE_URL`` is set: a sibling
database named ``<name>_bench``; otherwise SQLite in ``var/bench.sqlite3``), seeds the
4,096-GPU demo cluster (timed), then runs ``run(report)`` of every module in this package
(or the topics named), and prints every figure with its target. Results also go to
``var/bench.json``. Timing lives here, never in test assertions.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import sys
import time
import traceback
from pathlib import Path
from urllib.parse import urlparse, urlunparse

ROOT = Path(__file__).resolve().parent.parent
SKIP = {"common", "__main__", "locustfile"}  # locustfile: run by load.py in its own process


def _available() -> dict[str, bool]:
    """What the machine offers the benchmarks: PostgreSQL (``DATABASE_URL``) and Redis (``REDIS_URL``,
    answering). The production stack (gunicorn with production settings, a Celery worker on a real
    broker) needs Redis; the figures that matter at scale need PostgreSQL."""
    redis_up = False
    if os.environ.get("REDIS_URL"):
        import redis

        try:
            redis_up = bool(redis.Redis.from_url(os.environ["REDIS_URL"], socket_connect_timeout=1).ping())
        except redis.RedisError:
            redis_up = False
    return {
        "postgresql": os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")),
        "redis": redis_up,
    }


HOW = {
    "postgresql": "PostgreSQL (set DATABASE_URL=postgres://...)",
    "redis": "Redis (set REDIS_URL=redis://...; production settings refuse to start without it)",
}


def _missing(module, available: dict[str, bool]) -> list[str]:
    """What a benchmark module needs (its ``NEEDS``: a tuple, or a function returning one) and the
    machine lacks."""
    needs = getattr(module, "NEEDS", ())
    if callable(needs):
        needs = needs()
    return [n for n in needs if not available.get(n, False)]


def _bench_database() -> str:
    url = os.environ.get("DATABASE_URL", "")
    if url.startswith(("postgres://", "postgresql://")):
        import psycopg

        parts = urlparse(url)
        name = parts.path.lstrip("/") + "_bench"
        admin = urlunparse(parts._replace(path="/postgres"))
        with psycopg.connect(admin.replace("postgres://", "postgresql://", 1), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
        return urlunparse(parts._replace(path="/" + name))
    db = ROOT / "var" / "bench.sqlite3"
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    return f"sqlite:///{db}"


def _run_record(gpus: int, argv: list[str], results: list[dict], load_before: float) -> dict:
    """var/bench.json: the figures with the machine and size they were measured on (the
    documentation's performance page is drawn from snapshots of it: python -m tools.docs --take-bench)."""
    import datetime
    import platform

    import psutil
    from django.db import connection

    return {
        "gpus": gpus,
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "make bench"
        + (f" BENCH_ARGS={' '.join(argv)!r}" if argv else "")
        + f" (BENCH_GPUS={gpus})",
        "machine": {
            "cpus": os.cpu_count(),
            "memory_gib": round(psutil.virtual_memory().total / 2**30),
            "python": platform.python_version(),
            "database": connection.vendor,
            "load": f"{load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end",
        },
        "results": results,
    }


def _topics() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)]) if m.name not in SKIP)


def main(argv: list[str]) -> int:
    # Asked for help, or a topic that does not exist: say what there is before seeding anything.
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__.strip() + "\n\ntopics: " + " ".join(_topics()))
        return 0
    unknown = [a for a in argv if a not in _topics()]
    if unknown:
        print(f"bench: no such topic: {' '.join(unknown)}; topics: {' '.join(_topics())}", file=sys.stderr)
        return 2
    gpus = int(os.environ.get("BENCH_GPUS", "4096"))
    available = _available()
    print(
        "bench: "
        + ", ".join(f"{name} {'yes' if ok else 'no'}" for name, ok in available.items())
        + ("" if all(available.values()) else " (what needs the missing parts is skipped, saying so)"),
        flush=True,
    )
    os.environ["DATABASE_URL"] = _bench_database()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cabletrack.settings")
    os.environ["BENCH_GPUS"] = str(gpus)
    import django

    django.setup()
    from django.core.management import call_command

    results: list[dict] = []
    load_before = os.getloadavg()[0]

    def report(name: str, value: float, unit: str, target: str = "") -> None:
        results.append({"name": name, "value": value, "unit": unit, "target": target})
        print(f"  {name:<58} {value:>12,.2f} {unit:<10} {('target ' + target) if target else ''}", flush=True)

    print(f"bench database: {os.environ['DATABASE_URL'].split('@')[-1]}", flush=True)
    call_command("migrate", verbosity=0)
    from inventory.services.demo.seed import demo_seed

    t = time.perf_counter()
    counts = demo_seed(gpus=gpus, seed=1).counts
    report(f"seed_demo --gpus {gpus}", time.perf_counter() - t, "s", "< 180 s" if gpus > 4096 else "< 20 s")
    print(f"  seeded: {counts}", flush=True)

    topics = argv or _topics()
    failed = []
    skipped: list[str] = []
    for topic in topics:
        print(f"\n[{topic}]", flush=True)
        try:
            module = importlib.import_module(f"bench.{topic}")
            missing = _missing(module, available)
            if missing:
                print(f"  {topic}: skipped, needs " + " and ".join(HOW[m] for m in missing), flush=True)
                skipped.append(topic)
                continue
            module.run(report)
        except Exception:  # one broken benchmark must not hide the others' figures
            traceback.print_exc()
            failed.append(topic)
    out = ROOT / "var" / "bench.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(_run_record(gpus, argv, results, load_before), indent=2))
    print(
        f"\n{len(results)} figures written to {out}"
        + (f"; skipped for want of a service: {', '.join(skipped)}" if skipped else "")
        + (f"; FAILED: {', '.join(failed)}" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
