"""Development: `runserver`, DEBUG on, fixed development secrets (never valid in production)."""

from .base import *  # noqa: F403
from .base import env

DEBUG = env.bool("DEBUG", default=True)
SECRET_KEY = env.str("SECRET_KEY", default="dev-insecure-secret-key-do-not-use-in-production")
# Development-only keys: production.py rejects these exact values.
FIELD_ENCRYPTION_KEYS = env.str(
    "FIELD_ENCRYPTION_KEYS", default="dev1:ZGV2LW9ubHktZmllbGQta2V5LTMyLWJ5dGVzLSEhISE="
)
PIN_KEY = env.str("PIN_KEY", default="dev-only-pin-key")
PAN_FINGERPRINT_KEY = env.str("PAN_FINGERPRINT_KEY", default="dev-only-pan-fingerprint-key")
