"""Card products the bank makes and changes (v2 only; docs/products.md): create, the rules on
each field (BIN, forms, limits, validity), PATCH, new defaults for cards issued afterwards only,
retiring (no new card; the cards on it go on), the events, v1's listing without writes, the
BIN's uniqueness in the database."""

import pytest
from django.db import IntegrityError, transaction

from cards.models import Card, CardProduct
from events.models import Event
from events.payloads import event_payload
from institutions import scopes
from tests.conftest import Api
from tests.factories import issue_key

from .helpers import (
    ANY,
    CREATED,
    PREPAID_ACCOUNT,
    account,
    assert_error,
    assert_validation_error,
    card_of,
    created,
    customer,
    expiry_after,
    items_of,
    limits_of,
    resource,
    set_status,
)

pytestmark = pytest.mark.django_db

LIMITS = {"perTransaction": 20_000, "daily": 40_000, "monthly": 200_000, "dailyCash": 10_000}
TRAVEL = {
    "name": "Travel prepaid",
    "kind": "prepaid",
    "forms": ["virtual", "physical"],
    "bin": "45678901",
    "validityMonths": 18,
    "defaultLimits": LIMITS,
}
CARD_DEFAULTS = {
    "ecommerce": True,
    "contactless": True,
    "atm": True,
    "international": True,
    "magstripe": False,
    "blockedMccs": [],
    "blockedCountries": [],
}


def make(api, **fields) -> dict:
    return created(api.post("/products/cards", {**TRAVEL, **fields}), "v2")


def issue_on(api, rid: str, account_id: str, customer_id: str):
    body = {
        "accountId": account_id,
        "customerId": customer_id,
        "cardProductRid": rid,
        "form": "virtual",
        "status": "active",
    }
    return api.post("/cards", body)


@pytest.fixture
def holder(api_v2):
    customer_id = customer(api_v2)
    return customer_id, account(api_v2, customer_id, PREPAID_ACCOUNT, load=100_000)


# --- create ----------------------------------------------------------------------------------
def test_create_answers_201_with_the_product_and_emits_product_created(api_v2, institution, key):
    product = make(api_v2, defaultSecuritySettings={"magstripe": True, "blockedMccs": ["7995"]})

    rid = product["rid"]
    assert product.pop("updatedAt") == product.pop("createdAt")
    assert product == {
        "rid": rid,
        "code": rid,  # none given: the rid
        "name": "Travel prepaid",
        "kind": "prepaid",
        "accountKind": "prepaid",
        "forms": ["virtual", "physical"],
        "bin": "45678901",
        "panLength": 16,
        "validityMonths": 18,
        "validityYears": 1,
        "status": "active",
        "defaultLimits": LIMITS,
        "defaultSecuritySettings": {**CARD_DEFAULTS, "magstripe": True, "blockedMccs": ["7995"]},
        "atmFee": 0,
        "replacementFee": 0,
        "foreignTransactionFeeBps": 0,
        "disputePolicy": "none",
        "disputeProvisionalCredit": "at_submission",
    }
    (event,) = Event.objects.filter(object_id=rid)
    assert (event.type, event.object_type, event.actor_id) == (
        "product.created",
        "product",
        key[0].pk,
    )
    assert event_payload(event)["data"] == {
        "productType": "card",
        "product": resource(api_v2.get(f"/products/cards/{rid}"), "v2"),
    }
    listed = {p["rid"] for p in items_of(api_v2, "/products/cards")}
    assert rid in listed and len(listed) == 4


