"""``/metrics``: link health in the Prometheus text format, built with ``prometheus_client``.

Cardinality is bounded by the plant, never by time or values: one series per link end for
the FEC gauges (capped at ``CABLETRACK_METRICS_MAX_LINKS`` links, worst pre-FEC BER first), one
info series per link (labels: link id, cable label(s), both ends' racks, both ports, module vendor), and
small aggregates for alerts and overdue retests. A link carries both ends' racks and devices, and
``cabletrack_link_rack`` lists every rack it touches (patch panels between included), so a rack
filter finds every link in or through the rack; ``cabletrack_rack_info`` lists every rack.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import Count, Q
from django.db.models.functions import Coalesce
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, InfoMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from inventory.conf import app_settings
from inventory.core.choices import AlertState, CableStatus
from inventory.models import Alert, Cable, CableEnd, Link, LinkSegment, PortBaseline, Rack
from inventory.selectors.retests.overdue import retest_overdue
from inventory.selectors.telemetry.pipeline import pipeline_state
from inventory.selectors.telemetry.source import port_optics_and_pfc, port_stats


class _PlantCollector:
    def __init__(self, now: datetime):
        self.now = now

    def collect(self):
        yield from self._link_families()
        yield self._rack_family()
        yield from self._optics_families()
        yield from self._alert_families()
        yield from self._cable_families()
        yield from self._pipeline_families()

    def _link_families(self):
        """The info series per link and the FEC gauges per link end, from the last 10 minutes."""
        now = self.now
        max_links = int(app_settings.metrics_max_links)
        window = float(app_settings.alert_lookback_s)
        stats = port_stats(start=now - timedelta(seconds=min(window, 600)), end=now)
        links = _active_links(stats, max_links)
        self._links = links
        labels = _cable_labels()

        info = InfoMetricFamily(
            "cabletrack_link",
            "The physical link behind a port pair: join your own series on a_device/a_port or b_device/b_port",
            labels=[
                "link",
                "cable",
                "a_rack",
                "b_rack",
                "a_device",
                "a_port",
                "b_device",
                "b_port",
                "vendor",
            ],
        )
        link_rack = GaugeMetricFamily(
            "cabletrack_link_rack",
            "1 for every rack a link touches (both ends and the patch panels between): filter on rack",
            labels=["link", "rack"],
        )
        racks_of = _link_racks()
        ber = GaugeMetricFamily(
            "cabletrack_link_pre_fec_ber",
            "Pre-FEC BER at the receiver of this end (last 10 min)",
            labels=["link", "end"],
        )
        ber_max = GaugeMetricFamily(
            "cabletrack_link_pre_fec_ber_max",
            "Worst bucket pre-FEC BER (last 10 min)",
            labels=["link", "end"],
        )
        corr = GaugeMetricFamily(
            "cabletrack_link_fec_corrected_codewords_rate",
            "Corrected FEC codewords per second at this end (last 10 min)",
            labels=["link", "end"],
        )
        uncorr = GaugeMetricFamily(
            "cabletrack_link_fec_uncorrectable_codewords_rate",
            "Uncorrectable FEC codewords per second at this end (last 10 min)",
            labels=["link", "end"],
        )
        for lk in links:
            lid = str(lk[0])
            vendors = sorted({v for v in (lk[8], lk[9]) if v})
            info.add_metric(
                [
                    lid,
                    ",".join(labels.get(lk[0], [])),
                    lk[7] or "",
                    lk[10] or "",
                    lk[3],
                    lk[4],
                    lk[5],
                    lk[6],
                    ",".join(vendors),
                ],
                {},
            )
            for rack in sorted(racks_of.get(lk[0], set()) | {r for r in (lk[7], lk[10]) if r}):
                link_rack.add_metric([lid, rack], 1)
            for end, pid in (("a", lk[1]), ("b", lk[2])):
                s = stats.get(pid)
                if not s:
                    continue
                if s.get("pre_fec_ber") is not None:
                    ber.add_metric([lid, end], s["pre_fec_ber"])
                if s.get("pre_fec_ber_max") is not None:
                    ber_max.add_metric([lid, end], s["pre_fec_ber_max"])
                if s.get("corrected_cw_rate") is not None:
                    corr.add_metric([lid, end], s["corrected_cw_rate"])
                if s.get("uncorrectable_cw_rate") is not None:
                    uncorr.add_metric([lid, end], s["uncorrectable_cw_rate"])
        yield info
        yield link_rack
        yield ber
        yield ber_max
        yield corr
        yield uncorr

    def _rack_family(self):
        """Every rack, with or without links: what a dashboard's rack drop-down lists."""
        racks = GaugeMetricFamily("cabletrack_rack_info", "Every rack of the plant", labels=["rack", "site"])
        for name, site in Rack.objects.values_list("name", "row__room__site__slug").order_by("name"):
            racks.add_metric([name, site or ""], 1)
        return racks

    def _optics_families(self):
        """Receive power per lane (and its learned baseline) and PFC pause rates per direction,
        per link end, for the links ``_link_families`` exposed (same cap, same window)."""
        links = getattr(self, "_links", [])
        now = self.now
        window = float(app_settings.alert_lookback_s)
        port_ids = [p for lk in links for p in (lk[1], lk[2])]
        optics = port_optics_and_pfc(
            start=now - timedelta(seconds=min(window, 600)), end=now, port_ids=port_ids
        )
        baselines = dict(
            PortBaseline.objects.filter(port_id__in=port_ids, rx_power_dbm__isnull=False).values_list(
                "port_id", "rx_power_dbm"
            )
        )
        rx = GaugeMetricFamily(
            "cabletrack_link_rx_power_dbm",
            "Receive power of each lane at this end, lowest in the newest bucket (module DOM, +-3 dB absolute)",
            labels=["link", "end", "lane"],
        )
        rx_base = GaugeMetricFamily(
            "cabletrack_link_rx_power_baseline_dbm",
            "The lane's own receive-power baseline, learned while the link was healthy and tested",
            labels=["link", "end", "lane"],
        )
        sent = GaugeMetricFamily(
            "cabletrack_link_pfc_pause_sent_rate",
            "PFC pause frames sent by this end per second (last 10 min): the end asking to stop",
            labels=["link", "end"],
        )
        received = GaugeMetricFamily(
            "cabletrack_link_pfc_pause_received_rate",
            "PFC pause frames received by this end per second (last 10 min): its far end sends them",
            labels=["link", "end"],
        )
        for lk in links:
            lid = str(lk[0])
            for end, pid in (("a", lk[1]), ("b", lk[2])):
                o = optics.get(pid, {})
                for i, v in enumerate(o.get("rx_power_dbm") or []):
                    if v is not None:
                        rx.add_metric([lid, end, str(i + 1)], v)
                for i, v in enumerate(baselines.get(pid) or []):
                    if v is not None:
                        rx_base.add_metric([lid, end, str(i + 1)], v)
                if o.get("pfc_sent_rate") is not None:
                    sent.add_metric([lid, end], o["pfc_sent_rate"])
                if o.get("pfc_received_rate") is not None:
                    received.add_metric([lid, end], o["pfc_received_rate"])
        yield rx
        yield rx_base
        yield sent
        yield received

    def _alert_families(self):
        """Open alerts by rule and severity, and which rules are open on each link."""
        alerts = GaugeMetricFamily(
            "cabletrack_alerts_open",
            "Open alerts by rule and severity",
            labels=["rule", "severity", "silenced"],
        )
        for rule, sev, silenced, n in (
            Alert.objects.filter(state=AlertState.OPEN)
            .values_list("rule", "severity", "silenced")
            .annotate(n=Count("pk"))
            .order_by()
        ):
            alerts.add_metric([rule, sev, "true" if silenced else "false"], n)
        yield alerts
        link_alert = GaugeMetricFamily(
            "cabletrack_link_alert_open",
            "1 while an alert of this rule is open on the link",
            labels=["link", "rule", "severity", "silenced"],
        )
        for lid, rule, severity, silenced in (
            Alert.objects.filter(state=AlertState.OPEN, link__isnull=False)
            .values_list("link_id", "rule", "severity", "silenced")
            .distinct()
        ):
            link_alert.add_metric([str(lid), rule, severity, "true" if silenced else "false"], 1)
        yield link_alert

    def _cable_families(self):
        """Cables whose retest is overdue, and cables marked degraded."""
        now = self.now
        today = now.date()
        counts = Cable.objects.aggregate(
            overdue=Count("pk", filter=retest_overdue(today)),
            degraded=Count("pk", filter=Q(status=CableStatus.DEGRADED)),
        )
        g = GaugeMetricFamily("cabletrack_cables_retest_overdue", "Cables whose retest is overdue")
        g.add_metric([], counts["overdue"])
        yield g
        g = GaugeMetricFamily("cabletrack_cables_degraded", "Cables marked degraded")
        g.add_metric([], counts["degraded"])
        yield g
        # The same counts per rack (a cable counts in every rack it has an end in), for the
        # dashboard's stat panels that follow the rack selection; every rack has a series.
        by_rack = dict.fromkeys(Rack.objects.values_list("name", flat=True), (0, 0))
        for rack, overdue, degraded in (
            CableEnd.objects.filter(active=True)
            .annotate(rack=Coalesce("port__device__rack__name", "cage__device__rack__name"))
            .exclude(rack=None)
            .values("rack")
            .annotate(
                overdue=Count(
                    "cable",
                    distinct=True,
                    filter=retest_overdue(today, "cable__"),
                ),
                degraded=Count("cable", distinct=True, filter=Q(cable__status=CableStatus.DEGRADED)),
            )
            .order_by()
            .values_list("rack", "overdue", "degraded")
        ):
            by_rack[rack] = (overdue, degraded)
        overdue_g = GaugeMetricFamily(
            "cabletrack_rack_cables_retest_overdue",
            "Cables with an end in this rack whose retest is overdue",
            labels=["rack"],
        )
        degraded_g = GaugeMetricFamily(
            "cabletrack_rack_cables_degraded",
            "Cables with an end in this rack marked degraded",
            labels=["rack"],
        )
        for rack, (overdue, degraded) in by_rack.items():
            overdue_g.add_metric([rack], overdue)
            degraded_g.add_metric([rack], degraded)
        yield overdue_g
        yield degraded_g

    def _pipeline_families(self):
        """The rollup queue (waiting, how long the oldest has waited: the "stalled" signal, set
        aside after a failure) and the cables the last retest sweep could not date."""
        state = pipeline_state(now=self.now, detail=False)
        g = GaugeMetricFamily(
            "cabletrack_telemetry_rollup_waiting_batches", "Ingest batches waiting for their first rollup"
        )
        g.add_metric([], state.waiting)
        yield g
        g = GaugeMetricFamily(
            "cabletrack_telemetry_rollup_oldest_waiting_seconds",
            "How long the oldest waiting batch has waited (grows while the rollup is stalled)",
        )
        g.add_metric([], state.oldest_waiting_s)
        yield g
        g = GaugeMetricFamily(
            "cabletrack_telemetry_rollup_set_aside_ports",
            "Ports whose rollup failed, set aside and retried with backoff",
        )
        g.add_metric([], state.set_aside_ports)
        yield g
        g = GaugeMetricFamily(
            "cabletrack_retest_sweep_set_aside_cables", "Cables the last retest sweep could not date"
        )
        g.add_metric([], len(state.sweep_set_aside))
        yield g


