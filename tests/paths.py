"""Where the tests' own copies of real files live (copied from ../shared/data, see each MANIFEST)."""

from pathlib import Path

TEST_DATA = Path(__file__).resolve().parent / "data"
