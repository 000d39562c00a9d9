"""The bodies TX POSTs to a program's decisioning endpoint: a published format in the API's
names (camelCase, times as `iso_millis`), like an event's payload for webhooks
(`events.payloads`). A wire module whose name does not say it (tests/test_imports.py,
WIRE_MODULES); the services import it to send what it renders."""

from datetime import datetime

from core.timestamps import iso_millis

TEST_TYPE = "decisioning.test"
AUTHORIZATION_TYPE = "authorization.request"
INCREMENT_TYPE = "authorization.increment"


def test_payload(*, message_id: str, endpoint_id: str, at: datetime) -> dict:
    """The self-test's body: `{type: "decisioning.test", id, endpointId, createdAt}`."""
    return {
        "type": TEST_TYPE,
        "id": message_id,
        "endpointId": endpoint_id,
        "createdAt": iso_millis(at),
    }


def authorization_payload(
    *, message_id: str, endpoint_id: str, mode: str, at: datetime, authorization, available: int
) -> dict:
    """The request for a decision on `authorization` (a card authorization, held by TX:
    `authorizations.models.Authorization`), after TX's own checks passed:
    `{type: "authorization.request", id, endpointId, mode, createdAt, authorization: {...},
    account: {accountId, currency, available}}`. `available`: the account's available balance
    with the authorization's hold already taken. The answer TX expects is `{approved, amount?,
    declineCode?, metadata?}` (docs/decisioning.md)."""
    return {
        "type": AUTHORIZATION_TYPE,
        "id": message_id,
        "endpointId": endpoint_id,
        "mode": mode,
        "createdAt": iso_millis(at),
        "authorization": _authorization(authorization),
        "account": _account(authorization, available),
    }


def increment_payload(
    *, message_id: str, endpoint_id: str, mode: str, at: datetime, increment, available: int
) -> dict:
    """The request for a decision on `increment` (an incremental authorization, held by TX:
    `authorizations.models.AuthorizationIncrement`), after TX's own checks passed:
    `{type: "authorization.increment", id, endpointId, mode, createdAt, increment: {incrementId,
    amount, createdAt}, authorization: {...}, account: {...}}`, the authorization as it stands
    before the increment (its `amount` the total so far) and `available` with the increment
    already held. The answer is an authorization's, but for `amount`: an increment is approved
    whole or declined (docs/decisioning.md, "Increments")."""
    authorization = increment.authorization
    return {
        "type": INCREMENT_TYPE,
        "id": message_id,
        "endpointId": endpoint_id,
        "mode": mode,
        "createdAt": iso_millis(at),
        "increment": {
            "incrementId": increment.pk,
            "amount": increment.amount,
            "createdAt": iso_millis(increment.created_at),
        },
        "authorization": _authorization(authorization),
        "account": _account(authorization, available),
    }


def _authorization(authorization) -> dict:
    return {
        "authorizationId": authorization.pk,
        "cardId": authorization.card_id,
        "cardProductRid": authorization.card.product_id,
        "type": authorization.type,
        "amount": authorization.amount,
        "currency": authorization.currency,
        # What the merchant charged in its own currency, and the rate that gave `amount` (a
        # decimal string): null for a payment in the account's currency.
        "merchantAmount": authorization.merchant_amount,
        "merchantCurrency": authorization.merchant_currency,
        "conversionRate": authorization.conversion_rate_text,
        "merchant": {
            "name": authorization.merchant_name,
            "mcc": authorization.merchant_mcc,
            "countryCode": authorization.merchant_country,
            "channel": authorization.channel,
        },
        "pinVerified": authorization.pin_given,
        # Whether the merchant takes less than asked (the network's partial-approval
        # indicator): only then may the answer approve part (`amount` below this one).
        "partialApproval": authorization.partial_approval,
        # `jit`: the program funds what it approves (docs/decisioning.md, "Just-in-time
        # funding"); `account.available` is then before any funding.
        "metadata": dict(authorization.metadata),
        "createdAt": iso_millis(authorization.created_at),
    }


def _account(authorization, available: int) -> dict:
    return {
        "accountId": authorization.account_id,
        "currency": authorization.currency,
        "available": available,
    }
