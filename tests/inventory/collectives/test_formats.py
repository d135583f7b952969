"""The collective timing formats, read value by value: the NCCL project's own Inspector examples
(tests/data/real/nccl), an nccl-tests table in the binary's exact layout, and our own JSON."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inventory.core.collectives import formats
from tests.paths import TEST_DATA

INSPECTOR = TEST_DATA / "real" / "nccl" / "inspector-doc-examples.log"
NCCL_TESTS = TEST_DATA / "collectives" / "nccl-tests-all_reduce_perf-2x8.txt"


def test_the_inspector_examples_of_the_nccl_documentation_read_value_by_value():
    p = formats.parse_inspector(INSPECTOR.read_bytes(), max_items=100)
    assert p.received == 3 and p.errors == []
    (_, a), (_, b), (_, c) = p.ops
    assert (a.comm, a.rank, a.n_ranks, a.n_nodes) == ("0x7f8c496ae9f661", 2, 8, 1)
    assert (a.host, a.pid) == ("example-hostname", 1639453)
    assert (a.coll, a.seq, a.msg_bytes, a.exec_us) == ("AllReduce", 1407, 17179869184, 61974.0)
    assert (a.algbw_gbs, a.busbw_gbs) == (277.210914, 485.119099)
    assert a.ts == datetime.fromtimestamp(1748030377748202 / 1e6, UTC)  # dump_timestamp_us
    assert a.channels_us == {}
    # verbose: the operation's own stop time, and channel 0's kernel time
    assert (b.comm, b.rank, b.coll, b.seq, b.msg_bytes, b.exec_us) == (
        "0xe62dedaa97644a",
        4,
        "ReduceScatter",
        1231,
        2147483648,
        41057.0,
    )
    assert b.ts == datetime.fromtimestamp(1752867229235064 / 1e6, UTC)  # coll_stop_ts
    assert b.channels_us == {0: 1752867229275811.0 - 1752867229235181.0}
    assert (c.comm, c.rank, c.n_ranks, c.n_nodes, c.coll, c.seq, c.msg_bytes, c.exec_us) == (
        "0x9e7a479f95a66c",
        31,
        32,
        4,
        "ReduceScatter",
        129,
        65536,
        110.0,
    )
    assert (c.busbw_gbs, c.pid) == (18.469236, 468528)


def test_one_bad_inspector_object_is_refused_by_itself():
    body = INSPECTOR.read_bytes() + b'\n{"header": {"id": "0x1", "rank": -3, "n_ranks": 2}, "metadata": {}}\n'
    p = formats.parse_inspector(body, max_items=100)
    assert len(p.ops) == 3
    assert [(e.index, e.code) for e in p.errors] == [(3, "invalid")]


def test_an_inspector_number_out_of_range_is_that_objects_error():
    """1e400 is valid JSON but no double: the object holding it is refused, the others kept."""
    good = json.dumps(_objects(INSPECTOR.read_bytes())[0])
    bad = good.replace('"coll_exec_time_us": 61974', '"coll_exec_time_us": 1e400')
    p = formats.parse_inspector(f"{good}\n{bad}\n".encode(), max_items=10)
    assert [i for i, _op in p.ops] == [0]
    assert [(e.index, e.code) for e in p.errors] == [(1, "invalid")]


def test_an_inspector_stream_that_is_not_json_is_a_body_error():
    with pytest.raises(formats.FormatError):
        formats.parse_inspector(b'{"header": {', max_items=10)


def test_the_nccl_tests_table_reads_each_size_and_who_ran_where():
    ts = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
    p = formats.parse_nccl_tests(NCCL_TESTS.read_bytes(), max_items=100, ts=ts)
    assert p.errors == [] and p.received == 6
    assert p.devices[0] == (0, "gpu-0001", 41200, 0)
    assert p.devices[15] == (15, "gpu-0002", 41215, 7)
    sizes = [(op.msg_bytes, op.exec_us, op.busbw_gbs, op.algbw_gbs) for _i, op in p.ops]
    assert sizes[0] == (33554432, 431.70, 145.74, 77.73)
    assert sizes[-1] == (1073741824, 10598.0, 189.96, 101.31)  # "%7g": 10598 us past 10 ms
    op = p.ops[0][1]
    assert (op.coll, op.rank, op.n_ranks, op.n_nodes, op.ts, op.source) == (
        "AllReduce",
        -1,
        16,
        2,
        ts,
        "nccl-tests",
    )
    # the same output is the same run (posting it again stores nothing twice)
    again = formats.parse_nccl_tests(NCCL_TESTS.read_bytes(), max_items=100, ts=ts)
    assert again.ops[0][1].comm == op.comm


def test_text_without_a_result_table_is_not_nccl_tests_output():
    with pytest.raises(formats.FormatError, match="result table"):
        formats.parse_nccl_tests(b"hello\n", max_items=10, ts=datetime(2026, 1, 1, tzinfo=UTC))


def test_own_json_items_are_checked_one_by_one():
    body = (
        b'{"job": "7", "records": ['
        b'{"comm": "c1", "n_ranks": 2, "rank": 1, "coll": "AllReduce", "seq": 5, "msg_bytes": 1024,'
        b' "exec_us": 12.5, "ts": "2026-12-04T12:00:00Z", "host": "gpu-0001", "gpu": 1},'
        b'{"comm": "c1", "n_ranks": 2, "rank": 1, "coll": "AllReduce", "seq": 6, "msg_bytes": 1024,'
        b' "exec_us": -1, "ts": "2026-12-04T12:00:00Z"}]}'
    )
    p = formats.parse_own(body, max_items=10)
    assert p.job == "7"
    ((i, op),) = p.ops
    assert (i, op.comm, op.rank, op.seq, op.exec_us, op.host, op.gpu) == (0, "c1", 1, 5, 12.5, "gpu-0001", 1)
    assert [(e.index, e.code) for e in p.errors] == [(1, "invalid")]


def test_own_json_text_that_the_database_cannot_hold_is_refused_by_item():
    """A NUL character would fail the whole batch's write: its record alone is refused."""
    rec = (
        b'{"comm": "c1", "n_ranks": 2, "rank": 1, "coll": "%s", "seq": 5, "msg_bytes": 1024,'
        b' "exec_us": 12.5, "ts": "2026-12-04T12:00:00Z"}'
    )
    body = b'{"job": "7", "records": [' + rec % b"AllReduce" + b"," + rec % b"All\\u0000Reduce" + b"]}"
    p = formats.parse_own(body, max_items=10)
    assert [op.coll for _i, op in p.ops] == ["AllReduce"]
    assert [(e.index, e.code) for e in p.errors] == [(1, "invalid")]


