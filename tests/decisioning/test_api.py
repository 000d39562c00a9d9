"""`/decisioning-endpoints` over HTTP (v2 only): the secret shown once, the institution's and
the card products' endpoints and the one-of-each rule, validation at the boundaries, the
production target rules, changes and their events, scopes, another institution's endpoints
answering 404, and v1 without these paths."""

import base64
import uuid

import pytest
from django.db import IntegrityError, transaction

from cards.models import CardProduct
from core import crypto
from core.outbound.targets import REFUSED
from decisioning.models import DecisioningEndpoint
from events.models import Event
from events.payloads import event_payload
from institutions import scopes
from tests.accounts.api.helpers import (
    ANY,
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
from tests.conftest import Api
from tests.decisioning.helpers import create_endpoint, endpoint_body
from tests.factories import issue_key

pytestmark = pytest.mark.django_db

NOT_FOUND = "No decisioning endpoint with this id."


def stored_body(endpoint: DecisioningEndpoint) -> dict:
    def iso(value):
        return None if value is None else value.isoformat(timespec="milliseconds")[:-6] + "Z"

    return {
        "endpointId": endpoint.pk,
        "cardProductRid": endpoint.card_product_id,
        "url": endpoint.url,
        "timeoutMs": endpoint.timeout_ms,
        "onFailure": endpoint.on_failure,
        "mode": endpoint.mode,
        "enabled": endpoint.enabled,
        "acceptUnsignedAnswers": endpoint.accept_unsigned_answers,
        "previousSecretExpiresAt": iso(endpoint.previous_secret_expires_at),
        "consecutiveFailures": endpoint.consecutive_failures,
        "degradedAt": iso(endpoint.degraded_at),
        "createdAt": iso(endpoint.created_at),
        "updatedAt": iso(endpoint.updated_at),
    }


def product_of(institution) -> CardProduct:
    return CardProduct.objects.filter(institution=institution).order_by("pk").first()


# --- create and read
def test_create_shows_the_secret_once(api_v2, institution, key):
    body = create_endpoint(api_v2)
    endpoint = DecisioningEndpoint.objects.get(pk=body["endpointId"])
    assert endpoint.institution_id == institution.pk
    assert prefixed_id("dce").match(body["endpointId"])
    assert TIMESTAMP.match(body["createdAt"]) and body["createdAt"] == body["updatedAt"]
    secret = body.pop("secret")
    assert body == stored_body(endpoint)
    assert (body["cardProductRid"], body["timeoutMs"], body["onFailure"], body["mode"]) == (
        None,
        1500,
        "standin",
        "live",
    )
    assert body["enabled"] is True and body["previousSecretExpiresAt"] is None
    # Unsigned answers are refused unless the bank says otherwise.
    assert body["acceptUnsignedAnswers"] is False
    assert secret.startswith("whsec_") and len(base64.b64decode(secret[6:])) == 32
    assert endpoint.secret() == secret
    assert secret[6:] not in endpoint.secret_encrypted
    assert endpoint.secret_encrypted.startswith(crypto.current_key_id() + ":")
    # Who created it.
    assert (endpoint.created_by_api_key_id, endpoint.updated_by_api_key_id) == (key[0].pk,) * 2
    # Never again: not in GET, not in the list, not in PATCH.
    path = f"/decisioning-endpoints/{endpoint.pk}"
    for response in (
        api_v2.get(path),
        api_v2.get("/decisioning-endpoints"),
        api_v2.patch(path, {"mode": "shadow"}),
    ):
        assert response.status_code == 200
        assert secret[6:] not in response.content.decode()
    assert resource(api_v2.get(path), "v2") == stored_body(DecisioningEndpoint.objects.get())
    # Its event: what it is, never its secret or URL.
    event = Event.objects.get(type="decisioning_endpoint.created")
    assert (event.object_type, event.object_id, event.actor_id) == (
        "decisioning_endpoint",
        endpoint.pk,
        str(key[0].pk),
    )
    # Stored in the domain's names, shown in the API's (as GET /events/{id} and webhooks).
    assert event.data["endpoint_id"] == endpoint.pk
    assert event_payload(event)["data"] == {
        "endpointId": endpoint.pk,
        "cardProductRid": None,
        "timeoutMs": 1500,
        "onFailure": "standin",
        "mode": "live",
        "enabled": True,
        "acceptUnsignedAnswers": False,
    }


def test_an_endpoint_may_be_created_taking_unsigned_answers(api_v2):
    body = create_endpoint(api_v2, acceptUnsignedAnswers=True)
    assert body["acceptUnsignedAnswers"] is True
    assert DecisioningEndpoint.objects.get().accept_unsigned_answers is True
    event = Event.objects.get(type="decisioning_endpoint.created")
    assert event_payload(event)["data"]["acceptUnsignedAnswers"] is True


def test_an_idempotent_replay_answers_the_same_and_creates_one(api_v2):
    key = uuid.uuid4()
    first = api_v2.post("/decisioning-endpoints", endpoint_body(), idempotency_key=key)
    again = api_v2.post("/decisioning-endpoints", endpoint_body(), idempotency_key=key)
    assert first.status_code == again.status_code == 201
    assert again.content == first.content
    assert again.headers["Idempotent-Replayed"] == "true"
    assert DecisioningEndpoint.objects.count() == 1


def test_an_institution_endpoint_and_one_per_card_product(api_v2, institution):
    product = product_of(institution)
    default = create_endpoint(api_v2)
    for_product = create_endpoint(api_v2, cardProductRid=product.pk, onFailure="decline")
    assert for_product["cardProductRid"] == product.pk
    # A second of either: 409, naming the one there is; nothing written.
    assert_error(
        api_v2.post("/decisioning-endpoints", endpoint_body()),
        "v2",
        409,
        "already_exists",
        details={"endpointId": default["endpointId"]},
        message="The institution has its decisioning endpoint already: change it.",
    )
    assert_error(
        api_v2.post("/decisioning-endpoints", endpoint_body(cardProductRid=product.pk)),
        "v2",
        409,
        "already_exists",
        details={"endpointId": for_product["endpointId"]},
        message="This card product has its decisioning endpoint already: change it.",
    )
    assert DecisioningEndpoint.objects.count() == 2
    assert Event.objects.filter(type="decisioning_endpoint.created").count() == 2
    items, cursor = listed(api_v2.get("/decisioning-endpoints"))
    assert [item["endpointId"] for item in items] == [
        for_product["endpointId"],
        default["endpointId"],
    ]
    assert cursor is None


def test_the_list_is_paged_with_a_cursor(api_v2, institution):
    products = list(CardProduct.objects.filter(institution=institution).order_by("pk"))
    assert len(products) >= 2
    made = [create_endpoint(api_v2)["endpointId"]]
    made += [create_endpoint(api_v2, cardProductRid=p.pk)["endpointId"] for p in products[:2]]
    first, cursor = listed(api_v2.get("/decisioning-endpoints", {"limit": 2}))
    second, end = listed(api_v2.get("/decisioning-endpoints", {"limit": 2, "cursor": cursor}))
    assert [item["endpointId"] for item in first + second] == made[::-1]
    assert end is None


def test_a_card_product_of_another_institution_is_not_found(api_v2, other_institution):
    for rid in (product_of(other_institution).pk, unknown_id("cprd")):
        assert_not_found(
            api_v2.post("/decisioning-endpoints", endpoint_body(cardProductRid=rid)),
            "v2",
            "No card product with this rid.",
        )
    assert DecisioningEndpoint.objects.count() == 0


# --- validation
@pytest.mark.parametrize(
    ("timeout", "accepted"), [(99, False), (100, True), (3000, True), (3001, False)]
)
def test_timeout_boundaries(api_v2, timeout, accepted):
    response = api_v2.post("/decisioning-endpoints", endpoint_body(timeoutMs=timeout))
    if accepted:
        assert created(response, "v2")["timeoutMs"] == timeout
    else:
        bound = "greater than or equal to 100" if timeout < 100 else "less than or equal to 3000"
        assert_validation_error(response, "v2", {"timeoutMs": f"Ensure this value is {bound}."})
        assert DecisioningEndpoint.objects.count() == 0


def test_timeout_boundaries_in_a_change(api_v2):
    path = f"/decisioning-endpoints/{create_endpoint(api_v2)['endpointId']}"
    for timeout in (99, 3001):
        assert api_v2.patch(path, {"timeoutMs": timeout}).status_code == 400
    for timeout in (100, 3000):
        assert resource(api_v2.patch(path, {"timeoutMs": timeout}), "v2")["timeoutMs"] == timeout


@pytest.mark.parametrize(
    ("fields", "details"),
    [
        ({"onFailure": "retry"}, {"onFailure": '"retry" is not a valid choice.'}),
        ({"mode": "dry"}, {"mode": '"dry" is not a valid choice.'}),
        ({"timeoutMs": "500"}, {"timeoutMs": "Must be an integer."}),
        ({"timeoutMs": 500.0}, {"timeoutMs": "Must be an integer."}),
        ({"enabled": "yes"}, {"enabled": "Must be true or false."}),
        ({"acceptUnsignedAnswers": "true"}, {"acceptUnsignedAnswers": "Must be true or false."}),
        ({"acceptUnsignedAnswers": None}, {"acceptUnsignedAnswers": "This field may not be null."}),
        ({"url": "ftp://decide.example.com/"}, {"url": "The scheme must be http or https."}),
        ({"url": "https://"}, {"url": "The URL has no host."}),
        ({"secret": "whsec_mine"}, {"secret": "Unknown field."}),
    ],
)
def test_refused_fields_name_the_field(api_v2, fields, details):
    response = api_v2.post("/decisioning-endpoints", endpoint_body(**fields))
    assert_validation_error(response, "v2", details)
    assert DecisioningEndpoint.objects.count() == 0


def test_required_fields(api_v2):
    assert_validation_error(
        api_v2.post("/decisioning-endpoints", {}),
        "v2",
        {
            "url": "This field is required.",
            "timeoutMs": "This field is required.",
            "onFailure": "This field is required.",
            "mode": "This field is required.",
        },
    )


@pytest.fixture
def production(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False
    settings.WEBHOOK_REQUIRE_HTTPS = True


def test_production_requires_https(api_v2, production):
    assert_validation_error(
        api_v2.post("/decisioning-endpoints", endpoint_body(url="http://93.184.216.34/decide")),
        "v2",
        {"url": "The scheme must be https."},
    )
    body = create_endpoint(api_v2, url="https://93.184.216.34/decide")
    assert body["url"] == "https://93.184.216.34/decide"


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/decide",
        "https://localhost:8443/decide",
        "https://[::1]/decide",
        "https://10.1.2.3/decide",
        "https://192.168.1.1/decide",
        "https://169.254.169.254/latest/meta-data",
        "https://[::ffff:10.0.0.1]/decide",
    ],
)
def test_production_refuses_private_and_loopback_targets(api_v2, production, url):
    assert_validation_error(
        api_v2.post("/decisioning-endpoints", endpoint_body(url=url)), "v2", {"url": REFUSED}
    )


