"""The bodies TX POSTs to a program's decisioning endpoint: a published format in the API's
names (camelCase, times as `iso_millis`), like an event's payload for webhooks
(`events.payloads`). A wire module whose name does not say it (tests/test_imports.py,
WIRE_MODULES); the services import it to send what it renders. Item 2 of issue 31 adds the
authorization request here."""

from datetime import datetime

from core.timestamps import iso_millis

TEST_TYPE = "decisioning.test"


def test_payload(*, message_id: str, endpoint_id: str, at: datetime) -> dict:
    """The self-test's body: `{type: "decisioning.test", id, endpointId, createdAt}`."""
    return {
        "type": TEST_TYPE,
        "id": message_id,
        "endpointId": endpoint_id,
        "createdAt": iso_millis(at),
    }
