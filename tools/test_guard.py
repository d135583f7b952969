"""A test must be able to fail: `make lint` runs this over tests/ (and CI runs `make lint`).

Two checks ruff cannot make (ruff's own: B011, B015, PT015, PT017, PLR0124, PLR0133, PLW0129, F631,
F632, RUF018 in pyproject.toml):

1. **No assertion.** A test function (``test_*`` in a ``test_*.py`` file) must assert something:
   an ``assert``, ``pytest.raises``/``pytest.warns``/``pytest.fail``, ``raise AssertionError``, or
   a call to a helper that asserts. The helpers are found, not listed: every function defined anywhere under tests/ that
   itself asserts (directly or through another such helper) counts, as does any function named
   ``assert_*``/``expect_*``, Playwright's ``expect``, and schemathesis's ``call_and_validate``.
2. **Tautologies.** An ``assert`` that cannot fail: on a constant (``assert 1``, ``assert "x"``), an
   ``or`` with a true constant (``assert x or True``), ``len(...) >= 0``, or only on names the module
   imports or defines (``assert FormFactor and timedelta``: that the import worked).

    python -m tools.test_guard [paths...]     # default: tests/
Exit status 1 with one line per finding (path:line: test: what).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RAISES = {"raises", "warns", "fail", "deprecated_call"}  # pytest.<these> assert
ALWAYS_ASSERTING = {"expect", "call_and_validate", "validate_response"}
PREFIXES = ("assert_", "expect_")


def _files(paths: Iterable[Path]) -> Iterator[Path]:
    for p in paths:
        if p.is_dir():
            yield from sorted(q for q in p.rglob("*.py") if ".venv" not in q.parts)
        elif p.suffix == ".py":
            yield p


def _called_name(call: ast.Call) -> str | None:
    f = call.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return None


def _direct_assertion(node: ast.AST) -> bool:
    """An ``assert`` or a ``pytest.raises``-like call anywhere in ``node`` (nested functions too)."""
    for n in ast.walk(node):
        if isinstance(n, ast.Assert):
            return True
        if isinstance(n, ast.Raise) and n.exc is not None:
            exc = n.exc.func if isinstance(n.exc, ast.Call) else n.exc
            if isinstance(exc, ast.Name) and exc.id == "AssertionError":
                return True
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr in RAISES
            and isinstance(n.func.value, ast.Name)
            and n.func.value.id == "pytest"
        ):
            return True
    return False


def _calls(node: ast.AST) -> set[str]:
    return {name for n in ast.walk(node) if isinstance(n, ast.Call) and (name := _called_name(n))}


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for n in ast.walk(tree):
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef):
            yield n


def asserting_helpers(trees: Iterable[ast.AST]) -> set[str]:
    """Names of the functions under tests/ that assert, directly or through one another (a fixpoint)."""
    defs: dict[str, list[ast.AST]] = {}
    for tree in trees:
        for fn in _functions(tree):
            defs.setdefault(fn.name, []).append(fn)
    asserting = {name for name, fns in defs.items() if any(_direct_assertion(fn) for fn in fns)}
    asserting |= ALWAYS_ASSERTING
    calls = {name: set().union(*(_calls(fn) for fn in fns)) for name, fns in defs.items()}
    changed = True
    while changed:
        changed = False
        for name, called in calls.items():
            if name not in asserting and (called & asserting or any(c.startswith(PREFIXES) for c in called)):
                asserting.add(name)
                changed = True
    return asserting


def _module_names(tree: ast.Module) -> set[str]:
    """Names bound at module level by imports, functions and classes."""
    names: set[str] = set()
    for n in tree.body:
        if isinstance(n, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in n.names}
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(n.name)
    return names


def _truthy_constant(e: ast.expr) -> bool:
    if isinstance(e, ast.Constant):
        return bool(e.value)
    if isinstance(e, ast.List | ast.Tuple | ast.Set | ast.Dict):
        return bool(e.elts if not isinstance(e, ast.Dict) else e.keys)
    return False


def _tautology(test: ast.expr, module_names: set[str]) -> str | None:
    if isinstance(test, ast.Constant | ast.List | ast.Tuple | ast.Set | ast.Dict):
        return "asserts a constant" if _truthy_constant(test) else None
    if (
        isinstance(test, ast.BoolOp)
        and isinstance(test.op, ast.Or)
        and any(map(_truthy_constant, test.values))
    ):
        return "an 'or' with a true constant is always true"
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.GtE)
        and isinstance(test.left, ast.Call)
        and _called_name(test.left) == "len"
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == 0
    ):
        return "len(...) >= 0 is always true"
    operands = test.values if isinstance(test, ast.BoolOp) else [test]
    if all(isinstance(o, ast.Name) and o.id in module_names for o in operands):
        return "asserts only that imported or defined names exist"
    return None


def check(paths: Iterable[Path]) -> list[str]:
    parsed = {p: ast.parse(p.read_text(), filename=str(p)) for p in _files(paths)}
    helpers = asserting_helpers(parsed.values())
    problems = []
    for path, tree in parsed.items():
        rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        names = _module_names(tree)
        for fn in _functions(tree):
            if path.name.startswith("test_") and fn.name.startswith("test_"):
                called = _calls(fn)
                if not (
                    _direct_assertion(fn) or called & helpers or any(c.startswith(PREFIXES) for c in called)
                ):
                    problems.append(
                        f"{rel}:{fn.lineno}: {fn.name}: no assert, pytest.raises or asserting helper"
                    )
            for n in ast.walk(fn):
                if isinstance(n, ast.Assert) and (why := _tautology(n.test, names)):
                    problems.append(f"{rel}:{n.lineno}: {fn.name}: assert cannot fail: {why}")
    return problems


def main(argv: list[str]) -> int:
    paths = [Path(a).resolve() for a in argv] or [ROOT / "tests"]
    problems = check(paths)
    for line in problems:
        print(line)
    if problems:
        print(f"test guard: {len(problems)} test(s) that cannot fail", file=sys.stderr)
        return 1
    print(f"test guard: every test in {', '.join(str(p.relative_to(ROOT)) for p in paths)} can fail")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