def test_production_checks_a_changed_url_too(api_v2, production):
    endpoint = create_endpoint(api_v2, url="https://93.184.216.34/decide")
    path = f"/decisioning-endpoints/{endpoint['endpointId']}"
    assert_validation_error(
        api_v2.patch(path, {"url": "https://10.0.0.8/decide"}), "v2", {"url": REFUSED}
    )
    assert DecisioningEndpoint.objects.get().url == endpoint["url"]


# --- change
def test_change_and_its_event(api_v2, key):
    endpoint = create_endpoint(api_v2)
    path = f"/decisioning-endpoints/{endpoint['endpointId']}"
    body = resource(
        api_v2.patch(
            path,
            {"mode": "shadow", "onFailure": "decline", "timeoutMs": 800, "enabled": False},
        ),
        "v2",
    )
    stored = DecisioningEndpoint.objects.get()
    assert body == stored_body(stored)
    assert (stored.mode, stored.on_failure, stored.timeout_ms, stored.enabled) == (
        "shadow",
        "decline",
        800,
        False,
    )
    assert body["updatedAt"] >= body["createdAt"]
    event = Event.objects.get(type="decisioning_endpoint.updated")
    assert event.data["changed_fields"] == ["enabled", "mode", "on_failure", "timeout_ms"]
    assert event_payload(event)["data"]["changedFields"] == [
        "enabled",
        "mode",
        "onFailure",
        "timeoutMs",
    ]
    assert event.actor_id == str(key[0].pk)
    # The same values again: nothing written, no event.
    resource(api_v2.patch(path, {"mode": "shadow", "acceptUnsignedAnswers": False}), "v2")
    assert Event.objects.filter(type="decisioning_endpoint.updated").count() == 1
    # Accepting unsigned answers is a change of its own, named in its event.
    body = resource(api_v2.patch(path, {"acceptUnsignedAnswers": True}), "v2")
    assert body["acceptUnsignedAnswers"] is True
    assert DecisioningEndpoint.objects.get().accept_unsigned_answers is True
    latest = Event.objects.filter(type="decisioning_endpoint.updated").order_by("-pk").first()
    assert event_payload(latest)["data"] == {
        "endpointId": endpoint["endpointId"],
        "cardProductRid": None,
        "timeoutMs": 800,
        "onFailure": "decline",
        "mode": "shadow",
        "enabled": False,
        "acceptUnsignedAnswers": True,
        "changedFields": ["acceptUnsignedAnswers"],
    }
    assert_validation_error(
        api_v2.patch(path, {"acceptUnsignedAnswers": "yes"}),
        "v2",
        {"acceptUnsignedAnswers": "Must be true or false."},
    )
    # The card product does not change; nothing else is a field.
    assert_validation_error(
        api_v2.patch(path, {"cardProductRid": "cprd_x"}), "v2", {"cardProductRid": "Unknown field."}
    )
    assert api_v2.patch(path, {}).status_code == 400


