from django.apps import AppConfig
from django.db.backends.signals import connection_created
from django.db.models.signals import post_migrate


class InventoryConfig(AppConfig):
    name = "inventory"
    verbose_name = "Cable plant"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Imported here, not at the top: they load models, which exist only once the apps are ready.
        from inventory.access.roles import sync_roles
        from inventory.api import schema  # noqa: F401 - OpenAPI extension for the token scheme
        from inventory.db import (
            audit,  # noqa: F401 - connects the history signal
            lookups,  # noqa: F401 - registers field__any
        )
        from inventory.db.timestamps import c_timestamps

        connection_created.connect(c_timestamps, dispatch_uid="inventory.c_timestamps")

        post_migrate.connect(sync_roles, sender=self, dispatch_uid="inventory.sync_roles")
