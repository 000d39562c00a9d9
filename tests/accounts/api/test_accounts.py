"""`/accounts` and `/account-lookups` over HTTP, in both versions: open, read, list, balances,
adjustments (loads and unloads), status changes, lookups by account number."""

from pathlib import Path

import pytest
import yaml
from django.conf import settings

from accounts.models import Account
from api.context import iso_millis
from tests.accounts.api.helpers import (
    ACCOUNT_NUMBER,
    CREATED,
    CURRENT,
    GHS_PREPAID,
    PREPAID,
    TIMESTAMP,
    adjust,
    assert_error,
    assert_not_found,
    assert_validation_error,
    balances,
    create_customer,
    created,
    events,
    funded_account,
    is_luhn_valid,
    items_of,
    listed,
    load,
    money,
    open_account,
    prefixed_id,
    product_rid,
    resource,
    set_status,
    statement,
    unknown_id,
)

ACCOUNT_ID = prefixed_id("acc")
ADJUSTMENT_ID = prefixed_id("adj")
ACCOUNT_FIELDS = {
    "accountId",
    "customerId",
    "secondaryCustomerId",
    "productRid",
    "productCode",
    "currency",
    "status",
    "accountNumber",
    "balances",
    "createdAt",
    "updatedAt",
}
NO_ACCOUNT = "No account with this id."
CURRENCY_INVALID = 'Must be an ISO 4217 alpha-3 currency code as a string, e.g. "EUR".'
ROOT = Path(settings.BASE_DIR)


# --- open
@pytest.mark.parametrize(
    ("code", "currency"), [(PREPAID, "EUR"), (CURRENT, "EUR"), (GHS_PREPAID, "GHS")]
)
def test_open_an_account_shows_every_field(api, institution, code, currency):
    customer_id = create_customer(api)
    rid = product_rid(api, code)

    response = api.post(
        "/accounts", {"customerId": customer_id, "productRid": rid, "currency": currency}
    )

    assert response.status_code == CREATED[api.version]
    payload = response.json()
    # v2 only: metadata (docs/metadata.md), the overdraft limit (docs/overdraft.md), what
    # the card network forced below it (docs/card-transactions.md) and the IBAN the SEPA
    # profile gives it (docs/payments.md, "Inbound SEPA": null without one).
    v2_fields = ACCOUNT_FIELDS | {"metadata", "overdraftLimit", "networkOverdraft", "iban", "meta"}
    assert set(payload) == ({"data", "meta"} if api.version == "v1" else v2_fields)
    body = resource(response, api.version, CREATED[api.version])
    assert ACCOUNT_ID.match(body["accountId"])
    assert ACCOUNT_NUMBER.match(body["accountNumber"])
    assert is_luhn_valid(body["accountNumber"])
    assert TIMESTAMP.match(body["createdAt"])
    account = Account.objects.get(pk=body["accountId"])
    v2_only = (
        {"metadata": {}, "overdraftLimit": 0, "networkOverdraft": 0, "iban": None}
        if api.version == "v2"
        else {}
    )
    assert body == {
        "accountId": account.pk,
        "customerId": customer_id,
        "secondaryCustomerId": None,
        "productRid": rid,
        "productCode": code,
        "currency": currency,
        "status": "active",
        "accountNumber": account.account_number,
        "balances": {"posted": 0, "pending": 0, "available": 0, "currency": currency},
        "createdAt": iso_millis(account.created_at),
        "updatedAt": iso_millis(account.updated_at),
        **v2_only,
    }
    assert account.institution_id == institution.id
    assert account.kind == Account.Kind.CUSTOMER
    [event] = events(api, "account.opened", account.pk)
    assert event["data"] == {"customerId": customer_id, "productRid": rid}


def test_currency_defaults_to_the_products(api):
    customer_id = create_customer(api)

    eur = created(
        api.post("/accounts", {"customerId": customer_id, "productRid": product_rid(api)}),
        api.version,
    )
    ghs = created(
        api.post(
            "/accounts", {"customerId": customer_id, "productRid": product_rid(api, GHS_PREPAID)}
        ),
        api.version,
    )

    assert (eur["currency"], eur["balances"]["currency"]) == ("EUR", "EUR")
    assert (ghs["currency"], ghs["balances"]["currency"]) == ("GHS", "GHS")
    assert eur["accountNumber"] != ghs["accountNumber"]