# --- tenancy, scopes, versions
def test_another_institutions_endpoint_is_not_found(api_v2, other_institution):
    theirs = create_endpoint(Api("v2", issue_key(other_institution)[1]))
    path = f"/decisioning-endpoints/{theirs['endpointId']}"
    assert_not_found(api_v2.get(path), "v2", NOT_FOUND)
    assert_not_found(api_v2.patch(path, {"mode": "shadow"}), "v2", NOT_FOUND)
    assert_not_found(api_v2.post(f"{path}/secret-rotations", {}), "v2", NOT_FOUND)
    assert_not_found(api_v2.post(f"{path}/tests", {}), "v2", NOT_FOUND)
    assert listed(api_v2.get("/decisioning-endpoints"))[0] == []
    stored = DecisioningEndpoint.objects.get()
    assert (stored.mode, stored.previous_secret_encrypted) == ("live", "")
    # The other institution's endpoint does not stop this one from having its own.
    create_endpoint(api_v2)


def test_writes_need_the_decisioning_scope(api_v2, institution):
    endpoint = create_endpoint(api_v2)
    path = f"/decisioning-endpoints/{endpoint['endpointId']}"
    without = Api(
        "v2", issue_key(institution, scopes=[s for s in scopes.ALL if s != "decisioning:write"])[1]
    )
    denied = {"requiredScope": "decisioning:write"}
    for response in (
        without.post("/decisioning-endpoints", endpoint_body()),
        without.patch(path, {"mode": "shadow"}),
        without.post(f"{path}/secret-rotations", {}),
        without.post(f"{path}/tests", {}),
    ):
        assert_error(response, "v2", 403, "permission_denied", details=denied)
    # Reading needs `read` only.
    reader = Api("v2", issue_key(institution, scopes=[scopes.READ])[1])
    assert resource(reader.get(path), "v2")["endpointId"] == endpoint["endpointId"]
    assert DecisioningEndpoint.objects.get().mode == "live"
    assert "decisioning:write" in scopes.ROLES["full"]
    assert "decisioning:write" not in scopes.ROLES["readonly"] + scopes.ROLES["network"]


