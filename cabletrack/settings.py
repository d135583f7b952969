"""cabletrack settings, read from the environment.

Development defaults are safe for a laptop (SQLite in ``var/``, a filesystem Celery broker, a
local-memory cache, DEBUG on, loopback hosts only). Production sets ``DJANGO_DEBUG=false`` and
then must provide ``DJANGO_SECRET_KEY``, ``DATABASE_URL`` and ``REDIS_URL`` or start-up fails.
No setting branches on an environment name: every difference is an explicit variable.
"""

import re
from pathlib import Path

import environ
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(environ.Env().str("CABLETRACK_VAR_DIR", default=str(BASE_DIR / "var")))

env = environ.Env()
# The embedded defaults (SQLite, the filesystem broker) keep their files in VAR_DIR, so only they
# create it. Production (DATABASE_URL and REDIS_URL set) writes nothing at import: the application
# directory may be read-only; uploads and the beat schedule go to the data directory it names.
if not env.str("DATABASE_URL", "") or not env.str("REDIS_URL", ""):
    VAR_DIR.mkdir(parents=True, exist_ok=True)

DEBUG = env.bool("DJANGO_DEBUG", default=True)

if not DEBUG:
    _missing = [name for name in ("DJANGO_SECRET_KEY", "DATABASE_URL", "REDIS_URL") if not env.str(name, "")]
    if _missing:
        raise ImproperlyConfigured(
            "DJANGO_DEBUG is off (production) but these are not set: " + ", ".join(_missing)
        )

SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="dev-only-insecure-key-change-me-" + "x" * 32)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

# The absolute URL printed in QR labels and mails. Never guessed from a request.
CABLETRACK_BASE_URL = env.str("CABLETRACK_BASE_URL", default="http://127.0.0.1:8000").rstrip("/")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",  # intcomma: 53,664 cables, not 53664
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "simple_history",
    "axes",
    "csp",
    "inventory",
]

MIDDLEWARE = [
    "inventory.middleware.proxy.TrustedProxyMiddleware",
    "inventory.middleware.cleanurl.CleanURLMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "inventory.middleware.requestid.RequestIdMiddleware",
    "inventory.middleware.headers.SecurityHeadersMiddleware",
    "csp.middleware.CSPMiddleware",
    "inventory.middleware.idempotency.BodyLimitMiddleware",
    "inventory.middleware.failsafe.UnavailableMiddleware",
    "inventory.middleware.replica.ReplicaReadsMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "inventory.middleware.login.LoginRequiredMiddleware",
    "inventory.middleware.notfound.FriendlyNotFoundMiddleware",
    "inventory.middleware.writeguard.WriteGuardMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    "axes.middleware.AxesMiddleware",
    "inventory.middleware.idempotency.IdempotencyMiddleware",
]

ROOT_URLCONF = "cabletrack.urls"
WSGI_APPLICATION = "cabletrack.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "inventory.views.context_processors.authz",
                "inventory.views.context_processors.help_link",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------
