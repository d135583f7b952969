"""The documentation site's generated pages: ``python -m tools.docs`` (``make docs`` runs it).

MkDocs calls ``generate()`` before every build (``tools/mkdocs_hooks.py``), so ``mkdocs build``
and ``mkdocs serve`` always show what the code says today. It writes, into ``docs/`` (ignored by
git):

- ``operator/configuration.md``: every environment variable ``cabletrack/settings.py`` reads,
  with the default written there and the meaning from ``inventory/conf.py`` (``AppSettings`` for
  the ``CABLETRACK_*`` settings, ``ENVIRONMENT`` for the rest). A variable settings.py reads that
  neither documents, or a documented one settings.py no longer reads, fails the build.
- ``integrator/openapi.json``: the OpenAPI schema the server serves at ``/api/schema/``, which
  ``integrator/openapi.md`` renders.
- ``developer/performance.md``: the benchmark tables and charts from the snapshots of
  ``var/bench.json`` kept in ``docs/performance/`` (``python -m tools.docs --take-bench`` adds
  the latest run's).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SETTINGS = ROOT / "cabletrack" / "settings.py"
BENCH_SNAPSHOTS = DOCS / "performance"


class DocsError(Exception):
    """The code and its documentation disagree: the build must stop."""


# --- Configuration reference ---------------------------------------------------------------------


@dataclass(frozen=True)
class EnvRead:
    name: str
    kind: str  # env.<kind>: str, int, float, bool, list, json, db_url_config, email_url
    default: str  # as a reader of the reference wants it
    line: int


def _literal(node: ast.expr) -> object:
    """The value of a default made of literals and arithmetic, or raise ValueError."""
    code = compile(ast.Expression(body=node), "<default>", "eval")
    if code.co_names:
        raise ValueError("names")
    return eval(code, {"__builtins__": {}}, {})  # noqa: S307 - literals and operators only (no names)


def _shown(name: str, node: ast.expr | None) -> str:
    if node is None:
        return "*required*"
    try:
        value = _literal(node)
    except (ValueError, SyntaxError, TypeError):
        return f"`{ast.unparse(node)}`"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if value in ("", [], {}):
        return "empty"
    if isinstance(value, int) and name.endswith("_BYTES") and value >= 1024 and value % 1024 == 0:
        mib = value / (1024 * 1024)
        return f"{mib:g} MiB" if value >= 1024 * 1024 else f"{value // 1024} KiB"
    if isinstance(value, int | float):
        return f"{value:,}" if isinstance(value, int) else f"{value:g}"
    if isinstance(value, list):
        return ", ".join(f"`{v}`" for v in value)
    if isinstance(value, dict):
        return f"`{json.dumps(value)}`"
    return f"`{value}`"


def settings_env_reads(path: Path = SETTINGS) -> list[EnvRead]:
    """Every ``env.<kind>("NAME", default=...)`` read in settings.py, in the file's order."""
    tree = ast.parse(path.read_text())
    reads: dict[str, EnvRead] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if not (node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            continue
        owner = node.func.value
        is_env = (isinstance(owner, ast.Name) and owner.id == "env") or (
            isinstance(owner, ast.Call) and ast.unparse(owner) == "environ.Env()"
        )
        if not is_env or not re.fullmatch(r"[A-Z][A-Z0-9_]+", node.args[0].value):
            continue
        name = node.args[0].value
        default = next((k.value for k in node.keywords if k.arg == "default"), None)
        if default is None and len(node.args) > 1:
            default = node.args[1]
        reads.setdefault(name, EnvRead(name, node.func.attr, _shown(name, default), node.lineno))
    return sorted(reads.values(), key=lambda r: r.line)


# Defaults that settings.py computes from other settings or the machine, said in words.
SHOWN_DEFAULT = {
    "DATABASE_URL": "SQLite in `CABLETRACK_VAR_DIR` (`cabletrack.sqlite3`)",
    "DJANGO_STATIC_ROOT": "`./staticfiles`",
    "CABLETRACK_VAR_DIR": "`./var`",
    "CABLETRACK_UPLOAD_ROOT": "`CABLETRACK_VAR_DIR/uploads`",
    "CELERY_BROKER_URL": "`REDIS_URL`; the filesystem broker in `CABLETRACK_VAR_DIR` without it",
    "DJANGO_SECURE_SSL_REDIRECT": "on in production (`DJANGO_DEBUG=false`)",
    "DJANGO_HSTS_SECONDS": "0 in debug, 31,536,000 in production",
    "DJANGO_SECRET_KEY": "a development-only key (production refuses to start without one)",
    "DJANGO_ALLOWED_HOSTS": "the loopback names",
    "CABLETRACK_PERMISSIONS_POLICY": "camera for this site only (the serial scan); microphone, "
    "geolocation, payment, usb, serial, bluetooth off",
    "EMAIL_URL": "`smtp://127.0.0.1:1025`",
}


def configuration_reference() -> str:
    sys.path.insert(0, str(ROOT))
    from inventory.conf import ENVIRONMENT, AppSettings, Setting

    reads = settings_env_reads()
    read_names = {r.name for r in reads}
    app = {s.name: s for s in vars(AppSettings).values() if isinstance(s, Setting)}
    undocumented = sorted(n for n in read_names if n not in app and n not in ENVIRONMENT)
    stale = sorted(n for n in ENVIRONMENT if n not in read_names)
    if undocumented:
        raise DocsError(
            "settings.py reads these environment variables, but inventory/conf.py does not say what "
            "they mean (AppSettings or ENVIRONMENT): " + ", ".join(undocumented)
        )
    if stale:
        raise DocsError(
            "inventory/conf.py documents variables settings.py no longer reads: " + ", ".join(stale)
        )

    settings_src = SETTINGS.read_text()
    derived = sorted(n for n in app if n not in read_names)
    missing = [n for n in derived if not re.search(rf"^{n}\s*[:=]", settings_src, re.M)]
    if missing:
        raise DocsError("AppSettings names settings that settings.py does not define: " + ", ".join(missing))

    def row(name: str, default: str, meaning: str) -> str:
        return f"| `{name}` | {default} | {meaning.replace('|', '&#124;')} |"

    out = [
        "# Configuration reference",
        "",
        "<!-- Generated by `python -m tools.docs` from cabletrack/settings.py and inventory/conf.py."
        " Do not edit: change the code. -->",
        "",
        "Everything is read from the environment. `cabletrack/settings.py` is the one place that holds",
        "the defaults; `inventory/conf.py` says what each setting means. This page is generated from",
        "both at every documentation build, and the build fails when settings.py reads a variable",
        "that is not documented there.",
        "",
        "Development defaults are safe for a laptop; production sets `DJANGO_DEBUG=false` and must",
        "then provide `DJANGO_SECRET_KEY`, `DATABASE_URL` and `REDIS_URL`, or start-up fails. Each",
        "`CABLETRACK_*` row names both the environment variable and the Django setting of that name;",
        "the code reads it through `inventory/conf.py` (`app_settings.<name in lower case, without",
        "the prefix>`).",
        "",
        f"{len(reads)} environment variables:",
        "",
        "| variable | default | meaning |",
        "|---|---|---|",
    ]
    for r in reads:
        meaning = app[r.name].__doc__ if r.name in app else ENVIRONMENT[r.name]
        out.append(row(r.name, SHOWN_DEFAULT.get(r.name, r.default), meaning or ""))
    out += [
        "",
        "## Derived settings",
        "",
        "Computed in `settings.py` from the variables above, not read from the environment:",
        "",
        "| setting | meaning |",
        "|---|---|",
    ]
    out += [f"| `{n}` | {(app[n].__doc__ or '').replace('|', '&#124;')} |" for n in derived]
    return "\n".join(out) + "\n"


# --- OpenAPI schema ------------------------------------------------------------------------------


def openapi_schema() -> str:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cabletrack.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    return json.dumps(schema, indent=1, sort_keys=False, default=str) + "\n"


# --- Performance ---------------------------------------------------------------------------------

_TARGET = re.compile(r"(<=|>=|<|>|≤|≥)?\s*([0-9][0-9,]*(?:\.[0-9]+)?)")


def _target(target: str) -> tuple[str, float] | None:
    """``("<", 180.0)`` for "< 180 s"; higher-is-better targets say ">=". None: no number."""
    m = _TARGET.search(target.replace("p95", ""))
    if not m:
        return None
    op = {"≤": "<=", "≥": ">="}.get(m.group(1) or "<=", m.group(1) or "<=")
    return op, float(m.group(2).replace(",", ""))


def verdict(value: float, target: str) -> str:
    """ "met", "missed" or "" (no numeric target)."""
    t = _target(target)
    if t is None:
        return ""
    op, limit = t
    ok = {"<": value < limit, "<=": value <= limit, ">": value > limit, ">=": value >= limit}[op]
    return "met" if ok else "missed"


def _bar(value: float, target: str, width: int = 160) -> str:
    t = _target(target)
    if t is None or t[1] == 0:
        return ""
    op, limit = t
    share = value / limit if op.startswith("<") else (limit / value if value else 2.0)
    share = max(0.02, min(share, 2.0))
    colour = "#2e7d32" if verdict(value, target) == "met" else "#c62828"
    w = int(width / 2 * share)
    return (
        f'<svg class="bench-bar" width="{width}" height="14" role="img" '
        f'aria-label="{share:.0%} of the target">'
        f'<rect x="0" y="2" width="{w}" height="10" fill="{colour}"/>'
        f'<line x1="{width // 2}" y1="0" x2="{width // 2}" y2="14" stroke="#333" stroke-width="1.5"/></svg>'
    )


def load_snapshots(folder: Path = BENCH_SNAPSHOTS) -> list[dict]:
    snaps = []
    for path in sorted(folder.glob("bench-*.json")):
        data = json.loads(path.read_text())
        if isinstance(data, list):  # a bare var/bench.json of an older run
            raise DocsError(
                f"{path.name}: a snapshot needs its machine and size (python -m tools.docs --take-bench)"
            )
        data["file"] = path.name
        snaps.append(data)
    return sorted(snaps, key=lambda s: s["gpus"])


def performance_page() -> str:
    snaps = load_snapshots()
    if not snaps:
        raise DocsError("no benchmark snapshot in docs/performance/ (python -m tools.docs --take-bench)")
    names: list[str] = []
    for s in snaps:
        for r in s["results"]:
            if r["name"] not in names:
                names.append(r["name"])
    out = [
        "# Performance",
        "",
        "<!-- Generated by `python -m tools.docs` from docs/performance/bench-*.json. Do not edit. -->",
        "",
        "`make bench` measures every figure below and writes them to `var/bench.json`;",
        "`python -m tools.docs --take-bench` keeps that run as a snapshot in `docs/performance/`,",
        "from which this page is drawn. A bar is the figure against its target: the line is the",
        "target, green met it, red missed it (for higher-is-better figures, the bar is the",
        "target over the figure). Timing lives here and in `make bench`, never in a test.",
        "",
        "## The machines",
        "",
        "| size | measured | machine | command | load |",
        "|---|---|---|---|---|",
    ]
    for s in snaps:
        m = s.get("machine", {})
        out.append(
            f"| {s['gpus']:,} GPUs | {s.get('date', '?')} | {m.get('cpus', '?')} cores, "
            f"{m.get('memory_gib', '?')} GiB, {m.get('database', '?')} | `{s.get('command', '')}` | "
            f"{m.get('load', '?')} |"
        )
    header = "| figure | target | " + " | ".join(f"{s['gpus']:,} GPUs" for s in snaps) + " |"
    out += ["", "## Figures side by side", "", header, "|---|---|" + "---|" * len(snaps)]
    for name in names:
        targets: dict[int, str] = {}
        cells = []
        for s in snaps:
            r = next((r for r in s["results"] if r["name"] == name), None)
            if r is None:
                cells.append("-")
                continue
            if r.get("target"):
                targets[s["gpus"]] = r["target"]
            v = verdict(r["value"], r.get("target", ""))
            mark = " **missed**" if v == "missed" else ""
            cells.append(f"{r['value']:,.4g} {r['unit']}{mark} {_bar(r['value'], r.get('target', ''))}")
        if len(set(targets.values())) > 1:  # the sizes have targets of their own (the seed's)
            target = "; ".join(f"{gpus:,}: {t}" for gpus, t in targets.items())
        else:
            target = next(iter(targets.values()), "-")
        out.append(f"| {name} | {target} | " + " | ".join(cells) + " |")
    out += ["", "## What limits each miss", ""]
    any_note = False
    for s in snaps:
        for r in s["results"]:
            if verdict(r["value"], r.get("target", "")) == "missed":
                any_note = True
                why = r.get("limit") or "*not yet explained*"
                out.append(
                    f"- **{r['name']}** at {s['gpus']:,} GPUs ({r['value']:,.4g} {r['unit']}, target {r['target']}): {why}"
                )
    if not any_note:
        out.append("Every figure met its target.")
    for s in snaps:
        if s.get("notes"):
            out += ["", f"**Notes on the {s['gpus']:,}-GPU run.** {s['notes']}"]
    out += [
        "",
        "Every earlier run, with its machine and what changed between runs, is kept in",
        "[Performance history](performance-history.md).",
    ]
    return "\n".join(out) + "\n"


def take_bench(source: Path = ROOT / "var" / "bench.json") -> Path:
    """Keep the latest ``make bench`` run as ``docs/performance/bench-<gpus>.json``."""
    data = json.loads(source.read_text())
    if isinstance(data, list):
        raise DocsError(f"{source} is from a bench without machine details: run make bench again")
    target = BENCH_SNAPSHOTS / f"bench-{data['gpus']}.json"
    old = json.loads(target.read_text()) if target.exists() else {}
    for r in data["results"]:  # keep the explanations of misses that still miss
        prev = next((p for p in old.get("results", []) if p["name"] == r["name"]), None)
        if prev and prev.get("limit") and "limit" not in r:
            r["limit"] = prev["limit"]
    BENCH_SNAPSHOTS.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data, indent=1) + "\n")
    return target


# --- NetBox field ownership ---------------------------------------------------------------------


def netbox_ownership() -> str:
    """The default owner of each cable field the sync compares, as the code decides it."""
    sys.path.insert(0, str(ROOT))
    from inventory.core.interop.ownership import cable_field_owners, ownership_table_markdown

    return ownership_table_markdown(cable_field_owners({})).rstrip() + "\n"


# --- Entry points --------------------------------------------------------------------------------

GENERATED = {
    "operator/configuration.md": configuration_reference,
    "developer/performance.md": performance_page,
    "integrator/openapi.json": openapi_schema,
    "_generated/netbox-ownership.md": netbox_ownership,
}


def generate(docs: Path = DOCS) -> list[Path]:
    written = []
    for rel, make in GENERATED.items():
        path = docs / rel
        text = make()
        if not path.exists() or path.read_text() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--take-bench", action="store_true", help="keep var/bench.json as a snapshot")
    args = parser.parse_args(argv)
    try:
        if args.take_bench:
            print(f"kept {take_bench().relative_to(ROOT)}")
        for path in generate():
            print(f"generated {path.relative_to(ROOT)}")
    except DocsError as e:
        print(f"docs: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
