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


def test_the_local_profile_is_free_to_explore():
    """Locally the examples are not derived from the test (new ones each run) and failures are
    remembered. Comparing two runs' draws inside one process proves nothing: the hypothesis plugin
    may seed the process's PRNG (it did under CI, and two local draws came out equal)."""
    dev, ci = settings.get_profile("dev"), settings.get_profile("ci")
    assert not dev.derandomize and ci.derandomize
    assert dev.database is not None and ci.database is None


def test_the_mutation_profile_draws_the_same_examples_and_never_times_out():
    """``tools/mutation.py`` runs the property tests under it: a mutant must be killed (or not) the
    same way on every run, and a slow example on a busy machine must not count as a kill."""
    assert _draws("mutation") == _draws("mutation")
    mutation = settings.get_profile("mutation")
    assert mutation.derandomize and mutation.database is None and mutation.deadline is None
