"""Server-rendered inline SVG charts for the forecast page. Pure: plain data in, markup out.

Every text is escaped here; the template marks the result safe.
"""

from __future__ import annotations

from html import escape

PALETTE = ("#0d5fa6", "#e07b00", "#2a9d55", "#8e44ad", "#c0392b", "#16a085", "#7f8c8d", "#d35400", "#2c3e50")


def _fmt(x: float) -> str:
    return f"{x:.1f}" if x < 10 else f"{x:.0f}"


def stacked_bars(months: list[str], series: list[dict], *, width: int = 720, height: int = 260) -> str:
    """Expected failures per month, one colour per cohort (``series``: cohort, values)."""
    left, bottom, top, right = 44, 40, 12, 150
    plot_w, plot_h = width - left - right, height - top - bottom
    totals = [sum(s["values"][m] for s in series) for m in range(len(months))]
    vmax = max(totals, default=0) or 1.0
    bw = plot_w / max(len(months), 1)
    out = [
        f'<svg class="chart" role="img" aria-label="Expected failures by month" viewBox="0 0 {width} {height}" '
        f'width="100%" xmlns="http://www.w3.org/2000/svg">',
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="#888"/>',
        f'<text x="{left - 6}" y="{top + 10}" text-anchor="end" font-size="11">{_fmt(vmax)}</text>',
        f'<text x="{left - 6}" y="{top + plot_h}" text-anchor="end" font-size="11">0</text>',
    ]
    for m, label in enumerate(months):
        y = top + plot_h
        for k, s in enumerate(series):
            v = s["values"][m]
            h = plot_h * v / vmax
            y -= h
            out.append(
                f'<rect x="{left + m * bw + 2:.1f}" y="{y:.1f}" width="{bw - 4:.1f}" height="{h:.1f}" '
                f'fill="{PALETTE[k % len(PALETTE)]}"><title>{escape(s["cohort"])} {escape(label)}: '
                f"{v:.2f}</title></rect>"
            )
        out.append(
            f'<text x="{left + (m + 0.5) * bw:.1f}" y="{top + plot_h + 14}" text-anchor="middle" '
            f'font-size="10">{escape(label[2:])}</text>'
        )
        out.append(
            f'<text x="{left + (m + 0.5) * bw:.1f}" y="{top + plot_h + 28}" text-anchor="middle" '
            f'font-size="10" fill="#555">{_fmt(totals[m])}</text>'
        )
    for k, s in enumerate(series):
        y = top + 12 + k * 16
        out.append(
            f'<rect x="{width - right + 10}" y="{y - 9}" width="10" height="10" fill="{PALETTE[k % len(PALETTE)]}"/>'
            f'<text x="{width - right + 24}" y="{y}" font-size="11">{escape(s["cohort"])}</text>'
        )
    out.append("</svg>")
    return "".join(out)


def rate_intervals(rows: list[dict], *, fleet_afr: float, budget_afr: float, width: int = 720) -> str:
    """Each cohort's posterior AFR (dot) with its credible interval (bar); flagged in red."""
    left, right, top, row_h = 200, 20, 24, 20
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
            f'stroke-dasharray="{dash}"/><text x="{x(v):.1f}" y="{top - 12 + (8 if name == "fleet" else 0)}" '
            f'font-size="10" text-anchor="middle">{name} {v:.1%}</text>'
        )
    for i, r in enumerate(rows):
        y = top + i * row_h + row_h / 2
        colour = "#b00020" if r["flagged"] else "#0d5fa6"
        out.append(
            f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{escape(r["cohort"])}</text>'
            f'<line x1="{x(r["afr_low"]):.1f}" y1="{y:.1f}" x2="{x(r["afr_high"]):.1f}" y2="{y:.1f}" '
            f'stroke="{colour}" stroke-width="3"/>'
            f'<circle cx="{x(r["afr_mean"]):.1f}" cy="{y:.1f}" r="4" fill="{colour}"><title>'
            f"{escape(r['cohort'])}: {r['afr_mean']:.2%} ({r['afr_low']:.2%}-{r['afr_high']:.2%}), "
            f"{r['failures']} failures in {r['exposure_years']} module-years</title></circle>"
        )
    ticks = 5
    for t in range(ticks + 1):
        v = xmax * t / ticks
        out.append(
            f'<text x="{x(v):.1f}" y="{height - 6}" font-size="10" text-anchor="middle">{v:.1%}</text>'
        )
    out.append("</svg>")
    return "".join(out)
