"""What staff do to webhooks: retry failed deliveries (docs/webhooks.md)."""

from backoffice.actions.base import Confirmation, StaffAction
from webhooks.models import WebhookDelivery
from webhooks.services import delivery_retry

retry_deliveries = StaffAction(
    name="retry_deliveries",
    label="Retry selected failed deliveries",
    model=WebhookDelivery,
    # Not failed, or its endpoint disabled: refused by the service.
    service=delivery_retry,
    arguments=lambda delivery, asked: {"delivery": delivery},
    # Nothing to ask: the page only confirms which deliveries are retried.
    confirmation=Confirmation(
        template="admin/webhooks/webhookdelivery/retry_confirmation.html",
        title="Retry deliveries",
        submit="Retry {n} delivery(ies)",
    ),
    history=lambda outcome, asked: "Retried (admin action “Retry”).",
    done="Retrying {n} delivery(ies): queued now.",
    already="Not retried, left as they were: {ids}.",
)
