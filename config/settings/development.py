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
STAFF_RECOVERY_CODE_KEY = env.str(
    "STAFF_RECOVERY_CODE_KEY", default="dev-only-staff-recovery-code-key"
)
# Mails to staff are printed by the development server (or the command that sends them).
EMAIL_BACKEND = env.str("EMAIL_BACKEND", default="django.core.mail.backends.console.EmailBackend")
# Webhooks to a receiver on this machine (loopback, private networks) over plain http, and
# short retry waits: a local receiver that was restarted gets its backlog within half a minute.
WEBHOOK_REQUIRE_HTTPS = env.bool("WEBHOOK_REQUIRE_HTTPS", default=False)
WEBHOOK_ALLOW_PRIVATE_TARGETS = env.bool("WEBHOOK_ALLOW_PRIVATE_TARGETS", default=True)
WEBHOOK_RETRY_BASE_SECONDS = env.float("WEBHOOK_RETRY_BASE_SECONDS", default=1.0)
WEBHOOK_RETRY_CAP_SECONDS = env.float("WEBHOOK_RETRY_CAP_SECONDS", default=30.0)
# The demo plays days of the rails with the simulated bank (docs/payments.md, "The sandbox").
SANDBOX_CLOCK = env.bool("SANDBOX_CLOCK", default=True)
