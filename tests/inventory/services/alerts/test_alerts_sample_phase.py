"""FEC degradation and tail through ``POST /api/telemetry/``, the rollup and the rule task, at
every sample phase: the same condition opens the same alerts wherever the 10-s samples and the
evaluation fall on the one-minute bucket grid, and a healthy link opens none. Topology as in
``test_alerts_field_rules`` (links J-R0 and J-R1 between gpu-r and leaf-r).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.core.choices import TokenKind
from inventory.models import Alert
from inventory.services import alerts as svc
from tests import factories as f
from tests.inventory.services.alerts.test_alerts_field_rules import LINE_PER_S, PORTS, link_of, post, roll

pytestmark = pytest.mark.django_db

DEGRADED = ("leaf-r", "Ethernet1/1")  # its receiver degrades: link J-R0
TAILED = ("leaf-r", "Ethernet1/2")  # bursts of high-bin codewords: link J-R1
# No baseline learned yet: the threshold is 10% of the KP4 limit (2.4e-4), 2.4e-5.
DEGRADED_BER = 3.0e-5
CW_PER_10S = int(LINE_PER_S * 10 / 5440)  # RS(544,514) codewords of 5,440 bits


@pytest.fixture
def scene(user_with_role):
    f.production_jumper_pair()
    client = f.api_token_client(user_with_role("collector"), TokenKind.INGEST)
    end = timezone.now().replace(second=0, microsecond=0) - timedelta(minutes=1)
    return {"client": client, "end": end}


def samples(start, seconds, *, phase, degraded_for, bursts):
    """Every port every 10 s from ``start + phase`` for ``seconds``: healthy FEC (5e-9) with a
    KP4 histogram (16 bins, T = 15), except DEGRADED at DEGRADED_BER for its last
    ``degraded_for`` seconds and TAILED with 4 codewords in bin 14 on each of three samples
    from every time in ``bursts`` (seconds from ``start``)."""
    out = []
    for dev, port in PORTS:
        bits = cw = 0
        hist = [0] * 16
        t = phase
        while t <= seconds:
            ber = 5e-9
            if (dev, port) == DEGRADED and t > seconds - degraded_for:
                ber = DEGRADED_BER
            step_bits = int(ber * LINE_PER_S * 10)
            bits += step_bits
            cw += int(step_bits / 1.2)
            hist[0] += CW_PER_10S - int(step_bits / 1.2)
            hist[1] += int(step_bits / 1.2)
            if (dev, port) == TAILED and any(b <= t < b + 30 for b in bursts):
                hist[14] += 4
            out.append(
                f.telemetry_sample(
                    dev,
                    port,
                    start + timedelta(seconds=t),
                    fec_corrected_bits=bits,
                    fec_corrected_codewords=cw,
                    fec_uncorrectable_codewords=0,
                    fec_hist=list(hist),
                )
            )
            t += 10
    return out


# Every other phase of the twelve through the whole pipeline (each case is a minute of the real
# ingest, rollup and rule task); the pure core's tests walk all twelve.
@pytest.mark.parametrize("k", range(0, 12, 2))
def test_degradation_and_tail_open_the_same_alerts_at_every_sample_phase(scene, k):
    """The evaluation runs 5k s past a minute, the samples fall 10k/12 s into their 10 s.
    DEGRADED has been at 1.25x its threshold for 10 min 20 s (on buckets, a third-healthy first
    bucket kept it under at some phases); TAILED had three bursts of 12 codewords over 30 s
    (on buckets, a burst split by a minute boundary left under 10 in each)."""
    now = scene["end"] + timedelta(seconds=5 * k)
    start = now - timedelta(minutes=20)
    seconds = 20 * 60
    rows = samples(
        start,
        seconds,
        phase=(10.0 * k / 12) % 10.0,
        degraded_for=620,
        bursts=[seconds - 700, seconds - 455, seconds - 215],
    )
    post(scene["client"], rows)
    roll(now)
    svc.alerts_evaluate(now=now)
    opened = {(a.rule, a.link_id, a.severity) for a in Alert.objects.all()}
    assert opened == {
        ("fec_degradation", link_of(*DEGRADED).pk, "notify"),
        ("fec_tail", link_of(*TAILED).pk, "critical"),
    }
    tail = Alert.objects.get(rule="fec_tail")
    (end,) = tail.evidence["ends"].values()
    assert end["codewords_over_80pct"] == 36


@pytest.mark.parametrize("k", [0, 5, 11])
def test_a_short_degradation_and_two_bursts_open_nothing_at_any_phase(scene, k):
    """Eight minutes at 1.25x the threshold and two bursts: neither meets its bar."""
    now = scene["end"] + timedelta(seconds=5 * k)
    start = now - timedelta(minutes=20)
    seconds = 20 * 60
    rows = samples(
        start, seconds, phase=(10.0 * k / 12) % 10.0, degraded_for=480, bursts=[seconds - 700, seconds - 215]
    )
    post(scene["client"], rows)
    roll(now)
    svc.alerts_evaluate(now=now)
    assert list(Alert.objects.values_list("rule", flat=True)) == []
