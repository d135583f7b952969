"""Who the client is, and whether it came over HTTPS: believed only from configured proxies.

``CABLETRACK_TRUSTED_PROXIES`` lists the reverse proxies (addresses or CIDRs) in front of gunicorn.
A request whose peer (``REMOTE_ADDR``) is one of them has its client address taken from
``X-Forwarded-For`` (the right-most address that is not itself a trusted proxy) and keeps its
``X-Forwarded-Proto`` (read by Django's ``SECURE_PROXY_SSL_HEADER``). A trusted proxy's
``X-Forwarded-For`` that is not a list of addresses (garbled, or with an empty hop) is refused
with a 400: guessing (the proxy's own address) would give every such request one shared throttle
bucket, or a fresh one per trick. From any other peer those
headers are dropped before anything reads them, so a client cannot claim another address (to dodge
the login throttle or pass the ``/metrics`` network check) or claim HTTPS.

Kept first in ``MIDDLEWARE``: everything after it (SecurityMiddleware, axes, ``/metrics``) sees
``REMOTE_ADDR`` as the client and a ``X-Forwarded-Proto`` that a trusted proxy set.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache

from django.http import HttpResponseBadRequest

from inventory.conf import app_settings

FORWARDED_HEADERS = (
    "HTTP_X_FORWARDED_FOR",
    "HTTP_X_FORWARDED_PROTO",
    "HTTP_X_FORWARDED_HOST",
    "HTTP_FORWARDED",
)


@lru_cache(maxsize=8)
def _networks(proxies: tuple[str, ...]) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(p.strip(), strict=False) for p in proxies if p.strip())


def _address(text: str):
    try:
        return ipaddress.ip_address(text.strip())
    except ValueError:
        return None


def _trusted(addr, networks) -> bool:
    return addr is not None and any(addr in net for net in networks)


class GarbledForwardedFor(ValueError):
    """A trusted proxy sent an ``X-Forwarded-For`` that is not a list of addresses."""


def forwarded_client(meta, networks) -> str | None:
    """The client a trusted proxy names in ``X-Forwarded-For``: the right-most hop that is not
    itself a trusted proxy (each proxy appends the peer it saw). None: no header (keep
    ``REMOTE_ADDR``: the proxy's own request, a health check). A header that is there but not a
    comma-separated list of addresses raises :class:`GarbledForwardedFor`."""
    header = meta.get("HTTP_X_FORWARDED_FOR")
    if header is None:
        return None
    hops = header.split(",")
    addrs = [_address(h) for h in hops]
    if None in addrs:
        raise GarbledForwardedFor(header)
    for addr in reversed(addrs):
        if not _trusted(addr, networks):
            return str(addr)
    return str(addrs[0])


class TrustedProxyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        meta = request.META
        networks = _networks(tuple(app_settings.trusted_proxies))
        if _trusted(_address(meta.get("REMOTE_ADDR", "")), networks):
            try:
                client = forwarded_client(meta, networks)
            except GarbledForwardedFor:
                return HttpResponseBadRequest(
                    "X-Forwarded-For from the proxy is not a list of addresses; the client is unknown.",
                    content_type="text/plain; charset=utf-8",
                )
            if client is not None:
                meta["REMOTE_ADDR"] = client
        else:
            for header in FORWARDED_HEADERS:
                meta.pop(header, None)
        return self.get_response(request)


def client_ip(request) -> str:
    """The client address for the login throttle (axes): ``REMOTE_ADDR`` as this middleware set it."""
    return request.META.get("REMOTE_ADDR", "")
