"""What a source of truth (NetBox or Nautobot) read returns: the snapshot and the error type."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class NetboxSnapshot:
    """Everything read from NetBox for one site, as the API returned it (dicts)."""

    source: str
    site: str
    objects: dict[str, list[dict]] = field(default_factory=dict)
    flavor: str = "netbox"  # or "nautobot" (read by ``core.interop.nautobot``, same shapes)

    def __getitem__(self, key: str) -> list[dict]:
        return self.objects.get(key, [])


class NetboxError(RuntimeError):
    pass
