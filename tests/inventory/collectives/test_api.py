"""``POST /api/jobs/`` and ``POST /api/collectives/``: who may post, what a rank maps to, and the
per-item policy (bad items refused by index, repeats stored once) on the seeded topology.

    gpu-0001 GPU3 --(SYS-821GE-TNHR map: GPU3 -> eth3, rail 4)--> [eth3]--jumper--[leaf-s01-r4]
"""

from __future__ import annotations

import json
from datetime import date, timedelta

import pytest
from django.utils import timezone

from inventory.core.choices import TokenKind
from inventory.models import CollectiveRecord, Communicator, GpuNicMap, JobRank
from inventory.services.demo.seed import demo_seed
from tests import factories as f
from tests.paths import TEST_DATA
from tests.seeded import seeded_module

pytestmark = pytest.mark.django_db


_demo = seeded_module(lambda: demo_seed(gpus=16, seed=2, as_of=date(2026, 11, 29)))


@pytest.fixture
def client(_demo, user_with_role):
    return f.api_token_client(user_with_role("collector"), TokenKind.INGEST)


def post_job(client, body: dict):
    return client.post("/api/jobs/", data=json.dumps(body), content_type="application/json")


def record(rank: int, seq: int, exec_us: float = 2600.0, **extra) -> dict:
    ts = (timezone.now() - timedelta(minutes=1)).isoformat()
    return {
        "comm": "0xabc",
        "comm_name": "dp-rail4",
        "n_ranks": 2,
        "rank": rank,
        "coll": "AllReduce",
        "seq": seq,
        "msg_bytes": 256 << 20,
        "exec_us": exec_us,
        "ts": ts,
        **extra,
    }


def test_a_prolog_registration_places_every_rank_on_its_gpu_nic_port_and_rail(client):
    r = post_job(
        client,
        {
            "job_id": "77",
            "hosts": ["gpu-0001", "gpu-0002"],
            "tasks_per_node": 8,
            "visible_devices": "0,1,2,3,4,5,6,7",
        },
    )
    assert r.status_code == 201, r.content
    assert r.json() == {"job_id": "77", "world_size": 16, "created": True, "ranks_without_nic": 0}
    jr = JobRank.objects.select_related("host", "port").get(job__job_id="77", rank=11)
    assert (jr.host.name, jr.local_rank, jr.gpu, jr.port.name, jr.rail) == ("gpu-0002", 3, 3, "eth3", 4)
    # the same map again: 200, nothing new; another map: 409
    assert (
        post_job(client, {"job_id": "77", "hosts": ["gpu-0001", "gpu-0002"], "tasks_per_node": 8}).status_code
        == 200
    )
    r = post_job(client, {"job_id": "77", "hosts": ["gpu-0002", "gpu-0001"], "tasks_per_node": 8})
    assert r.status_code == 409
    assert JobRank.objects.filter(job__job_id="77").count() == 16


def test_the_gpu_to_nic_map_is_data(client):
    """Change the server model's map, and a new job's GPU 3 uses the NIC the map names."""
    GpuNicMap.objects.filter(device_model="SYS-821GE-TNHR", gpu=3).update(port_name="eth5", rail=6)
    assert post_job(client, {"job_id": "78", "hosts": ["gpu-0001"], "tasks_per_node": 8}).status_code == 201
    jr = JobRank.objects.select_related("port").get(job__job_id="78", gpu=3)
    assert (jr.port.name, jr.rail) == ("eth5", 6)


def test_bad_registrations_are_refused_with_the_reason(client):
    r = post_job(client, {"job_id": "79", "hosts": ["gpu-9999"], "tasks_per_node": 8})
    assert r.status_code == 400 and "No host named gpu-9999" in r.json()["detail"]
    r = post_job(
        client,
        {
            "job_id": "79",
            "ranks": [{"rank": 0, "host": "gpu-0001", "gpu": 0}, {"rank": 0, "host": "gpu-0001", "gpu": 1}],
        },
    )
    assert r.status_code == 400 and "twice" in r.json()["detail"]
    assert post_job(client, {"job_id": "79"}).status_code == 400
    assert not JobRank.objects.filter(job__job_id="79").exists()


def test_a_key_named_twice_in_a_job_or_a_batch_is_a_400_naming_it_and_nothing_is_stored(client):
    job = '{"job_id": "78", "hosts": ["gpu-0001"], "tasks_per_node": 8, "tasks_per_node": 1}'
    r = client.post("/api/jobs/", data=job, content_type="application/json")
    assert r.status_code == 400 and "Duplicate key 'tasks_per_node'" in r.json()["detail"]
    assert not JobRank.objects.filter(job__job_id="78").exists()
    assert post_job(client, {"job_id": "78", "hosts": ["gpu-0001"], "tasks_per_node": 8}).status_code == 201
    one = json.dumps(record(0, 1, host="gpu-0001"))
    body = f'{{"job": "78", "records": [{one[:-1]}, "exec_us": 1.0}}]}}'
    r = client.post("/api/collectives/", data=body, content_type="application/json")
    assert r.status_code == 400 and "Duplicate key 'exec_us'" in r.json()["detail"]
    assert not CollectiveRecord.objects.filter(communicator__job__job_id="78").exists()


