"""The web process's database sessions (gunicorn and ``runserver``, through ``cabletrack.wsgi``).

Pages read a few rows each through index probes, in milliseconds. On tables of hundreds of
thousands of rows PostgreSQL's planner still picks a parallel plan for some of them (a merge
join over an index it expects to leave early, a history read it expects to return thousands of
rows), and starting the workers costs more than the read: at 131,072 GPUs a network rack's
ends took 17-27 ms with two workers and 4.6-5.0 ms with none (its page 90 -> 52-63 ms in
process), and under load the workers take the cores the other requests need. So web sessions
run with ``CABLETRACK_WEB_PARALLEL_WORKERS`` (0) parallel workers per query; Celery workers
and management commands, whose sweeps and reports read whole tables, keep the server's setting.
"""

from __future__ import annotations

from inventory.conf import app_settings


def web_session(sender, connection, **kwargs) -> None:
    """``connection_created`` receiver: set the web session's parallel workers (PostgreSQL)."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cur:
        cur.execute(
            "SELECT set_config('max_parallel_workers_per_gather', %s, false)",
            [str(app_settings.web_parallel_workers)],
        )
