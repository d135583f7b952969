"""The property tests' CI profile draws the same examples on every run; the local one explores."""

from hypothesis import given, settings
from hypothesis import strategies as st


def _draws(profile: str) -> list[int]:
    seen: list[int] = []

    @settings(settings.get_profile(profile), max_examples=20)
    @given(st.integers())
    def collect(n):
        seen.append(n)

    collect()
    return seen


def test_the_ci_profile_draws_the_same_examples_on_every_run():
    first, second = _draws("ci"), _draws("ci")
    assert len(first) == 20
    assert first == second


def test_the_local_profile_draws_new_examples_each_run():
    assert _draws("dev") != _draws("dev")
