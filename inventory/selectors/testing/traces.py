"""The cable page's OTDR history: every trace of each fibre and wavelength over time, the
baseline overlaid on the latest, in one query (``inventory/_cable_traces.html``)."""

from __future__ import annotations

from django.urls import reverse
from django.utils.safestring import mark_safe

from inventory.core.choices import TestKind, Verdict
from inventory.core.optics.plot import traces_overlay_svg
from inventory.core.optics.sor.trace import plot_window
from inventory.models import Cable, OtdrTrace

MAX_DRAWN = 6  # traces drawn per plot: the baseline, the latest and the most recent others


def checksum_words(ok: bool | None, convention: str) -> str:
    """What the page says of a trace's checksum (the decision is ``sor.checksum.check_crc``'s)."""
    if ok is True:
        return f"Checksum verified ({convention})."
    if ok is False:
        return f"Checksum mismatch ({convention}): the file changed after the instrument wrote it."
    if convention.startswith("not verifiable: "):
        maker = convention.removeprefix("not verifiable: ").split(" ", 1)[0]
        return f"Checksum not checked: {maker} writes one that no known convention reproduces."
    return f"Checksum not checked: {convention}."


def cable_traces_context(cable: Cable, *, otdr_tested: bool = True) -> dict:
    """Context for ``inventory/_cable_traces.html``, under one key, ``cable_traces``: a group per
    fibre and wavelength (oldest trace first), each with an overlay plot (baseline blue, latest
    black, earlier grey), the list of its traces (date, verdict, baseline, download) and the
    latest trace's events. ``otdr_tested=False`` (the page knows the cable has no OTDR test):
    nothing to read."""
    if not otdr_tested:
        return {"cable_traces": {"groups": [], "count": 0}}
    rows = list(
        OtdrTrace.objects.filter(test__cable=cable, test__kind=TestKind.OTDR)
        .select_related("test")
        .only(
            "pk",
            "fibre",
            "wavelength_nm",
            "original_name",
            "fibre_length_m",
            "fibre_start_offset_m",
            "has_event_table",
            "checksum_ok",
            "checksum_convention",
            "total_loss_db",
            "events",
            "trace",
            "test__tested_at",
            "test__verdict",
            "test__is_baseline",
        )
        .order_by("fibre", "wavelength_nm", "test__tested_at", "pk")
    )
    groups: dict[tuple[int, int], list[OtdrTrace]] = {}
    for tr in rows:
        groups.setdefault((tr.fibre, round(tr.wavelength_nm or 0)), []).append(tr)
    labels = dict(Verdict.choices)
    out = []
    for (fibre, wl), traces in groups.items():
        latest = traces[-1]
        baseline = next((t for t in traces if t.test.is_baseline), None)
        drawn = [t for t in traces if t is not latest and t is not baseline][-(MAX_DRAWN - 2) :]
        series = [(t.trace, "earlier") for t in drawn]
        if baseline is not None and baseline is not latest:
            series.append((baseline.trace, "baseline"))
        series.append((latest.trace, "latest"))
        shown = [t for t in (*drawn, baseline, latest) if t is not None]
        # The fibre, not the OTDR's whole range; a little of a launch lead, not all of it.
        since, until = plot_window([t.fibre_length_m for t in shown], [t.fibre_start_offset_m for t in shown])
        out.append(
            {
                "fibre": fibre,
                "wavelength_nm": wl,
                "svg": mark_safe(  # noqa: S308 - numbers only (plot.py)
                    traces_overlay_svg(
                        series, latest.events, title=f"fibre {fibre} at {wl} nm", until_m=until, since_m=since
                    )
                ),
                "has_baseline": baseline is not None and baseline is not latest,
                "earlier_drawn": len(drawn),
                "events": latest.events,
                "has_event_table": latest.has_event_table,
                "fibre_start_offset_m": latest.fibre_start_offset_m,
                "launch_lead_m": -latest.fibre_start_offset_m if latest.fibre_start_offset_m else None,
                "checksum": checksum_words(latest.checksum_ok, latest.checksum_convention),
                "traces": [
                    {
                        "tested_at": t.test.tested_at,
                        "verdict": t.test.verdict,
                        "verdict_label": labels.get(t.test.verdict, t.test.verdict),
                        "is_baseline": t.test.is_baseline,
                        "is_latest": t is latest,
                        "total_loss_db": t.total_loss_db,
                        "fibre_length_m": t.fibre_length_m,
                        "name": t.original_name,
                        "download_url": reverse("otdr-download", kwargs={"pk": t.pk}),
                    }
                    for t in reversed(traces)
                ],
            }
        )
    return {"cable_traces": {"groups": out, "count": len(rows)}}
