"""The row locks of webhooks (docs/design.md section 2; the order: docs/money.md, "Locking"). A
delivery or an endpoint is locked alone, by the change that reads and writes it; the jobs'
concurrency slots are advisory locks (`services.slots`), not row locks."""

from .models import WebhookDelivery, WebhookEndpoint


def lock_delivery(delivery_id) -> WebhookDelivery:
    """The delivery, its row locked until the transaction ends (an attempt's outcome, a failure
    before any attempt)."""
    return WebhookDelivery.objects.select_for_update().get(pk=delivery_id)


def lock_delivery_to_retry(delivery_id) -> WebhookDelivery:
    """The delivery with its endpoint and event, its row only locked until the transaction
    ends (staff retrying it)."""
    return (
        WebhookDelivery.objects.select_for_update(of=("self",))
        .select_related("endpoint", "event")
        .get(pk=delivery_id)
    )


def lock_endpoint(endpoint_id) -> WebhookEndpoint:
    """The endpoint, its row locked until the transaction ends."""
    return WebhookEndpoint.objects.select_for_update().get(pk=endpoint_id)
