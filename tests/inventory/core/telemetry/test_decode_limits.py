"""A telemetry body over the item cap is refused while it is read: its items are never built.

Measured with ``tracemalloc`` (Python's own allocation tracer, so the figure is the decoder's
and not the test runner's): the body itself is allocated before tracing starts, and a decoder
that builds every item before counting them allocates many times the body; one that counts as
it reads allocates a fraction of it. Timings are in ``bench/poison.py``.
"""

import tracemalloc
from datetime import UTC, datetime, timedelta

import pytest

from inventory.core.telemetry import adapters
from inventory.core.telemetry.decode import BodyError, decode_json, decode_ndjson

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)
CAP = 10_000
ITEMS = 200_000
LIMITS = dict(now=NOW, max_future=timedelta(minutes=5), max_samples=CAP)


def _traced_peak(fn) -> int:
    tracemalloc.start()
    try:
        with pytest.raises((BodyError, adapters.AdapterError), match="Too many samples"):
            fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_json_body_over_the_cap_never_builds_its_samples():
    """The items are counted as raw views into the body (msgspec checks a list's length once it
    is read: about 56 bytes an item, under twice the body); built as samples they cost over ten
    times the body."""
    body = (b'{"samples":[' + b'{"device":"d","port":"p","ts":1},' * ITEMS)[:-1] + b"]}"
    peak = _traced_peak(lambda: decode_json(body, **LIMITS))
    assert peak < 2 * len(body), f"{peak:,} bytes allocated decoding a {len(body):,}-byte body"


def test_an_ndjson_body_over_the_cap_is_refused_before_its_lines_are_split():
    body = b'{"device":"d","port":"p","ts":1}\n' * ITEMS
    peak = _traced_peak(lambda: decode_ndjson(body, **LIMITS))
    assert peak < len(body) // 2, f"{peak:,} bytes allocated decoding a {len(body):,}-byte body"


def test_prometheus_text_over_the_cap_stops_at_the_first_sample_over_it():
    body = b"".join(b'cabletrack_link_down_events{device="l%d",port="p"} 1\n' % i for i in range(ITEMS))
    ctx = adapters.Context(device=None, port=None, ts=NOW, max_items=CAP)
    peak = _traced_peak(lambda: adapters.parse("prometheus", body, ctx))
    # the text itself (one str of the body) plus the samples up to the cap
    assert peak < 2 * len(body), f"{peak:,} bytes allocated reading a {len(body):,}-byte body"
