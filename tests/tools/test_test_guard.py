"""tools/test_guard.py finds the tests that cannot fail, and passes the ones that can."""

import textwrap

from tools import test_guard

SAMPLE = """
import pytest
from datetime import timedelta

def _checks(x):
    assert x == 1

def _via_helper(x):
    _checks(x)

def test_asserts():
    assert 1 + 1 == 2

def test_raises():
    with pytest.raises(ValueError):
        int("x")

def test_helper_two_deep():
    _via_helper(1)

def test_nothing():
    x = 1 + 1

def test_constant():
    assert "always"

def test_or_true(page):
    assert "walker" in page or True

def test_len():
    assert len([1]) >= 0

def test_imports():
    assert timedelta and pytest
"""


def test_the_guard_flags_what_cannot_fail_and_only_that(tmp_path):
    path = tmp_path / "test_sample.py"
    path.write_text(textwrap.dedent(SAMPLE))
    found = test_guard.check([tmp_path])
    flagged = {line.split(": ")[1] for line in found}
    assert flagged == {"test_nothing", "test_constant", "test_or_true", "test_len", "test_imports"}, found
    assert any("test_nothing: no assert" in line for line in found)
    assert any("test_or_true: assert cannot fail: an 'or' with a true constant" in line for line in found)


def test_the_whole_suite_passes_the_guard():
    assert test_guard.check([test_guard.ROOT / "tests"]) == []
