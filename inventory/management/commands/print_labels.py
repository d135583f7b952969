"""Label files from the command line: ``print_labels --rack R01 --output labels.pdf``."""

from __future__ import annotations

import sys
from datetime import datetime, time
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from inventory.core.choices import LabelKind
from inventory.core.labels import FORMATS, STOCKS
from inventory.selectors.labels.facts import LabelSelection
from inventory.services.labels import printing as label_services


def _when(value: str) -> datetime:
    dt = parse_datetime(value)
    if dt is None:
        d = parse_date(value)
        if d is None:
            raise CommandError(f"--changed-since: {value!r} is not a date (YYYY-MM-DD) or an ISO date-time.")
        dt = datetime.combine(d, time.min)
    return dt if timezone.is_aware(dt) else timezone.make_aware(dt)


def _split(values: list[str] | None) -> tuple[str, ...]:
    out: list[str] = []
    for v in values or []:
        out += [p for p in v.replace(",", " ").split() if p]
    return tuple(dict.fromkeys(out))


class Command(BaseCommand):
    help = (
        "Render cable (or rack) labels to a PDF or ZPL file. Selections add up: --rack, --row, "
        "--cables; --changed-since narrows them or, alone, selects every cable changed since then."
    )

    def add_arguments(self, parser):
        parser.add_argument("--rack", action="append", help="Rack name (repeat or comma-separate)")
        parser.add_argument("--row", action="append", help="Row: id, Row, Room/Row or Site/Room/Row")
        parser.add_argument("--cables", action="append", help="Cable labels or ids, comma-separated")
        parser.add_argument("--changed-since", help="YYYY-MM-DD or ISO date-time")
        parser.add_argument(
            "--stock", choices=sorted(STOCKS), help="Label stock (default flag; rack for --rack-label)"
        )
        parser.add_argument(
            "--format", dest="fmt", choices=FORMATS, default=None, help="pdf (default) or zpl"
        )
        parser.add_argument(
            "--rack-label", action="store_true", help="Rack labels for the --rack/--row racks"
        )
        parser.add_argument("--output", "-o", required=True, help="Output file, or - for standard output")

    def handle(self, *args, **opts):
        output = opts["output"]
        fmt = opts["fmt"] or ("zpl" if output.lower().endswith(".zpl") else "pdf")
        selection = LabelSelection(
            cables=_split(opts["cables"]),
            racks=_split(opts["rack"]),
            rows=tuple(r.strip() for v in opts["row"] or [] for r in v.split(",") if r.strip()),
            changed_since=_when(opts["changed_since"]) if opts["changed_since"] else None,
        )
        kind = LabelKind.RACK if opts["rack_label"] else LabelKind.CABLE
        try:
            plan = label_services.labels_plan(
                selection=selection, kind=kind, stock=opts["stock"] or "", fmt=fmt
            )
        except ValidationError as exc:
            raise CommandError(
                "; ".join(
                    f"{k}: {' '.join(v)}" if k != "__all__" else " ".join(v)
                    for k, v in exc.message_dict.items()
                )
            ) from exc
        out = label_services.labels_render(plan=plan, now=timezone.now())
        if output == "-":
            sys.stdout.buffer.write(out.content)
            sys.stdout.buffer.flush()
        else:
            Path(output).write_bytes(out.content)
            self.stderr.write(f"{out.count} labels ({plan.stock}, {plan.fmt}) written to {output}")
