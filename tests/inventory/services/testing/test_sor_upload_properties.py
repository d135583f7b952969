"""Property test of the OTDR upload (issue 8, "Bad input"), with hypothesis.

Real and synthetic SOR files, mutated byte by byte and cut short, are uploaded through
``POST /api/tests/otdr/`` (alone, or next to a good file). Whatever the bytes: the answer is 201
with every file stored, or 400 naming the file that was refused, and then nothing is written
(no test, no trace, no file in storage). Never a 500, never half a batch.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inventory.core.choices import DeviceRole, Polarity
from inventory.models import CableTest, OtdrTrace
from tests import factories as f
from tests.paths import TEST_DATA
from tests.sor_builder import build_v1

pytestmark = pytest.mark.django_db
SOR = TEST_DATA / "sor"
SEEDS = [p.read_bytes() for p in sorted(SOR.glob("*.sor"))] + [build_v1()]
GOOD = SEEDS[0]


@pytest.fixture
def cable():
    _, gpu = f.twin_port_device("gpu-1", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    _, leaf = f.twin_port_device("leaf-1", u=20)
    return f.jumper("J-1", gpu[0], leaf[0], polarity=Polarity.B, length_m=Decimal("3"))


def _files(media: Path) -> int:
    return sum(1 for p in media.rglob("*") if p.is_file()) if media.exists() else 0


mutated = st.builds(
    lambda seed, edits, cut: _mutate(SEEDS[seed], edits, cut),
    seed=st.integers(0, len(SEEDS) - 1),
    edits=st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255)), max_size=10),
    cut=st.none() | st.integers(0, 1 << 16),
)


def _mutate(data: bytes, edits, cut) -> bytes:
    out = bytearray(data)
    for pos, value in edits:
        out[pos % len(out)] = value
    if cut is not None:
        out = out[: cut % (len(out) + 1)]
    return bytes(out)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.one_of(mutated, st.binary(max_size=2048)), with_good=st.booleans())
def test_any_upload_is_stored_whole_or_refused_whole(tech_api, cable, media, data, with_good):
    files = [SimpleUploadedFile("fuzzed.sor", data)]
    if with_good:
        files.insert(0, SimpleUploadedFile("good.sor", GOOD))
    tests, traces, stored = CableTest.objects.count(), OtdrTrace.objects.count(), _files(media)
    resp = tech_api.post("/api/tests/otdr/", {"cable": "J-1", "files": files}, format="multipart")
    assert resp.status_code in (201, 400), resp.content[:500]
    if resp.status_code == 400:
        assert "fuzzed.sor" in json.dumps(resp.json())  # says which file, and why
        assert CableTest.objects.count() == tests
        assert OtdrTrace.objects.count() == traces
        assert _files(media) == stored
    else:
        assert len(resp.json()["traces"]) == len(files)
        assert OtdrTrace.objects.count() == traces + len(files)
        assert CableTest.objects.count() == tests + 1
