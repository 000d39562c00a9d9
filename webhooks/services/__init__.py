from .deliveries import (
    NoDeliverySlot,
    delivery_attempt,
    delivery_retry,
    payload,
    retry_delay,
    signed_headers,
)
from .endpoints import (
    MAX_ENABLED_ENDPOINTS,
    CreatedEndpoint,
    webhook_endpoint_create,
    webhook_endpoint_update,
)
from .scheduling import DELIVER_TASK, deliveries_schedule, delivery_lock

__all__ = [
    "DELIVER_TASK",
    "MAX_ENABLED_ENDPOINTS",
    "CreatedEndpoint",
    "NoDeliverySlot",
    "deliveries_schedule",
    "delivery_attempt",
    "delivery_lock",
    "delivery_retry",
    "payload",
    "retry_delay",
    "signed_headers",
    "webhook_endpoint_create",
    "webhook_endpoint_update",
]
