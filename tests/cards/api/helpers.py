"""Making customers, accounts and cards in either version, and reading them back.

Cards are issued, changed and read over HTTP. The customers and accounts they sit on are made
through the same services the API calls (they are not what these tests are about, and the HTTP
round trips would double the time; `via_http=True` makes them over HTTP). Two things no
endpoint does are done directly: ending a card's validity (`expire`, the expiry job's work) and
moving a card's expiry into the past (`backdate`)."""

import uuid
from datetime import date

from django.utils import timezone

from accounts.models import AccountProduct
from accounts.services import account_create, adjustment_create
from cards.dates import add_months
from cards.models import Card, CardProduct
from cards.services import cards_expire
from core.actors import SYSTEM
from customers.models import Customer
from customers.services import customer_create
from institutions import scopes as api_scopes
from institutions.keys import split
from institutions.models import ApiKey
from tests.accounts.api.helpers import (
    ANY,
    CREATED,
    assert_error,
    assert_validation_error,
    balances,
    created,
    items_of,
    money,
    resource,
    statement,
)
from tests.conftest import Api, body_of, error_of
from tests.factories import issue_key

__all__ = [
    "ANY",
    "CREATED",
    "assert_error",
    "assert_validation_error",
    "balances",
    "body_of",
    "created",
    "error_of",
    "items_of",
    "money",
    "resource",
    "statement",
]

ADDRESS = {"line1": "Unter den Linden 1", "city": "Berlin", "postalCode": "10117"}

# Card products (GET /products/cards `code`) and account products (GET /products/accounts).
DEBIT = "DEBIT_STANDARD"
PREPAID = "PREPAID_STANDARD"
PREPAID_VIRTUAL = "PREPAID_VIRTUAL"
CURRENT_ACCOUNT = "CBSFinancialContractTypeAPI"
PREPAID_ACCOUNT = "AccountPrepaidAPI"
GHS_ACCOUNT = "GHSAccountPrepaidAPI"
# Validity in years of the standard products (cards.services.products).
VALIDITY = {DEBIT: 4, PREPAID: 3, PREPAID_VIRTUAL: 2}

STATUSES = ["inactive", "active", "suspended", "lost", "stolen", "closed", "expired"]


def address(version: str, country: str = "276") -> dict:
    return {**ADDRESS, ("countryId" if version == "v1" else "countryCode"): country}


def joint_path(version: str) -> str:
    return "/cards/joint-account" if version == "v1" else "/joint-accounts"


def institution_of(api):
    """The institution of a client's key (looked up once per client)."""
    if "_institution" not in api.__dict__:
        prefix, _ = split(api.key)
        api._institution = ApiKey.objects.select_related("institution").get(prefix=prefix)
        api._institution = api._institution.institution
    return api._institution


def product_rid(api, code: str, *, cards: bool = True) -> str:
    """The rid of one of the client's institution's products, by its code."""
    model = CardProduct if cards else AccountProduct
    return model.objects.get(institution=institution_of(api), code=code).pk


def customer(api, first="Ada", last="Lovelace", *, via_http=False) -> str:
    if via_http:
        response = api.post(
            "/customers", {"firstName": first, "lastName": last, "countryId": "276"}
        )
        assert response.status_code == CREATED[api.version], response.content
        return body_of(response, api.version)["customerId"]
    return customer_create(
        institution=institution_of(api), first_name=first, last_name=last, country_code="276"
    ).pk


def account(
    api, customer_id: str, code: str = PREPAID_ACCOUNT, load: int = 0, *, via_http=False
) -> str:
    """Open an account of product `code` in the product's currency, loaded with `load`."""
    if via_http:
        response = api.post(
            "/accounts",
            {"customerId": customer_id, "productRid": product_rid(api, code, cards=False)},
        )
        assert response.status_code == CREATED[api.version], response.content
        opened = body_of(response, api.version)
        if load:
            loaded = api.post(
                f"/accounts/{opened['accountId']}/adjustments",
                {"direction": "credit", "amount": load, "currency": opened["currency"]},
            )
            assert loaded.status_code == CREATED[api.version], loaded.content
        return opened["accountId"]
    institution = institution_of(api)
    product = AccountProduct.objects.get(institution=institution, code=code)
    opened = account_create(
        institution=institution,
        customer=Customer.objects.get(institution=institution, pk=customer_id),
        product=product,
        currency=product.currency,
    )
    if load:
        adjustment_create(
            account=opened,
            direction="credit",
            amount=load,
            currency=product.currency,
            actor=SYSTEM,
        )
    return opened.pk


