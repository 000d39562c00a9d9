"""Signing secrets: rotation keeps the previous secret signing during its overlap (two `v1,`
signatures in one `webhook-signature` header, each verifying with its secret), only the new one
after; rotation through the API shows the new secret once; secrets re-encrypt under a new key
and never appear in an event or the admin."""

import base64
import json
from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone
from standardwebhooks import Webhook, WebhookVerificationError

from core.actors import Actor, acting_as
from core.exceptions import ValidationFailed
from core.reencryption import sensitive_data_reencrypt
from decisioning.models import DecisioningEndpoint
from decisioning.services import (
    DEFAULT_OVERLAP_SECONDS,
    MAX_OVERLAP_SECONDS,
    decisioning_endpoint_create,
    decisioning_endpoint_rotate_secret,
    signed_headers,
)
from events.models import Event
from events.payloads import event_payload
from tests.accounts.api.helpers import assert_validation_error, created, resource
from tests.decisioning.helpers import create_endpoint

pytestmark = pytest.mark.django_db

BODY = json.dumps({"type": "decisioning.test", "id": "dct_1"}).encode()
OLD = "old:" + base64.b64encode(b"o" * 32).decode()
NEW = "new:" + base64.b64encode(b"n" * 32).decode()


def new_endpoint(institution, **fields) -> tuple[DecisioningEndpoint, str]:
    with acting_as(Actor()):
        made = decisioning_endpoint_create(
            institution=institution,
            url="https://decide.example.com/tx",
            timeout_ms=500,
            on_failure="decline",
            mode="live",
            **fields,
        )
    return DecisioningEndpoint.objects.get(pk=made.endpoint.pk), made.secret


def headers_now(endpoint: DecisioningEndpoint) -> dict:
    now = timezone.now().replace(microsecond=0)
    return signed_headers(endpoint=endpoint, message_id="dct_1", body=BODY, at=now)


def verifies(secret: str, headers: dict) -> bool:
    try:
        Webhook(secret).verify(BODY, headers)
    except WebhookVerificationError:
        return False
    return True


def test_one_signature_before_any_rotation(institution):
    endpoint, secret = new_endpoint(institution)
    headers = headers_now(endpoint)
    assert headers["webhook-id"] == "dct_1"
    assert len(headers["webhook-signature"].split(" ")) == 1
    assert headers["webhook-signature"].startswith("v1,")
    assert verifies(secret, headers)
    assert not verifies("whsec_" + "QUFB" * 11, headers)


def test_both_secrets_verify_during_the_overlap_and_only_the_new_one_after(institution):
    endpoint, old = new_endpoint(institution)
    rotated = decisioning_endpoint_rotate_secret(endpoint=endpoint)
    new = rotated.secret
    assert new != old
    endpoint = DecisioningEndpoint.objects.get(pk=endpoint.pk)
    assert endpoint.secret() == new and endpoint.previous_secret() == old
    expires = endpoint.previous_secret_expires_at
    assert (
        timedelta(seconds=DEFAULT_OVERLAP_SECONDS - 5)
        < expires - timezone.now()
        <= timedelta(seconds=DEFAULT_OVERLAP_SECONDS)
    )

    during = headers_now(endpoint)
    assert len(during["webhook-signature"].split(" ")) == 2
    assert verifies(new, during) and verifies(old, during)

    # The overlap over: the previous secret signs no more.
    DecisioningEndpoint.objects.filter(pk=endpoint.pk).update(
        previous_secret_expires_at=timezone.now() - timedelta(seconds=1)
    )
    endpoint.refresh_from_db()
    after = headers_now(endpoint)
    assert len(after["webhook-signature"].split(" ")) == 1
    assert verifies(new, after) and not verifies(old, after)


