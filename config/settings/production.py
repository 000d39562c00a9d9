"""Production: every secret from the environment; refuses to start with a development one."""

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import (
    DATABASE_POOL_TIMEOUT,
    DATABASE_REPLICA_CONNECT_TIMEOUT,
    DATABASES,
    SECRET_KEY_FALLBACKS,
    env,
    pool_options,
)

DEBUG = False
SECRET_KEY = env.str("SECRET_KEY")
FIELD_ENCRYPTION_KEYS = env.str("FIELD_ENCRYPTION_KEYS")
PIN_KEY = env.str("PIN_KEY")
PAN_FINGERPRINT_KEY = env.str("PAN_FINGERPRINT_KEY")
STAFF_RECOVERY_CODE_KEY = env.str("STAFF_RECOVERY_CODE_KEY")

_DEVELOPMENT_VALUES = {
    "dev-insecure-secret-key-do-not-use-in-production",
    "dev1:ZGV2LW9ubHktZmllbGQta2V5LTMyLWJ5dGVzLSEhISE=",
    "dev-only-pin-key",
    "dev-only-pan-fingerprint-key",
    "dev-only-staff-recovery-code-key",
}
for _name, _value in (
    ("SECRET_KEY", SECRET_KEY),
    *(("SECRET_KEY_FALLBACKS", _old) for _old in SECRET_KEY_FALLBACKS),
    ("FIELD_ENCRYPTION_KEYS", FIELD_ENCRYPTION_KEYS),
    ("PIN_KEY", PIN_KEY),
    ("PAN_FINGERPRINT_KEY", PAN_FINGERPRINT_KEY),
    ("STAFF_RECOVERY_CODE_KEY", STAFF_RECOVERY_CODE_KEY),
):
    if _value in _DEVELOPMENT_VALUES or len(_value) < 16:
        raise ImproperlyConfigured(f"{_name} is a development value or too short.")

# The sandbox's clock settles payments ahead of their dates: never where the money is real.
if SANDBOX_CLOCK:  # noqa: F405
    raise ImproperlyConfigured("SANDBOX_CLOCK is for the sandbox only, never in production.")

# The simulated SEPA Instant clearing settles payments no money left for: production names its
# clearing (a class of `exchange(institution=, content=, timeout=)`); without one, `sepa_inst`
# orders are refused (422 `rail_not_available`). The simulated one only when set explicitly.
SEPA_INSTANT_CLEARING = env.str("SEPA_INSTANT_CLEARING", default="")

# Django's psycopg connection pool, on unless DATABASE_POOL=0.
if env.bool("DATABASE_POOL", default=True):
    # One pool each for the primary and every read replica; a replica's callers wait for a
    # connection no longer than it may take to connect (docs/read-replicas.md).
    for _alias, _database in DATABASES.items():
        _database.pop("CONN_MAX_AGE", None)
        # With a pool, the pool checks a connection when a request takes it, so that none to a
        # dead server is handed out (core.postgresql.base.check_connection: a poll of its
        # socket, a round trip only when the server sent something).
        _database["CONN_HEALTH_CHECKS"] = True
        _database["OPTIONS"]["pool"] = pool_options(
            DATABASE_POOL_TIMEOUT
            if _alias == "default"
            else min(DATABASE_POOL_TIMEOUT, DATABASE_REPLICA_CONNECT_TIMEOUT)
        )

# A host that is gone (its machine, not only its PostgreSQL) costs a new connection this long,
# not the operating system's TCP timeout (minutes): with a multi-host DATABASE_URL the host
# tried first after a failover is the old primary (core.postgresql.hosts). 2 s is libpq's least.
# A connect_timeout in DATABASE_URL wins.
DATABASES["default"]["OPTIONS"].setdefault(
    "connect_timeout", env.int("DATABASE_CONNECT_TIMEOUT", default=2)
)

# An ERROR in the log when the primary's standbys are asynchronous (docs/deployment.md, "When
# the primary goes away"); DATABASE_REPLICATION_CHECK=0 for a deliberate exception.
DATABASE_REPLICATION_CHECK = env.bool("DATABASE_REPLICATION_CHECK", default=True)

# Webhooks: https to public addresses only, whatever the environment says.
WEBHOOK_REQUIRE_HTTPS = True
WEBHOOK_ALLOW_PRIVATE_TARGETS = False

# --- HTTPS (docs/configuration.md). Browsers only ever reach the admin over https; cookies
# never travel in clear.
SECURE_CONTENT_TYPE_NOSNIFF = True
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=True)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=True)
# HSTS: a year by default, subdomains included. Preload (a submission to the browsers' lists,
# hard to undo) only when the operator says so.
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=365 * 24 * 3600)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
# On by default: a misconfigured TLS proxy shows at once (a redirect loop), never as admin
# sessions in clear. Behind a TLS-terminating proxy, set SECURE_PROXY_SSL_HEADER (or turn this
# off when the proxy redirects itself).
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
# Load balancers probe, and Prometheus scrapes, over plain HTTP inside the network
# (docs/operations.md; a redirect would not keep the metrics token from crossing in clear).
SECURE_REDIRECT_EXEMPT = [r"^health/", r"^metrics$"]
# "HTTP_X_FORWARDED_PROTO,https": the request is https when that header says so. Only for a
# proxy that sets the header itself (overwriting the client's); unset, the header is ignored.
_proxy_ssl_header = env.list("SECURE_PROXY_SSL_HEADER", default=[])
if _proxy_ssl_header:
    if len(_proxy_ssl_header) != 2 or not _proxy_ssl_header[0].startswith("HTTP_"):
        raise ImproperlyConfigured(
            'SECURE_PROXY_SSL_HEADER must be "HTTP_<HEADER>,<value>", '
            'e.g. "HTTP_X_FORWARDED_PROTO,https".'
        )
    SECURE_PROXY_SSL_HEADER = (_proxy_ssl_header[0], _proxy_ssl_header[1])
