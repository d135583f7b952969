"""The Django admin: importing each module registers its ModelAdmins (Django autodiscovers this package)."""

from inventory.admin import plant, retests  # noqa: F401