PROM = TEST_DATA / "real" / "nccl" / "inspector-prom-doc-example.prom"


def test_the_inspector_prometheus_example_of_the_nccl_documentation_reads_value_by_value():
    ts = datetime(2026, 12, 4, 12, 0, 30, tzinfo=UTC)
    p = formats.parse_inspector_prom(PROM.read_bytes(), max_items=100, ts=ts)
    assert p.errors == [] and p.received == 1 and p.job is None  # slurm_job_id="unknown"
    ((_, op),) = p.ops  # the two collective series of one label set are one operation; p2p left out
    assert (op.host, op.gpu, op.comm, op.comm_name, op.n_ranks, op.n_nodes) == (
        "nvl72004-T01",
        0,
        "DP Group 0",
        "DP Group 0",
        4,
        1,
    )
    assert (op.coll, op.msg_bytes, op.exec_us, op.busbw_gbs) == ("AllReduce", 4 << 30, 9498.47, 678.263)
    assert (op.rank, op.ts, op.seq, op.source) == (
        formats.RANK_BY_GPU,
        ts,
        int(ts.timestamp()),
        "inspector-prom",
    )


def test_an_inspector_object_that_names_a_key_twice_is_refused_naming_it():
    """Pretty-printed (the documentation's layout) or one object per line: the stream says two
    things, so none of it is read."""
    text = INSPECTOR.read_bytes().decode()
    pretty = text.replace('"rank": 2,', '"rank": 2,\n    "rank": 5,', 1)
    with pytest.raises(formats.FormatError, match="Duplicate key 'rank'"):
        formats.parse_inspector(pretty.encode(), max_items=100)
    one_line = '{"header": {"id": "0x1", "rank": 0, "n_ranks": 2, "nnodes": 1}, "header": {}}'
    with pytest.raises(formats.FormatError, match="Duplicate key 'header'"):
        formats.parse_inspector(one_line.encode(), max_items=100)
    # A valid object per line (the batch the typed fast path reads whole) with a key named twice.
    good = json.dumps(_objects(INSPECTOR.read_bytes())[0])
    twice = good.replace('"rank": ', '"rank": 7, "rank": ', 1)
    with pytest.raises(formats.FormatError, match="Duplicate key 'rank'"):
        formats.parse_inspector((good + "\n" + twice).encode(), max_items=100)


