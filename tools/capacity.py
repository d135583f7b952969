"""The capacity page's generated tables: ``python -m tools.capacity`` prints them,
``--write`` puts them into ``docs/operator/capacity.md`` between its markers, ``--take`` first
keeps the latest ``python -m bench capacity`` run (``var/bench.json``) as
``docs/performance/capacity-<gpus>.json``. The arithmetic is ``inventory.core.capacity``'s;
``tests/inventory/core/test_capacity.py`` fails when the page and the snapshot disagree.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = ROOT / "docs" / "performance" / "capacity-4096.json"
PAGE = ROOT / "docs" / "operator" / "capacity.md"
SIZES = [4_096, 32_768, 131_072, 500_000]
BEGIN, END = "<!-- capacity:begin (python -m tools.capacity --write) -->", "<!-- capacity:end -->"


def generated(snapshot: Path = SNAPSHOT) -> str:
    from inventory.core.capacity import UnitCosts, table, two_core_rates

    data = json.loads(snapshot.read_text())
    values = {r["name"]: r["value"] for r in data["results"]}
    u = UnitCosts.from_bench(data["results"])
    predicted = two_core_rates(u)
    measured = {
        "ingest": values["ingest FEC counters, 2 web workers (HTTP)"],
        "rollup_1": values["rollup, 1 Celery worker process"],
        "rollup_2": values["rollup, 2 Celery worker processes (2 shards)"],
    }
    names = {
        "ingest": "ingest, 2 web workers",
        "rollup_1": "rollup, 1 worker process",
        "rollup_2": "rollup, 2 worker processes",
    }
    checks = {"ingest": "ingest", "rollup_1": "rollup, 1 worker", "rollup_2": "rollup, 2 workers"}
    check = [
        "| samples/s at 4,096 GPUs, 2 cores | two free cores, servers only | measured, same run "
        "| measured / two free cores | everything of ours per sample | cores left by other work "
        "| predicted for this machine in this run | measured / predicted |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        *(
            f"| {names[k]} | {predicted[k]:,.0f} | {measured[k]:,.0f} | {measured[k] / predicted[k]:.2f} "
            f"| {values[f'check: {checks[k]}, everything of ours per sample']:,.1f} µs "
            f"| {values[f'check: {checks[k]}, cores left by other work']:.2f} "
            f"| {values[f'check: {checks[k]}, predicted for this machine']:,.0f} "
            f"| **{values[f'check: {checks[k]}, measured / predicted']:.2f}** |"
            for k in names
        ),
    ]
    one = values["unit: rollup, worker CPU per sample"] + values["unit: rollup, PostgreSQL CPU per sample"]
    two = (
        values["rollup, 2 workers: worker CPU per sample"]
        + values["rollup, 2 workers: PostgreSQL CPU per sample"]
    )
    check += [
        "",
        "| CPU per sample rolled up (worker and PostgreSQL) | 1 worker process | 2 worker processes | 2 / 1 |",
        "|---|---:|---:|---:|",
        f"| µs | {one:,.1f} | {two:,.1f} | {two / one:.2f} |",
    ]
    units = [
        "| unit cost | value |",
        "|---|---:|",
        *(
            f"| {r['name'].removeprefix('unit: ')} | {r['value']:,.3g} {r['unit']} |"
            for r in data["results"]
            if r["name"].startswith("unit: ")
        ),
    ]
    return "\n".join(
        [
            BEGIN,
            f"Unit costs: `python -m bench capacity`, {data['date']}, {data['machine']['cpus']} cores, "
            f"{data['machine']['database']}, load average {data['machine']['load']}.",
            "",
            *units,
            "",
            table(SIZES, u),
            "",
            *check,
            END,
        ]
    )


def page_block(text: str) -> str:
    m = re.search(re.escape(BEGIN) + ".*?" + re.escape(END), text, re.S)
    if not m:
        raise SystemExit(f"{PAGE}: no capacity markers")
    return m.group(0)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--take", action="store_true", help="keep var/bench.json as the snapshot first")
    p.add_argument("--write", action="store_true", help="write the tables into the capacity page")
    args = p.parse_args(argv)
    if args.take:
        shutil.copy(ROOT / "var" / "bench.json", SNAPSHOT)
    block = generated()
    if args.write:
        text = PAGE.read_text()
        PAGE.write_text(text.replace(page_block(text), block))
    else:
        print(block)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