def test_v1_has_no_decisioning_endpoints(api_v1, api_v2):
    endpoint = create_endpoint(api_v2)
    for response in (
        api_v1.get("/decisioning-endpoints"),
        api_v1.post("/decisioning-endpoints", endpoint_body()),
        api_v1.get(f"/decisioning-endpoints/{endpoint['endpointId']}"),
    ):
        assert_error(response, "v1", 404, "not_found", details=ANY)


# --- the database's own rules
@pytest.mark.parametrize("timeout", [99, 3001])
def test_the_database_refuses_a_timeout_out_of_range(api_v2, timeout):
    endpoint = create_endpoint(api_v2)
    with pytest.raises(IntegrityError, match="decisioning_endpoint_timeout_range"):
        with transaction.atomic():
            DecisioningEndpoint.objects.filter(pk=endpoint["endpointId"]).update(timeout_ms=timeout)


def test_the_database_keeps_one_endpoint_per_institution_and_per_product(api_v2, institution):
    product = product_of(institution)
    create_endpoint(api_v2)
    create_endpoint(api_v2, cardProductRid=product.pk)
    for card_product in (None, product):
        with pytest.raises(IntegrityError, match="decisioning_endpoint_one_per"):
            with transaction.atomic():
                DecisioningEndpoint.objects.create(
                    institution=institution,
                    card_product=card_product,
                    url="https://decide.example.com/",
                    timeout_ms=500,
                    on_failure="decline",
                    mode="live",
                    secret_encrypted="x",
                )
