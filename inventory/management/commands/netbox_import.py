import json

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from inventory.conf import app_settings
from inventory.core.interop.netbox import FLAVORS, NetboxError, source_fetch
from inventory.services.interop.netbox import netbox_import, sync_run_record


class Command(BaseCommand):
    help = (
        "Import one NetBox site or Nautobot location (dry run unless --apply): "
        "sites, racks, devices, ports, modules, cables."
    )

    def add_arguments(self, parser):
        parser.add_argument("--url", default=app_settings.netbox_url)
        parser.add_argument("--token", default=app_settings.netbox_token)
        parser.add_argument("--site", required=True, help="NetBox site slug, or Nautobot location name")
        parser.add_argument(
            "--flavor",
            choices=FLAVORS,
            default=app_settings.netbox_flavor,
            help="The source system (default: CABLETRACK_NETBOX_FLAVOR, else netbox)",
        )
        parser.add_argument(
            "--apply", action="store_true", help="Write (in one transaction); default is a dry run"
        )
        parser.add_argument("--json", action="store_true", help="Print the full report as JSON")

    def handle(self, *args, url, token, site, apply, flavor, **options):
        if not url or not token:
            raise CommandError(
                "Give --url and --token (or set CABLETRACK_NETBOX_URL / CABLETRACK_NETBOX_TOKEN)."
            )
        try:
            started = timezone.now()
            snapshot = source_fetch(url=url, token=token, site=site, flavor=flavor)
            plan = netbox_import(snapshot=snapshot, dry_run=not apply)
            if apply:
                sync_run_record(snapshot=snapshot, plan=plan, started_at=started)
        except NetboxError as exc:
            raise CommandError(str(exc)) from exc
        report = plan.as_dict()
        if options["json"]:
            self.stdout.write(_json(report))
            return
        self.stdout.write(f"{'Applied' if apply else 'Dry run'}: {site} from {url}")
        for kind, actions in report["summary"].items():
            self.stdout.write(f"  {kind:<12} " + ", ".join(f"{n} {a}" for a, n in sorted(actions.items())))
        for c in report["conflicts"]:
            detail = c["detail"].get("message", "") if isinstance(c["detail"], dict) else c["detail"]
            self.stdout.write(self.style.WARNING(f"  CONFLICT {c['kind']} {c['key']}: {detail}"))
        if apply and report["conflicts"]:
            self.stdout.write("  Resolve them at /sync/conflicts/ (or POST /api/sync/conflicts/).")


def _json(obj) -> str:
    return json.dumps(obj, indent=2, default=str)
