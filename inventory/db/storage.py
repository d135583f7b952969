"""The upload storage (OTDR ``.sor`` files, inspection photos, staged imports): Django's file
system storage that leaves nothing behind when a write fails.

Django's ``FileSystemStorage`` writes a file chunk by chunk; when the disk fills (``ENOSPC``) or a
quota runs out (``EDQUOT``) part way, the partial file stays on disk under a name no row points
to. Here a failed write removes the file it created and raises :class:`StorageFull` (for a full
disk or quota) or the original ``OSError``; the request answers 507 (``middleware.failsafe``),
and the service that called ``save`` rolls its rows back as for any other error.
"""

from __future__ import annotations

import contextlib
import errno
import os

from django.core.files.storage import FileSystemStorage

FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


class StorageFull(OSError):
    """The upload storage has no room (disk full or quota exhausted); nothing was kept."""


def is_storage_full(exc: BaseException) -> bool:
    return isinstance(exc, StorageFull) or (isinstance(exc, OSError) and exc.errno in FULL_ERRNOS)


class UploadStorage(FileSystemStorage):
    def _save(self, name, content):
        full_path = self.path(name)
        existed = os.path.lexists(full_path)  # never remove a file this call did not create
        try:
            return super()._save(name, content)
        except FileExistsError:
            raise
        except OSError as exc:
            if not existed:
                with contextlib.suppress(FileNotFoundError):
                    os.remove(full_path)
            if exc.errno in FULL_ERRNOS:
                raise StorageFull(exc.errno, f"The upload storage is full: {exc.strerror}") from exc
            raise