DATABASES = {
    "default": env.db_url_config(
        env.str("DATABASE_URL", default="") or f"sqlite:///{VAR_DIR / 'cabletrack.sqlite3'}"
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Web, worker and beat write at once: WAL, IMMEDIATE transactions and a busy timeout keep
    # them from failing with "database is locked". Tests use a file so a worker process sees it.
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test.sqlite3")}
else:
    DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("DATABASE_CONN_MAX_AGE", default=60))
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    # psycopg prepares only the statements that ask for it (``inventory.db.compiled``: the QR
    # page's and the API detail's reads, planned once per connection); a threshold this high
    # keeps it from preparing anything else by itself. Django's default, None, would refuse even
    # those. Prepared statements live in the session: pool by session (README, production).
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("prepare_threshold", 2**31 - 1)
# A PostgreSQL streaming replica for the web's read-only requests (pages, API reads, exports):
# ``inventory.db.replica`` routes them there, and back to the primary for a client whose own write
# the replica has not replayed yet (read-your-writes). Unset: every read goes to the primary.
DATABASE_REPLICA_URL = env.str("DATABASE_REPLICA_URL", default="")
if DATABASE_REPLICA_URL:
    DATABASES["replica"] = {
        **env.db_url_config(DATABASE_REPLICA_URL),
        "CONN_MAX_AGE": DATABASES["default"].get("CONN_MAX_AGE", 0),
        "CONN_HEALTH_CHECKS": True,
        "OPTIONS": dict(DATABASES["default"].get("OPTIONS", {})),
        "TEST": {"MIRROR": "default"},  # a test database has no replica of its own
    }
DATABASE_ROUTERS = ["inventory.db.replica.ReplicaRouter"]
# Parallel workers per query in the web process's sessions (``cabletrack.wsgi``; PostgreSQL's
# own default, 2, in workers and commands). Pages answer from index probes in milliseconds, and
# starting a parallel plan's workers costs more than that (see ``inventory.db.web``).
CABLETRACK_WEB_PARALLEL_WORKERS = env.int("CABLETRACK_WEB_PARALLEL_WORKERS", default=0)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Cache, broker -------------------------------------------------------------------------
REDIS_URL = env.str("REDIS_URL", default="")
if REDIS_URL:
    # django-redis with IGNORE_EXCEPTIONS: a Redis outage degrades the cache, not the pages.
    CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": {
                "IGNORE_EXCEPTIONS": True,
                "SOCKET_CONNECT_TIMEOUT": 1,
                "SOCKET_TIMEOUT": 1,
            },
        }
    }
    DJANGO_REDIS_IGNORE_EXCEPTIONS = True
    DJANGO_REDIS_LOG_IGNORED_EXCEPTIONS = True
    CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default=REDIS_URL)
    # A message a worker took and never acked (the worker was killed) goes back to the queue
    # after ``visibility_timeout``; kombu looks for such messages every interval x throttle s.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=3600),
        "unacked_restore_interval": env.int("CELERY_UNACKED_RESTORE_INTERVAL", default=10),
        "unacked_restore_throttle": env.int("CELERY_UNACKED_RESTORE_THROTTLE", default=10),
        "socket_connect_timeout": 2,
        "socket_timeout": 5,
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    # A broker that needs no server: kombu's filesystem transport, same task code paths.
    _broker_dir = VAR_DIR / "broker"
    CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="filesystem://")
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
    }
    for _d in ("queue", "processed", "control"):
        (_broker_dir / _d).mkdir(parents=True, exist_ok=True)

SESSION_ENGINE = "django.contrib.sessions.backends.db"  # sessions survive a Redis outage

CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_TASK_IGNORE_RESULT = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Below the broker visibility timeout (1 h), so a running task is never redelivered beside itself.
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=30 * 60)
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=25 * 60)
_limit, _visibility = CELERY_TASK_TIME_LIMIT, CELERY_BROKER_TRANSPORT_OPTIONS.get("visibility_timeout")
if REDIS_URL and _visibility is not None and _limit >= _visibility:
    raise ImproperlyConfigured(
        "CELERY_TASK_TIME_LIMIT must be below CELERY_VISIBILITY_TIMEOUT: a task still running when "
        "the broker's visibility timeout ends is delivered a second time, beside itself."
    )
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
# Tasks that enqueue tasks send them here (a test worker sets its own queue through the env).
CELERY_TASK_DEFAULT_QUEUE = env.str("CELERY_TASK_DEFAULT_QUEUE", default="celery")
CELERY_TIMEZONE = "UTC"
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# The beat schedule (CELERY_BEAT_SCHEDULE) closes this file: it reads the domain settings below.
# A broker outage must fail a publish fast (then the outbox keeps the message), not hang a page.
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 2,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.5,
}
CELERY_BROKER_CONNECTION_TIMEOUT = 2

# --- Auth ----------------------------------------------------------------------------------
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "inventory.access.backends.PermissionsBackend",  # ModelBackend, permissions in one query
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = env.float("AXES_COOLOFF_HOURS", default=0.25)
AXES_RESET_ON_SUCCESS = True
# Locked: a username from one client address, never a username or an address alone, so failures
# from one client behind a shared proxy cannot lock everyone out (nor one username everywhere).
# The address is REMOTE_ADDR as TrustedProxyMiddleware left it (the client, behind trusted proxies).
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_CLIENT_IP_CALLABLE = "inventory.middleware.proxy.client_ip"

