"""What the money API tests share: opening accounts and moving money through the API, and the
shape of responses and errors in either version. A new customer and a funded account's load are
made by the services their APIs call (the key as actor): setup, where each request would cost
10 ms and prove nothing the API's own tests do not."""

import re

from stdnum import luhn

from accounts.models import AccountProduct, Adjustment
from accounts.selectors import account_get
from accounts.services.adjustments import adjustment_create
from core.actors import Actor, acting_as
from customers.services import customer_create
from institutions import keys
from institutions.models import ApiKey
from tests.conftest import body_of, error_of

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
ACCOUNT_NUMBER = re.compile(r"^\d{12}$")
CREATED = {"v1": 200, "v2": 201}

PREPAID = "AccountPrepaidAPI"
CURRENT = "CBSFinancialContractTypeAPI"
GHS_PREPAID = "GHSAccountPrepaidAPI"


def prefixed_id(prefix: str) -> re.Pattern:
    return re.compile(rf"^{prefix}_[0-9A-Z]{{26}}$")


def unknown_id(prefix: str) -> str:
    return f"{prefix}_" + "0" * 26


# --- responses
def resource(response, version: str, status: int = 200) -> dict:
    """The resource of a success body (v2: without its `meta` sidecar), after checking the
    status and the envelope."""
    assert response.status_code == status, response.content
    payload = response.json()
    if version == "v1":
        assert set(payload) == {"data", "meta"}
    else:
        assert "meta" in payload
    body = dict(body_of(response, version))
    body.pop("meta", None)
    return body


def created(response, version: str) -> dict:
    return resource(response, version, CREATED[version])


def listed(response) -> tuple[list, str | None]:
    """(items, nextCursor) of a list body (the same in both versions)."""
    assert response.status_code == 200, response.content
    payload = response.json()
    assert set(payload) == {"data", "nextCursor", "hasMore", "meta"}
    assert payload["hasMore"] is (payload["nextCursor"] is not None)
    return payload["data"], payload["nextCursor"]


def items_of(api, path: str, **params) -> list:
    items, _ = listed(api.get(path, params))
    return items


ANY = object()  # assert_error: do not look at the details
_NONE = object()


def assert_error(response, version: str, status: int, code: str, details=_NONE, message=None):
    """The error body in either version; without `details`, the error must have none."""
    assert response.status_code == status, response.content
    payload = response.json()
    if version == "v1":
        assert set(payload) == {"error", "meta"}
    error = error_of(response, version)
    assert error["code"] == code, error
    if details is _NONE:
        assert "details" not in error, error
    elif details is not ANY:
        assert error.get("details") == details, error
    if message is not None:
        assert error["message"] == message
    return error


def assert_validation_error(response, version: str, details: dict):
    return assert_error(response, version, 400, "validation_error", details)


def assert_not_found(response, version: str, message: str):
    return assert_error(response, version, 404, "not_found", message=message)


# --- set-up through the API
def api_key_of(api) -> ApiKey:
    """The key row the client speaks with (looked up once per client)."""
    if not hasattr(api, "api_key_row"):
        prefix, _ = keys.split(api.key)
        api.api_key_row = ApiKey.objects.select_related("institution").get(prefix=prefix)
    return api.api_key_row


def create_customer(api, first_name: str = "Ada") -> str:
    """A new customer of the client's institution, made by the service the customers API calls
    with the client's key as the actor: setup, not the subject (tests/customers posts its own)."""
    api_key = api_key_of(api)
    with acting_as(Actor(api_key=api_key)):
        customer = customer_create(
            institution=api_key.institution,
            first_name=first_name,
            last_name="Lovelace",
            country_code="826",
        )
    return customer.pk


def product_rid(api, code: str = PREPAID) -> str:
    """The rid of the client's institution's account product `code` (setup: read as the
    services do, from the primary, once per client and code)."""
    rids = api.__dict__.setdefault("product_rids", {})
    if code not in rids:
        institution = api_key_of(api).institution
        rids[code] = AccountProduct.objects.get(institution=institution, code=code).pk
    return rids[code]


def open_account(api, customer_id: str | None = None, *, code: str = PREPAID, **fields) -> dict:
    """Open an account of product `code` (a new customer's unless `customer_id`)."""
    body = {
        "customerId": customer_id or create_customer(api),
        "productRid": product_rid(api, code),
        **fields,
    }
    return created(api.post("/accounts", body), api.version)


def adjust(api, account_id: str, direction: str, amount: int, currency: str = "EUR", **fields):
    return api.post(
        f"/accounts/{account_id}/adjustments",
        {"direction": direction, "amount": amount, "currency": currency, **fields},
    )


def load(api, account_id: str, amount: int, currency: str = "EUR") -> dict:
    return created(adjust(api, account_id, "credit", amount, currency), api.version)


def funded_account(api, amount: int, *, code: str = PREPAID, customer_id=None) -> dict:
    """A new account loaded with `amount` (in the product's currency) by the service the
    adjustments API calls, with the client's key as the actor; returns the account as opened
    (balances at zero)."""
    account = open_account(api, customer_id, code=code)
    if amount:
        api_key = api_key_of(api)
        actor = Actor(api_key=api_key)
        with acting_as(actor):
            adjustment_create(
                account=account_get(
                    institution=api_key.institution, account_id=account["accountId"]
                ),
                direction=Adjustment.Direction.CREDIT,
                amount=amount,
                currency=account["currency"],
                actor=actor,
            )
    return account


def balances(api, account_id: str) -> dict:
    """{posted, pending, available} of an account, through GET /accounts/{id}/balances."""
    body = resource(api.get(f"/accounts/{account_id}/balances"), api.version)
    return {name: body[name] for name in ("posted", "pending", "available")}


def money(posted: int, pending: int = 0) -> dict:
    return {"posted": posted, "pending": pending, "available": posted - pending}


def set_status(api, account_id: str, status: str):
    return api.patch(f"/accounts/{account_id}", {"status": status})


def transfer(api, source: str, destination: str, amount: int, currency: str = "EUR", **fields):
    return api.post(
        "/transfers",
        {
            "source": {"accountId": source},
            "destination": {"accountId": destination},
            "amount": amount,
            "currency": currency,
            **fields,
        },
    )


def statement(api, account_id: str, **params) -> list:
    """Every statement line of an account, newest first (one page of 100)."""
    return items_of(api, f"/accounts/{account_id}/transactions", limit=100, **params)


def events(api, type: str, object_id: str | None = None) -> list:
    params = {"type": type, "limit": 100}
    if object_id is not None:
        params["objectId"] = object_id
    return items_of(api, "/events", **params)


def is_luhn_valid(number: str) -> bool:
    return luhn.is_valid(number)
