"""Server-rendered inline SVG charts for the forecast page. Pure: plain data in, markup out.

Every text is escaped here; the template marks the result safe.
"""

from __future__ import annotations

from html import escape

PALETTE = ("#0d5fa6", "#e07b00", "#2a9d55", "#8e44ad", "#c0392b", "#16a085", "#7f8c8d", "#d35400", "#2c3e50")


def _fmt(x: float) -> str:
    return f"{x:.1f}" if x < 10 else f"{x:.0f}"


MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
# Charts are drawn 360 units wide, the width of a phone: scaled to the column, 14-unit text stays
# at least 12 CSS px there (app.css caps the width on the desk so it does not grow huge).
WIDTH = 360
FONT = 14


def _month(label: str) -> str:
    """``2026-12`` -> ``Dec 26``."""
    year, _, month = label.partition("-")
    return f"{MONTHS[int(month) - 1]} {year[2:]}" if month.isdigit() and 1 <= int(month) <= 12 else label


def stacked_bars(months: list[str], series: list[dict], *, width: int = WIDTH, height: int = 240) -> str:
    """Expected failures by the end of each month, cumulative, one colour per cohort.

    At a constant learned rate every month expects the same failures, so twelve monthly bars
    would all be the same height; the running total is what a spares plan needs (how many
    modules will have failed by March). Month labels every third month so they never overlap;
    the legend sits under the chart and wraps.
    """
    left, top, right = 40, 22, 8
    legend_rows = (len(series) + 1) // 2
    plot_h = height - top - 40 - legend_rows * 20
    plot_w = width - left - right
    running = [0.0] * len(series)
    cum: list[list[float]] = []
    for m in range(len(months)):
        for k, s in enumerate(series):
            running[k] += s["values"][m]
        cum.append(list(running))
    totals = [sum(c) for c in cum]
    vmax = max(totals, default=0) or 1.0
    bw = plot_w / max(len(months), 1)
    base = top + plot_h
    out = [
        f'<svg class="chart" role="img" aria-label="Expected failures, cumulative, by month and vendor" '
        f'viewBox="0 0 {width} {height}" width="100%" xmlns="http://www.w3.org/2000/svg">',
        f'<line x1="{left}" y1="{base}" x2="{left + plot_w}" y2="{base}" stroke="#888"/>',
        f'<text x="{left - 4}" y="{top + 5}" text-anchor="end" font-size="{FONT}">{_fmt(vmax)}</text>',
        f'<text x="{left - 4}" y="{base}" text-anchor="end" font-size="{FONT}">0</text>',
    ]
    for m, label in enumerate(months):
        y = base
        for k, s in enumerate(series):
            v = cum[m][k]
            h = plot_h * v / vmax
            y -= h
            out.append(
                f'<rect x="{left + m * bw + 1:.1f}" y="{y:.1f}" width="{max(bw - 2, 1):.1f}" height="{h:.1f}" '
                f'fill="{PALETTE[k % len(PALETTE)]}"><title>{escape(s["cohort"])} by the end of '
                f"{escape(_month(label))}: {v:.2f}</title></rect>"
            )
        if m % 3 == 0 or m == len(months) - 1 and len(months) % 3 == 1:
            out.append(
                f'<text x="{left + (m + 0.5) * bw:.1f}" y="{base + 17}" text-anchor="middle" '
                f'font-size="{FONT}">{escape(_month(label))}</text>'
            )
    if months:
        out.append(
            f'<text x="{left + plot_w}" y="{top - 8}" text-anchor="end" font-size="{FONT}" fill="#333">'
            f"{_fmt(totals[-1])} by {escape(_month(months[-1]))}</text>"
        )
    for k, s in enumerate(series):
        col, row = k % 2, k // 2
        x, y = 8 + col * (width // 2), base + 40 + row * 20
        out.append(
            f'<rect x="{x}" y="{y - 11}" width="12" height="12" fill="{PALETTE[k % len(PALETTE)]}"/>'
            f'<text x="{x + 17}" y="{y}" font-size="{FONT}">{escape(s["cohort"])}</text>'
        )
    out.append("</svg>")
    return "".join(out)


def rate_intervals(rows: list[dict], *, fleet_afr: float, budget_afr: float, width: int = WIDTH) -> str:
    """Each cohort's posterior AFR (dot) with its credible interval (bar); flagged in red."""
    left, right, top, row_h = 146, 22, 44, 24
    height = top + row_h * len(rows) + 24
    xmax = max([r["afr_high"] for r in rows] + [fleet_afr, budget_afr, 0.01]) * 1.1
    plot_w = width - left - right

    def x(v: float) -> float:
        return left + plot_w * v / xmax

    out = [
        f'<svg class="chart" role="img" aria-label="Cohort failure rates with credible intervals" '
        f'viewBox="0 0 {width} {height}" width="100%" xmlns="http://www.w3.org/2000/svg">',
    ]
    for v, name, dash in ((budget_afr, "budget", "4 3"), (fleet_afr, "fleet", "")):
        out.append(
            f'<line x1="{x(v):.1f}" y1="{top - 8}" x2="{x(v):.1f}" y2="{height - 20}" stroke="#555" '
            f'stroke-dasharray="{dash}"/><text x="{x(v):.1f}" y="{top - 28 + (16 if name == "fleet" else 0)}" '
            f'font-size="{FONT}" text-anchor="middle">{name} {v:.1%}</text>'
        )
    for i, r in enumerate(rows):
        y = top + i * row_h + row_h / 2
        colour = "#b00020" if r["flagged"] else "#0d5fa6"
        out.append(
            f'<text x="{left - 6}" y="{y + 5:.1f}" text-anchor="end" font-size="{FONT}">'
            f"{escape(r['cohort'][:18])}</text>"
            f'<line x1="{x(r["afr_low"]):.1f}" y1="{y:.1f}" x2="{x(r["afr_high"]):.1f}" y2="{y:.1f}" '
            f'stroke="{colour}" stroke-width="3"/>'
            f'<circle cx="{x(r["afr_mean"]):.1f}" cy="{y:.1f}" r="4" fill="{colour}"><title>'
            f"{escape(r['cohort'])}: {r['afr_mean']:.2%} ({r['afr_low']:.2%}-{r['afr_high']:.2%}), "
            f"{r['failures']} failures in {r['exposure_years']} module-years</title></circle>"
        )
    ticks = 3
    for t in range(ticks + 1):
        v = xmax * t / ticks
        out.append(
            f'<text x="{x(v):.1f}" y="{height - 4}" font-size="{FONT}" text-anchor="middle">{v:.1%}</text>'
        )
    out.append("</svg>")
    return "".join(out)