# --- I18N, static --------------------------------------------------------------------------
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = Path(env.str("DJANGO_STATIC_ROOT", default=str(BASE_DIR / "staticfiles")))
STATICFILES_DIRS = [BASE_DIR / "inventory" / "static"]
STORAGES = {
    # Django's file storage that removes a partly written file when the disk fills (507).
    "default": {"BACKEND": "inventory.db.storage.UploadStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
# Uploaded test files (OTDR .sor, photos) live outside every web root and are served only
# through a login-checked view as attachments.
MEDIA_ROOT = Path(env.str("CABLETRACK_UPLOAD_ROOT", default=str(VAR_DIR / "uploads")))
MEDIA_URL = None
DATA_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
CABLETRACK_MAX_IMPORT_BYTES = env.int("CABLETRACK_MAX_IMPORT_BYTES", default=64 * 1024 * 1024)
# Request body caps (inventory/idempotency.py, BodyLimitMiddleware): 413 past them, before any read.
CABLETRACK_MAX_BODY_BYTES = env.int("CABLETRACK_MAX_BODY_BYTES", default=DATA_UPLOAD_MAX_MEMORY_SIZE)
CABLETRACK_MAX_UPLOAD_BYTES = env.int("CABLETRACK_MAX_UPLOAD_BYTES", default=32 * 1024 * 1024)
CABLETRACK_BODY_LIMITS = {  # path prefix -> cap, for the bulk endpoints
    "/api/telemetry/": CABLETRACK_MAX_IMPORT_BYTES,
    "/api/collectives/": CABLETRACK_MAX_IMPORT_BYTES,
    "/api/import/": CABLETRACK_MAX_IMPORT_BYTES,
    "/api/imports/": CABLETRACK_MAX_IMPORT_BYTES,
    "/api/cables/import/": CABLETRACK_MAX_IMPORT_BYTES,
}
CABLETRACK_IDEMPOTENCY_TTL_HOURS = env.int("CABLETRACK_IDEMPOTENCY_TTL_HOURS", default=24)
# API writes without an If-Match header get a 428 instead of writing unconditionally.
CABLETRACK_REQUIRE_IF_MATCH = env.bool("CABLETRACK_REQUIRE_IF_MATCH", default=False)

# --- REST API ------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "inventory.api.auth.ApiTokenAuthentication",
        "inventory.api.auth.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["inventory.api.permissions.PlantPermission"],
    # JSON that names a key twice, or nests too deeply, is a 400 (inventory/core/strictjson.py).
    "DEFAULT_PARSER_CLASSES": [
        "inventory.api.parsers.StrictJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_FILTER_BACKENDS": [
        "inventory.api.filtering.StrictFilterBackend",
        "inventory.api.filtering.BlanksLastOrderingFilter",
    ],
    "DEFAULT_PAGINATION_CLASS": "inventory.api.pagination.Pagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "inventory.api.errors.exception_handler",
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
}


def _choice_enum_overrides() -> dict[str, str]:
    """Name every TextChoices in inventory/core/choices.py after itself, so OpenAPI enum names never
    collide (``check --deploy`` fails on drf-spectacular's collision warnings)."""
    text = (BASE_DIR / "inventory" / "core" / "choices.py").read_text()
    names = re.findall(r"^class (\w+)\(models\.(?:TextChoices|IntegerChoices)\)", text, re.M)
    return {f"{n}Enum": f"inventory.core.choices.{n}" for n in names}


SPECTACULAR_SETTINGS = {
    "TITLE": "cabletrack API",
    "DESCRIPTION": "The physical-layer source of truth for AI/GPU clusters.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "inventory.api.schema.add_error_responses",
    ],
    "ENUM_NAME_OVERRIDES": {
        **_choice_enum_overrides(),
        "CableKindEnum": "inventory.core.choices.CableKind",
        "CableRoleEnum": "inventory.core.choices.CableRole",
        "CableStatusEnum": "inventory.core.choices.CableStatus",
        "DeviceRoleEnum": "inventory.core.choices.DeviceRole",
        "TransceiverStatusEnum": "inventory.core.choices.TransceiverStatus",
        "PortKindEnum": "inventory.core.choices.PortKind",
        "PlanStatusEnum": [("planned", "Planned"), ("installed", "Installed")],
    },
    "SECURITY": [{"tokenAuth": []}, {"cookieAuth": []}],
    "APPEND_COMPONENTS": {
        "securitySchemes": {
            "tokenAuth": {
                "type": "http",
                "scheme": "bearer",
                "description": "API token: `Authorization: Bearer <token>`",
            }
        }
    },
}

# --- Mail ----------------------------------------------------------------------------------
vars().update(env.email_url("EMAIL_URL", default="smtp://127.0.0.1:1025"))
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="cabletrack <cabletrack@localhost>")
EMAIL_TIMEOUT = 10

