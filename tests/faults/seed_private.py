"""Seed a private database for the PostgreSQL restart test (run as a separate process with
``DATABASE_URL`` pointing at the private cluster): roles and permissions (``migrate``'s
post-migrate hooks, the schema being there already), a collector with an ingest token, and a
switch with ports. Prints ``{"token": ..., "device": ..., "ports": [...]}`` as JSON."""

import json

import django


def main() -> None:
    django.setup()
    from django.core.management import call_command

    from inventory.choices import TokenKind
    from inventory.models import ApiToken
    from inventory.models.accounts import hash_token
    from tests import factories as f

    call_command("migrate", verbosity=0)
    user = f.UserFactory(username="collector", role="collector")
    raw = ApiToken.generate()
    ApiToken.objects.create(
        user=user, name="collector", kind=TokenKind.INGEST, key_hash=hash_token(raw), prefix=raw[:8]
    )
    _, ports = f.twin_port_device("leaf-pg", cages=2, with_modules=False)
    print(json.dumps({"token": raw, "device": "leaf-pg", "ports": [p.name for p in ports]}))


if __name__ == "__main__":
    main()
