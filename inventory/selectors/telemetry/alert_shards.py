"""Which alert shard a port belongs to: the one decision every sharded evaluation reads.

With ``CABLETRACK_ALERT_SHARDS`` above 1 the alert rules run as that many tasks, each over its
own part of the reporting ports, side by side on the workers. A rule over a link reads both its
ends (which end sends the PFC pauses, which receiver sees the errors, whether the far end
reports at all), so ports joined by active links (a link's ends, a port broken out to several
links) go where the lowest port id among them goes; any other port goes by its own id modulo
the count. Everything else a rule reads (the plant, the neighbour a port's LLDP names, the
baselines) is read whole or by port, so the parts are independent and their alerts are exactly
the alerts of one run over every port.

Only the linked ports whose own-id shard differs from their anchor's move, so a shard is its
index, the count, and two lists: the ports it takes from other shards and those it gives away.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.db import connection

from inventory.conf import app_settings
from inventory.db.lookups import IdArray
from inventory.models import Link


def alert_shards() -> int:
    return app_settings.alert_shards


@dataclass(frozen=True)
class AlertShard:
    index: int
    count: int
    moved_in: np.ndarray  # sorted port ids of other port-id shards that belong here
    moved_out: np.ndarray  # sorted port ids of this port-id shard that belong elsewhere

    @classmethod
    def of(cls, index: int, count: int) -> AlertShard:
        """Shard ``index`` of ``count``, from the active links as they are now (one read of two
        columns)."""
        if not 0 <= index < count:
            raise ValueError(f"alert shard {index} is not one of 0..{count - 1}")
        ends = np.array(
            Link.objects.filter(active=True).values_list("a_port_id", "b_port_id").order_by(), dtype=np.int64
        ).reshape(-1, 2)
        ports, anchor = _anchors(ends)
        moves = (ports % count) != (anchor % count)
        ports, anchor = ports[moves], anchor[moves]
        return cls(
            index=index,
            count=count,
            moved_in=ports[anchor % count == index],
            moved_out=ports[ports % count == index],
        )

    def mask(self, port_ids: np.ndarray) -> np.ndarray:
        """Which of ``port_ids`` belong to this shard."""
        port_ids = np.asarray(port_ids, dtype=np.int64)
        own = (port_ids % self.count == self.index) & ~np.isin(port_ids, self.moved_out)
        return own | np.isin(port_ids, self.moved_in)

    def sql(self, column: str) -> tuple[str, list]:
        """The same test as a PostgreSQL condition on ``column`` (a port id), with its
        parameters: two ``bigint[]`` (``IdArray``), so the condition is one hashed look-up a row."""
        if connection.vendor != "postgresql":
            raise NotImplementedError("the shard condition is PostgreSQL's; elsewhere use mask()")
        return (
            f"(({column} %% %s = %s AND NOT {column} = ANY(%s)) OR {column} = ANY(%s))",
            [self.count, self.index, IdArray(self.moved_out.tolist()), IdArray(self.moved_in.tolist())],
        )


def _anchors(ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every port on an active link (sorted) and its anchor: the lowest port id of the ports
    joined to it by links. A link's two ends are joined; so are the far ends of a port broken out
    to several links, and any chain of them, whatever their order."""
    if not ends.size:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    from scipy.sparse import coo_matrix  # noqa: PLC0415 - the workers' evaluation only
    from scipy.sparse.csgraph import connected_components  # noqa: PLC0415

    ports, idx = np.unique(ends, return_inverse=True)
    idx = idx.reshape(-1, 2)
    graph = coo_matrix((np.ones(len(idx), np.int8), (idx[:, 0], idx[:, 1])), shape=(len(ports),) * 2)
    _, label = connected_components(graph, directed=False)
    lowest = np.full(label.max() + 1, np.iinfo(np.int64).max, np.int64)
    np.minimum.at(lowest, label, ports)
    return ports, lowest[label]
