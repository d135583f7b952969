"""The Django admin: importing each module registers its ModelAdmins (Django autodiscovers this package)."""

from inventory.admin import accounts, plant, retests  # noqa: F401
