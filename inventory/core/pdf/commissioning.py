"""The commissioning report as a PDF (reportlab). Pure: takes the report's dict, no ORM."""

from __future__ import annotations

import io

from reportlab.lib import colors
from reportlab.lib.pagesizes import A4, landscape
from reportlab.lib.styles import getSampleStyleSheet
from reportlab.lib.units import mm
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

VERDICT_COLOUR = {
    "pass": colors.HexColor("#0a7d32"),
    "marginal": colors.HexColor("#a86400"),
    "fail": colors.HexColor("#b00020"),
}


def _esc(s: object) -> str:
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def commissioning_pdf(report: dict) -> bytes:
    """Every link of the report's page with its TIA and PMD verdicts and what still blocks
    production; the counts cover the whole scope."""
    buf = io.BytesIO()
    doc = SimpleDocTemplate(
        buf,
        pagesize=landscape(A4),
        leftMargin=12 * mm,
        rightMargin=12 * mm,
        topMargin=12 * mm,
        bottomMargin=12 * mm,
        title="Commissioning report",
        author="cabletrack",
    )
    styles = getSampleStyleSheet()
    small = styles["BodyText"].clone("small", fontSize=7.5, leading=9)
    c = report["counts"]
    story = [
        Paragraph(f"Commissioning report: {_esc(report['scope'])}", styles["Title"]),
        Paragraph(
            f"Generated {report['generated_at']:%Y-%m-%d %H:%M} UTC. {c['links']} links: {c['ready']} ready, "
            f"{c['blocked']} blocked, {c['fail']} failing, {c['pmd_fail_tia_pass']} pass TIA-568.3 but fail their PMD.",
            styles["BodyText"],
        ),
    ]
    if report.get("pages", 1) > 1:
        first = (report["page"] - 1) * report["per_page"] + 1
        story.append(
            Paragraph(
                f"Links {first}-{first + len(report['links']) - 1} of {c['links']} "
                f"(page {report['page']} of {report['pages']}; a rack or row gives its own report).",
                styles["BodyText"],
            )
        )
    story.append(Spacer(1, 4 * mm))
    rows = [["Link", "PMD", "Segments (latest power meter)", "TIA", "PMD verdict", "Blocks production"]]
    for link in report["links"]:
        segs = ", ".join(
            f"{s['cable']} {s['olts']['verdict'] if s['olts'] else ('qual ' + s['qualification']['verdict'] if s['qualification'] else '-')}"
            for s in link["segments"]
        )
        tia = "no fibre" if link["qualified"] else link["tia_verdict"]
        pmd = f"link qualification {link['verdict']}" if link["qualified"] else link["pmd_verdict"]
        if link["channel_loss_db"] is not None:
            pmd += f" {link['channel_loss_db']:.2f}"
            if link["channel_limit_db"] is not None:
                pmd += f"/{link['channel_limit_db']:.2f} dB"
        if link["note"]:
            pmd += f"<br/>{_esc(link['note'])}"
        why = [*link["blockers"], *link.get("holds", [])]
        blockers = (
            "ready"
            if link["ready"]
            else "<br/>".join(_esc(b) for b in why) or "not ready: no passing verdict"
        )
        rows.append(
            [
                Paragraph(_esc(f"{link['a']} - {link['b']}"), small),
                Paragraph(_esc(link["pmd"] or "-"), small),
                Paragraph(_esc(segs), small),
                Paragraph(_esc(tia), small),
                Paragraph(pmd, small),
                Paragraph(blockers, small),
            ]
        )
    table = Table(rows, colWidths=[55 * mm, 25 * mm, 65 * mm, 15 * mm, 45 * mm, 68 * mm], repeatRows=1)
    style = [
        ("FONT", (0, 0), (-1, 0), "Helvetica-Bold", 8),
        ("GRID", (0, 0), (-1, -1), 0.25, colors.grey),
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#e8eef4")),
    ]
    for i, link in enumerate(report["links"], start=1):
        colour = VERDICT_COLOUR.get(link["verdict"])
        if colour is not None:
            style.append(("LINEBEFORE", (0, i), (0, i), 3, colour))
    table.setStyle(TableStyle(style))
    story.append(table)
    doc.build(story)
    return buf.getvalue()