def test_cards_of_a_new_product_carry_its_defaults(api_v2, holder):
    customer_id, account_id = holder
    product = make(
        api_v2,
        code="TRAVEL-1",
        defaultSecuritySettings={"atm": False, "blockedCountries": ["840", "124"]},
    )
    assert product["code"] == "TRAVEL-1"
    card = created(issue_on(api_v2, product["rid"], account_id, customer_id), "v2")

    assert card["maskedPan"].startswith("456789")
    assert (card["expiryYear"], card["expiryMonth"]) == expiry_after(18)
    assert card["securitySettings"] == {
        **CARD_DEFAULTS,
        "atm": False,
        "blockedCountries": ["124", "840"],
    }
    assert {k: limits_of(api_v2, card["cardId"])[k] for k in LIMITS} == LIMITS


@pytest.mark.parametrize(
    ("fields", "details"),
    [
        ({"bin": "12345"}, {"bin": "Must be 6 or 8 digits."}),
        ({"bin": "1234567"}, {"bin": "Must be 6 or 8 digits."}),
        ({"bin": "12345a"}, {"bin": "Must be 6 or 8 digits."}),
        ({"bin": 456789}, {"bin": "Must be 6 or 8 digits."}),
        ({"bin": "400001"}, {"bin": "Another card product of the institution has this BIN."}),
        ({"bin": "40000300"}, {"bin": "Another card product of the institution has this BIN."}),
        ({"forms": []}, {"forms": "Ensure this field has at least 1 elements."}),
        ({"forms": ["plastic"]}, {"forms.0": '"plastic" is not a valid choice.'}),
        ({"forms": ["virtual", "virtual"]}, {"forms": "Each form at most once."}),
        ({"kind": "credit"}, {"kind": '"credit" is not a valid choice.'}),
        (
            {"validityMonths": 0},
            {"validityMonths": "Ensure this value is greater than or equal to 1."},
        ),
        (
            {"validityMonths": 121},
            {"validityMonths": "Ensure this value is less than or equal to 120."},
        ),
        (
            {"defaultLimits": {**LIMITS, "daily": -1}},
            {"defaultLimits.daily": "Ensure this value is greater than or equal to 0."},
        ),
        (
            {"defaultLimits": {"daily": 1}},
            {
                "defaultLimits.perTransaction": "This field is required.",
                "defaultLimits.monthly": "This field is required.",
                "defaultLimits.dailyCash": "This field is required.",
            },
        ),
        (
            {"defaultSecuritySettings": {"blockedMccs": ["79"]}},
            {"defaultSecuritySettings.blockedMccs.0": "A merchant category code: 4 digits."},
        ),
        (
            {"defaultSecuritySettings": {"blockedCountries": ["999"]}},
            {
                "defaultSecuritySettings.blockedCountries.0": "999 is not an ISO 3166-1 numeric "
                "country code."
            },
        ),
        ({"status": "active"}, {"status": "Unknown field."}),
    ],
)
def test_create_refuses_bad_input_and_makes_nothing(api_v2, fields, details):
    before = CardProduct.objects.count()
    response = api_v2.post("/products/cards", {**TRAVEL, **fields})
    assert_validation_error(response, "v2", details)
    assert CardProduct.objects.count() == before
    assert not Event.objects.filter(type="product.created").exists()


def test_create_needs_its_fields(api_v2):
    response = api_v2.post("/products/cards", {})
    error = assert_error(response, "v2", 400, "validation_error", details=ANY)
    assert set(error["details"]) == {
        "name",
        "kind",
        "forms",
        "bin",
        "validityMonths",
        "defaultLimits",
    }


def test_a_duplicate_code_is_refused(api_v2):
    make(api_v2, code="TRAVEL")
    response = api_v2.post("/products/cards", {**TRAVEL, "bin": "456788", "code": "TRAVEL"})
    assert_validation_error(
        response, "v2", {"code": "Another card product of the institution has this code."}
    )


def test_the_same_bin_in_another_institution_is_fine(api_v2, other_institution):
    make(api_v2)
    other = Api("v2", issue_key(other_institution)[1])
    assert make(other)["bin"] == TRAVEL["bin"]


