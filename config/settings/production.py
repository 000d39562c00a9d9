"""Production: every secret from the environment; refuses to start with a development one."""

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import DATABASES, env

DEBUG = False
SECRET_KEY = env.str("SECRET_KEY")
FIELD_ENCRYPTION_KEYS = env.str("FIELD_ENCRYPTION_KEYS")
PIN_KEY = env.str("PIN_KEY")
PAN_FINGERPRINT_KEY = env.str("PAN_FINGERPRINT_KEY")

_DEVELOPMENT_VALUES = {
    "dev-insecure-secret-key-do-not-use-in-production",
    "dev1:ZGV2LW9ubHktZmllbGQta2V5LTMyLWJ5dGVzLSEhISE=",
    "dev-only-pin-key",
    "dev-only-pan-fingerprint-key",
}
for _name, _value in (
    ("SECRET_KEY", SECRET_KEY),
    ("FIELD_ENCRYPTION_KEYS", FIELD_ENCRYPTION_KEYS),
    ("PIN_KEY", PIN_KEY),
    ("PAN_FINGERPRINT_KEY", PAN_FINGERPRINT_KEY),
):
    if _value in _DEVELOPMENT_VALUES or len(_value) < 16:
        raise ImproperlyConfigured(f"{_name} is a development value or too short.")

# Django's psycopg connection pool, on unless DATABASE_POOL=0.
if env.bool("DATABASE_POOL", default=True):
    DATABASES["default"].pop("CONN_MAX_AGE", None)
    DATABASES["default"].pop("CONN_HEALTH_CHECKS", None)
    DATABASES["default"]["OPTIONS"]["pool"] = {
        "min_size": env.int("DATABASE_POOL_MIN", default=2),
        "max_size": env.int("DATABASE_POOL_MAX", default=20),
        "timeout": env.int("DATABASE_POOL_TIMEOUT", default=10),
    }

# Webhooks: https to public addresses only, whatever the environment says.
WEBHOOK_REQUIRE_HTTPS = True
WEBHOOK_ALLOW_PRIVATE_TARGETS = False

SECURE_CONTENT_TYPE_NOSNIFF = True
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=True)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=True)