# --- Security (production) -----------------------------------------------------------------
# Reverse proxies (load balancers) in front of gunicorn, as IP addresses or CIDRs. Only a request
# arriving from one of them may say who the client is (X-Forwarded-For) and that it came over
# HTTPS (X-Forwarded-Proto); from anyone else those headers are dropped (middleware/proxy.py).
CABLETRACK_TRUSTED_PROXIES = env.list("CABLETRACK_TRUSTED_PROXIES", default=[])
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Failed API token authentications per client address (inventory/api/auth.py): after this many
# within the window, every token request from that address is a 429 until the window ends.
CABLETRACK_TOKEN_FAILURE_LIMIT = env.int("CABLETRACK_TOKEN_FAILURE_LIMIT", default=20)
CABLETRACK_TOKEN_FAILURE_WINDOW_SECONDS = env.int("CABLETRACK_TOKEN_FAILURE_WINDOW_SECONDS", default=300)
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = not DEBUG
CSRF_COOKIE_SECURE = not DEBUG
SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=not DEBUG)
SECURE_HSTS_SECONDS = env.int("DJANGO_HSTS_SECONDS", default=0 if DEBUG else 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = not DEBUG
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
# Content-Security-Policy (django-csp): scripts, styles and everything else from this origin only;
# no inline script or style (the API docs pages widen it for themselves, api/urls.py).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "font-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}
# Browser features no page uses are switched off (middleware/headers.py); only features Chromium
# knows: it logs any other as an error on every page (Chromium 156: "Unrecognized feature: 'bluetooth'").
CABLETRACK_PERMISSIONS_POLICY = env.str(
    "CABLETRACK_PERMISSIONS_POLICY",
    default="camera=(self), microphone=(), geolocation=(), payment=(), usb=(), serial=()",
)
# The OpenAPI schema and its docs (/api/schema/, /api/docs/, /api/redoc/) need a login unless this
# is set (for a public API reference).
# The documentation site: built by `make docs` into CABLETRACK_DOCS_SITE_DIR and served at /docs/,
# unless CABLETRACK_DOCS_URL points at a copy hosted elsewhere (every page's "?" and API error links).
CABLETRACK_DOCS_URL = env.str("CABLETRACK_DOCS_URL", default="/docs/")
CABLETRACK_DOCS_SITE_DIR = env.str("CABLETRACK_DOCS_SITE_DIR", default=str(BASE_DIR / "site"))
CABLETRACK_API_DOCS_PUBLIC = env.bool("CABLETRACK_API_DOCS_PUBLIC", default=False)
SPECTACULAR_SETTINGS["SERVE_PERMISSIONS"] = [
    "rest_framework.permissions.AllowAny"
    if CABLETRACK_API_DOCS_PUBLIC
    else "rest_framework.permissions.IsAuthenticated"
]
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "inventory.middleware.requestid.RequestIdFilter"}},
    "formatters": {
        "plain": {
            # One line per record: control characters in logged values are escaped.
            "class": "inventory.middleware.requestid.OneLineFormatter",
            "format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s",
        }
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "plain", "filters": ["request_id"]}
    },
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}, "axes": {"level": "WARNING"}},
}

# --- Domain defaults -------------------------------------------------------------------------
CABLETRACK_RETEST_INTERVAL_DAYS = env.int("CABLETRACK_RETEST_INTERVAL_DAYS", default=90)
CABLETRACK_ANNUAL_FAILURE_RATE = env.float("CABLETRACK_ANNUAL_FAILURE_RATE", default=0.02)