def test_currency_other_than_the_products_is_a_validation_error(api):
    customer_id = create_customer(api)

    response = api.post(
        "/accounts",
        {"customerId": customer_id, "productRid": product_rid(api), "currency": "GHS"},
    )

    assert_validation_error(
        response, api.version, {"currency": "Product AccountPrepaidAPI holds EUR only."}
    )
    assert not Account.objects.filter(customer_id=customer_id).exists()


OPEN_INVALID = [
    ({"customerId": None}, {"customerId": "This field may not be null."}),
    ({"productRid": 5}, {"productRid": "Not a valid string."}),
    ({"currency": "eur"}, {"currency": CURRENCY_INVALID}),
    ({"currency": "XYZ"}, {"currency": "XYZ is not an ISO 4217 currency code."}),
    ({"currency": 978}, {"currency": CURRENCY_INVALID}),
    ({"status": "frozen"}, {"status": "Unknown field."}),
    ({"accountNumber": "123456789012"}, {"accountNumber": "Unknown field."}),
]


def test_open_rejects_invalid_input(api):
    valid = {"customerId": create_customer(api), "productRid": product_rid(api)}

    for change, details in OPEN_INVALID:
        response = api.post("/accounts", {**valid, **change})
        assert_validation_error(response, api.version, details)
    assert Account.objects.filter(kind="customer").count() == 0


def test_open_requires_customer_and_product(api):
    assert_validation_error(
        api.post("/accounts", {}),
        api.version,
        {"customerId": "This field is required.", "productRid": "This field is required."},
    )


def test_open_for_an_unknown_or_another_institutions_customer_is_not_found(api, other_api):
    theirs = create_customer(other_api)
    rid = product_rid(api)

    for customer_id in (unknown_id("cus"), theirs):
        response = api.post("/accounts", {"customerId": customer_id, "productRid": rid})
        assert_not_found(response, api.version, "No customer with this id.")
    assert Account.objects.filter(kind="customer").count() == 0


def test_open_with_an_unknown_or_another_institutions_product_is_not_found(api, other_api):
    customer_id = create_customer(api)
    theirs = product_rid(other_api)

    for rid in (unknown_id("aprd"), theirs):
        response = api.post("/accounts", {"customerId": customer_id, "productRid": rid})
        assert_not_found(response, api.version, "No account product with this rid.")
    assert Account.objects.filter(kind="customer").count() == 0


def test_account_numbers_are_unique_luhn_valid_digits(api):
    customer_id = create_customer(api)
    numbers = [open_account(api, customer_id)["accountNumber"] for _ in range(5)]

    assert len(set(numbers)) == 5
    assert all(ACCOUNT_NUMBER.match(number) and is_luhn_valid(number) for number in numbers)


# --- read and list
def test_get_one_account(api):
    opened = open_account(api)
    load(api, opened["accountId"], 700)

    body = resource(api.get(f"/accounts/{opened['accountId']}"), api.version)

    assert body == {
        **opened,
        "balances": {**money(700), "currency": "EUR"},
        "updatedAt": iso_millis(Account.objects.get(pk=opened["accountId"]).updated_at),
    }
    assert body["updatedAt"] > opened["updatedAt"]


def test_get_an_unknown_or_another_institutions_account_is_not_found(api, other_api):
    theirs = funded_account(other_api, 500)["accountId"]

    for account_id in (unknown_id("acc"), theirs):
        assert_not_found(api.get(f"/accounts/{account_id}"), api.version, NO_ACCOUNT)
        assert_not_found(api.get(f"/accounts/{account_id}/balances"), api.version, NO_ACCOUNT)
        assert_not_found(adjust(api, account_id, "debit", 100), api.version, NO_ACCOUNT)
        assert_not_found(set_status(api, account_id, "frozen"), api.version, NO_ACCOUNT)
    assert balances(other_api, theirs) == money(500)
    assert resource(other_api.get(f"/accounts/{theirs}"), other_api.version)["status"] == "active"


def test_internal_accounts_are_not_reachable(api, institution):
    load(api, open_account(api)["accountId"], 100)
    funding = Account.objects.get(institution=institution, kind=Account.Kind.INTERNAL)

    assert_not_found(api.get(f"/accounts/{funding.pk}"), api.version, NO_ACCOUNT)
    assert funding.pk not in [a["accountId"] for a in items_of(api, "/accounts", limit=100)]


