"""Account products the bank makes and changes (v2 only; docs/products.md): create, the rules
on each field, PATCH, retiring (no new account; the accounts on it go on), the events, v1's
listing without writes, the scope."""

import pytest

from accounts.models import AccountProduct
from events.models import Event
from events.payloads import event_payload
from institutions import scopes
from tests.conftest import Api
from tests.factories import issue_key

from .helpers import (
    ANY,
    TIMESTAMP,
    adjust,
    assert_error,
    assert_validation_error,
    create_customer,
    created,
    items_of,
    prefixed_id,
    resource,
    set_status,
    unknown_id,
)

pytestmark = pytest.mark.django_db

USD_CURRENT = {
    "code": "CBSFinancialContractTypeAPI",
    "name": "Current account (USD)",
    "currency": "USD",
    "allowsOverdraft": True,
    "maxOverdraftLimit": 50_000,
}


def make(api, **fields) -> dict:
    return created(api.post("/products/accounts", {**USD_CURRENT, **fields}), "v2")


def open_on(api, rid: str, **fields):
    return api.post("/accounts", {"customerId": create_customer(api), "productRid": rid, **fields})


def product_events(institution, rid: str) -> list[Event]:
    return list(Event.objects.filter(institution=institution, object_id=rid).order_by("pk"))


# --- create ----------------------------------------------------------------------------------
def test_create_answers_201_with_the_product_and_emits_product_created(api_v2, institution, key):
    product = make(api_v2)

    assert prefixed_id("aprd").match(product["rid"])
    assert TIMESTAMP.match(product["createdAt"])
    assert product.pop("updatedAt") == product.pop("createdAt")
    assert product == {
        "rid": product["rid"],
        "code": "CBSFinancialContractTypeAPI",
        "name": "Current account (USD)",
        "kind": "current",
        "currency": "USD",
        "allowsOverdraft": True,
        "maxOverdraftLimit": 50_000,
        "monthlyFee": 0,
        "debitHoldDays": None,  # the ACH profile's
        "status": "active",
    }
    (event,) = product_events(institution, product["rid"])
    assert (event.type, event.object_type) == ("product.created", "product")
    assert (event.actor_type, event.actor_id) == ("apiKey", key[0].pk)
    shown = resource(api_v2.get(f"/products/accounts/{product['rid']}"), "v2")
    assert event_payload(event)["data"] == {"productType": "account", "product": shown}


def test_a_product_is_its_rid_several_share_a_code(api_v2, version):
    """A EUR and a USD current account, and a second EUR one: three products, one code."""
    usd = make(api_v2)
    eur = make(api_v2, currency="EUR", name="Current account (EUR, premium)")

    listing = items_of(api_v2, "/products/accounts")
    current = [p["rid"] for p in listing if p["code"] == "CBSFinancialContractTypeAPI"]
    assert len(current) == 3 and {usd["rid"], eur["rid"]} <= set(current)
    # And an account opens on each in its own currency.
    opened = created(open_on(api_v2, usd["rid"]), "v2")
    assert (opened["productRid"], opened["currency"]) == (usd["rid"], "USD")


@pytest.mark.parametrize(
    ("currency", "exponent", "load"), [("JPY", 0, 1500), ("BHD", 3, 1500), ("GHS", 2, 1500)]
)
def test_any_iso_4217_currency_with_its_exponent(api_v2, currency, exponent, load):
    from core.money import currency_exponent, money

    product = make(
        api_v2,
        code="AccountPrepaidAPI",
        currency=currency,
        allowsOverdraft=False,
        maxOverdraftLimit=0,
    )
    account = created(open_on(api_v2, product["rid"]), "v2")
    created(adjust(api_v2, account["accountId"], "credit", load, currency), "v2")
    assert currency_exponent(currency) == exponent
    assert (
        money(load, currency)
        == {
            0: "1,500 JPY",
            3: "1.500 BHD",
            2: "15.00 GHS",
        }[exponent]
    )


def test_prepaid_codes_make_prepaid_products_and_overdraft_defaults_off(api_v2):
    product = created(
        api_v2.post(
            "/products/accounts",
            {"code": "GHSAccountPrepaidAPI", "name": "Prepaid (EUR)", "currency": "EUR"},
        ),
        "v2",
    )
    assert (product["kind"], product["allowsOverdraft"], product["maxOverdraftLimit"]) == (
        "prepaid",
        False,
        0,
    )


