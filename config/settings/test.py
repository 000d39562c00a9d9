"""Tests: the development secrets and a fast password hasher; otherwise as development
(rate limits count in the test database's api_rate_counter, emptied with every test's rollback
or flush)."""

from .development import *  # noqa: F403
from .development import env

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Mails are kept in django.core.mail.outbox (as Django's test runner does), never sent.
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# Static files are not served in tests (and .data/static/ may not exist yet).
MIDDLEWARE = [m for m in MIDDLEWARE if m != "whitenoise.middleware.WhiteNoiseMiddleware"]  # noqa: F405
# Modules of test-only tasks a worker started by a test must load (tests/jobs/workers.py).
PROCRASTINATE_IMPORT_PATHS = env.list("PROCRASTINATE_IMPORT_PATHS", default=[])
# One test database per run when several runs share a machine (TEST_DATABASE_NAME=test_tx_a ...).
DATABASES["default"]["TEST"] = {"NAME": env.str("TEST_DATABASE_NAME", default="test_tx")}  # noqa: F405
# Every request reads its key from the database (tests change keys with the ORM and expect the
# next request to see it); tests/api/test_key_cache.py turns the cache on.
API_KEY_CACHE_SECONDS = 0
# Every request writes its rate-limit counts (as one shared counter would: tests assert exact
# counts and statements); tests/api/test_ratelimit.py turns the batches on.
RATE_LIMIT_FLUSH_EVERY = 1
