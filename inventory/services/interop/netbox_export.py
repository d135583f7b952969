"""Cabletrack's view of imported cables written back to NetBox (or Nautobot) custom fields."""

from __future__ import annotations

import requests

from inventory.core.interop.clients import api_client
from inventory.core.interop.snapshot import NetboxError
from inventory.models import Cable, ExternalRef


def netbox_export(*, url: str, token: str, site: str | None = None, flavor: str = "netbox") -> int:
    """Write labels, statuses and retest due dates into custom fields on the NetBox cables.

    Only cables that came from (or were matched to) that NetBox (or Nautobot, with
    ``flavor="nautobot"``) are written, in one bulk PATCH per 500 cables. The custom fields
    ``cabletrack_label``, ``cabletrack_status`` and ``cabletrack_retest_due`` must exist on
    ``dcim.cable`` there.
    """
    name = "Nautobot" if flavor == "nautobot" else "NetBox"
    source = f"{flavor}:{url.rstrip('/')}"
    refs = dict(
        ExternalRef.objects.filter(source=source, kind="cable").values_list("object_id", "external_id")
    )
    cables = Cable.objects.filter(pk__in=refs).values("pk", "label", "status", "retest_due")
    payload = [
        {
            "id": int(refs[c["pk"]]) if flavor == "netbox" else refs[c["pk"]],
            "custom_fields": {
                "cabletrack_label": c["label"],
                "cabletrack_status": c["status"],
                "cabletrack_retest_due": c["retest_due"].isoformat() if c["retest_due"] else None,
            },
        }
        for c in cables
    ]
    if flavor == "nautobot":
        client = api_client("nautobot")
        api = client.api(url.rstrip("/"), token=token, api_version="2.3")
        update = api.dcim.cables.bulk_update
    else:
        client = api_client("netbox")
        api = client.api(url.rstrip("/"), token=token, threading=False)
        update = api.dcim.cables.update
    try:
        for i in range(0, len(payload), 500):
            update(payload[i : i + 500])
    except client.RequestError as exc:
        raise NetboxError(f"{name} refused the update: {exc.req.status_code} {exc.error}") from exc
    except requests.RequestException as exc:
        raise NetboxError(f"{name} at {url} is not reachable: {exc}") from exc
    return len(payload)
