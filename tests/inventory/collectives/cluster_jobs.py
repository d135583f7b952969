"""A generator of training jobs over the seeded cluster, as their collectors deliver them.

Written from how NCCL and the fabric behave, not from the rule's code (it imports nothing from
``inventory``): what the rule makes of this data is a real verdict.

The job: ``nodes`` GPU nodes x 8 GPUs, data parallel. On a rail-optimised fabric NCCL keeps
each inter-node ring on one rail: the data-parallel communicator of local GPU k ("dp-rail<k+1>",
8 ranks, one per node) rings through NIC ``eth<k>`` of every node and rail leaf ``r<k+1>``. A
world communicator (all ranks) carries the occasional global all-reduce over all rails.

* Healthy: a 256 MiB all-reduce per data-parallel communicator every 10 s (about 2.6 ms at
  180 GB/s bus bandwidth), each rank's time lognormal (+-5%); 1.5% of the operations straggle
  (1.2-1.7x: a late rank, a host hiccup), a rank's own view jitters a little; a 64 MiB world
  all-reduce every 30 s; a one-minute pause every 20 min (a checkpoint: no collectives); once,
  at 50 min, a host hiccup makes one operation of ring 6 8x slower (a page-cache flush, a
  daemon waking up: a blip, not a fault).
* Cable fault (a bent or dirty jumper on one node's NIC of rail R): from its onset, both
  receivers of that link see pre-FEC BER go from ~1e-9..1e-8 to ~3e-5 with a few uncorrectable
  codewords a minute and 2.5 dB less light; RDMA retransmits make half the operations of
  every ring through it 6-12x slower and the rest 1.3x.
* Congestion on rail R (incast from another tenant): half the ring's operations 6-10x
  slower, heavy PFC pauses on that rail's ports (sent by the leaf, received by the NICs) and
  nothing physical: FEC, light and links as healthy.
* Rings that cross leaves: on ``shifted_nodes`` the job's pods got their GPUs from the other half
  of the node (a device plugin's order: local rank k on GPU (k + 4) mod 8), so "dp-rail1" joins
  GPU 0 of the other nodes to GPU 4 of these: NIC eth0 on rail leaf r1 and eth4 on r5, and its
  hops between them go leaf -> spine -> leaf over any uplink of r1 and r5 (ECMP). The world
  communicator still finds every rail on every node and stays on the rails.
* Uplink fault (a dirty jumper on one leaf-to-spine uplink, ``ports``: its two ends): its
  receivers see the cable fault's FEC and light; every ring that crosses that leaf is slowed as
  by the cable fault (NCCL's many queue pairs hash some flows onto it).
* Telemetry for both ends of every rail link of the job, every 10 s with jitter: cumulative FEC
  counters (corrected codewords and bits, uncorrectables), PFC pauses sent/received and the time
  paused, per-lane receive power with each lane's DOM offset.

Delivery: Inspector JSON objects, one per operation per communicator per rank (as the plugin
writes with ``NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS`` set), collected per minute.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta

GPUS_PER_NODE = 8
LANES = 4
LANE_BPS = 106.25e9
STEP_S = 10.0


@dataclass
class Episode:
    kind: str  # "cable", "congestion" or "uplink"
    rail: int  # 1-based (for "uplink": the rail of the leaf whose uplink it is)
    start_s: float
    node: int = 0  # the cable's node (0-based), for "cable"
    ports: tuple[tuple[str, str], ...] = ()  # the uplink's two ends (device, port), for "uplink"


@dataclass
class Job:
    job_id: str
    hosts: list[str]
    start: datetime
    seed: int = 1
    episodes: list[Episode] = field(default_factory=list)
    dp_period_s: float = 10.0
    world_period_s: float = 30.0
    shifted_nodes: frozenset[int] = frozenset()

    def __post_init__(self):
        self.rng = random.Random(self.seed)
        self.pids = {
            (h, g): 30000 + 100 * i + g for i, h in enumerate(self.hosts) for g in range(GPUS_PER_NODE)
        }
        self.world = len(self.hosts) * GPUS_PER_NODE
        self._op_t = 0.0
        self._tel_t = 0.0
        self._ports: dict[tuple[str, str], dict] = {}

    def gpu(self, node: int, local: int) -> int:
        """The GPU that local rank ``local`` of node ``node`` runs on."""
        return (local + GPUS_PER_NODE // 2) % GPUS_PER_NODE if node in self.shifted_nodes else local

    # --- registration (what a Slurm prolog posts) -------------------------------------------
    def registration(self) -> dict:
        return {
            "job_id": self.job_id,
            "name": "llama-pretrain",
            "started_at": self.start.isoformat(),
            "ranks": [
                {
                    "rank": n * GPUS_PER_NODE + g,
                    "host": h,
                    "gpu": self.gpu(n, g),
                    "local_rank": g,
                    "pid": self.pids[(h, g)],
                }
                for n, h in enumerate(self.hosts)
                for g in range(GPUS_PER_NODE)
            ],
        }

    # --- how slow an operation is --------------------------------------------------------------
    def _active(self, t: float, rail: int | None) -> Episode | None:
        for e in self.episodes:
            if t >= e.start_s and (rail is None or e.rail == rail):
                return e
        return None

    def _paused(self, t: float) -> bool:
        return (t % 1200.0) >= 1140.0  # a checkpoint every 20 min: a minute with no collectives

    def _slowdown(self, t: float, rails: list[int], crosses: bool = False) -> float:
        r = self.rng.random()
        worst = 1.0
        for rail in rails:
            e = self._active(t, rail)
            if e is None or (e.kind == "uplink" and not crosses):
                continue
            if e.kind in ("cable", "uplink"):
                worst = max(worst, self.rng.uniform(6, 12) if r < 0.5 else 1.3)
            else:
                worst = max(worst, self.rng.uniform(6, 10) if r < 0.5 else 1.2)
        if worst == 1.0 and r > 0.985:
            worst = self.rng.uniform(1.2, 1.7)  # a straggler
        if rails == [6] and t == 3000.0:
            worst = 8.0  # the one-off host hiccup
        return worst

    def _objects(
        self,
        *,
        comm: str,
        name: str,
        ranks: list[tuple[int, str, int]],
        coll: str,
        seq: int,
        size: int,
        base_us: float,
        t: float,
        slow: float,
    ) -> list[dict]:
        out = []
        op_us = base_us * slow * math.exp(self.rng.gauss(0, 0.05))
        end_us = int((self.start.timestamp() + t) * 1e6)
        nodes = len({h for _r, h, _g in ranks})
        for crank, host, gpu in ranks:
            mine = op_us * (1 - abs(self.rng.gauss(0, 0.02)))  # each rank waits on the slowest
            out.append(
                {
                    "header": {
                        "id": comm,
                        "comm_name": name,
                        "rank": crank,
                        "n_ranks": len(ranks),
                        "nnodes": nodes,
                    },
                    "metadata": {
                        "inspector_output_format_version": "v4.0",
                        "git_rev": "",
                        "rec_mechanism": "nccl_profiler_interface",
                        "dump_timestamp_us": end_us + self.rng.randint(200, 500_000),
                        "hostname": host,
                        "pid": self.pids[(host, gpu)],
                    },
                    "coll_perf": {
                        "coll": coll,
                        "coll_sn": seq,
                        "coll_msg_size_bytes": size,
                        "coll_exec_time_us": int(mine),
                        "coll_timing_source": "kernel_gpu",
                        "coll_algobw_gbs": round(size / mine / 1e3, 6),
                        "coll_busbw_gbs": round(size / mine / 1e3 * 2 * (len(ranks) - 1) / len(ranks), 6),
                    },
                }
            )
        return out

    def records_until(self, t_end: float) -> list[dict]:
        """Inspector objects of every operation that ended before ``t_end`` (seconds from start)."""
        out = []
        while self._op_t + self.dp_period_s <= t_end:
            self._op_t += self.dp_period_s
            t = self._op_t
            if self._paused(t):
                continue
            seq = int(t // self.dp_period_s)
            for g in range(GPUS_PER_NODE):
                ranks = [(n, h, g) for n, h in enumerate(self.hosts)]
                rails = sorted({self.gpu(n, g) + 1 for n in range(len(self.hosts))})
                out += self._objects(
                    comm=f"0x{0xD0 + g:x}5eed{self.seed:04x}",
                    name=f"dp-rail{g + 1}",
                    ranks=ranks,
                    coll="AllReduce",
                    seq=seq,
                    size=256 << 20,
                    base_us=2600.0,
                    t=t + self.rng.uniform(0, 0.3),
                    slow=self._slowdown(t, rails, crosses=len(rails) > 1),
                )
            if seq % int(self.world_period_s // self.dp_period_s) == 0:
                ranks = [
                    (n * GPUS_PER_NODE + g, h, g)
                    for n, h in enumerate(self.hosts)
                    for g in range(GPUS_PER_NODE)
                ]
                out += self._objects(
                    comm=f"0xf0e1d{self.seed:04x}",
                    name="world",
                    ranks=ranks,
                    coll="AllReduce",
                    seq=seq,
                    size=64 << 20,
                    base_us=900.0,
                    t=t + 0.5,
                    slow=self._slowdown(t, list(range(1, 9))),
                )
        return out

    # --- telemetry of the job's rail links -----------------------------------------------------
    def telemetry_until(self, t_end: float, ports: list[tuple[str, str, str, int]]) -> list[dict]:
        """Samples of ``ports`` = [(device, port, far device, rail)] up to ``t_end``."""
        out = []
        while self._tel_t + STEP_S <= t_end:
            self._tel_t += STEP_S
            t = self._tel_t
            for dev, port, far, rail in ports:
                st = self._ports.get((dev, port))
                if st is None:
                    st = self._ports[(dev, port)] = {
                        "ber": 10 ** self.rng.uniform(-9, -8),
                        "cw": self.rng.randrange(1 << 40),
                        "bits": self.rng.randrange(1 << 40),
                        "uncorr": self.rng.randrange(50),
                        "ptx": self.rng.randrange(1 << 20),
                        "prx": self.rng.randrange(1 << 20),
                        "pdur": self.rng.randrange(1 << 30),
                        "rx": [self.rng.uniform(-3.5, 1.5) for _ in range(LANES)],
                    }
                ts = t + self.rng.uniform(-0.4, 0.4)
                ber = st["ber"] * self.rng.uniform(0.8, 1.2)
                rx_drop = 0.0
                pause_tx = pause_rx = self.rng.random() < 0.05
                e = self._active(t, rail)
                node_of_far = far if dev.startswith("leaf") else dev
                faulty = e is not None and (
                    (e.kind == "cable" and node_of_far == self.hosts[e.node])
                    or (e.kind == "uplink" and (dev, port) in e.ports)
                )
                if faulty:
                    ber = 3e-5 * self.rng.uniform(0.7, 1.3)
                    st["uncorr"] += self.rng.choice([0, 0, 1, 2])
                    rx_drop = 2.5
                pfc_tx = pfc_rx = 0
                if e is not None and e.kind == "congestion":
                    # the leaf sends the pauses; the NICs receive them
                    pfc_tx = int(STEP_S * 800) if dev.startswith("leaf") else 0
                    pfc_rx = int(STEP_S * 800) if not dev.startswith("leaf") else 0
                else:
                    pfc_tx, pfc_rx = int(pause_tx), int(pause_rx)
                bits = int(ber * STEP_S * LANES * LANE_BPS)
                st["bits"] += bits
                st["cw"] += max(1, bits // 2)
                st["ptx"] += pfc_tx
                st["prx"] += pfc_rx
                st["pdur"] += (pfc_tx + pfc_rx) * 3
                out.append(
                    {
                        "device": dev,
                        "port": port,
                        "ts": (self.start + timedelta(seconds=ts)).isoformat(),
                        "fec_corrected_codewords": st["cw"],
                        "fec_corrected_bits": st["bits"],
                        "fec_uncorrectable_codewords": st["uncorr"],
                        "pfc_pause_tx": st["ptx"],
                        "pfc_pause_rx": st["prx"],
                        "pfc_pause_duration_us": st["pdur"],
                        "rx_power_dbm": [round(v - rx_drop + self.rng.gauss(0, 0.1), 2) for v in st["rx"]],
                    }
                )
        return out


def inspector_body(objs: list[dict]) -> bytes:
    """As the plugin writes them: one object after another (here one per line)."""
    return "\n".join(json.dumps(o) for o in objs).encode()
