"""`/webhook-endpoints` over HTTP, in both versions: the secret shown once, validation errors
naming the field, the URL and address rules of production, changes, lists, and another
institution's endpoints answering 404."""

import base64
import uuid

import pytest

from api.models import IdempotencyRecord
from core import crypto
from core.outbound.targets import REFUSED
from tests.accounts.api.helpers import (
    TIMESTAMP,
    assert_error,
    assert_not_found,
    assert_validation_error,
    created,
    listed,
    prefixed_id,
    resource,
    unknown_id,
)
from webhooks.models import WebhookEndpoint
from webhooks.services import MAX_ENABLED_ENDPOINTS

pytestmark = pytest.mark.django_db

URL = "https://hooks.example.com/tx?source=bank"
LOCAL_URL = "http://127.0.0.1:9000/hooks"


def create(api, url=URL, event_types=("customer.created",), **fields):
    return api.post("/webhook-endpoints", {"url": url, "eventTypes": list(event_types), **fields})


def endpoint_body(endpoint: WebhookEndpoint) -> dict:
    return {
        "endpointId": endpoint.pk,
        "url": endpoint.url,
        "eventTypes": endpoint.event_types,
        "enabled": endpoint.enabled,
        "createdAt": endpoint.created_at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "updatedAt": endpoint.updated_at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
    }


# --- create
def test_create_shows_the_secret_once(api, institution):
    body = created(
        create(api, event_types=["transfer.posted", "customer.created", "transfer.posted"]),
        api.version,
    )
    endpoint = WebhookEndpoint.objects.get(pk=body["endpointId"])
    assert endpoint.institution_id == institution.pk
    assert prefixed_id("whe").match(body["endpointId"])
    assert TIMESTAMP.match(body["createdAt"]) and body["createdAt"] == body["updatedAt"]
    secret = body.pop("secret")
    assert body == endpoint_body(endpoint)
    assert body["eventTypes"] == ["customer.created", "transfer.posted"]  # sorted, unique
    assert body["enabled"] is True
    # whsec_ + base64 of 32 random bytes; stored only encrypted, bound to the endpoint.
    assert secret.startswith("whsec_") and len(base64.b64decode(secret[6:])) == 32
    assert endpoint.secret() == secret
    assert secret not in endpoint.secret_encrypted
    assert endpoint.secret_encrypted.startswith(crypto.current_key_id() + ":")
    # Never again: not in GET, not in the list, not in PATCH.
    path = f"/webhook-endpoints/{endpoint.pk}"
    assert resource(api.get(path), api.version) == endpoint_body(endpoint)
    items, _ = listed(api.get("/webhook-endpoints"))
    assert items == [endpoint_body(endpoint)]
    changed = resource(api.patch(path, {"enabled": False}), api.version)
    for response_body in (changed, items[0]):
        assert "secret" not in response_body
    for response in (api.get(path), api.get("/webhook-endpoints"), api.patch(path, {"url": URL})):
        assert secret[6:] not in response.content.decode()


def test_each_endpoint_has_its_own_secret(api):
    first = created(create(api), api.version)
    second = created(create(api), api.version)
    assert first["secret"] != second["secret"]


def test_create_for_every_event_and_disabled(api):
    body = created(create(api, event_types=["*"], enabled=False), api.version)
    assert (body["eventTypes"], body["enabled"]) == (["*"], False)


def test_loopback_http_is_allowed_in_development_and_tests(api):
    body = created(create(api, url=LOCAL_URL), api.version)
    assert body["url"] == LOCAL_URL


@pytest.mark.parametrize(
    "fields, details",
    [
        ({"url": "ftp://hooks.example.com/"}, {"url": "The scheme must be http or https."}),
        (
            {"url": "https://me:pw@hooks.example.com/"},
            {
                "url": "A URL with credentials (user:password@) is not accepted: authenticate "
                "webhooks by their signature."
            },
        ),
        ({"url": "https://"}, {"url": "The URL has no host."}),
        ({"url": 42}, {"url": "Not a valid string."}),
        ({"eventTypes": []}, {"eventTypes": "Ensure this field has at least 1 elements."}),
        (
            {"eventTypes": ["card.teleported"]},
            {"eventTypes.0": '"card.teleported" is not a valid choice.'},
        ),
        (
            {"eventTypes": ["*", "customer.created"]},
            {"eventTypes": '"*" (every type) stands alone.'},
        ),
        (
            {"eventTypes": "customer.created"},
            {"eventTypes": 'Expected a list of items but got type "str".'},
        ),
        ({"enabled": "yes"}, {"enabled": "Must be true or false."}),
        ({"secret": "whsec_mine"}, {"secret": "Unknown field."}),
    ],
)
def test_create_validation(api, fields, details):
    body = {"url": URL, "eventTypes": ["customer.created"], **fields}
    assert_validation_error(api.post("/webhook-endpoints", body), api.version, details)
    assert not WebhookEndpoint.objects.exists()


def test_url_and_event_types_are_required(api):
    assert_validation_error(
        api.post("/webhook-endpoints", {}),
        api.version,
        {"url": "This field is required.", "eventTypes": "This field is required."},
    )


# --- production rules
@pytest.fixture
def production(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False
    settings.WEBHOOK_REQUIRE_HTTPS = True


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/hooks",
        "https://localhost:8443/hooks",
        "https://[::1]/hooks",
        "https://10.20.30.40/hooks",
        "https://192.168.0.10/hooks",
        "https://[2002:a00:1::]/hooks",  # 6to4 wrapping 10.0.0.1
        "https://[fec0::1]/hooks",  # site-local
        "https://[64:ff9b::a9fe:a9fe]/hooks",  # NAT64 of the metadata service
        "https://169.254.169.254/latest/meta-data",
        "https://0.0.0.0/",  # noqa: S104 (what is refused)
    ],
)
def test_production_refuses_private_and_loopback_targets(api, production, url):
    assert_validation_error(create(api, url=url), api.version, {"url": REFUSED})