def test_a_rotation_without_overlap_stops_the_old_secret_at_once(institution):
    endpoint, old = new_endpoint(institution)
    new = decisioning_endpoint_rotate_secret(endpoint=endpoint, overlap_seconds=0).secret
    endpoint = DecisioningEndpoint.objects.get(pk=endpoint.pk)
    assert (endpoint.previous_secret_encrypted, endpoint.previous_secret_expires_at) == ("", None)
    headers = headers_now(endpoint)
    assert verifies(new, headers) and not verifies(old, headers)


def test_a_second_rotation_keeps_only_the_secret_before_it(institution):
    endpoint, first = new_endpoint(institution)
    second = decisioning_endpoint_rotate_secret(endpoint=endpoint).secret
    third = decisioning_endpoint_rotate_secret(endpoint=endpoint).secret
    endpoint = DecisioningEndpoint.objects.get(pk=endpoint.pk)
    headers = headers_now(endpoint)
    assert len(headers["webhook-signature"].split(" ")) == 2
    assert verifies(third, headers) and verifies(second, headers)
    assert not verifies(first, headers)


@pytest.mark.parametrize("overlap", [-1, MAX_OVERLAP_SECONDS + 1, 1.5, True])
def test_the_overlap_is_bounded(institution, overlap):
    endpoint, _ = new_endpoint(institution)
    with pytest.raises(ValidationFailed) as refused:
        decisioning_endpoint_rotate_secret(endpoint=endpoint, overlap_seconds=overlap)
    assert list(refused.value.details) == ["overlap_seconds"]
    assert DecisioningEndpoint.objects.get(pk=endpoint.pk).previous_secret_encrypted == ""


def test_rotation_through_the_api_shows_the_new_secret_once(api_v2):
    endpoint = create_endpoint(api_v2)
    path = f"/decisioning-endpoints/{endpoint['endpointId']}"
    rotated = created(api_v2.post(f"{path}/secret-rotations", {"overlapSeconds": 3600}), "v2")
    new = rotated.pop("secret")
    assert new != endpoint["secret"] and new.startswith("whsec_")
    stored = DecisioningEndpoint.objects.get()
    assert stored.secret() == new and stored.previous_secret() == endpoint["secret"]
    assert rotated["previousSecretExpiresAt"] is not None
    assert rotated == {k: v for k, v in resource(api_v2.get(path), "v2").items()}
    for text in (
        api_v2.get(path).content.decode(),
        json.dumps(list(Event.objects.values()), default=str),
    ):
        assert new[6:] not in text and endpoint["secret"][6:] not in text
    event = Event.objects.get(type="decisioning_endpoint.secret_rotated")
    assert event_payload(event)["data"] == {
        "endpointId": stored.pk,
        "previousSecretExpiresAt": rotated["previousSecretExpiresAt"],
    }
    assert_validation_error(
        api_v2.post(f"{path}/secret-rotations", {"overlapSeconds": MAX_OVERLAP_SECONDS + 1}),
        "v2",
        {"overlapSeconds": f"Ensure this value is less than or equal to {MAX_OVERLAP_SECONDS}."},
    )


def test_both_secrets_move_to_the_newest_key(institution):
    with override_settings(FIELD_ENCRYPTION_KEYS=OLD):
        endpoint, first = new_endpoint(institution)
        second = decisioning_endpoint_rotate_secret(endpoint=endpoint).secret
    endpoint = DecisioningEndpoint.objects.get(pk=endpoint.pk)
    assert endpoint.secret_encrypted.startswith("old:")
    assert endpoint.previous_secret_encrypted.startswith("old:")
    with override_settings(FIELD_ENCRYPTION_KEYS=f"{NEW},{OLD}"):
        report = sensitive_data_reencrypt()
        endpoint.refresh_from_db()
        assert report.counts["decisioning_endpoints"] == 1
        assert endpoint.secret_encrypted.startswith("new:")
        assert endpoint.previous_secret_encrypted.startswith("new:")
        assert (endpoint.secret(), endpoint.previous_secret()) == (second, first)
        assert sensitive_data_reencrypt().counts["decisioning_endpoints"] == 0