def test_a_read_only_token_may_not_post_and_no_token_is_401(client, user_with_role):
    ro = f.api_token_client(user_with_role("viewer", "v1"), TokenKind.READ_ONLY)
    assert post_job(ro, {"job_id": "80", "hosts": ["gpu-0001"], "tasks_per_node": 8}).status_code == 403
    from rest_framework.test import APIClient

    assert (
        post_job(APIClient(), {"job_id": "80", "hosts": ["gpu-0001"], "tasks_per_node": 8}).status_code == 401
    )


def test_records_are_placed_on_ranks_refused_by_item_and_stored_once(client):
    post_job(
        client,
        {
            "job_id": "81",
            "ranks": [
                {"rank": 0, "host": "gpu-0001", "gpu": 3, "pid": 500},
                {"rank": 1, "host": "gpu-0002", "gpu": 3, "pid": 600},
            ],
        },
    )
    body = {
        "job": "81",
        "records": [
            record(0, 1, host="gpu-0001", pid=500),
            record(1, 1, host="gpu-0002", gpu=3),
            record(1, 2, host="gpu-0002", pid=999),  # placed: rank 1 was placed by the record before
            {**record(0, 3), "ts": (timezone.now() + timedelta(hours=1)).isoformat()},
            {**record(0, 4), "exec_us": "slow"},
        ],
    }
    r = client.post("/api/collectives/", data=json.dumps(body), content_type="application/json")
    assert r.status_code == 200, r.content
    out = r.json()
    assert (out["received"], out["stored"], out["duplicates"]) == (5, 3, 0)
    assert [(e["index"], e["code"]) for e in out["errors"]] == [(3, "future_ts"), (4, "invalid")]
    again = client.post("/api/collectives/", data=json.dumps(body), content_type="application/json").json()
    assert (again["stored"], again["duplicates"]) == (0, 3)
    changed = {"job": "81", "records": [record(0, 1, exec_us=9999.0)]}
    r = client.post("/api/collectives/", data=json.dumps(changed), content_type="application/json").json()
    assert [(e["index"], e["code"]) for e in r["errors"]] == [(0, "conflict")]
    assert CollectiveRecord.objects.filter(communicator__job__job_id="81").count() == 3
    # a rank of a sub-communicator that nothing places on a GPU
    other = {"job": "81", "records": [{**record(0, 1), "comm": "0xdef", "n_ranks": 1}]}
    r = client.post("/api/collectives/", data=json.dumps(other), content_type="application/json").json()
    assert [(e["index"], e["code"]) for e in r["errors"]] == [(0, "unknown_rank")]


def test_records_of_an_unregistered_job_are_404_and_store_nothing(client):
    r = client.post(
        "/api/collectives/",
        data=json.dumps({"job": "nope", "records": [record(0, 1)]}),
        content_type="application/json",
    )
    assert r.status_code == 404 and "POST /api/jobs/" in r.json()["detail"]
    assert not Communicator.objects.exists()


def test_an_nccl_tests_run_registers_its_ranks_from_its_own_output(client):
    body = (TEST_DATA / "collectives" / "nccl-tests-all_reduce_perf-2x8.txt").read_bytes()
    ts = int((timezone.now() - timedelta(minutes=5)).timestamp())
    r = client.post(
        f"/api/collectives/?format=nccl-tests&job=burnin-1&ts={ts}", data=body, content_type="text/plain"
    )
    assert r.status_code == 200, r.content
    assert (r.json()["stored"], r.json()["rejected"]) == (6, 0)
    jr = JobRank.objects.select_related("host", "port").get(job__job_id="burnin-1", rank=13)
    assert (jr.host.name, jr.gpu, jr.pid, jr.port.name) == ("gpu-0002", 5, 41213, "eth5")
    rows = CollectiveRecord.objects.filter(communicator__job__job_id="burnin-1").order_by("msg_bytes")
    assert [(x.msg_bytes, x.exec_us, x.busbw_gbs) for x in rows][-1] == (1073741824, 10598.0, 189.96)
    again = client.post(
        f"/api/collectives/?format=nccl-tests&job=burnin-1&ts={ts}", data=body, content_type="text/plain"
    )
    assert again.json()["duplicates"] == 6


