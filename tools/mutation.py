"""`make mutation`: mutation testing (mutmut 3) of the modules where a silent mistake costs most.

For each module: mutmut copies the project to ./mutants/ (the work tree is never changed), makes
every small change it knows to the module (``<`` for ``<=``, ``+`` for ``-``, a constant off by
one, a condition negated, ...) and runs the tests that cover the changed function. A mutant the
tests do not notice *survives*: either a test is missing or the change is equivalent. Prints the
score per module ((killed + timed out) / (killed + timed out + survived); "no tests": no test runs
the mutated line at all) and every survivor with its diff. Not run in CI:
a module takes minutes to an hour.

    make mutation                                   # every module below, one at a time
    make mutation MUTATION_ARGS="retest_rules"      # modules whose path contains a word
    make mutation MUTATION_ARGS="maths --tests tests/inventory/core/forecast/"  # other tests
    make mutation MUTATION_ARGS="adapters --only inventory/core/telemetry/adapters/prometheus.py"
    make mutation MUTATION_ARGS="--again decode"    # after new tests: re-test only what survived
    python -m tools.mutation --list

``--again`` keeps ./mutants/ from the module's last run (even an interrupted one): a mutant killed
stays killed (tests were added, not removed), and only the survivors and the mutants with no
test are tried again, with the new tests (mutmut regenerates the mutants of a function whose code
changed). Minutes instead of an hour for a large module; mutants the last run never reached stay
"not checked" (a run without ``--again`` checks everything).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent

# module -> the tests that exercise it (mutmut runs, per mutant, only those that cover its function).
MODULES: dict[str, list[str]] = {
    # retest due rules
    "inventory/core/retest_rules.py": ["tests/inventory/core/test_retest_rules.py"],
    # loss budgets and verdicts
    "inventory/core/optics/budgets.py": ["tests/inventory/core/optics/"],
    "inventory/core/optics/trace_checks.py": ["tests/inventory/core/optics/"],
    # forecast maths
    "inventory/core/forecast/maths.py": [
        "tests/inventory/core/forecast/",
        "tests/inventory/services/forecast/",
    ],
    "inventory/core/forecast/risk.py": [
        "tests/inventory/core/forecast/",
        "tests/inventory/services/forecast/",
    ],
    # telemetry: decoders, rates, rollup arithmetic, rules
    "inventory/core/telemetry/decode.py": ["tests/inventory/core/telemetry/"],
    "inventory/core/telemetry/rates.py": ["tests/inventory/core/telemetry/"],
    # rollup and rules: the pure tests only. The service tests that also reach them (telemetry
    # rollup, alerts) are Django tests with a database, too slow to run once per mutant.
    "inventory/core/telemetry/rollup.py": ["tests/inventory/core/telemetry/"],
    # The rules: their own tests (every test that calls the engine). The rest of the folder
    # (decoders, adapters, the Hypothesis properties, one database test) never reaches the rules
    # and only made the first pass (mutmut's stats and clean runs) take minutes.
    "inventory/core/telemetry/rules/*": ["tests/inventory/core/telemetry/test_rules*.py"],
    # The adapters' own tests only: the rest of tests/inventory/core/telemetry/ (rules, rates,
    # the Hypothesis properties) calls ``adapters.parse`` too, and would run for every mutant of it.
    "inventory/core/telemetry/adapters/*": [
        "tests/inventory/core/telemetry/test_adapters.py",
        "tests/inventory/core/telemetry/test_renamed_fields.py",
        "tests/inventory/core/telemetry/test_adapter_edges.py",
        # ethtool.map_ethtool_stats is called only by the Prometheus pull (interop/prometheus.py)
        "tests/inventory/core/interop/test_prometheus_names.py",
    ],
    # permission policy: the tests that ask the policy itself (every role x action x site, the refusal
    # sentences, the sites of objects, bulk checks, the decorator, token kinds). The rest of
    # tests/inventory/security/ (318 tests in test_permission_matrix, test_one_policy and
    # test_write_scope_table alone) renders pages and posts through the API, and nearly every one
    # calls ``can``: each mutant of it would run them all, hours a run on this machine.
    "inventory/access/authz.py": ["tests/inventory/security/test_authz_policy.py"],
}

# mutmut's exit codes. A mutant that hangs the tests (a loop that never ends) is caught: the run
# times out, so it counts as killed in the score and is listed apart.
STATUS = {1: "killed", 3: "killed", 37: "killed", 0: "survived", 5: "no tests", 33: "no tests", 34: "skipped"}
STATUS.update(dict.fromkeys((36, 24, -24, 152, 255), "timeout"))

# pytest plugins no selected test uses, switched off in every mutant's run. Each mutant is a new
# ``pytest.main`` in a forked child: ``unraisableexception`` runs ``gc.collect()`` over the whole
# inherited heap at the end of every session (0.33 s of the 0.56 s of CPU a one-test mutant cost,
# load 10), faker's session fixture is autouse (0.37 s wall, factory_boy reads Faker directly),
# schemathesis (only the schema fuzz, never selected here), locust, anyio and platformdirs
# register hooks for nothing. Together: 0.56 s -> 0.16 s of CPU per mutant before its tests run.
UNUSED_PLUGINS = ("unraisableexception", "faker", "schemathesis", "locust", "anyio", "platformdirs")


def _expand(tests: list[str]) -> list[str]:
    """Test paths with shell patterns (``test_rules*.py``) expanded: pytest takes no patterns."""
    out: list[str] = []
    for t in tests:
        if any(c in t for c in "*?["):
            found = sorted(str(p.relative_to(ROOT)) for p in ROOT.glob(t))
            if not found:
                raise SystemExit(f"no test file matches {t}")
            out += found
        else:
            out.append(t)
    return out


def _config(module: str, tests: list[str], only: list[str] | None = None) -> str:
    lines = "\n    ".join
    plugins = "".join(f"    -p\n    no:{p}\n" for p in UNUSED_PLUGINS)
    return (
        "[mutmut]\n"
        "source_paths = inventory/\n"
        f"only_mutate =\n    {lines(only or [module])}\n"
        "also_copy =\n    cabletrack/\n    templates/\n    manage.py\n    tools/\n"
        f"pytest_add_cli_args_test_selection =\n    {lines(_expand(tests))}\n"
        "pytest_add_cli_args =\n    -p\n    no:cacheprovider\n    -p\n    no:randomly\n    -n\n    0\n    -q\n"
        f"{plugins}"
        # the test database is made once (the first run) and kept for every mutant after it
        "    --reuse-db\n"
    )


def _metas(module: str, only: list[str] | None = None):
    """(source file, its mutmut ``.meta`` data) for the module's files under ./mutants/."""
    patterns = [m.replace("/*", "/**/*.py") if m.endswith("*") else m for m in only or [module]]
    for meta in (m for p in patterns for m in (ROOT / "mutants").glob(p + ".meta")):
        yield str(meta.relative_to(ROOT / "mutants"))[: -len(".meta")], json.loads(meta.read_text())