@pytest.mark.parametrize(
    ("body", "details"),
    [
        (
            {"currency": "EURO"},
            {"currency": 'Must be an ISO 4217 alpha-3 currency code as a string, e.g. "EUR".'},
        ),
        ({"currency": "XYZ"}, {"currency": "XYZ is not an ISO 4217 currency code."}),
        ({"currency": "XAU"}, {"currency": "XAU has no minor unit: accounts cannot hold it."}),
        ({"currency": "XXX"}, {"currency": "XXX has no minor unit: accounts cannot hold it."}),
        (
            {"currency": "usd"},
            {"currency": 'Must be an ISO 4217 alpha-3 currency code as a string, e.g. "EUR".'},
        ),
        ({"code": "SavingsAPI"}, {"code": '"SavingsAPI" is not a valid choice.'}),
        ({"name": ""}, {"name": "This field may not be blank."}),
        (
            {"maxOverdraftLimit": -1},
            {"maxOverdraftLimit": "Ensure this value is greater than or equal to 0."},
        ),
        (
            {"maxOverdraftLimit": "100"},
            {"maxOverdraftLimit": "Must be an integer number of minor units, e.g. 1050."},
        ),
        ({"allowsOverdraft": "yes"}, {"allowsOverdraft": "Must be true or false."}),
        ({"status": "retired"}, {"status": "Unknown field."}),
        (
            {"allowsOverdraft": False, "maxOverdraftLimit": 100},
            {
                "maxOverdraftLimit": "Must be 0 on a product that does not allow overdraft "
                "(allowsOverdraft false)."
            },
        ),
    ],
)
def test_create_refuses_bad_input_and_makes_nothing(api_v2, institution, body, details):
    before = AccountProduct.objects.count()
    response = api_v2.post("/products/accounts", {**USD_CURRENT, **body})
    error = assert_validation_error(response, "v2", details)
    assert error["code"] == "validation_error"
    assert AccountProduct.objects.count() == before
    assert not Event.objects.filter(type="product.created").exists()


def test_create_needs_code_name_and_currency(api_v2):
    response = api_v2.post("/products/accounts", {})
    required = "This field is required."
    assert_validation_error(
        response, "v2", {"code": required, "name": required, "currency": required}
    )


# --- patch -----------------------------------------------------------------------------------
def test_patch_changes_what_is_sent_and_emits_product_updated(api_v2, institution):
    product = make(api_v2)

    changed = resource(
        api_v2.patch(
            f"/products/accounts/{product['rid']}",
            {"name": "Everyday USD", "maxOverdraftLimit": 20_000},
        ),
        "v2",
    )

    assert changed["name"] == "Everyday USD"
    assert changed["maxOverdraftLimit"] == 20_000
    assert changed["currency"] == "USD" and changed["allowsOverdraft"] is True
    assert changed["updatedAt"] > changed["createdAt"]
    created_event, updated = product_events(institution, product["rid"])
    assert updated.type == "product.updated"
    assert event_payload(updated)["data"] == {
        "productType": "account",
        "product": changed,
        "changedFields": ["maxOverdraftLimit", "name"],
    }
    # The same again changes nothing and emits nothing.
    again = resource(
        api_v2.patch(f"/products/accounts/{product['rid']}", {"name": "Everyday USD"}), "v2"
    )
    assert again == changed
    assert len(product_events(institution, product["rid"])) == 2


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"currency": "EUR"}, "currency"),
        ({"code": "AccountPrepaidAPI"}, "code"),
    ],
)
def test_code_and_currency_never_change(api_v2, body, field):
    product = make(api_v2)
    response = api_v2.patch(f"/products/accounts/{product['rid']}", body)
    error = assert_error(response, "v2", 400, "validation_error", details=ANY)
    assert list(error["details"]) == [field]
    assert "Cannot change after the product is made" in error["details"][field]
    # Its own value is no change.
    same = {"currency": "USD"} if field == "currency" else {"code": product["code"]}
    assert resource(api_v2.patch(f"/products/accounts/{product['rid']}", same), "v2") == product


def test_overdraft_off_needs_the_cap_at_zero(api_v2):
    product = make(api_v2)
    path = f"/products/accounts/{product['rid']}"
    assert_validation_error(
        api_v2.patch(path, {"allowsOverdraft": False}),
        "v2",
        {
            "maxOverdraftLimit": "Must be 0 on a product that does not allow overdraft "
            "(allowsOverdraft false)."
        },
    )
    changed = resource(api_v2.patch(path, {"allowsOverdraft": False, "maxOverdraftLimit": 0}), "v2")
    assert (changed["allowsOverdraft"], changed["maxOverdraftLimit"]) == (False, 0)


def test_patch_needs_something_and_refuses_unknown_fields(api_v2):
    product = make(api_v2)
    path = f"/products/accounts/{product['rid']}"
    assert_error(api_v2.patch(path, {}), "v2", 400, "validation_error", details=ANY)
    assert_validation_error(
        api_v2.patch(path, {"kind": "prepaid"}), "v2", {"kind": "Unknown field."}
    )
    assert_validation_error(
        api_v2.patch(path, {"status": "closed"}),
        "v2",
        {"status": '"closed" is not a valid choice.'},
    )


