import logging

from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    verbose_name = "Webhooks"

    def ready(self):
        from .tasks import PlannedRetryLogFilter

        worker_logger = logging.getLogger("procrastinate.worker")
        if not any(isinstance(f, PlannedRetryLogFilter) for f in worker_logger.filters):
            worker_logger.addFilter(PlannedRetryLogFilter())
