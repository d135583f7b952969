"""OTDR traces as an inline SVG: distance (m) against relative dB, one fibre's traces over time
overlaid (``traces_overlay_svg``), the latest trace's events marked. Pure code.

Only numbers reach the markup (event numbers, distances, dB), so the output is safe to emit
unescaped in a template.
"""

from __future__ import annotations

from collections.abc import Sequence

KIND_COLOUR = {
    "reflective": "#0d5fa6",
    "saturated": "#b00020",
    "non-reflective": "#a86400",
    "end": "#111111",
}


def _nice_step(span: float) -> float:
    raw = span / 5 or 1
    mag = 10 ** len(str(int(raw))) / 10
    for m in (1, 2, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def _fmt_m(v: float) -> str:
    return f"{v / 1000:g} km" if abs(v) >= 1000 else f"{v:g} m"


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


# Overlay of one fibre's traces over time: the baseline in blue, the latest in black, earlier
# retests in grey.
OVERLAY_STYLE = {
    "baseline": ("#0d5fa6", "2", ""),
    "latest": ("#111111", "1.5", ""),
    "earlier": ("#9a9a9a", "1", "4,3"),
}


# 15 units of the 360-unit viewBox: 12.5 px or more where the plot is 300 px wide (a phone), above
# the 12 px phone rule (11 units were 9.5 px, the event numbers' 10 units 8.6 px).
OVERLAY_FONT = 15


def traces_overlay_svg(
    series: Sequence[tuple[Sequence[Sequence[float]], str]],
    events: Sequence[dict],
    *,
    width: int = 360,
    height: int = 236,
    title: str = "OTDR traces",
    until_m: float | None = None,
    since_m: float | None = None,
) -> str:
    """Draw several traces of one fibre on shared axes: ``series`` = [(points, role)] with role
    ``baseline`` / ``latest`` / ``earlier``; ``events`` (the latest trace's) are marked.
    ``until_m``: cut the distance axis there (a short link's fibre end, not the OTDR's range);
    ``since_m``: start it there (a little of a launch lead, whose distances are negative)."""
    if until_m is not None and until_m > 0:
        series = [([p for p in pts if float(p[0]) <= until_m], role) for pts, role in series]
        events = [e for e in events if e.get("distance_m") is None or float(e["distance_m"]) <= until_m]
    if since_m is not None and since_m < 0:
        series = [([p for p in pts if float(p[0]) >= since_m], role) for pts, role in series]
        events = [e for e in events if e.get("distance_m") is None or float(e["distance_m"]) >= since_m]
    series = [(pts, role) for pts, role in series if len(pts) > 1]
    if not series:
        return ""
    pad_l, pad_r, pad_t, pad_b = 44, 10, 8, 40  # room for labels legible at phone width (15 units)
    xs = [float(p[0]) for pts, _ in series for p in pts]
    ys = [float(p[1]) for pts, _ in series for p in pts]
    ev_x = [float(e["distance_m"]) for e in events if e.get("distance_m") is not None]
    x0, x1 = min([*xs, *ev_x, 0.0]), max([*xs, *ev_x])
    y0, y1 = min(ys), max(ys)
    x1 = x1 if x1 - x0 >= 1e-9 else x0 + 1
    y1 = y1 if y1 - y0 >= 1e-9 else y0 + 1
    pw, ph = width - pad_l - pad_r, height - pad_t - pad_b

    def sx(x: float) -> float:
        return pad_l + (x - x0) / (x1 - x0) * pw

    def sy(y: float) -> float:
        return pad_t + (y1 - y) / (y1 - y0) * ph

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" class="otdr-plot otdr-overlay" '
        f'role="img" aria-label="{_esc(title)}: distance in metres against dB">',
        f'<rect x="{pad_l}" y="{pad_t}" width="{pw}" height="{ph}" fill="#fafafa" stroke="#ccc"/>',
    ]
    step = _nice_step(x1 - x0)
    t = (x0 // step) * step
    while t <= x1:
        if t >= x0:
            parts.append(
                f'<line x1="{sx(t):.1f}" y1="{pad_t}" x2="{sx(t):.1f}" y2="{pad_t + ph}" stroke="#e3e3e3"/>'
                f'<text x="{sx(t):.1f}" y="{height - 22}" font-size="{OVERLAY_FONT}" text-anchor="middle">{_fmt_m(t)}</text>'
            )
        t += step
    ystep = _nice_step(y1 - y0)
    t = (y0 // ystep) * ystep
    while t <= y1:
        if t >= y0:
            parts.append(
                f'<text x="{pad_l - 3}" y="{sy(t) + 5:.1f}" font-size="{OVERLAY_FONT}" text-anchor="end">{t:g}</text>'
            )
        t += ystep
    order = {"earlier": 0, "baseline": 1, "latest": 2}  # the latest drawn on top
    for pts, role in sorted(series, key=lambda s: order.get(s[1], 0)):
        colour, stroke, dash = OVERLAY_STYLE.get(role, OVERLAY_STYLE["earlier"])
        path = " ".join(
            f"{'M' if i == 0 else 'L'}{sx(float(p[0])):.1f},{sy(float(p[1])):.1f}" for i, p in enumerate(pts)
        )
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(
            f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="{stroke}"{dashed} '
            f'class="trace-{_esc(role)}"/>'
        )
    for e in events:
        if e.get("distance_m") is None:
            continue
        x = sx(float(e["distance_m"]))
        colour = KIND_COLOUR.get(str(e.get("kind")), "#555")
        parts.append(
            f'<line x1="{x:.1f}" y1="{pad_t}" x2="{x:.1f}" y2="{pad_t + ph}" stroke="{colour}" '
            f'stroke-dasharray="2,3"/><circle cx="{x:.1f}" cy="{pad_t + 10}" r="10" fill="{colour}"/>'
            f'<text x="{x:.1f}" y="{pad_t + 15}" font-size="{OVERLAY_FONT}" fill="#fff" text-anchor="middle">'
            f"{int(e.get('number') or 0)}</text>"
        )
    parts.append(
        f'<text x="{pad_l + pw / 2:.0f}" y="{height - 4}" font-size="{OVERLAY_FONT}" text-anchor="middle">distance</text></svg>'
    )
    return "".join(parts)
