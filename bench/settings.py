"""Production settings but for one bench-only choice: decisioning endpoints may be plain http
on loopback (bench/authorizations.py's program listens on 127.0.0.1 in the benchmark's own
process).

Production forces `WEBHOOK_REQUIRE_HTTPS` on and `WEBHOOK_ALLOW_PRIVATE_TARGETS` off whatever
the environment says (tests/webhooks/test_targets.py holds it), so the benchmark cannot turn
them through its environment: it names this module in DJANGO_SETTINGS_MODULE instead
(`bench.settings`, importable from the root as gunicorn and manage.py run). Nothing else
changes; never a setting for a deployment.
"""

from config.settings.production import *  # noqa: F403

WEBHOOK_REQUIRE_HTTPS = False
WEBHOOK_ALLOW_PRIVATE_TARGETS = True