def test_list_newest_first_filtered_by_customer(api, other_api):
    ada = create_customer(api, "Ada")
    grace = create_customer(api, "Grace")
    first = open_account(api, ada)
    second = open_account(api, grace)
    third = open_account(api, ada, code=GHS_PREPAID)
    open_account(other_api)

    assert items_of(api, "/accounts") == [third, second, first]
    assert items_of(api, "/accounts", customerId=ada) == [third, first]
    assert items_of(api, "/accounts", customerId=grace) == [second]
    assert items_of(api, "/accounts", customerId=unknown_id("cus")) == []


def test_list_pagination_walks_every_account_once(api):
    customer_id = create_customer(api)
    opened = [open_account(api, customer_id)["accountId"] for _ in range(5)]

    seen, cursor, pages = [], None, 0
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        items, cursor = listed(api.get("/accounts", params))
        pages += 1
        seen += [item["accountId"] for item in items]
        if cursor is None:
            break

    assert pages == 3
    assert seen == opened[::-1]


@pytest.mark.parametrize(
    ("params", "details"),
    [
        ({"limit": "0"}, {"limit": "Must be an integer from 1 to 100."}),
        ({"limit": "101"}, {"limit": "Must be an integer from 1 to 100."}),
        ({"cursor": "!!"}, {"cursor": "Not a valid cursor."}),
    ],
)
def test_list_rejects_bad_paging(api, params, details):
    assert_validation_error(api.get("/accounts", params), api.version, details)


# --- balances
def test_balances_endpoint(api):
    account_id = open_account(api)["accountId"]
    assert resource(api.get(f"/accounts/{account_id}/balances"), api.version) == {
        "accountId": account_id,
        **money(0),
        "currency": "EUR",
    }

    load(api, account_id, 2500)
    hold = api.post("/holds", {"accountId": account_id, "amount": 400, "currency": "EUR"})
    assert hold.status_code == CREATED[api.version]

    assert resource(api.get(f"/accounts/{account_id}/balances"), api.version) == {
        "accountId": account_id,
        "posted": 2500,
        "pending": 400,
        "available": 2100,
        "currency": "EUR",
    }


# --- adjustments
def test_credit_then_debit_with_exact_balances(api):
    account_id = open_account(api)["accountId"]

    credit = created(adjust(api, account_id, "credit", 10_050, description="Salary"), api.version)
    assert ADJUSTMENT_ID.match(credit["adjustmentId"])
    assert TIMESTAMP.match(credit["createdAt"])
    assert credit == {
        "adjustmentId": credit["adjustmentId"],
        "accountId": account_id,
        "direction": "credit",
        "amount": 10_050,
        "currency": "EUR",
        "description": "Salary",
        "createdAt": credit["createdAt"],
    }
    assert balances(api, account_id) == money(10_050)

    debit = created(adjust(api, account_id, "debit", 3_025), api.version)
    assert debit == {
        "adjustmentId": debit["adjustmentId"],
        "accountId": account_id,
        "direction": "debit",
        "amount": 3_025,
        "currency": "EUR",
        "description": "",
        "createdAt": debit["createdAt"],
    }
    assert balances(api, account_id) == money(7_025)

    lines = statement(api, account_id)
    assert [
        (line["type"], line["direction"], line["amount"], line["adjustmentId"]) for line in lines
    ] == [
        ("CashDec", "debit", 3_025, debit["adjustmentId"]),
        ("CashInc", "credit", 10_050, credit["adjustmentId"]),
    ]
    [posted] = events(api, "adjustment.posted", credit["adjustmentId"])
    assert posted["data"] == {
        "accountId": account_id,
        "direction": "credit",
        "amount": 10_050,
        "currency": "EUR",
    }


def test_debit_of_exactly_the_available_balance_empties_the_account(api):
    account_id = funded_account(api, 1_000)["accountId"]

    created(adjust(api, account_id, "debit", 1_000), api.version)

    assert balances(api, account_id) == money(0)


def test_debit_over_available_is_insufficient_funds_and_changes_nothing(api):
    account_id = funded_account(api, 1_000)["accountId"]
    created(
        api.post("/holds", {"accountId": account_id, "amount": 300, "currency": "EUR"}), api.version
    )
    before = statement(api, account_id)

    response = adjust(api, account_id, "debit", 701)

    assert_error(
        response,
        api.version,
        422,
        "insufficient_funds",
        {"accountId": account_id, "available": 700, "amount": 701},
        message="The account's available balance does not cover this amount.",
    )
    assert balances(api, account_id) == money(1_000, 300)
    assert statement(api, account_id) == before
    assert len(events(api, "adjustment.posted")) == 1


