"""Per-key rate limit: a fixed window counted in Django's cache, shared by every app process.

RATE_LIMIT_REQUESTS per RATE_LIMIT_WINDOW_SECONDS for each API key. With Redis (CACHE_URL) the
counter is atomic; with the default database cache two processes racing on one window can each
count once, so the limit may let a handful of extra requests through under contention.
"""

import time

from django.conf import settings
from django.core.cache import cache
from rest_framework.throttling import BaseThrottle

from .exceptions import RateLimited


class ApiKeyRateThrottle(BaseThrottle):
    def allow_request(self, request, view):
        api_key = getattr(request, "auth", None)
        if api_key is None:
            return True
        limit = settings.RATE_LIMIT_REQUESTS
        window = settings.RATE_LIMIT_WINDOW_SECONDS
        if limit <= 0:
            return True
        now = time.time()
        window_start = int(now // window) * window
        cache_key = f"ratelimit:{api_key.id}:{window_start}"
        cache.add(cache_key, 0, timeout=window + 1)
        try:
            count = cache.incr(cache_key)
        except ValueError:  # expired between add and incr
            cache.set(cache_key, 1, timeout=window + 1)
            count = 1
        if count > limit:
            raise RateLimited(retry_after=max(1, int(window_start + window - now + 0.999)))
        return True
