"""`/webhook-endpoints`: subscribe URLs to the institution's events, list and change them.
Identical in both versions (v1: its envelope, 200 on creation, POST as an alias of PATCH)."""

from api.schema import both, document
from api.views import TXView
from institutions import scopes

from ..selectors import webhook_endpoint_get, webhook_endpoint_list
from ..services import webhook_endpoint_create, webhook_endpoint_update
from .serializers import (
    WebhookEndpointCreate,
    WebhookEndpointOut,
    WebhookEndpointUpdate,
    WebhookEndpointWithSecret,
)

DELIVERY_HELP = (
    "Each matching event is POSTed as JSON (the body of `GET /events/{eventId}`), signed per "
    "Standard Webhooks: headers `webhook-id` (the event id, the same on every attempt: "
    "deduplicate by it), `webhook-timestamp` and `webhook-signature`. A 2xx answer within 10 "
    "seconds acknowledges it; anything else is retried with exponential backoff for up to 3 "
    "days. The events of one object arrive in the order they happened."
)


def _changes(data: dict) -> dict:
    names = {"url": "url", "eventTypes": "event_types", "enabled": "enabled"}
    return {names[name]: value for name, value in data.items()}


class WebhookEndpointListView(TXView):
    write_scope = scopes.WEBHOOKS_WRITE

    @document(
        name="WebhookEndpointCreated",
        resources=both(WebhookEndpointWithSecret),
        request=both(WebhookEndpointCreate),
        created=True,
        summary="Create a webhook endpoint",
        description="The response carries the signing `secret`, once: it is never shown again. "
        + DELIVERY_HELP,
        operation_id="webhook_endpoints_create",
        tags=["Webhooks"],
    )
    def post(self, request):
        data = self.parse(WebhookEndpointCreate)
        created = webhook_endpoint_create(
            institution=self.institution,
            url=data["url"],
            event_types=data["eventTypes"],
            enabled=data.get("enabled", True),
        )
        body = {**WebhookEndpointOut(created.endpoint).data, "secret": created.secret}
        # Replayed by the same Idempotency-Key, the secret comes back: stored encrypted, as
        # every stored response is (api.idempotency).
        return self.created(body)

    @document(
        name="WebhookEndpoint",
        resources=both(WebhookEndpointOut),
        many=True,
        summary="List webhook endpoints, newest first",
        operation_id="webhook_endpoints_list",
        tags=["Webhooks"],
    )
    def get(self, request):
        return self.respond_list(
            webhook_endpoint_list(institution=self.institution), WebhookEndpointOut
        )


class WebhookEndpointDetailView(TXView):
    write_scope = scopes.WEBHOOKS_WRITE

    @document(
        name="WebhookEndpoint",
        resources=both(WebhookEndpointOut),
        summary="Retrieve a webhook endpoint",
        operation_id="webhook_endpoints_retrieve",
        tags=["Webhooks"],
    )
    def get(self, request, endpointId):  # noqa: N803 (path parameters are camelCase)
        endpoint = webhook_endpoint_get(institution=self.institution, endpoint_id=endpointId)
        return self.respond(WebhookEndpointOut(endpoint).data)

    @document(
        name="WebhookEndpoint",
        resources=both(WebhookEndpointOut),
        request=both(WebhookEndpointUpdate),
        summary="Change a webhook endpoint",
        description="Send only what changes: `url`, `eventTypes`, `enabled`. Events written "
        "while an endpoint is disabled are not delivered to it later.",
        operation_id="webhook_endpoints_update",
        tags=["Webhooks"],
    )
    def patch(self, request, endpointId):  # noqa: N803
        endpoint = webhook_endpoint_get(institution=self.institution, endpoint_id=endpointId)
        changes = _changes(self.parse(WebhookEndpointUpdate))
        endpoint = webhook_endpoint_update(endpoint=endpoint, changes=changes).value
        return self.respond(WebhookEndpointOut(endpoint).data)
