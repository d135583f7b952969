"""Link risk from the database, and the demo cluster's failure history."""

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from django.db import connection

from inventory.core import forecast as fm
from inventory.core.choices import AlertRule, AlertState, Severity
from inventory.core.choices import TestKind as Kind
from inventory.core.forecast.risk import RiskWeights
from inventory.models import Alert, CableTest, Link, PortRollup
from inventory.selectors import forecast as fsel
from inventory.selectors.forecast import link_risk
from inventory.selectors.forecast import sql as forecast_sql
from inventory.services.demo.failures import BAD_VENDOR
from inventory.services.demo.seed import demo_seed
from inventory.services.forecast import snapshot as forecast_services
from tests.seeded import seeded_module

pytestmark = pytest.mark.django_db


#: The 64-GPU demo, seeded once for the module (``tests/seeded.py``).
demo = seeded_module(lambda: demo_seed(gpus=64, seed=3, as_of=datetime(2026, 11, 29, tzinfo=UTC).date()))


def test_links_with_alerts_and_thin_margins_rank_first_with_reasons(demo, django_assert_max_num_queries):
    now = datetime(2026, 11, 29, 12, tzinfo=UTC)
    links = list(Link.objects.filter(active=True, link_class="rail").order_by("pk")[:3])
    Alert.objects.create(
        rule=AlertRule.FEC_UNCORRECTABLE,
        severity=Severity.PAGE,
        state=AlertState.OPEN,
        link=links[0],
        opened_at=now - timedelta(hours=2),
        updated_at=now,
        summary="uncorrectable codewords",
    )
    cable = links[1].segments.get().cable
    CableTest.objects.create(
        cable=cable, link=links[1], kind=Kind.OLTS, tested_at=now - timedelta(days=3), margin_db=-3.0
    )
    with django_assert_max_num_queries(25):
        p = forecast_services.forecast_compute(
            now=now, params=forecast_services.ForecastParams.from_settings(top_links=10_000)
        )
    top = p["risk"]["links"]
    at = next(i for i, r in enumerate(top) if r["link_id"] == links[0].pk)
    # first, or behind other links with open page alerts only (the demo job's spike is one)
    assert all(any("open page/critical alert" in why for why in r["reasons"]) for r in top[: at + 1])
    assert at <= 1
    assert any("FEC" in why for why in top[at]["reasons"])
    second = next(r for r in top if r["link_id"] == links[1].pk)
    assert any("test margin -3.00 dB" in why for why in second["reasons"])
    untested = next(r for r in top if not any("margin" in why or "alert" in why for why in r["reasons"]))
    assert second["hazard"] > untested["hazard"]


def test_a_rising_fec_rate_and_falling_rx_power_in_rollups_raise_a_links_risk(demo):
    now = datetime(2026, 11, 29, 12, tzinfo=UTC)
    # A link the demo gave no telemetry history of its own (it seeds some, beside its alerts).
    link = (
        Link.objects.filter(active=True, link_class="rail")
        .exclude(a_port_id__in=PortRollup.objects.values("port_id"))
        .order_by("pk")[5]
    )
    rows = []
    for h in range(1, 24 * 8, 6):  # every 6 hours over 8 days, one bucket of 60 s each
        ts = now - timedelta(hours=h)
        recent = h <= 24
        rows.append(
            PortRollup(
                port_id=link.a_port_id,
                bucket=ts,
                seconds=60,
                samples=6,
                covered_s=60,
                fec_corrected_cw=(40_000 if recent else 1_000) * 60,
                rx_power_min_any_dbm=-6.5 if recent else -2.0,
                computed_at=now,
            )
        )
    PortRollup.objects.bulk_create(rows)
    p = forecast_services.forecast_compute(
        now=now, params=forecast_services.ForecastParams.from_settings(top_links=10_000)
    )
    row = next(r for r in p["risk"]["links"] if r["link_id"] == link.pk)
    assert any("FEC corrected rate 40 times its baseline" in why for why in row["reasons"])
    assert any("DOM drift -4.5 dB" in why for why in row["reasons"])