def _active_links(stats: dict, max_links: int) -> list[tuple]:
    """The active links' ports, names, rack and module vendors; the ``max_links`` with the worst
    pre-FEC BER when there are more."""
    links = list(
        Link.objects.filter(active=True).values_list(
            "id",
            "a_port_id",
            "b_port_id",
            "a_port__device__name",
            "a_port__name",
            "b_port__device__name",
            "b_port__name",
            "a_port__device__rack__name",
            "a_port__cage__transceiver__model__vendor__name",
            "b_port__cage__transceiver__model__vendor__name",
            "b_port__device__rack__name",
        )
    )

    def worst(lk):
        bers = [stats.get(p, {}).get("pre_fec_ber") or 0.0 for p in (lk[1], lk[2])]
        return max(bers)

    if len(links) > max_links:
        links = sorted(links, key=worst, reverse=True)[:max_links]
    return links


def _link_racks() -> dict[int, set[str]]:
    """The racks of every device an active link's cables end on (patch panels on its path too)."""
    racks: dict[int, set[str]] = {}
    for lid, port_rack, cage_rack in (
        CableEnd.objects.filter(active=True, cable__link_segments__link__active=True)
        .values_list("cable__link_segments__link_id", "port__device__rack__name", "cage__device__rack__name")
        .distinct()
    ):
        for rack in (port_rack, cage_rack):
            if rack:
                racks.setdefault(lid, set()).add(rack)
    return racks


def _cable_labels() -> dict[int, list[str]]:
    """The cable labels of each active link, in path order."""
    labels: dict[int, list[str]] = {}
    for lid, label in (
        LinkSegment.objects.filter(link__active=True)
        .order_by("link_id", "seq")
        .values_list("link_id", "cable__label")
    ):
        labels.setdefault(lid, []).append(label)
    return labels


def metrics_exposition(*, now: datetime) -> tuple[bytes, str]:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_PlantCollector(now))
    return generate_latest(registry), CONTENT_TYPE_LATEST