# --- Telemetry (POST /api/telemetry/, rollups, retention) ------------------------------------
# The ingest endpoint reads the body itself (Django's DATA_UPLOAD_MAX_MEMORY_SIZE is far below a
# 5,000-sample batch): bodies above this many bytes get a 413.
CABLETRACK_TELEMETRY_MAX_BODY_BYTES = env.int("CABLETRACK_TELEMETRY_MAX_BODY_BYTES", default=32 * 1024 * 1024)
CABLETRACK_TELEMETRY_MAX_SAMPLES = env.int("CABLETRACK_TELEMETRY_MAX_SAMPLES", default=50_000)
# Samples stamped further than this in the future are refused per item (clock skew allowance).
CABLETRACK_TELEMETRY_MAX_FUTURE_SECONDS = env.int("CABLETRACK_TELEMETRY_MAX_FUTURE_SECONDS", default=300)
CABLETRACK_TELEMETRY_ROLLUP_SECONDS = env.int("CABLETRACK_TELEMETRY_ROLLUP_SECONDS", default=60)
CABLETRACK_TELEMETRY_ROLLUP_BATCH_PORTS = env.int("CABLETRACK_TELEMETRY_ROLLUP_BATCH_PORTS", default=2_000)
CABLETRACK_TELEMETRY_RAW_RETENTION_DAYS = env.int("CABLETRACK_TELEMETRY_RAW_RETENTION_DAYS", default=14)
CABLETRACK_TELEMETRY_ROLLUP_RETENTION_DAYS = env.int(
    "CABLETRACK_TELEMETRY_ROLLUP_RETENTION_DAYS", default=365
)
CABLETRACK_TELEMETRY_ROLLUP_DEBOUNCE_SECONDS = env.int(
    "CABLETRACK_TELEMETRY_ROLLUP_DEBOUNCE_SECONDS", default=10
)
# A rollup bucket's first interval needs the sample before it: how far back to look for it.
CABLETRACK_TELEMETRY_ROLLUP_LOOKBACK_SECONDS = env.int(
    "CABLETRACK_TELEMETRY_ROLLUP_LOOKBACK_SECONDS", default=900
)
# Queue rows (ingest batches) one rollup run takes when it is behind its queue. Each port's
# fixed work (its predecessor sample, line rate, identity, state row) is paid once a run, so a
# run must see each port several times: at a site's pace (589,824 ports, rows of some 2,500 ports
# a shard) 50 rows named each port less than once and the rollup's PostgreSQL cost 66 µs a sample;
# 500 rows, 25 µs, with the lag p95 7.6 -> 2.0 buckets (performance history, 2026-12-06). A run
# that is not behind takes the whole queue whatever this says.
CABLETRACK_TELEMETRY_ROLLUP_MAX_BATCHES = env.int("CABLETRACK_TELEMETRY_ROLLUP_MAX_BATCHES", default=500)
# Ports are rolled up in this many shards (port id modulo it), each by one task at a time, side
# by side on the workers' cores; one shard per core the workers have is the rule.
CABLETRACK_TELEMETRY_ROLLUP_SHARDS = env.int("CABLETRACK_TELEMETRY_ROLLUP_SHARDS", default=2)
if not 1 <= CABLETRACK_TELEMETRY_ROLLUP_SHARDS <= 64:
    raise ImproperlyConfigured(
        f"CABLETRACK_TELEMETRY_ROLLUP_SHARDS must be from 1 to 64, not {CABLETRACK_TELEMETRY_ROLLUP_SHARDS}"
    )
# Ports whose rollup fails are set aside and retried after this many seconds, doubled per
# failure up to the maximum.
CABLETRACK_TELEMETRY_ROLLUP_RETRY_SECONDS = env.int("CABLETRACK_TELEMETRY_ROLLUP_RETRY_SECONDS", default=60)
CABLETRACK_TELEMETRY_ROLLUP_RETRY_MAX_SECONDS = env.int(
    "CABLETRACK_TELEMETRY_ROLLUP_RETRY_MAX_SECONDS", default=3600
)

# --- Alerts (rules over telemetry), /metrics ------------------------------------------------------
# Rule thresholds: a preset ("default" or the seed article's "seed") with per link class / PMD
# overrides, e.g. {"preset": "default", "by_class": {"rail": {"fec_hold_s": 300}}}. JSON.
CABLETRACK_ALERT_RULES = env.json("CABLETRACK_ALERT_RULES", default={"preset": "default"})
# How often beat runs the rules (s).
CABLETRACK_ALERT_EVERY_S = env.float("CABLETRACK_ALERT_EVERY_S", default=60.0)
# The rules read this much of PortRollup (the longest rule window: tail, flap, clear = 15 min).
CABLETRACK_ALERT_LOOKBACK_S = env.float("CABLETRACK_ALERT_LOOKBACK_S", default=900.0)
# The rules run as this many tasks side by side on the workers, each over its part of the
# reporting ports (both ends of a link in one part): past some 800,000 reporting ports one
# evaluation no longer fits its period on one core.
CABLETRACK_ALERT_SHARDS = env.int("CABLETRACK_ALERT_SHARDS", default=1)
if not 1 <= CABLETRACK_ALERT_SHARDS <= 64:
    raise ImproperlyConfigured(f"CABLETRACK_ALERT_SHARDS must be from 1 to 64, not {CABLETRACK_ALERT_SHARDS}")
