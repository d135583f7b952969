"""Desk list helpers shared by the cable and module lists: paging, sort headers, CSV streaming."""

from __future__ import annotations

from django.http import StreamingHttpResponse
from django.utils.http import url_has_allowed_host_and_scheme

from inventory.core import csvsafe
from inventory.selectors import paging

MAX_PAGE_SIZE = 500


def _page(request, qs):
    """A page of ``qs``; the count stops at ``DESK_COUNT_CAP`` rows (``paginator.count_exact``)."""
    try:
        size = int(request.GET.get("per_page", 50))
    except ValueError:
        size = 50
    size = min(max(size, 1), MAX_PAGE_SIZE)
    return paging.BoundedPaginator(qs, size, cap=paging.DESK_COUNT_CAP).get_page(request.GET.get("page"))


def _query_without(request, *keys) -> str:
    q = request.GET.copy()
    for k in keys:
        q.pop(k, None)
    return q.urlencode()


def _columns(request, sort: str, columns: list[tuple[str, str | None]]) -> list[dict]:
    """Table headers: a sort link per sortable column, flipping direction on the active one."""
    base = _query_without(request, "page", "sort")
    out = []
    for title, key in columns:
        col = {"title": title, "url": None, "dir": ""}
        if key:
            active = sort.lstrip("-") == key
            desc = sort.startswith("-")
            target = f"-{key}" if active and not desc else key
            col["url"] = f"?{base}&sort={target}" if base else f"?sort={target}"
            col["dir"] = ("desc" if desc else "asc") if active else ""
        out.append(col)
    return out


class _Echo:
    def write(self, value):
        return value


def _csv_response(filename: str, header: list[str], rows) -> StreamingHttpResponse:
    writer = csvsafe.writer(_Echo())

    def stream():
        yield writer.writerow(header)
        for row in rows:
            yield writer.writerow(row)

    resp = StreamingHttpResponse(stream(), content_type="text/csv; charset=utf-8")
    resp["Content-Disposition"] = f'attachment; filename="{filename}"'
    return resp


def _safe_next(request, default: str) -> str:
    nxt = request.POST.get("next") or request.GET.get("next") or ""
    ok = url_has_allowed_host_and_scheme(
        nxt, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return nxt if nxt and ok else default


def _filtered(filterset):
    """The FilterSet's rows; none at all when its input is bad (the errors are shown instead)."""
    if filterset.is_bound and not filterset.is_valid():
        return filterset.queryset.none()
    return filterset.qs
