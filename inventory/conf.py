"""The CABLETRACK_* settings, typed: ``app_settings.<name>`` is what the code reads.

Every default lives once, in ``cabletrack/settings.py`` (with the environment variable that sets
it); this module has no defaults of its own. Each attribute reads ``django.conf.settings`` at call
time, so pytest-django's ``settings`` fixture and ``override_settings`` keep working. A setting
missing from ``settings.py`` is an AttributeError, never a silent fallback.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, overload

from django.conf import settings

T = TypeVar("T")


class Setting(Generic[T]):
    """One CABLETRACK_* setting: its name in ``settings.py`` and what it means."""

    def __init__(self, name: str, doc: str) -> None:
        self.name = name
        self.__doc__ = doc

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Setting[T]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...
    def __get__(self, obj: object | None, owner: type | None = None) -> Setting[T] | T:
        if obj is None:
            return self
        return getattr(settings, self.name)

    def __set__(self, obj: object, value: Any) -> None:
        raise AttributeError(f"{self.name} is a Django setting: override it with the settings fixture.")


class AppSettings:
    """The CABLETRACK_* settings, one typed attribute each (see README, "Configuration")."""

    # --- Site, request bodies, imports ---------------------------------------------------------
    base_url = Setting[str](
        "CABLETRACK_BASE_URL",
        "Absolute URL printed in QR codes and mails; never guessed from a request. `make run ADDR=host:port` (`runstack --addr`) sets it to `http://<ADDR>` unless it is set.",
    )
    max_import_bytes = Setting[int](
        "CABLETRACK_MAX_IMPORT_BYTES",
        "Cap on import request bodies and files (cable plans, tester exports, telemetry).",
    )
    max_body_bytes = Setting[int](
        "CABLETRACK_MAX_BODY_BYTES",
        "Cap on other JSON and form request bodies: 413 past it, before any read.",
    )
    max_upload_bytes = Setting[int](
        "CABLETRACK_MAX_UPLOAD_BYTES", "Cap on multipart (file upload) request bodies."
    )
    body_limits = Setting[dict[str, int]](
        "CABLETRACK_BODY_LIMITS", "Path prefix -> body cap for the bulk endpoints (telemetry and imports)."
    )
    idempotency_ttl_hours = Setting[int](
        "CABLETRACK_IDEMPOTENCY_TTL_HOURS", "Idempotency keys are kept this many hours, then purged."
    )
    require_if_match = Setting[bool](
        "CABLETRACK_REQUIRE_IF_MATCH",
        "API writes without `If-Match` get a 428 instead of writing unconditionally.",
    )

    # --- Domain defaults --------------------------------------------------------------------------
    retest_interval_days = Setting[int]("CABLETRACK_RETEST_INTERVAL_DAYS", "Default retest interval (days).")
    annual_failure_rate = Setting[float](
        "CABLETRACK_ANNUAL_FAILURE_RATE", "Forecasting prior (failures per module-year)."
    )

    # --- Telemetry --------------------------------------------------------------------------------
    telemetry_max_body_bytes = Setting[int](
        "CABLETRACK_TELEMETRY_MAX_BODY_BYTES", "Cap on a `POST /api/telemetry/` body (after gzip)."
    )
    telemetry_max_samples = Setting[int](
        "CABLETRACK_TELEMETRY_MAX_SAMPLES", "Most samples in one telemetry request."
    )
    telemetry_max_future_seconds = Setting[int](
        "CABLETRACK_TELEMETRY_MAX_FUTURE_SECONDS",
        "Samples stamped further ahead are refused (clock skew allowance).",
    )
    telemetry_rollup_seconds = Setting[int](
        "CABLETRACK_TELEMETRY_ROLLUP_SECONDS", "Width of a PortRollup bucket (s)."
    )
    telemetry_rollup_batch_ports = Setting[int](
        "CABLETRACK_TELEMETRY_ROLLUP_BATCH_PORTS", "Ports recomputed per rollup chunk."
    )
    telemetry_raw_retention_days = Setting[int](
        "CABLETRACK_TELEMETRY_RAW_RETENTION_DAYS", "Raw telemetry samples are kept this many days."
    )
    telemetry_rollup_retention_days = Setting[int](
        "CABLETRACK_TELEMETRY_ROLLUP_RETENTION_DAYS", "Rollups are kept this many days."
    )
    telemetry_rollup_debounce_seconds = Setting[int](
        "CABLETRACK_TELEMETRY_ROLLUP_DEBOUNCE_SECONDS",
        "At most one rollup kick per this many seconds of ingest.",
    )
    telemetry_rollup_lookback_seconds = Setting[int](
        "CABLETRACK_TELEMETRY_ROLLUP_LOOKBACK_SECONDS",
        "How far back a rollup looks for the sample before a bucket's first interval (s).",
    )
    telemetry_rollup_max_batches = Setting[int](
        "CABLETRACK_TELEMETRY_ROLLUP_MAX_BATCHES",
        "Queue batches one rollup task takes before it re-enqueues itself.",
    )
    telemetry_rollup_shards = Setting[int](
        "CABLETRACK_TELEMETRY_ROLLUP_SHARDS",
        "Ports are rolled up in this many shards (port id modulo it), each by one task at a time, side by side on the workers; one per core the workers have (1 to 64).",
    )
    telemetry_rollup_retry_seconds = Setting[int](
        "CABLETRACK_TELEMETRY_ROLLUP_RETRY_SECONDS",
        "A port whose rollup failed is set aside and tried again after this long, doubled per failure.",
    )
    telemetry_rollup_retry_max_seconds = Setting[int](
        "CABLETRACK_TELEMETRY_ROLLUP_RETRY_MAX_SECONDS",
        "The longest wait between two tries of a set-aside port.",
    )

    # --- Alerts, /metrics ---------------------------------------------------------------------------
    alert_rules = Setting[dict[str, Any]](
        "CABLETRACK_ALERT_RULES",
        "Rule thresholds: a preset with per link class / PMD overrides (JSON; see Alerts).",
    )
    alert_every_s = Setting[float](
        "CABLETRACK_ALERT_EVERY_S", "S between two runs of the alert rules (beat)."
    )
    alert_lookback_s = Setting[float](
        "CABLETRACK_ALERT_LOOKBACK_S",
        "S of `PortRollup` the rules (and `/metrics`) read: the longest rule window.",
    )
    alert_shards = Setting[int](
        "CABLETRACK_ALERT_SHARDS",
        "The alert rules run as this many tasks side by side on the workers, each over its part of the reporting ports (a link's ends always in one part); 1 runs them as one task (1 to 64).",
    )
    alert_bucket_s = Setting[float](
        "CABLETRACK_ALERT_BUCKET_S", "The rules' bucket width (s): the telemetry rollup width."
    )
    alert_reopen_s = Setting[float](
        "CABLETRACK_ALERT_REOPEN_S",
        "An alert whose condition returns within this many seconds of resolving is reopened, not re-mailed.",
    )
    repair_hold_hours = Setting[float](
        "CABLETRACK_REPAIR_HOLD_HOURS",
        'A repair is judged "fixed" once its alert resolved (the rule\'s clean window held after the repair) and stayed clean this many hours; "came back" if the alert fires again or reopens first.',
    )
    drain_hours = Setting[float](
        "CABLETRACK_DRAIN_HOURS",
        "A link drained from an alert (`POST /api/alerts/<id>/drain/`, the alert page's Drain) is in a maintenance window this many hours unless the drain gives its planned end; restoring it ends the window.",
    )
    baseline_refresh_s = Setting[float](
        "CABLETRACK_BASELINE_REFRESH_S", "S between two refreshes of a port's baseline."
    )
    baseline_weight = Setting[float](
        "CABLETRACK_BASELINE_WEIGHT", "How far a refresh moves a port's baseline towards the latest window."
    )
    web_parallel_workers = Setting[int](
        "CABLETRACK_WEB_PARALLEL_WORKERS",
        "PostgreSQL parallel workers per query in the web process (gunicorn, `runserver`); workers and commands keep the server's setting. Pages read by index probes, which a parallel plan's worker start-up (5-15 ms) only slows.",
    )
    metrics_token = Setting[str]("CABLETRACK_METRICS_TOKEN", "Bearer token that may scrape `/metrics`.")
    metrics_networks = Setting[list[str]](
        "CABLETRACK_METRICS_NETWORKS",
        "Source networks (CIDRs) that may scrape `/metrics`; neither set: 404 to everyone.",
    )
    metrics_max_links = Setting[int](
        "CABLETRACK_METRICS_MAX_LINKS",
        "`/metrics` exports FEC gauges for at most this many links, worst pre-FEC BER first.",
    )

    # --- NetBox / Nautobot, Prometheus ---------------------------------------------------------------
    netbox_url = Setting[str](
        "CABLETRACK_NETBOX_URL", "NetBox / Nautobot API; with a URL, beat syncs hourly."
    )
    netbox_token = Setting[str](
        "CABLETRACK_NETBOX_TOKEN", "NetBox / Nautobot API; with a URL, beat syncs hourly."
    )
    netbox_sites = Setting[list[str]](
        "CABLETRACK_NETBOX_SITES", "Comma-separated site slugs (Nautobot: location names) to sync."
    )
    netbox_field_owners = Setting[dict[str, str]](
        "CABLETRACK_NETBOX_FIELD_OWNERS",
        "Per-field owner overrides for the sync (netbox, cabletrack or both); empty: the defaults.",
    )
    netbox_flavor = Setting[str]("CABLETRACK_NETBOX_FLAVOR", '"netbox" (4.x) or "nautobot" (2.x/3.x).')
    prometheus_url = Setting[str](
        "CABLETRACK_PROMETHEUS_URL",
        "Prometheus to pull FEC/DOM/PFC series from; with a URL, beat pulls every 5 min.",
    )
    prometheus_mapping = Setting[dict[str, Any]](
        "CABLETRACK_PROMETHEUS_MAPPING", "A site's series names mapped onto the telemetry vocabulary (JSON)."
    )
    prometheus_window_seconds = Setting[int](
        "CABLETRACK_PROMETHEUS_WINDOW_SECONDS", "History one pull reads, and its query resolution."
    )
    prometheus_step_seconds = Setting[int](
        "CABLETRACK_PROMETHEUS_STEP_SECONDS", "History one pull reads, and its query resolution."
    )

    # --- Tests and loss budgets ------------------------------------------------------------------------
    sor_max_bytes = Setting[int]("CABLETRACK_SOR_MAX_BYTES", "Cap on an uploaded OTDR (`.sor`) file.")
    photo_max_bytes = Setting[int](
        "CABLETRACK_PHOTO_MAX_BYTES", "Cap on an uploaded end-face inspection photo."
    )
    loss_increase_db = Setting[float](
        "CABLETRACK_LOSS_INCREASE_DB",
        "A retest whose loss rose this much (dB) over the baseline opens a `loss_increase` alert.",
    )
    marginal_db = Setting[float](
        "CABLETRACK_MARGINAL_DB", "A margin under this (dB) is marginal: passes, one dirty end from failing."
    )
    test_date_floor = Setting[str](
        "CABLETRACK_TEST_DATE_FLOOR",
        "Earliest test date accepted for a cable without an install date (with one: the install date), "
        "and the earliest install date a cable may be given.",
    )
    test_max_future_seconds = Setting[int](
        "CABLETRACK_TEST_MAX_FUTURE_SECONDS",
        "How far ahead of now a test may be dated (a phone in another time zone).",
    )
    otdr_min_length_m = Setting[float](
        "CABLETRACK_OTDR_MIN_LENGTH_M",
        "Fibre runs at least this long (m) need an OTDR trace (the dead zone).",
    )
    otdr_length_tolerance_pct = Setting[float](
        "CABLETRACK_OTDR_LENGTH_TOLERANCE_PCT",
        "A trace's fibre end may differ from the cable's recorded length by this share (group index, cable lay), plus 1 m and one sample spacing (event location) and the leads.",
    )
    otdr_leads_m = Setting[float](
        "CABLETRACK_OTDR_LEADS_M",
        "Launch plus receive leads (m) your testers leave in a trace (0: the OTDR subtracts them).",
    )
    ber_soak_minutes = Setting[int](
        "CABLETRACK_BER_SOAK_MINUTES", "Shortest BER soak a link qualification accepts (minutes)."
    )

    # --- Labels -------------------------------------------------------------------------------------
    labels_inline_max = Setting[int](
        "CABLETRACK_LABELS_INLINE_MAX",
        "Up to this many labels render in the request; more go to a background batch.",
    )

    # --- Retests and reminders -------------------------------------------------------------------------
    retest_shorten_days = Setting[int](
        "CABLETRACK_RETEST_SHORTEN_DAYS",
        "Retest within this after a failure, fault, re-seat or loss increase.",
    )
    retest_new_install_days = Setting[int](
        "CABLETRACK_RETEST_NEW_INSTALL_DAYS", "A new cable is due this many days after install."
    )
    retest_remind_days = Setting[int]("CABLETRACK_RETEST_REMIND_DAYS", 'The "due soon" window (days).')
    retest_escalate_days = Setting[int](
        "CABLETRACK_RETEST_ESCALATE_DAYS", "Overdue past this many days: the team lead is mailed too."
    )
    retest_accept_telemetry = Setting[bool](
        "CABLETRACK_RETEST_ACCEPT_TELEMETRY",
        "Default for sites without a policy: clean telemetry counts as a retest.",
    )
    retest_sweep_hour = Setting[int]("CABLETRACK_RETEST_SWEEP_HOUR", "Hour (UTC) of the daily retest sweep.")
    reminder_lease_seconds = Setting[int](
        "CABLETRACK_REMINDER_LEASE_SECONDS", "A reminder sender silent this long is presumed dead."
    )
    reminder_retry_base_seconds = Setting[int](
        "CABLETRACK_REMINDER_RETRY_BASE_SECONDS",
        "SMTP retry backoff (reminder digests, alert and fault notices): first delay (doubling), longest delay.",
    )
    reminder_retry_max_seconds = Setting[int](
        "CABLETRACK_REMINDER_RETRY_MAX_SECONDS",
        "SMTP retry backoff (reminder digests, alert and fault notices): first delay (doubling), longest delay.",
    )
    reminder_max_attempts = Setting[int](
        "CABLETRACK_REMINDER_MAX_ATTEMPTS", "SMTP attempts before a digest is marked failed."
    )
    mail_domain = Setting[str](
        "CABLETRACK_MAIL_DOMAIN",
        "Right-hand side of every mail's Message-ID (alert, drain and fault notices, retest digests).",
    )

    # --- Failure forecast and spares ---------------------------------------------------------------------
    forecast_prior_module_years = Setting[float](
        "CABLETRACK_FORECAST_PRIOR_MODULE_YEARS", "Weight of the prior failure rate, in module-years."
    )
    forecast_credible_level = Setting[float](
        "CABLETRACK_FORECAST_CREDIBLE_LEVEL", "Credible interval of a cohort's failure rate."
    )
    spares_service_level = Setting[float](
        "CABLETRACK_SPARES_SERVICE_LEVEL", "Chance that the spares on hand cover the lead time's failures."
    )
    spares_lead_time_days = Setting[int]("CABLETRACK_SPARES_LEAD_TIME_DAYS", "Days to restock a spare.")
    failure_hours_per_incident = Setting[float](
        "CABLETRACK_FAILURE_HOURS_PER_INCIDENT", "Hours a training run loses per link failure."
    )
    cluster_gpus = Setting[int]("CABLETRACK_CLUSTER_GPUS", "GPUs a training run holds.")
    gpu_hour_cost = Setting[float]("CABLETRACK_GPU_HOUR_COST", "Cost of one GPU-hour.")
    currency = Setting[str]("CABLETRACK_CURRENCY", "Currency the costs are in, shown beside every cost.")
    run_hours = Setting[float]("CABLETRACK_RUN_HOURS", "Length of a training run (hours).")

    # --- Security: proxies, headers, API docs ----------------------------------------------------
    trusted_proxies = Setting[list[str]](
        "CABLETRACK_TRUSTED_PROXIES",
        "Reverse proxies / load balancers in front of gunicorn (IPs or CIDRs, comma-separated). Only from them are `X-Forwarded-For` (the client address: login throttle, `/metrics` networks) and `X-Forwarded-Proto` (HTTPS) believed; from anyone else those headers are dropped. Set it to your load balancer's address.",
    )
    token_failure_limit = Setting[int](
        "CABLETRACK_TOKEN_FAILURE_LIMIT",
        "Failed API token authentications a client address may make in the window before a 429.",
    )
    token_failure_window_seconds = Setting[int](
        "CABLETRACK_TOKEN_FAILURE_WINDOW_SECONDS", "The window of the failed-token throttle (s)."
    )
    permissions_policy = Setting[str](
        "CABLETRACK_PERMISSIONS_POLICY",
        "The `Permissions-Policy` header on every response (a Content-Security-Policy with no inline script or style comes from django-csp).",
    )
    docs_url = Setting[str](
        "CABLETRACK_DOCS_URL",
        'Where the documentation site is: the "?" on every page and the `help` link of API errors point '
        "into it. The default, `/docs/`, is the site `make docs` builds, served by cabletrack itself; "
        "set an absolute URL to use a copy hosted elsewhere.",
    )
    docs_site_dir = Setting[str](
        "CABLETRACK_DOCS_SITE_DIR",
        "The built documentation site (`make docs` writes it) that `/docs/` serves.",
    )
    api_docs_public = Setting[bool](
        "CABLETRACK_API_DOCS_PUBLIC", "Serve `/api/schema/`, `/api/docs/` and `/api/redoc/` without a login."
    )

    @classmethod
    def setting_names(cls) -> list[str]:
        """Every CABLETRACK_* name this class reads."""
        return [v.name for v in vars(cls).values() if isinstance(v, Setting)]


app_settings = AppSettings()


# The environment variables of settings.py that are not CABLETRACK_* settings of the app (Django,
# the database, Celery, mail, login throttling, logging) and the two paths the app reads through
# Django's own settings: what each means. The configuration reference (docs/operator/configuration.md)
# is generated from AppSettings and this table (``python -m tools.docs``); a variable that
# settings.py reads and neither documents fails the docs build.
ENVIRONMENT: dict[str, str] = {
    "DJANGO_DEBUG": "`false` in production (turns on secure cookies, HSTS, SSL redirect).",
    "DJANGO_SECRET_KEY": "Django's signing key (sessions, CSRF, password reset). Required in production.",
    "DJANGO_ALLOWED_HOSTS": "Host names the site answers to, comma-separated.",
    "DJANGO_CSRF_TRUSTED_ORIGINS": "Origins trusted for form posts behind a proxy, e.g. `https://cabletrack.example.com`.",
    "DJANGO_STATIC_ROOT": "Where `collectstatic` writes.",
    "DJANGO_SECURE_SSL_REDIRECT": "Redirect HTTP to HTTPS.",
    "DJANGO_HSTS_SECONDS": "`Strict-Transport-Security` max-age.",
    "DATABASE_URL": "The database, e.g. `postgres://user:pw@host:5432/cabletrack` (production: PostgreSQL).",
    "DATABASE_REPLICA_URL": "A PostgreSQL streaming replica of `DATABASE_URL` for the web's read-only requests "
    "(pages, API reads, exports); a client that has just written reads from the primary until the replica "
    "has replayed its write. Empty: every read goes to the primary. See Scaling.",
    "DATABASE_CONN_MAX_AGE": "Seconds a PostgreSQL connection is kept open for the next request.",
    "REDIS_URL": "Redis for the cache and the Celery broker, e.g. `redis://host:6379/0`; empty: a local-memory "
    "cache and the filesystem broker.",
    "CELERY_BROKER_URL": "Another broker (RabbitMQ) if wanted.",
    "CELERY_VISIBILITY_TIMEOUT": "Seconds before Redis gives a message that a worker took and never acked (the "
    "worker died) to another worker.",
    "CELERY_TASK_TIME_LIMIT": "Seconds a task may run before it is killed; must stay below the visibility "
    "timeout (start-up refuses otherwise), so a running task is never delivered beside itself.",
    "CELERY_TASK_SOFT_TIME_LIMIT": "Seconds before a task is asked to stop (below the hard limit).",
    "CELERY_UNACKED_RESTORE_INTERVAL": "A worker looks for messages a dead worker left unacked every interval "
    "x throttle seconds.",
    "CELERY_UNACKED_RESTORE_THROTTLE": "See `CELERY_UNACKED_RESTORE_INTERVAL`.",
    "CELERY_TASK_ALWAYS_EAGER": "Run tasks in the calling process (tests only).",
    "CELERY_TASK_DEFAULT_QUEUE": "The queue tasks are sent to.",
    "EMAIL_URL": "SMTP server (django-environ syntax, e.g. `smtp+tls://user:pw@mail.example.com:587`); the "
    "default is the loopback sink `make run` starts.",
    "DEFAULT_FROM_EMAIL": "Sender of reminders and alerts.",
    "AXES_FAILURE_LIMIT": "Failed logins before a username is locked for one client address (never for "
    "everyone behind a proxy).",
    "AXES_COOLOFF_HOURS": "How long that lock lasts, in hours.",
    "LOG_LEVEL": "The root logger's level (`DEBUG`, `INFO`, `WARNING`, ...).",
    "CABLETRACK_VAR_DIR": "SQLite file, filesystem broker, beat schedule (the embedded defaults).",
    "CABLETRACK_UPLOAD_ROOT": "Uploaded OTDR files and photos (`MEDIA_ROOT`); outside every web root.",
}