CABLETRACK_ALERT_BUCKET_S = float(CABLETRACK_TELEMETRY_ROLLUP_SECONDS)
CABLETRACK_BASELINE_REFRESH_S = env.float("CABLETRACK_BASELINE_REFRESH_S", default=3600.0)
# An alert whose condition returns within this many seconds of its resolution is reopened (same
# alert, no new mail, no second status change) instead of opened again: no reopen-and-mail churn.
CABLETRACK_ALERT_REOPEN_S = env.float("CABLETRACK_ALERT_REOPEN_S", default=3600.0)
# A repair recorded on an alert is judged "fixed" once the alert has resolved (the rule's clean
# window held after the repair) and stayed clean this many hours; "came back" if it fires again first.
CABLETRACK_REPAIR_HOLD_HOURS = env.float("CABLETRACK_REPAIR_HOLD_HOURS", default=72.0)
# A link drained from an alert without a planned end is in maintenance this many hours.
CABLETRACK_DRAIN_HOURS = env.float("CABLETRACK_DRAIN_HOURS", default=4.0)
# A refresh moves a port's baseline this far towards the latest window (exponential average).
CABLETRACK_BASELINE_WEIGHT = env.float("CABLETRACK_BASELINE_WEIGHT", default=0.1)
# /metrics: a bearer scrape token and/or source networks (CIDRs). Neither set: 404 to everyone.
CABLETRACK_METRICS_TOKEN = env.str("CABLETRACK_METRICS_TOKEN", default="")
CABLETRACK_METRICS_NETWORKS = env.list("CABLETRACK_METRICS_NETWORKS", default=[])
# /metrics exports FEC gauges for at most this many links (worst pre-FEC BER first).
CABLETRACK_METRICS_MAX_LINKS = env.int("CABLETRACK_METRICS_MAX_LINKS", default=50_000)

# --- NetBox / Nautobot sync (optional) ---------------------------------------------------------
CABLETRACK_NETBOX_URL = env.str("CABLETRACK_NETBOX_URL", default="")
CABLETRACK_NETBOX_TOKEN = env.str("CABLETRACK_NETBOX_TOKEN", default="")
CABLETRACK_NETBOX_SITES = env.list("CABLETRACK_NETBOX_SITES", default=[])
# "netbox" (4.x) or "nautobot" (2.x/3.x; the sites are then Nautobot location names)
CABLETRACK_NETBOX_FLAVOR = env.str("CABLETRACK_NETBOX_FLAVOR", default="netbox")
# Who owns each cable field the sync compares (inventory/core/interop/ownership.py): a JSON object
# of overrides, e.g. {"length_m": "both"}; owners are netbox, cabletrack or both. Empty: defaults.
CABLETRACK_NETBOX_FIELD_OWNERS = env.json("CABLETRACK_NETBOX_FIELD_OWNERS", default={})

