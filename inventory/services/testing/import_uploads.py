"""Tester exports held between the import page's preview and its apply step.

The page previews an upload (column mapping, matched cables) before anything is written, so the
file must outlive that request: it is kept under ``imports/<token>`` in the upload storage. An
apply deletes it; a new upload in the same flow replaces it; whatever a preview left (the user
never applied) is purged after ``UPLOAD_TTL`` by the periodic ``import_uploads_purge`` task.
"""

from __future__ import annotations

import re
import uuid
from datetime import datetime, timedelta

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.utils import timezone

UPLOAD_DIR = "imports"
UPLOAD_TTL = timedelta(hours=2)
TOKEN = re.compile(r"^[0-9a-f]{32}\.(zip|sor|csv)$")


def import_upload_save(*, data: bytes, ext: str, replaces: str = "") -> str:
    """Keep ``data`` for the apply step; returns its token. ``replaces``: the flow's earlier token."""
    import_upload_delete(token=replaces)
    token = f"{uuid.uuid4().hex}.{ext}"
    default_storage.save(f"{UPLOAD_DIR}/{token}", ContentFile(data))
    return token


def import_upload_read(*, token: str) -> bytes | None:
    """The kept file, or None (unknown, malformed or purged token)."""
    if not TOKEN.match(token or "") or not default_storage.exists(f"{UPLOAD_DIR}/{token}"):
        return None
    with default_storage.open(f"{UPLOAD_DIR}/{token}", "rb") as fh:
        return fh.read()


def import_upload_delete(*, token: str) -> None:
    if TOKEN.match(token or ""):
        default_storage.delete(f"{UPLOAD_DIR}/{token}")


def import_uploads_purge(*, now: datetime | None = None) -> int:
    """Delete kept uploads older than ``UPLOAD_TTL`` (previews never applied); returns how many."""
    cutoff = (now or timezone.now()) - UPLOAD_TTL
    try:
        _, names = default_storage.listdir(UPLOAD_DIR)
    except FileNotFoundError:
        return 0
    purged = 0
    for name in names:
        path = f"{UPLOAD_DIR}/{name}"
        if TOKEN.match(name) and default_storage.get_modified_time(path) < cutoff:
            default_storage.delete(path)
            purged += 1
    return purged