def test_adjustment_in_another_currency_is_a_currency_mismatch(api):
    account_id = funded_account(api, 1_000)["accountId"]

    for direction in ("credit", "debit"):
        response = adjust(api, account_id, direction, 100, "GHS")
        assert_error(
            response,
            api.version,
            422,
            "currency_mismatch",
            {"accountId": account_id, "accountCurrency": "EUR", "currency": "GHS"},
            message="The account is in EUR, the request in GHS.",
        )
    assert balances(api, account_id) == money(1_000)
    assert len(statement(api, account_id)) == 1


AMOUNT_INVALID = "Must be an integer number of minor units, e.g. 1050."


AMOUNTS_INVALID = [
    (0, "Ensure this value is greater than or equal to 1."),
    (-1, "Ensure this value is greater than or equal to 1."),
    ("100", AMOUNT_INVALID),
    (1.5, AMOUNT_INVALID),
    (100.0, AMOUNT_INVALID),
    (True, AMOUNT_INVALID),
    (None, "This field may not be null."),
    (10**15 + 1, "Ensure this value is less than or equal to 1000000000000000."),
]


def test_adjustment_amount_must_be_a_positive_integer(api):
    account_id = funded_account(api, 1_000)["accountId"]

    for amount, message in AMOUNTS_INVALID:
        for direction in ("credit", "debit"):
            response = adjust(api, account_id, direction, amount)
            assert_validation_error(response, api.version, {"amount": message})
    assert balances(api, account_id) == money(1_000)
    assert len(statement(api, account_id)) == 1


@pytest.mark.parametrize(
    ("body", "details"),
    [
        ({}, {k: "This field is required." for k in ("direction", "amount", "currency")}),
        (
            {"direction": "refund", "amount": 1, "currency": "EUR"},
            {"direction": '"refund" is not a valid choice.'},
        ),
        (
            {"direction": "credit", "amount": 1, "currency": "EUR", "holdId": "x"},
            {"holdId": "Unknown field."},
        ),
    ],
)
def test_adjustment_rejects_invalid_bodies(api, body, details):
    account_id = open_account(api)["accountId"]

    response = api.post(f"/accounts/{account_id}/adjustments", body)

    assert_validation_error(response, api.version, details)
    assert balances(api, account_id) == money(0)


# --- status
def test_frozen_account_accepts_credits_but_no_debit(api):
    account_id = funded_account(api, 1_000)["accountId"]

    frozen = resource(set_status(api, account_id, "frozen"), api.version)
    assert frozen["status"] == "frozen"
    assert frozen["updatedAt"] >= frozen["createdAt"]

    created(adjust(api, account_id, "credit", 500), api.version)
    assert balances(api, account_id) == money(1_500)

    assert_error(
        adjust(api, account_id, "debit", 100),
        api.version,
        422,
        "account_not_active",
        {"accountId": account_id, "status": "frozen"},
        message="The account is frozen: money cannot leave it.",
    )
    assert balances(api, account_id) == money(1_500)

    unfrozen = resource(set_status(api, account_id, "active"), api.version)
    assert unfrozen["status"] == "active"
    created(adjust(api, account_id, "debit", 100), api.version)
    assert balances(api, account_id) == money(1_400)
    changes = events(api, "account.status_changed", account_id)
    assert [event["data"] for event in changes] == [
        {"from": "frozen", "to": "active"},
        {"from": "active", "to": "frozen"},
    ]


def test_patch_to_the_current_status_changes_nothing(api):
    account = open_account(api)

    body = resource(set_status(api, account["accountId"], "active"), api.version)

    assert body == account
    assert events(api, "account.status_changed") == []


def test_close_needs_a_zero_balance(api):
    account_id = funded_account(api, 250)["accountId"]

    assert_error(
        set_status(api, account_id, "closed"),
        api.version,
        422,
        "account_not_empty",
        {"posted": 250, "pending": 0},
        message="An account can only be closed with a zero balance and no active hold.",
    )
    assert resource(api.get(f"/accounts/{account_id}"), api.version)["status"] == "active"

    created(adjust(api, account_id, "debit", 250), api.version)
    closed = resource(set_status(api, account_id, "closed"), api.version)

    assert closed["status"] == "closed"
    assert closed["balances"] == {**money(0), "currency": "EUR"}