# --- Prometheus pull (optional): read FEC/DOM/PFC series a site already scrapes ---------------
CABLETRACK_PROMETHEUS_URL = env.str("CABLETRACK_PROMETHEUS_URL", default="")
CABLETRACK_PROMETHEUS_MAPPING = env.json("CABLETRACK_PROMETHEUS_MAPPING", default={})
CABLETRACK_PROMETHEUS_WINDOW_SECONDS = env.int("CABLETRACK_PROMETHEUS_WINDOW_SECONDS", default=900)
CABLETRACK_PROMETHEUS_STEP_SECONDS = env.int("CABLETRACK_PROMETHEUS_STEP_SECONDS", default=60)
# --- Tests and loss budgets (issue 4) ----------------------------------------------------------
CABLETRACK_SOR_MAX_BYTES = env.int("CABLETRACK_SOR_MAX_BYTES", default=8 * 1024 * 1024)
CABLETRACK_PHOTO_MAX_BYTES = env.int("CABLETRACK_PHOTO_MAX_BYTES", default=10 * 1024 * 1024)
CABLETRACK_LOSS_INCREASE_DB = env.float("CABLETRACK_LOSS_INCREASE_DB", default=0.5)
CABLETRACK_MARGINAL_DB = env.float("CABLETRACK_MARGINAL_DB", default=0.3)
CABLETRACK_OTDR_MIN_LENGTH_M = env.float("CABLETRACK_OTDR_MIN_LENGTH_M", default=20.0)
# An OTDR trace's fibre end may sit this far from the cable's recorded length: 1 m + one sample
# (event location), this share of the length (group index, cable lay) and the leads left in.
CABLETRACK_OTDR_LENGTH_TOLERANCE_PCT = env.float("CABLETRACK_OTDR_LENGTH_TOLERANCE_PCT", default=2.0)
CABLETRACK_OTDR_LEADS_M = env.float("CABLETRACK_OTDR_LEADS_M", default=0.0)
CABLETRACK_BER_SOAK_MINUTES = env.int("CABLETRACK_BER_SOAK_MINUTES", default=10)
# A soak is recorded from 0 to a week (inventory.services.testing.qualification.SOAK_MINUTES_MAX):
# a longer minimum would refuse every link qualification.
if not 0 <= CABLETRACK_BER_SOAK_MINUTES <= 10_080:
    raise ImproperlyConfigured(
        f"CABLETRACK_BER_SOAK_MINUTES must be from 0 to 10,080 (a week), not {CABLETRACK_BER_SOAK_MINUTES}"
    )
# Test dates are accepted from the cable's install date (or, without one, this floor; ISO date)
# up to this many seconds ahead of now (a phone in another time zone); outside: a 400.
CABLETRACK_TEST_DATE_FLOOR = env.str("CABLETRACK_TEST_DATE_FLOOR", default="2000-01-01")
CABLETRACK_TEST_MAX_FUTURE_SECONDS = env.int("CABLETRACK_TEST_MAX_FUTURE_SECONDS", default=86400)
# --- Labels ----------------------------------------------------------------------------------
# Up to this many labels render inline in the request; more go to a background batch.
CABLETRACK_LABELS_INLINE_MAX = env.int("CABLETRACK_LABELS_INLINE_MAX", default=500)

# --- Retests and reminders (see README "Retests and reminders") -----------------------------
CABLETRACK_RETEST_SHORTEN_DAYS = env.int("CABLETRACK_RETEST_SHORTEN_DAYS", default=7)
CABLETRACK_RETEST_NEW_INSTALL_DAYS = env.int("CABLETRACK_RETEST_NEW_INSTALL_DAYS", default=0)
CABLETRACK_RETEST_REMIND_DAYS = env.int("CABLETRACK_RETEST_REMIND_DAYS", default=7)
CABLETRACK_RETEST_ESCALATE_DAYS = env.int("CABLETRACK_RETEST_ESCALATE_DAYS", default=7)
CABLETRACK_RETEST_ACCEPT_TELEMETRY = env.bool("CABLETRACK_RETEST_ACCEPT_TELEMETRY", default=False)
CABLETRACK_REMINDER_LEASE_SECONDS = env.int("CABLETRACK_REMINDER_LEASE_SECONDS", default=300)
CABLETRACK_REMINDER_RETRY_BASE_SECONDS = env.int("CABLETRACK_REMINDER_RETRY_BASE_SECONDS", default=60)
CABLETRACK_REMINDER_RETRY_MAX_SECONDS = env.int("CABLETRACK_REMINDER_RETRY_MAX_SECONDS", default=1800)
CABLETRACK_REMINDER_MAX_ATTEMPTS = env.int("CABLETRACK_REMINDER_MAX_ATTEMPTS", default=8)
CABLETRACK_MAIL_DOMAIN = env.str("CABLETRACK_MAIL_DOMAIN", default="cabletrack.local")
CABLETRACK_RETEST_SWEEP_HOUR = env.int("CABLETRACK_RETEST_SWEEP_HOUR", default=5)
# --- Failure forecast and spares (see README, "Failure forecast") ----------------------------
CABLETRACK_FORECAST_PRIOR_MODULE_YEARS = env.float("CABLETRACK_FORECAST_PRIOR_MODULE_YEARS", default=100.0)
CABLETRACK_FORECAST_CREDIBLE_LEVEL = env.float("CABLETRACK_FORECAST_CREDIBLE_LEVEL", default=0.90)
CABLETRACK_SPARES_SERVICE_LEVEL = env.float("CABLETRACK_SPARES_SERVICE_LEVEL", default=0.95)
CABLETRACK_SPARES_LEAD_TIME_DAYS = env.int("CABLETRACK_SPARES_LEAD_TIME_DAYS", default=30)
CABLETRACK_FAILURE_HOURS_PER_INCIDENT = env.float("CABLETRACK_FAILURE_HOURS_PER_INCIDENT", default=3.5)
CABLETRACK_CLUSTER_GPUS = env.int("CABLETRACK_CLUSTER_GPUS", default=1024)
CABLETRACK_GPU_HOUR_COST = env.float("CABLETRACK_GPU_HOUR_COST", default=2.5)
CABLETRACK_CURRENCY = env.str("CABLETRACK_CURRENCY", default="USD")
CABLETRACK_RUN_HOURS = env.float("CABLETRACK_RUN_HOURS", default=720.0)

