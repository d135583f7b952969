"""Where a web request reads: the replica for a read-only request whose client's own writes the
replica has replayed, the primary otherwise (``inventory.db.replica``)."""

from __future__ import annotations

import re

from django.conf import settings

from inventory.db import replica

COOKIE = "ct_wal"
_LSN = re.compile(r"^[0-9A-F]{1,8}/[0-9A-F]{1,8}$")
SAFE = ("GET", "HEAD", "OPTIONS")


class ReplicaReadsMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not replica.replica_configured():
            return self.get_response(request)
        if request.method not in SAFE:
            response = self.get_response(request)
            if response.status_code < 400:
                self._remember_position(response)
            return response
        position = request.COOKIES.get(COOKIE, "")
        position = position if _LSN.match(position) else None
        alias = replica.REPLICA if replica.replica_has_replayed(position) else replica.PRIMARY
        with replica.reads_from(alias):
            response = self.get_response(request)
        if position and alias == replica.REPLICA:
            response.delete_cookie(COOKIE)  # the replica has the client's writes: no more waiting
        return response

    @staticmethod
    def _remember_position(response) -> None:
        response.set_cookie(
            COOKIE,
            replica.primary_position() or "",
            max_age=600,
            httponly=True,
            samesite="Lax",
            secure=settings.SESSION_COOKIE_SECURE,
        )
