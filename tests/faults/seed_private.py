"""Seed a private database for the PostgreSQL restart test (run as a separate process with
``DATABASE_URL`` pointing at the private cluster): roles and permissions (``migrate``'s
post-migrate hooks, the schema being there already), a collector with an ingest token, and a
switch with ports. Prints ``{"token": ..., "device": ..., "ports": [...]}`` as JSON."""

import json

import django

PLAN_PORTS = 80  # per device: 40 imports of 2 cables


def main() -> None:
    django.setup()
    from django.core.management import call_command

    from inventory.core.choices import TokenKind
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
    engineer = f.UserFactory(username="planner", role="engineer")
    plan_token = ApiToken.generate()
    ApiToken.objects.create(
        user=engineer,
        name="planner",
        kind=TokenKind.FULL,
        key_hash=hash_token(plan_token),
        prefix=plan_token[:8],
    )
    # Free ports for cable-plan imports: gpu-pg ethN <-> spine-pg Ethernet(N+1)/1.
    f.twin_port_device("gpu-pg", role="gpu_node", cages=PLAN_PORTS // 2, names=lambda c, k: f"eth{2 * c + k}")
    f.twin_port_device(
        "spine-pg", u=20, cages=PLAN_PORTS // 2, names=lambda c, k: f"Ethernet{2 * c + k + 1}/1"
    )
    print(
        json.dumps(
            {"token": raw, "plan_token": plan_token, "device": "leaf-pg", "ports": [p.name for p in ports]}
        )
    )


if __name__ == "__main__":
    main()