def test_close_a_frozen_account_at_zero(api):
    account_id = open_account(api)["accountId"]
    resource(set_status(api, account_id, "frozen"), api.version)

    assert resource(set_status(api, account_id, "closed"), api.version)["status"] == "closed"


@pytest.mark.parametrize("target", ["active", "frozen"])
def test_closed_is_final(api, target):
    account_id = open_account(api)["accountId"]
    resource(set_status(api, account_id, "closed"), api.version)

    assert_error(
        set_status(api, account_id, target),
        api.version,
        409,
        "invalid_state_transition",
        {"from": "closed", "to": target},
        message=f"An account cannot go from closed to {target}.",
    )
    assert resource(api.get(f"/accounts/{account_id}"), api.version)["status"] == "closed"


def test_closed_account_takes_no_credit(api):
    account_id = open_account(api)["accountId"]
    resource(set_status(api, account_id, "closed"), api.version)

    assert_error(
        adjust(api, account_id, "credit", 100),
        api.version,
        422,
        "account_not_active",
        {"accountId": account_id, "status": "closed"},
        message="The account is closed.",
    )
    assert balances(api, account_id) == money(0)


@pytest.mark.parametrize(
    ("body", "details"),
    [
        ({"status": "blocked"}, {"status": '"blocked" is not a valid choice.'}),
        ({}, {"status": "This field is required."}),
        ({"status": "frozen", "currency": "GHS"}, {"currency": "Unknown field."}),
    ],
)
def test_status_rejects_invalid_bodies(api, body, details):
    account_id = open_account(api)["accountId"]
    if body == {} and api.version == "v2":  # v2 also takes overdraftLimit and metadata alone
        details = {"status": "Give at least one of status, overdraftLimit, metadata."}

    assert_validation_error(api.patch(f"/accounts/{account_id}", body), api.version, details)


def test_v1_changes_status_with_post_too(api_v1):
    account_id = open_account(api_v1)["accountId"]

    response = api_v1.post(f"/accounts/{account_id}", {"status": "frozen"})

    assert resource(response, "v1")["status"] == "frozen"


# --- lookups by account number
def test_lookup_finds_the_account_by_its_number(api):
    account = funded_account(api, 900)
    open_account(api)

    response = api.post("/account-lookups", {"accountNumber": account["accountNumber"]})

    assert resource(response, api.version, 200) == resource(
        api.get(f"/accounts/{account['accountId']}"), api.version
    )
    assert resource(response, api.version)["balances"]["posted"] == 900


def test_lookup_of_an_unknown_or_another_institutions_number_is_not_found(api, other_api):
    theirs = open_account(other_api)["accountNumber"]
    mine = open_account(api)["accountNumber"]
    unknown = next(f"{n:012d}" for n in range(10**11, 10**12) if f"{n:012d}" not in (mine, theirs))

    for number in (unknown, theirs):
        response = api.post("/account-lookups", {"accountNumber": number})
        assert_not_found(response, api.version, "No account with this account number.")


@pytest.mark.parametrize(
    ("body", "details"),
    [
        ({}, {"accountNumber": "This field is required."}),
        ({"accountNumber": 123456789012}, {"accountNumber": "Not a valid string."}),
        (
            {"accountNumber": "1" * 21},
            {"accountNumber": "Ensure this field has no more than 20 characters."},
        ),
    ],
)
def test_lookup_rejects_invalid_bodies(api, body, details):
    assert_validation_error(api.post("/account-lookups", body), api.version, details)


def test_account_number_is_never_a_path_or_query_parameter():
    """Every operation reaches accounts by id; the number only ever travels in a body."""
    for version in ("v1", "v2"):
        text = (ROOT / "openapi" / f"{version}.yaml").read_text()
        document = yaml.load(text, Loader=yaml.CSafeLoader)
        for path, operations in document["paths"].items():
            assert "number" not in path.lower(), path
            for operation in operations.values():
                if not isinstance(operation, dict):
                    continue
                names = [p["name"] for p in operation.get("parameters", [])]
                assert not any("number" in name.lower() for name in names), (path, names)


def test_account_number_is_not_an_account_id(api):
    number = open_account(api)["accountNumber"]

    assert_not_found(api.get(f"/accounts/{number}"), api.version, NO_ACCOUNT)
