"""The row locks of decisioning (docs/design.md section 2): an endpoint is locked alone, by the
change that reads and writes it (an update, a secret rotation)."""

from .models import DecisioningEndpoint


def lock_endpoint(endpoint_id) -> DecisioningEndpoint:
    """The endpoint, its row locked until the transaction ends."""
    return DecisioningEndpoint.objects.select_for_update().get(pk=endpoint_id)