def _objects(body: bytes) -> list:
    text, decoder, pos, out = body.decode(), json.JSONDecoder(), 0, []
    while (pos := len(text) - len(text[pos:].lstrip())) < len(text):
        obj, pos = decoder.raw_decode(text, pos)
        out.append(obj)
    return out


def test_inspector_output_one_object_per_line_reads_as_the_pretty_printed_one():
    """The plugin writes either layout; the one-per-line batch is read whole at once, the other
    object by object: the same operations come out (the verbose example's stop time and channel too)."""
    pretty = formats.parse_inspector(INSPECTOR.read_bytes(), max_items=100)
    lines = "\n".join(json.dumps(o) for o in _objects(INSPECTOR.read_bytes())).encode()
    assert formats.parse_inspector(lines, max_items=100) == pretty


JUNK = [True, -1, 0, 1.5, 2**63, 2**70, "x", "", None, "a\x00b", "x" * 200, float("inf"), [], {}, "DROP"]
FIELDS = [
    ("header", "id"),
    ("header", "rank"),
    ("header", "n_ranks"),
    ("header", "comm_name"),
    ("header", "nnodes"),
    ("metadata", "hostname"),
    ("metadata", "pid"),
    ("metadata", "dump_timestamp_us"),
    ("coll_perf", "coll"),
    ("coll_perf", "coll_sn"),
    ("coll_perf", "coll_msg_size_bytes"),
    ("coll_perf", "coll_exec_time_us"),
    ("coll_perf", "coll_algobw_gbs"),
    ("coll_perf", "coll_busbw_gbs"),
    ("coll_perf", "event_trace_ts"),
    (None, "coll_perf"),
    (None, "header"),
]
damage = st.lists(st.tuples(st.sampled_from(FIELDS), st.sampled_from(JUNK)), max_size=2)


def _damaged(obj: dict, p2p: bool, hits) -> dict:
    obj = copy.deepcopy(obj)
    if p2p:
        perf = obj.pop("coll_perf")
        obj["p2p_perf"] = {key.replace("coll", "p2p"): v for key, v in perf.items()}
    for (part, key), value in hits:
        target = obj if part is None else obj.get(part)
        if p2p and part == "coll_perf":
            target, key = obj.get("p2p_perf"), key.replace("coll", "p2p")
        if isinstance(target, dict):
            if value == "DROP":
                target.pop(key, None)
            else:
                target[key] = value
    return obj


def _reads_each_object_alone(objs: list[dict]) -> None:
    body = "\n".join(json.dumps(o) for o in objs).encode()
    p = formats.parse_inspector(body, max_items=100)
    expected_ops, expected_errors = [], []
    for i, line in enumerate(body.splitlines()):
        try:
            expected_ops.append((i, formats.inspector_op(json.loads(line))))
        except ValueError as exc:
            expected_errors.append((i, str(exc)))
    assert p.received == len(objs)
    assert p.ops == expected_ops
    assert [(e.index, e.message) for e in p.errors] == expected_errors


def test_every_odd_value_of_every_inspector_field_reads_as_that_object_alone():
    """Each field of the verbose example set to each odd value (or dropped), beside a good object:
    a batch that is still valid is read whole at once and must give what ``inspector_op`` gives
    for each object alone; one that is not goes object by object and names the bad one."""
    good, verbose = _objects(INSPECTOR.read_bytes())[:2]
    for field in FIELDS:
        for value in JUNK:
            for p2p in (False, True):
                _reads_each_object_alone([good, _damaged(verbose, p2p, [(field, value)])])


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0, 1, 2]), st.booleans(), damage), min_size=1, max_size=8))
def test_an_inspector_batch_reads_each_object_as_that_object_alone(items):
    """Poison isolation and one reading: whatever the objects hold, the batch gives for each what
    ``inspector_op`` gives for it alone (the same operation, or the same reason at its index)."""
    examples = _objects(INSPECTOR.read_bytes())
    _reads_each_object_alone([_damaged(examples[k], p2p, hits) for k, p2p, hits in items])