def test_production_requires_https(api, production):
    assert_validation_error(
        create(api, url="http://93.184.216.34/hooks"),
        api.version,
        {"url": "The scheme must be https."},
    )
    body = created(create(api, url="https://93.184.216.34/hooks"), api.version)
    assert body["url"] == "https://93.184.216.34/hooks"


def test_production_checks_a_changed_url_too(api, production):
    endpoint = created(create(api, url="https://93.184.216.34/hooks"), api.version)
    path = f"/webhook-endpoints/{endpoint['endpointId']}"
    assert_validation_error(
        api.patch(path, {"url": "https://127.0.0.1/hooks"}),
        api.version,
        {"url": REFUSED},
    )
    assert WebhookEndpoint.objects.get(pk=endpoint["endpointId"]).url == endpoint["url"]


# --- update
def test_change_url_types_and_enabled(api):
    endpoint = created(create(api), api.version)
    path = f"/webhook-endpoints/{endpoint['endpointId']}"
    body = resource(
        api.patch(
            path,
            {"url": LOCAL_URL, "eventTypes": ["hold.created", "hold.captured"], "enabled": False},
        ),
        api.version,
    )
    stored = WebhookEndpoint.objects.get(pk=endpoint["endpointId"])
    assert body == endpoint_body(stored)
    assert (body["url"], body["eventTypes"], body["enabled"]) == (
        LOCAL_URL,
        ["hold.captured", "hold.created"],
        False,
    )
    assert body["updatedAt"] > endpoint["updatedAt"]
    assert stored.secret() == endpoint["secret"]  # a change keeps the secret


def test_no_change_writes_nothing(api):
    endpoint = created(create(api), api.version)
    body = resource(
        api.patch(f"/webhook-endpoints/{endpoint['endpointId']}", {"enabled": True}), api.version
    )
    assert body["updatedAt"] == endpoint["updatedAt"]


def test_v1_changes_by_post_too(api_v1):
    endpoint = created(create(api_v1), "v1")
    body = resource(
        api_v1.post(f"/webhook-endpoints/{endpoint['endpointId']}", {"enabled": False}), "v1"
    )
    assert body["enabled"] is False


@pytest.mark.parametrize(
    "fields, details",
    [
        ({}, {"body": "Give at least one field."}),
        ({"eventTypes": ["nope"]}, {"eventTypes.0": '"nope" is not a valid choice.'}),
        ({"url": "gopher://x"}, {"url": "The scheme must be http or https."}),
        ({"secret": "x"}, {"secret": "Unknown field."}),
    ],
)
def test_update_validation(api, fields, details):
    endpoint = created(create(api), api.version)
    response = api.patch(f"/webhook-endpoints/{endpoint['endpointId']}", fields)
    assert_validation_error(response, api.version, details)


def test_at_most_so_many_enabled_endpoints(api):
    for _ in range(MAX_ENABLED_ENDPOINTS):
        created(create(api), api.version)
    details = {"enabled": f"At most {MAX_ENABLED_ENDPOINTS} enabled endpoints."}
    assert_validation_error(create(api), api.version, details)
    disabled = created(create(api, enabled=False), api.version)  # a disabled one may be added
    path = f"/webhook-endpoints/{disabled['endpointId']}"
    assert_validation_error(api.patch(path, {"enabled": True}), api.version, details)


# --- reads, tenancy
def test_list_newest_first_and_paginated(api):
    ids = [created(create(api), api.version)["endpointId"] for _ in range(3)]
    items, cursor = listed(api.get("/webhook-endpoints", {"limit": 2}))
    assert [item["endpointId"] for item in items] == ids[::-1][:2]
    items, cursor = listed(api.get("/webhook-endpoints", {"limit": 2, "cursor": cursor}))
    assert ([item["endpointId"] for item in items], cursor) == ([ids[0]], None)


def test_another_institutions_endpoint_is_not_found(api, other_api):
    endpoint = created(create(other_api), other_api.version)
    path = f"/webhook-endpoints/{endpoint['endpointId']}"
    message = "No webhook endpoint with this id."
    assert_not_found(api.get(path), api.version, message)
    assert_not_found(api.patch(path, {"enabled": False}), api.version, message)
    assert_not_found(api.get(f"/webhook-endpoints/{unknown_id('whe')}"), api.version, message)
    assert listed(api.get("/webhook-endpoints"))[0] == []
    assert WebhookEndpoint.objects.get(pk=endpoint["endpointId"]).enabled is True


def test_v2_needs_an_idempotency_key(api_v2):
    response = api_v2.post(
        "/webhook-endpoints", {"url": URL, "eventTypes": ["*"]}, idempotency_key=None
    )
    assert_error(response, "v2", 400, "idempotency_key_missing")


def test_a_replayed_creation_repeats_the_secret_stored_only_encrypted(api):
    key = uuid.uuid4()
    body = {"url": URL, "eventTypes": ["*"]}
    first = api.post("/webhook-endpoints", body, idempotency_key=key)
    again = api.post("/webhook-endpoints", body, idempotency_key=key)
    assert again["Idempotent-Replayed"] == "true"
    assert (again.status_code, again.content) == (first.status_code, first.content)
    assert WebhookEndpoint.objects.count() == 1
    secret = created(first, api.version)["secret"]
    stored = bytes(IdempotencyRecord.objects.get(key=key).response_body)
    assert stored.startswith(b"sealed:")
    assert secret.encode() not in stored and secret[6:].encode() not in stored