def test_the_database_holds_the_bin_unique_per_institution(api_v2, institution):
    product = CardProduct.objects.get(pk=make(api_v2)["rid"])
    with pytest.raises(IntegrityError, match="card_product_bin_unique"), transaction.atomic():
        CardProduct.objects.filter(institution=institution, code="DEBIT_STANDARD").update(
            bin=product.bin
        )


# --- patch: new defaults for later cards only ------------------------------------------------
def test_new_defaults_apply_to_cards_issued_afterwards_only(api_v2, institution, holder):
    customer_id, account_id = holder
    product = make(api_v2)
    rid = product["rid"]
    before = created(issue_on(api_v2, rid, account_id, customer_id), "v2")

    changed = resource(
        api_v2.patch(
            f"/products/cards/{rid}",
            {
                "name": "Travel prepaid 2",
                "validityMonths": 24,
                "defaultLimits": {"daily": 5_000},
                "defaultSecuritySettings": {"ecommerce": False, "blockedMccs": ["7995", "6011"]},
            },
        ),
        "v2",
    )
    assert changed["defaultLimits"] == {**LIMITS, "daily": 5_000}
    assert changed["defaultSecuritySettings"] == {
        **CARD_DEFAULTS,
        "ecommerce": False,
        "blockedMccs": ["6011", "7995"],
    }
    assert (changed["validityMonths"], changed["validityYears"]) == (24, 2)
    event = Event.objects.get(object_id=rid, type="product.updated")
    assert event_payload(event)["data"] == {
        "productType": "card",
        "product": changed,
        "changedFields": [
            "defaultLimits.daily",
            "defaultSecuritySettings.blockedMccs",
            "defaultSecuritySettings.ecommerce",
            "name",
            "validityMonths",
        ],
    }

    after = created(issue_on(api_v2, rid, account_id, customer_id), "v2")
    # The card issued before keeps what it was issued with.
    old = card_of(api_v2, before["cardId"])
    assert old["securitySettings"] == CARD_DEFAULTS
    assert limits_of(api_v2, before["cardId"])["daily"] == LIMITS["daily"]
    assert (old["expiryYear"], old["expiryMonth"]) == expiry_after(18)
    # The card issued after starts with the new defaults.
    assert after["securitySettings"]["ecommerce"] is False
    assert after["securitySettings"]["blockedMccs"] == ["6011", "7995"]
    assert limits_of(api_v2, after["cardId"])["daily"] == 5_000
    assert (after["expiryYear"], after["expiryMonth"]) == expiry_after(24)
    # Nothing changes: no event.
    resource(api_v2.patch(f"/products/cards/{rid}", {"defaultLimits": {"daily": 5_000}}), "v2")
    assert Event.objects.filter(object_id=rid, type="product.updated").count() == 1


@pytest.mark.parametrize(
    "fields", [{"bin": "45678902"}, {"kind": "debit"}, {"panLength": 19}, {"code": "OTHER"}]
)
def test_what_a_product_is_never_changes(api_v2, fields):
    product = make(api_v2)
    response = api_v2.patch(f"/products/cards/{product['rid']}", fields)
    error = assert_error(response, "v2", 400, "validation_error", details=ANY)
    (field,) = fields
    assert list(error["details"]) == [field]
    assert error["details"][field].startswith("Cannot change after the product is made")
    assert CardProduct.objects.get(pk=product["rid"]).bin == TRAVEL["bin"]


def test_patch_validates_like_create(api_v2):
    product = make(api_v2)
    path = f"/products/cards/{product['rid']}"
    assert_validation_error(
        api_v2.patch(path, {"defaultLimits": {"monthly": -5}}),
        "v2",
        {"defaultLimits.monthly": "Ensure this value is greater than or equal to 0."},
    )
    assert_validation_error(api_v2.patch(path, {"forms": []}), "v2", ANY)
    assert_error(api_v2.patch(path, {}), "v2", 400, "validation_error", details=ANY)
    assert resource(api_v2.get(path), "v2") == product


