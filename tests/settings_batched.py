"""The test settings with the rate limits' production batches, for a server a test starts
(tests/api/test_ratelimit_exit.py): a process writes its counts every 100 requests or hour, so
what it has not written yet is plain to see. One day's window, so none ends during a test."""

from config.settings.test import *  # noqa: F403

RATE_LIMIT_FLUSH_EVERY = 100
RATE_LIMIT_FLUSH_SECONDS = 3600.0
RATE_LIMIT_WINDOW_SECONDS = 86400
