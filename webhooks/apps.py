import logging

from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    verbose_name = "Webhooks"

    def ready(self):
        from core import reencryption
        from webhooks.reencryption import WEBHOOK_ENDPOINTS

        reencryption.register(WEBHOOK_ENDPOINTS)
        from events import consumers

        from .services import deliveries_schedule
        from .services.scheduling import ENDPOINTS
        from .tasks import PlannedRetryLogFilter

        # Webhooks subscribe to events (events know nothing of webhooks): every event's
        # deliveries are scheduled by `emit()`, in the transaction of the change; a posting's
        # statement reads their endpoints with it (ENDPOINTS).
        consumers.register(deliveries_schedule, lookup=ENDPOINTS)

        worker_logger = logging.getLogger("procrastinate.worker")
        if not any(isinstance(f, PlannedRetryLogFilter) for f in worker_logger.filters):
            worker_logger.addFilter(PlannedRetryLogFilter())