def test_another_institutions_product_is_not_found(api_v2, other_institution):
    theirs = AccountProduct.objects.filter(institution=other_institution).first()
    for path in (f"/products/accounts/{theirs.pk}", f"/products/accounts/{unknown_id('aprd')}"):
        assert_error(
            api_v2.get(path), "v2", 404, "not_found", message="No account product with this rid."
        )
        response = api_v2.patch(path, {"name": "Mine now"})
        assert_error(response, "v2", 404, "not_found", message="No account product with this rid.")
    theirs.refresh_from_db()
    assert theirs.name != "Mine now"


# --- retire ----------------------------------------------------------------------------------
def test_retired_product_opens_no_account_and_its_accounts_go_on(api_v2, institution):
    product = make(api_v2, code="AccountPrepaidAPI", allowsOverdraft=False, maxOverdraftLimit=0)
    rid = product["rid"]
    existing = created(open_on(api_v2, rid), "v2")

    retired = resource(api_v2.patch(f"/products/accounts/{rid}", {"status": "retired"}), "v2")
    assert retired["status"] == "retired"
    updated = Event.objects.filter(object_id=rid, type="product.updated").get()
    assert event_payload(updated)["data"]["changedFields"] == ["status"]

    accounts_before = institution.accounts.count()
    refused = open_on(api_v2, rid)
    assert_error(
        refused,
        "v2",
        422,
        "product_retired",
        details={"productRid": rid, "status": "retired"},
        message=f"Product {rid} is retired: it opens no new account.",
    )
    assert institution.accounts.count() == accounts_before
    # The account already on it goes on: money in and out, status changes, reads.
    created(adjust(api_v2, existing["accountId"], "credit", 1000, "USD"), "v2")
    created(adjust(api_v2, existing["accountId"], "debit", 400, "USD"), "v2")
    assert resource(set_status(api_v2, existing["accountId"], "frozen"), "v2")["status"] == "frozen"
    assert resource(set_status(api_v2, existing["accountId"], "active"), "v2")["status"] == "active"
    assert (
        resource(api_v2.get(f"/accounts/{existing['accountId']}"), "v2")["balances"]["posted"]
        == 600
    )
    # Listed still, in both versions, with its status.
    for version in ("v1", "v2"):
        api = Api(version, api_v2.key)
        listed = {p["rid"]: p for p in items_of(api, "/products/accounts")}
        assert listed[rid]["status"] == "retired"
    # Active again: accounts open again.
    resource(api_v2.patch(f"/products/accounts/{rid}", {"status": "active"}), "v2")
    created(open_on(api_v2, rid), "v2")


def test_a_refused_opening_is_replayed_under_its_key(api_v2):
    """422 is stored with its Idempotency-Key (docs/design.md section 6) like every business
    refusal."""
    import uuid

    product = make(api_v2, code="AccountPrepaidAPI", allowsOverdraft=False, maxOverdraftLimit=0)
    resource(api_v2.patch(f"/products/accounts/{product['rid']}", {"status": "retired"}), "v2")
    body = {"customerId": create_customer(api_v2), "productRid": product["rid"]}
    key = uuid.uuid4()
    first = api_v2.post("/accounts", body, idempotency_key=key)
    second = api_v2.post("/accounts", body, idempotency_key=key)
    assert first.status_code == second.status_code == 422
    assert second.headers["Idempotent-Replayed"] == "true"
    assert second.content == first.content


# --- v1 and scopes ---------------------------------------------------------------------------
def test_v1_lists_the_banks_products_and_has_no_write(api_v1, api_v2):
    product = make(api_v2)
    listed = {p["rid"]: p for p in items_of(api_v1, "/products/accounts")}
    assert listed[product["rid"]] == product
    assert_error(api_v1.post("/products/accounts", USD_CURRENT), "v1", 405, "method_not_allowed")
    for method in (api_v1.patch, api_v1.post, api_v1.get):
        args = (f"/products/accounts/{product['rid']}",)
        response = method(*args, {"name": "x"}) if method != api_v1.get else method(*args)
        assert_error(response, "v1", 404, "not_found")
    assert AccountProduct.objects.get(pk=product["rid"]).name == USD_CURRENT["name"]


def test_writes_need_products_write(institution, api_v2):
    product = make(api_v2)
    without = Api("v2", issue_key(institution, scopes=scopes.ROLES["readonly"])[1])
    for response in (
        without.post("/products/accounts", USD_CURRENT),
        without.patch(f"/products/accounts/{product['rid']}", {"status": "retired"}),
    ):
        assert_error(
            response, "v2", 403, "permission_denied", details={"requiredScope": "products:write"}
        )
    assert AccountProduct.objects.get(pk=product["rid"]).status == "active"
    assert without.get(f"/products/accounts/{product['rid']}").status_code == 200
    assert scopes.PRODUCTS_WRITE in scopes.ROLES["full"]