def _results(module: str, only: list[str] | None = None) -> dict[str, str]:
    """Mutant name -> status, from mutmut's per-file ``.meta`` files under ./mutants/."""
    out: dict[str, str] = {}
    for _source, data in _metas(module, only):
        for name, code in data["exit_code_by_key"].items():
            out[name] = "not checked" if code is None else STATUS.get(code, "suspicious")
    return out


# Every survivor's diff from one process: ``mutmut show NAME`` per survivor started a new
# interpreter each (about 4 s apiece under load: 11 minutes for 168 survivors of one file).
_SHOW = """
import sys
from mutmut.mutation.diff_apply import get_diff_for_mutant
for line in sys.stdin:
    source, name = line.split()
    print(f"\\n--- survived: {name}", flush=True)
    print(get_diff_for_mutant(name, path=source), flush=True)
"""


def _show_survivors(module: str, only: list[str] | None = None) -> None:
    todo = [
        f"{source} {name}\n"
        for source, data in sorted(_metas(module, only), key=lambda m: m[0])
        for name, code in sorted(data["exit_code_by_key"].items())
        if code is not None and STATUS.get(code) == "survived"
    ]
    if todo:
        subprocess.run([sys.executable, "-c", _SHOW], cwd=ROOT, input="".join(todo), text=True, check=False)