def test_the_pruned_ranking_equals_the_full_ranking(demo):
    """The fast path scores only links touching the hottest cohorts (plus links with evidence)
    and must pick exactly the links, order and hazards that scoring every link picks."""
    now = datetime(2026, 11, 29, 12, tzinfo=UTC)
    healthy = Link.objects.filter(active=True, link_class="rail").order_by("pk")[7]
    Alert.objects.all().delete()  # a quiet fleet but for this alert (the demo opens a few of its own)
    Alert.objects.create(
        rule=AlertRule.FEC_DEGRADATION,
        severity=Severity.PAGE,
        state=AlertState.OPEN,
        link=healthy,
        opened_at=now - timedelta(hours=1),
        updated_at=now,
        summary="corrected rate climbing",
    )
    data = fsel.cohort_data(now=now)
    prior = fm.Prior().hazard
    hazard = {key: (0.3 if vendor == BAD_VENDOR else prior) for key, (vendor, _) in data.lots.items()}
    bad_modules = sum(n for key, n in data.module_installed.items() if hazard[key] == 0.3)
    assert bad_modules > 0

    def ranked(budget):
        feats = fsel.link_features(
            now=now,
            module_hazard=hazard,
            default_hazard=prior,
            top=10,
            module_installed=data.module_installed,
            oldest_install=data.oldest_install,
            prune_budget=budget,
        )
        r = fm.rank_links(
            feats.risk_inputs(),
            top=10,
        )
        return feats, r

    fast, fast_rank = ranked(bad_modules)
    full, full_rank = ranked(0)
    assert fast.pruned and not full.pruned
    assert fast.considered == full.considered == Link.objects.filter(active=True).count()
    assert fast_rank.link_ids.tolist() == full_rank.link_ids.tolist()
    assert np.allclose(fast_rank.hazard, full_rank.hazard)
    assert fast_rank.link_ids[0] == healthy.pk  # the open page alert outranks the bad lot


def test_scoring_every_link_matches_the_sql_scores_and_breaks_ties_by_link_id(demo):
    """The full scan (numpy over columnar reads) gives every link the base hazard and age the
    per-link SQL gives it, and on a healthy fleet (every cohort at the prior, so hazards tie)
    its top links are exactly those of ranking every link, ties broken by link id."""
    now = datetime(2026, 11, 29, 12, tzinfo=UTC)
    data = fsel.cohort_data(now=now)
    prior = fm.Prior().hazard
    hazard = dict.fromkeys(data.lots, prior)
    n_links = Link.objects.filter(active=True).count()

    def features(top):
        return fsel.link_features(
            now=now,
            module_hazard=hazard,
            default_hazard=prior,
            top=top,
            module_installed=data.module_installed,
            oldest_install=data.oldest_install,
        )

    every = features(n_links)
    assert not every.pruned and every.link_ids.tolist() == sorted(
        Link.objects.filter(active=True).values_list("pk", flat=True)
    )

    params = {**forecast_sql.hazard_params(hazard), "prior": prior, "now_s": now.timestamp()}
    with connection.cursor() as cur:
        cur.execute(
            link_risk._link_scores_sql(where="1 = 1", tail="ORDER BY id", weights=RiskWeights()), params
        )
        sql = cur.fetchall()
    assert [r[0] for r in sql] == every.link_ids.tolist()
    assert np.allclose([r[1] for r in sql], every.base_hazard)
    installed = np.array([np.nan if r[2] is None else r[2] for r in sql], dtype=float)
    assert np.allclose((now.timestamp() - installed) / 86400.0, every.age_days, equal_nan=True)

    def ranked(f):
        return fm.rank_links(
            f.risk_inputs(),
            top=10,
        )

    top, full = ranked(features(10)), ranked(every)
    assert top.link_ids.tolist() == full.link_ids.tolist()
    assert np.allclose(top.hazard, full.hazard)
    ties = [(-h, i) for h, i in zip(top.hazard.tolist(), top.link_ids.tolist(), strict=True)]
    assert ties == sorted(ties) and len(set(top.hazard.tolist())) < len(ties)  # tied, ordered by id
