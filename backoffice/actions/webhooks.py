"""What staff do to webhooks: switch endpoints on and off, retry failed deliveries
(docs/webhooks.md)."""

from backoffice.actions.base import Confirmation, StaffAction, enable_actions
from webhooks.models import WebhookDelivery, WebhookEndpoint
from webhooks.services import delivery_retry, webhook_endpoint_update

enable_endpoints, disable_endpoints = enable_actions(
    model=WebhookEndpoint,
    service=webhook_endpoint_update,
    noun="endpoint",
    names=("enable_endpoints", "disable_endpoints"),
    labels=(
        "Enable selected endpoints",
        "Disable selected endpoints (no new deliveries; pending ones fail)",
    ),
    arguments=lambda endpoint, enabled: {"endpoint": endpoint, "changes": {"enabled": enabled}},
)

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
    applies=lambda delivery, user: delivery.status == WebhookDelivery.Status.FAILED,
)