def issue_response(api, account_id: str, customer_id: str, code=PREPAID, **fields):
    body = {
        "accountId": account_id,
        "customerId": customer_id,
        "cardProductRid": product_rid(api, code),
        "form": "virtual",
        **fields,
    }
    return api.post("/cards", body)


def issue(api, account_id: str, customer_id: str, code=PREPAID, **fields) -> dict:
    """Issue a card (virtual unless `form` says otherwise) and return it."""
    return created(issue_response(api, account_id, customer_id, code, **fields), api.version)


def card_of(api, card_id: str) -> dict:
    return resource(api.get(f"/cards/{card_id}"), api.version)


def set_status(api, card_id: str, status: str, *, idempotency_key=Api._AUTO, **fields):
    return api.patch(
        f"/cards/{card_id}", {"status": status, **fields}, idempotency_key=idempotency_key
    )


def backdate(card_id: str, months: int = 1) -> None:
    """Move a card's expiry `months` before the current month (its validity has ended)."""
    today = timezone.now().date()
    card = Card.objects.get(pk=card_id)
    card.set_expiry(*add_months(today.year, today.month, -months))
    card.save(update_fields=["expiry_year", "expiry_month", "expires_on"])


def expire(card_id: str) -> None:
    """End an active card's validity and run the expiry job: the card becomes `expired`."""
    backdate(card_id)
    assert cards_expire() >= 1
    assert Card.objects.get(pk=card_id).status == "expired"


def card_in(api, status: str, account_id: str, customer_id: str, code=PREPAID, **fields) -> dict:
    """A new card driven to `status` the way a client (or the expiry job) gets it there."""
    initial = "inactive" if status == "inactive" else "active"
    card = issue(api, account_id, customer_id, code, status=initial, **fields)
    if status == "expired":
        expire(card["cardId"])
        card = card_of(api, card["cardId"])
    elif status not in ("inactive", "active"):
        card = resource(set_status(api, card["cardId"], status), api.version)
    assert card["status"] == status
    return card


def sensitive_api(api, institution) -> Api:
    """A client of the same version with a key that has the scope `cards:sensitive`."""
    return Api(api.version, issue_key(institution, scopes=api_scopes.ALL)[1])


def secrets_of(sensitive, card_id: str) -> dict:
    """{cardId, pan, cvv, expiryMonth, expiryYear} from /sensitive-details."""
    return resource(sensitive.get(f"/cards/{card_id}/sensitive-details"), sensitive.version)


def limits_of(api, card_id: str) -> dict:
    return resource(api.get(f"/cards/{card_id}/limits"), api.version)


def usage_of(api, card_id: str) -> dict:
    return limits_of(api, card_id)["usage"]


def set_limits(api, card_id: str, **limits) -> dict:
    return resource(api.patch(f"/cards/{card_id}/limits", limits), api.version)


def send(api, source: dict, destination: dict, amount: int, currency="EUR", **fields):
    """POST /transfers between two endpoints ({accountId}, {accountNumber}, {cardId}, {pan})."""
    return api.post(
        "/transfers",
        {
            "source": source,
            "destination": destination,
            "amount": amount,
            "currency": currency,
            **fields,
        },
    )


def account_number(api, account_id: str) -> str:
    return resource(api.get(f"/accounts/{account_id}"), api.version)["accountNumber"]


def ids(api, path: str, **params) -> set:
    """The ids of every item of a listing (one page of 100), whatever the resource."""
    items = items_of(api, path, limit=100, **params)
    return {item.get("cardId") or item.get("accountId") for item in items}


def expiry_after(months: int, start: date | None = None) -> tuple[int, int]:
    """(year, month) `months` after `start`'s month (default: this month)."""
    start = start or timezone.now().date()
    return add_months(start.year, start.month, months)


def new_key() -> str:
    return str(uuid.uuid4())
