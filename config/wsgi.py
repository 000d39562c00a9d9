"""WSGI entry point (gunicorn). Production settings unless DJANGO_SETTINGS_MODULE says otherwise."""

import gc
import os
from importlib import import_module

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

application = get_wsgi_application()


def freeze_loaded() -> None:
    """Put what the process has loaded (modules, settings, URL patterns and views: some 160,000
    objects, alive as long as the process) out of the cyclic collector's way. Otherwise every
    full collection walks all of them, in the middle of whichever request is running: the
    longest took 90-118 ms, and 16-20 ms once frozen (bench/README.md). gunicorn calls it in
    each worker once the application is loaded (gunicorn.conf.py, `post_worker_init`)."""
    from django.conf import settings

    import_module(settings.ROOT_URLCONF)  # imported by the first request otherwise: now
    gc.collect()
    gc.freeze()