def test_inspector_prometheus_series_are_placed_by_host_and_gpu(client):
    post_job(client, {"job_id": "82", "hosts": ["gpu-0001", "gpu-0002"], "tasks_per_node": 8})
    line = (
        'nccl_collective_exec_time_microseconds{{version="v5.1",slurm_job_id="82",node="{node}",gpu="GPU{g}",'
        'comm_name="DP Group 3",n_nodes="2",nranks="2",collective="AllReduce",message_size="256-257MB",'
        'algo_proto="Ring_simple"}} 2650.5\n'
    )
    body = (
        line.format(node="gpu-0001", g=3)
        + line.format(node="gpu-0002", g=3)
        + line.format(node="gpu-0009", g=3)
    )
    ts = int((timezone.now() - timedelta(minutes=1)).timestamp())
    r = client.post(f"/api/collectives/?format=inspector-prom&ts={ts}", data=body, content_type="text/plain")
    assert r.status_code == 200, r.content
    out = r.json()
    assert out["stored"] == 2 and [(e["index"], e["code"]) for e in out["errors"]] == [(2, "unknown_rank")]
    ranks = sorted(
        CollectiveRecord.objects.filter(communicator__job__job_id="82").values_list("rank", flat=True)
    )
    assert ranks == [3, 11]  # the job ranks of GPU 3 on each host


def test_a_batch_costs_the_same_queries_whatever_the_jobs_size(client):
    """The ranks' hosts are read with the ranks: a job of 16 ranks costs what a job of 2 does
    (one query per rank made a 4,096-rank job's batch of 5,000 records take 20 s)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    counts = []
    for job_id, hosts, per_node in (("small", ["gpu-0001"], 2), ("large", ["gpu-0001", "gpu-0002"], 8)):
        post_job(client, {"job_id": job_id, "hosts": hosts, "tasks_per_node": per_node})
        n = len(hosts) * per_node
        records = [
            {
                **record(r, 1),
                "comm": f"0x{job_id}",
                "n_ranks": n,
                "host": hosts[r // per_node],
                "gpu": r % per_node,
            }
            for r in range(n)
        ]
        with CaptureQueriesContext(connection) as q:
            r = client.post(
                "/api/collectives/",
                data=json.dumps({"job": job_id, "records": records}),
                content_type="application/json",
            )
        assert r.status_code == 200 and r.json()["stored"] == n, r.content
        counts.append(len(q.captured_queries))
    assert counts[0] == counts[1]


def test_a_batch_partly_posted_before_stores_only_its_new_records(client):
    """A collector that retries after a timeout posts again what was stored and what was not:
    the new records are stored, the repeats counted, a changed repeat refused by its index (on
    PostgreSQL the batch's COPY fails on the stored keys and goes through the staging table)."""
    post_job(client, {"job_id": "83", "ranks": [{"rank": 0, "host": "gpu-0001", "gpu": 3, "pid": 500}]})
    first = [record(0, 1, host="gpu-0001", pid=500), record(0, 2, host="gpu-0001", pid=500)]
    r = client.post(
        "/api/collectives/", data=json.dumps({"job": "83", "records": first}), content_type="application/json"
    )
    assert r.json()["stored"] == 2
    retry = [
        first[0],  # stored before: a duplicate
        {**first[1], "exec_us": 9999.0},  # stored before with another time: a conflict
        record(0, 3),  # new
        record(0, 3),  # the same new record twice in the batch: stored once
        record(0, 3, exec_us=1.0),  # the new record again with another time: a conflict
    ]
    out = client.post(
        "/api/collectives/", data=json.dumps({"job": "83", "records": retry}), content_type="application/json"
    ).json()
    assert (out["stored"], out["duplicates"]) == (1, 2)
    assert [(e["index"], e["code"]) for e in out["errors"]] == [(1, "conflict"), (4, "conflict")]
    rows = CollectiveRecord.objects.filter(communicator__job__job_id="83").order_by("seq")
    assert [(x.seq, x.exec_us) for x in rows] == [(1, 2600.0), (2, 2600.0), (3, 2600.0)]


def test_a_record_is_stored_with_exactly_the_values_posted(client):
    """Text and numbers as posted, whatever the write path (COPY text escapes tabs and backslashes;
    a double goes in and out to the last bit; a missing bandwidth stays missing)."""
    post_job(client, {"job_id": "84", "ranks": [{"rank": 0, "host": "gpu-0001", "gpu": 3, "pid": 500}]})
    ts = timezone.now().replace(microsecond=123456) - timedelta(minutes=1)
    posted = {
        **record(0, 7, exec_us=0.1 + 0.2, host="gpu-0001", pid=500),
        "coll": "Send\\Recv\tv2",
        "msg_bytes": (1 << 62) + 1,
        "algbw_gbs": 123.456789012345,
        "ts": ts.isoformat(),
    }
    r = client.post(
        "/api/collectives/",
        data=json.dumps({"job": "84", "records": [posted]}),
        content_type="application/json",
    )
    assert r.json()["stored"] == 1, r.content
    x = CollectiveRecord.objects.get(communicator__job__job_id="84")
    assert (x.coll, x.seq, x.msg_bytes, x.exec_us, x.busbw_gbs, x.algbw_gbs, x.ts, x.source) == (
        "Send\\Recv\tv2",
        7,
        (1 << 62) + 1,
        0.1 + 0.2,
        None,
        123.456789012345,
        ts,
        "json",
    )