def _function(mutant: str) -> str:
    return mutant.split("__mutmut_")[0]


def run(
    module: str, tests: list[str], max_children: int, only: list[str] | None = None, *, again: bool = False
) -> dict[str, str]:
    setup = ROOT / "setup.cfg"
    if setup.exists():
        raise SystemExit("setup.cfg exists; this tool writes its own mutmut section there and removes it")
    retry: set[str] = set()
    before = _results(module, only) if again else {}
    if again:
        retry = {name for name, status in before.items() if status in ("survived", "no tests")}
        if not retry:
            raise SystemExit(f"--again: no survivor of an earlier run of {module} in ./mutants/")
    else:
        shutil.rmtree(ROOT / "mutants", ignore_errors=True)
    setup.write_text(_config(module, tests, only))
    mutmut = [str(BIN / "mutmut"), "run", "--max-children", str(max_children)]
    # Property tests draw the same examples for every mutant (and every run), with no deadline
    # (a loaded machine must not "kill" a mutant) and no example database carried from one mutant
    # to the next: tests/conftest.py's ``mutation`` profile.
    env = {**os.environ, "HYPOTHESIS_PROFILE": "mutation"}
    try:
        subprocess.run(mutmut + sorted(retry), cwd=ROOT, check=False, env=env)
        if again:
            # a function whose code changed since has new mutants (numbered anew), all unchecked
            reached = {_function(n) for n, s in before.items() if s != "not checked"}
            fresh = sorted(
                n for n, s in _results(module, only).items() if s == "not checked" and _function(n) in reached
            )
            if fresh:
                subprocess.run(mutmut + fresh, cwd=ROOT, check=False, env=env)
        results = _results(module, only)
        _show_survivors(module, only)
    finally:
        setup.unlink()
    return results


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("words", nargs="*", help="run the modules whose path contains one of these")
    parser.add_argument("--list", action="store_true", help="list the modules and their tests")
    parser.add_argument("--max-children", type=int, default=1, help="parallel mutants (default 1)")
    parser.add_argument(
        "--tests",
        nargs="+",
        metavar="PATH",
        help="run these tests instead of the module's list (e.g. only its fast unit tests: "
        "a lower bound of the score, in minutes where the database tests take hours)",
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="FILE",
        help="mutate only this file of the chosen module (repeatable), e.g. one adapter of adapters/*",
    )
    parser.add_argument(
        "--again", action="store_true", help="keep ./mutants/ and re-test only the last run's survivors"
    )
    args = parser.parse_args(argv)
    chosen = {m: t for m, t in MODULES.items() if not args.words or any(w in m for w in args.words)}
    if args.tests:
        chosen = dict.fromkeys(chosen, args.tests)
    if args.list:
        for module, tests in chosen.items():
            print(f"{module}: {' '.join(tests)}")
        return 0
    scores = {}
    for module, tests in chosen.items():
        print(f"\n=== {module} ({' '.join(tests)})", flush=True)
        only = [f for f in args.only or () if Path(f).match(module) or f == module] or None
        if args.only and not only:
            continue  # --only names files of other modules
        scores[module] = Counter(run(module, tests, args.max_children, only, again=args.again).values())
    print("\n=== mutation score per module ((killed + timeout) / (killed + timeout + survived))")
    for module, c in scores.items():
        caught = c["killed"] + c["timeout"]
        judged = caught + c["survived"]
        score = f"{100 * caught / judged:5.1f}%" if judged else "   n/a"
        rest = ", ".join(f"{k} {v}" for k, v in sorted(c.items()) if k not in ("killed", "survived"))
        print(
            f"{score}  {module}: {c['killed']} killed, {c['survived']} survived"
            + (f", {rest}" if rest else "")
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