# --- Periodic tasks (Celery beat) ------------------------------------------------------------
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
# The one reviewed schedule. Far-future work (a retest in 90 days) is a date column swept by
# these periodic tasks, never a delayed broker message.
CELERY_BEAT_SCHEDULE = {
    # Alerts: the rules over telemetry, then the mails of what they opened.
    "alerts-evaluate": {"task": "inventory.alerts_evaluate", "schedule": CABLETRACK_ALERT_EVERY_S},
    # ... and the notices of drains whose window ended without a restore (to the engineers).
    "alert-notifications-sweep": {"task": "inventory.alert_notifications_send", "schedule": 300.0},
    # ... and the fault notices the mail server did not take when the fault was reported.
    "fault-notices-sweep": {"task": "inventory.fault_notices_send", "schedule": 60.0},
    # tail_latency_spike over the collective timings, as often as the telemetry rules.
    "collectives-evaluate": {"task": "inventory.collectives_evaluate", "schedule": CABLETRACK_ALERT_EVERY_S},
    # Repairs: judge the pending ones by the telemetry that followed (fixed or came back).
    "repairs-judge": {"task": "inventory.repairs_judge", "schedule": 600.0},
    # Security/reliability: resend what the broker refused during an outage; forget old idempotency keys.
    "outbox-flush": {"task": "inventory.outbox_flush", "schedule": 30.0},
    "idempotency-purge": {"task": "inventory.idempotency_purge", "schedule": 3600.0},
    # Tester exports a test-import preview kept and nobody applied.
    "import-uploads-purge": {"task": "inventory.import_uploads_purge", "schedule": 3600.0},
    # Telemetry: rollups (also kicked after each ingest), retention of raw samples and rollups.
    "telemetry-rollup": {"task": "inventory.telemetry_rollup", "schedule": 60.0},
    "telemetry-retention": {"task": "inventory.telemetry_retention", "schedule": 6 * 3600.0},
    # Raw telemetry's day partitions (PostgreSQL), made days ahead; the ingest makes a missing one too.
    "telemetry-partitions": {"task": "inventory.telemetry_partitions", "schedule": 3600.0},
    # Labels: batches whose worker died go back to the queue.
    "label-batches-requeue": {"task": "inventory.label_batches_requeue", "schedule": 300.0},
    # Retests: the daily sweep (recompute, claim, enqueue), then the reminder mails.
    "retests-sweep-daily": {
        "task": "inventory.retests_sweep",
        "schedule": crontab(hour=CABLETRACK_RETEST_SWEEP_HOUR, minute=0),
    },
    "reminders-dispatch": {"task": "inventory.reminders_dispatch", "schedule": 300.0},
    # Forecast: the nightly snapshot.
    "forecast-snapshot-nightly": {
        "task": "inventory.forecast_snapshot",
        "schedule": crontab(hour=2, minute=15),
    },
}
# Optional integrations run only when their URL is set.
if CABLETRACK_NETBOX_URL:
    CELERY_BEAT_SCHEDULE["netbox-sync"] = {"task": "inventory.netbox_sync", "schedule": 3600.0}
if CABLETRACK_PROMETHEUS_URL:
    CELERY_BEAT_SCHEDULE["prometheus-pull"] = {"task": "inventory.prometheus_pull", "schedule": 300.0}