# --- retire ----------------------------------------------------------------------------------
def test_retired_product_issues_no_card_and_its_cards_go_on(api_v2, institution, holder):
    customer_id, account_id = holder
    rid = make(api_v2)["rid"]
    existing = created(issue_on(api_v2, rid, account_id, customer_id), "v2")

    retired = resource(api_v2.patch(f"/products/cards/{rid}", {"status": "retired"}), "v2")
    assert retired["status"] == "retired"

    cards_before = Card.objects.count()
    assert_error(
        issue_on(api_v2, rid, account_id, customer_id),
        "v2",
        422,
        "product_retired",
        details={"cardProductRid": rid, "status": "retired"},
        message=f"Card product {rid} is retired: it issues no new card.",
    )
    assert Card.objects.count() == cards_before
    # The card already on it goes on: status changes, controls, renewals, payments.
    card_id = existing["cardId"]
    assert resource(set_status(api_v2, card_id, "suspended"), "v2")["status"] == "suspended"
    assert resource(set_status(api_v2, card_id, "active"), "v2")["status"] == "active"
    resource(api_v2.patch(f"/cards/{card_id}/limits", {"daily": 30_000}), "v2")
    renewed = created(api_v2.post(f"/cards/{card_id}/renewals", {}), "v2")
    assert renewed["cardProductRid"] == rid
    network = Api("v2", issue_key(institution, scopes=scopes.ALL)[1])
    authorization = network.post(
        "/card-authorizations",
        {
            "cardId": renewed["cardId"],
            "amount": 1000,
            "currency": "EUR",
            "type": "Goods",
            "merchant": {"name": "Shop", "mcc": "5411", "countryCode": "276", "channel": "pos"},
        },
    )
    assert created(authorization, "v2")["approved"] is True
    # Active again: cards are issued again.
    resource(api_v2.patch(f"/products/cards/{rid}", {"status": "active"}), "v2")
    created(issue_on(api_v2, rid, account_id, customer_id), "v2")


# --- v1, scopes ------------------------------------------------------------------------------
def test_v1_lists_the_banks_products_and_has_no_write(api_v1, api_v2):
    product = make(api_v2)
    listed = {p["rid"]: p for p in items_of(api_v1, "/products/cards")}
    assert listed[product["rid"]] == product
    assert_error(api_v1.post("/products/cards", TRAVEL), "v1", 405, "method_not_allowed")
    path = f"/products/cards/{product['rid']}"
    assert_error(api_v1.patch(path, {"name": "x"}), "v1", 404, "not_found")
    assert_error(api_v1.post(path, {"name": "x"}), "v1", 404, "not_found")
    assert CardProduct.objects.get(pk=product["rid"]).name == TRAVEL["name"]
    assert CREATED["v1"] == 200  # (v1 would answer 200 on creation: it has none)


def test_writes_need_products_write(institution, api_v2):
    rid = make(api_v2)["rid"]
    without = Api(
        "v2", issue_key(institution, scopes=[s for s in scopes.ALL if s != "products:write"])[1]
    )
    for response in (
        without.post("/products/cards", {**TRAVEL, "bin": "456700"}),
        without.patch(f"/products/cards/{rid}", {"status": "retired"}),
    ):
        assert_error(
            response, "v2", 403, "permission_denied", details={"requiredScope": "products:write"}
        )
    assert CardProduct.objects.get(pk=rid).status == "active"
    assert not CardProduct.objects.filter(bin="456700").exists()


def test_another_institutions_product_is_not_found(api_v2, other_institution):
    theirs = CardProduct.objects.filter(institution=other_institution).first()
    response = api_v2.patch(f"/products/cards/{theirs.pk}", {"status": "retired"})
    assert_error(response, "v2", 404, "not_found", message="No card product with this rid.")
    theirs.refresh_from_db()
    assert theirs.status == "active"
