"""Card products and card issuance over HTTP, in both versions: every kind of card (debit,
prepaid, prepaid in GHS, physical, virtual, supplementary), the fit rules, addresses per
version, ids that name nothing, the version's status and envelope, idempotent replays."""

import pytest

from institutions import scopes as api_scopes
from tests.accounts.api.helpers import TIMESTAMP, prefixed_id, unknown_id
from tests.conftest import Api
from tests.factories import issue_key

from .helpers import (
    CREATED,
    CURRENT_ACCOUNT,
    DEBIT,
    GHS_ACCOUNT,
    PREPAID,
    PREPAID_ACCOUNT,
    PREPAID_VIRTUAL,
    VALIDITY,
    account,
    address,
    assert_error,
    assert_validation_error,
    card_of,
    created,
    customer,
    expiry_after,
    ids,
    issue,
    issue_response,
    items_of,
    limits_of,
    new_key,
    product_rid,
    resource,
    secrets_of,
    sensitive_api,
    set_status,
)

CARD_FIELDS = {
    "cardId",
    "accountId",
    "customerId",
    "cardProductRid",
    "kind",
    "form",
    "status",
    "statusReason",
    "riskLevel",
    "maskedPan",
    "last4",
    "expiryMonth",
    "expiryYear",
    "embossedName",
    "deliveryAddress",
    "primaryCardId",
    "predecessorCardId",
    "successorCardId",
    "succession",
    "securitySettings",
    "limits",
    "pin",
    "createdAt",
    "updatedAt",
}
PRODUCTS = {
    DEBIT: {
        "code": DEBIT,
        "name": "Debit card",
        "kind": "debit",
        "accountKind": "current",
        "forms": ["physical", "virtual"],
        "bin": "400001",
        "panLength": 16,
        "validityMonths": 48,
        "validityYears": 4,
        "status": "active",
        "defaultLimits": {
            "perTransaction": 500_000,
            "daily": 1_000_000,
            "monthly": 5_000_000,
            "dailyCash": 100_000,
        },
    },
    PREPAID: {
        "code": PREPAID,
        "name": "Prepaid card",
        "kind": "prepaid",
        "accountKind": "prepaid",
        "forms": ["physical", "virtual"],
        "bin": "400002",
        "panLength": 16,
        "validityMonths": 36,
        "validityYears": 3,
        "status": "active",
        "defaultLimits": {
            "perTransaction": 100_000,
            "daily": 200_000,
            "monthly": 1_000_000,
            "dailyCash": 50_000,
        },
    },
    PREPAID_VIRTUAL: {
        "code": PREPAID_VIRTUAL,
        "name": "Virtual prepaid card",
        "kind": "prepaid",
        "accountKind": "prepaid",
        "forms": ["virtual"],
        "bin": "40000300",
        "panLength": 16,
        "validityMonths": 24,
        "validityYears": 2,
        "status": "active",
        "defaultLimits": {
            "perTransaction": 50_000,
            "daily": 100_000,
            "monthly": 500_000,
            "dailyCash": 0,
        },
    },
}
# What a new card's security settings start as, on every standard product.
for _product in PRODUCTS.values():
    _product["defaultSecuritySettings"] = {
        "ecommerce": True,
        "contactless": True,
        "atm": True,
        "international": True,
        "magstripe": False,
        "blockedMccs": [],
        "blockedCountries": [],
    }
    # The standard products charge no fee (docs/fees.md).
    _product.update({"atmFee": 0, "replacementFee": 0, "foreignTransactionFeeBps": 0})
    _product["disputePolicy"] = "none"  # no regulator's clock (docs/disputes.md)
    _product["disputeProvisionalCredit"] = "at_submission"

SENSITIVE_SCOPE = {"requiredScope": "cards:sensitive"}


def test_card_products_list_every_field(api):
    response = api.get("/products/cards")
    assert response.status_code == 200, response.content
    payload = response.json()
    assert set(payload) == {"data", "nextCursor", "hasMore", "meta"}
    listed = {product["code"]: product for product in payload["data"]}
    assert set(listed) == set(PRODUCTS)
    for code, product in listed.items():
        assert prefixed_id("cprd").match(product["rid"])
        assert product["rid"] == product_rid(api, code)
        assert TIMESTAMP.match(product["createdAt"])
        assert product["updatedAt"] == product["createdAt"]
        rest = {k: v for k, v in product.items() if k not in ("rid", "createdAt", "updatedAt")}
        assert rest == PRODUCTS[code]


def test_card_products_are_per_institution(api, other_api):
    mine = {product["rid"] for product in api.get("/products/cards").json()["data"]}
    theirs = {product["rid"] for product in other_api.get("/products/cards").json()["data"]}
    assert len(mine) == len(theirs) == 3
    assert not mine & theirs


KINDS = [
    # card product, account product, account currency, BIN
    (DEBIT, CURRENT_ACCOUNT, "EUR", "400001"),
    (PREPAID, PREPAID_ACCOUNT, "EUR", "400002"),
    (PREPAID_VIRTUAL, PREPAID_ACCOUNT, "EUR", "40000300"),
    (PREPAID, GHS_ACCOUNT, "GHS", "400002"),
    (PREPAID_VIRTUAL, GHS_ACCOUNT, "GHS", "40000300"),
]


def test_issue_a_virtual_card_of_each_product(api, institution):
    sensitive = sensitive_api(api, institution)
    ada = customer(api)
    for card_code, account_code, currency, bin in KINDS:
        check_issued(api, sensitive, ada, card_code, account_code, currency, bin)


def check_issued(api, sensitive, ada, card_code, account_code, currency, bin):
    acc = account(api, ada, account_code)
    response = issue_response(api, acc, ada, card_code)
    assert response.status_code == CREATED[api.version], response.content
    card = created(response, api.version)
    assert set(card) == CARD_FIELDS | ({"metadata"} if api.version == "v2" else set())
    year, month = expiry_after(12 * VALIDITY[card_code])
    defaults = PRODUCTS[card_code]["defaultLimits"]
    assert prefixed_id("card").match(card["cardId"])
    assert card == {
        **card,
        "accountId": acc,
        "customerId": ada,
        "cardProductRid": product_rid(api, card_code),
        "kind": PRODUCTS[card_code]["kind"],
        "form": "virtual",
        "status": "inactive",
        "statusReason": "",
        "riskLevel": "low",
        "expiryMonth": month,
        "expiryYear": year,
        "embossedName": "ADA LOVELACE",
        "deliveryAddress": None,
        "primaryCardId": None,
        "predecessorCardId": None,
        "successorCardId": None,
        "succession": None,
        "securitySettings": {
            "ecommerce": True,
            "contactless": True,
            "atm": True,
            "international": True,
            "magstripe": False,
            "blockedMccs": [],
            "blockedCountries": [],
        },
        "limits": defaults,
        "pin": {"set": False, "blocked": False, "remainingTries": 3},
    }
    assert card["maskedPan"] == bin[:6] + "******" + card["last4"]
    assert len(card["last4"]) == 4 and card["last4"].isdigit()
    assert TIMESTAMP.match(card["createdAt"]) and TIMESTAMP.match(card["updatedAt"])
    # Read back the same; the PAN starts with the product's whole BIN (8 digits for one).
    assert card_of(api, card["cardId"]) == card
    pan = secrets_of(sensitive, card["cardId"])["pan"]
    assert pan.startswith(bin) and pan.endswith(card["last4"]) and len(pan) == 16
    assert limits_of(api, card["cardId"])["currency"] == currency


def test_ghs_account_is_in_cedi(api):
    ada = customer(api)
    acc = account(api, ada, GHS_ACCOUNT)
    opened = resource(api.get(f"/accounts/{acc}"), api.version)
    assert (opened["productCode"], opened["currency"]) == (GHS_ACCOUNT, "GHS")


def test_v2_answers_201_and_v1_200_in_an_envelope(api):
    ada = customer(api)
    acc = account(api, ada)
    response = issue_response(api, acc, ada)
    payload = response.json()
    if api.version == "v1":
        assert response.status_code == 200
        assert set(payload) == {"data", "meta"}
        assert "meta" not in payload["data"]
    else:
        assert response.status_code == 201
        assert set(payload) == CARD_FIELDS | {"metadata", "meta"}  # metadata: v2 only
    meta = payload["meta"]
    assert set(meta) == {"tranId", "timestamp"}
    assert meta["tranId"] == response["X-Request-Id"]
    assert TIMESTAMP.match(meta["timestamp"])


DEBIT_NEEDS = "A debit card needs a current account (CBSFinancialContractTypeAPI)."
PREPAID_NEEDS = (
    "A prepaid card needs a prepaid account (AccountPrepaidAPI or GHSAccountPrepaidAPI)."
)


def test_product_must_fit_the_account(api):
    ada = customer(api)
    for card_code, account_code, message in [
        (DEBIT, PREPAID_ACCOUNT, DEBIT_NEEDS),
        (DEBIT, GHS_ACCOUNT, DEBIT_NEEDS),
        (PREPAID, CURRENT_ACCOUNT, PREPAID_NEEDS),
        (PREPAID_VIRTUAL, CURRENT_ACCOUNT, PREPAID_NEEDS),
    ]:
        acc = account(api, ada, account_code)
        response = issue_response(api, acc, ada, card_code)
        assert_validation_error(response, api.version, {"cardProductRid": message})
    assert ids(api, "/cards") == set()


@pytest.mark.parametrize(
    ("card_code", "account_code"), [(PREPAID, PREPAID_ACCOUNT), (DEBIT, CURRENT_ACCOUNT)]
)
def test_physical_card_with_the_version_address(api, card_code, account_code):
    ada = customer(api)
    acc = account(api, ada, account_code)
    card = issue(
        api,
        acc,
        ada,
        card_code,
        form="physical",
        deliveryAddress={**address(api.version, "826"), "line2": "Flat 2"},
        embossedName="Ada M. O'Neil-Byron",
    )
    country = "countryId" if api.version == "v1" else "countryCode"
    expected = {
        "line1": "Unter den Linden 1",
        "line2": "Flat 2",
        "city": "Berlin",
        "postalCode": "10117",
        country: "826",
    }
    assert (card["form"], card["deliveryAddress"]) == ("physical", expected)
    assert card["embossedName"] == "ADA M. O'NEIL-BYRON"
    assert card_of(api, card["cardId"])["deliveryAddress"] == expected


def test_physical_card_needs_an_address(api):
    ada = customer(api)
    acc = account(api, ada)
    response = issue_response(api, acc, ada, form="physical")
    assert_validation_error(
        response, api.version, {"deliveryAddress": "A physical card needs a delivery address."}
    )


def test_the_other_versions_country_key_is_rejected(api):
    ada = customer(api)
    acc = account(api, ada)
    wrong = "countryCode" if api.version == "v1" else "countryId"
    other_version = "v2" if api.version == "v1" else "v1"
    response = issue_response(
        api, acc, ada, form="physical", deliveryAddress=address(other_version)
    )
    assert_validation_error(response, api.version, {f"deliveryAddress.{wrong}": "Unknown field."})
    # Without any country the address is incomplete.
    right = "countryId" if api.version == "v1" else "countryCode"
    incomplete = {k: v for k, v in address(api.version).items() if k != right}
    response = issue_response(api, acc, ada, form="physical", deliveryAddress=incomplete)
    assert_validation_error(
        response, api.version, {f"deliveryAddress.{right}": "This field is required."}
    )
    # Not a country.
    response = issue_response(
        api, acc, ada, form="physical", deliveryAddress=address(api.version, "999")
    )
    assert_validation_error(
        response,
        api.version,
        {f"deliveryAddress.{right}": "999 is not an ISO 3166-1 numeric country code."},
    )
    assert ids(api, "/cards") == set()


def test_virtual_card_takes_no_address(api):
    ada = customer(api)
    acc = account(api, ada)
    response = issue_response(api, acc, ada, deliveryAddress=address(api.version))
    assert_validation_error(
        response,
        api.version,
        {"deliveryAddress": "A virtual card is not delivered: leave this out."},
    )


def test_virtual_only_product_is_not_physical(api):
    ada = customer(api)
    acc = account(api, ada)
    response = issue_response(
        api, acc, ada, PREPAID_VIRTUAL, form="physical", deliveryAddress=address(api.version)
    )
    assert_validation_error(
        response, api.version, {"form": "This product is issued as virtual only."}
    )


def test_issued_active_on_request_and_inactive_otherwise(api):
    ada = customer(api)
    acc = account(api, ada)
    assert issue(api, acc, ada)["status"] == "inactive"
    assert issue(api, acc, ada, status="active")["status"] == "active"
    response = issue_response(api, acc, ada, status="suspended")
    assert_validation_error(response, api.version, {"status": '"suspended" is not a valid choice.'})
    assert len(ids(api, "/cards")) == 2


def test_the_cardholder_must_hold_the_account(api):
    ada = customer(api)
    bob = customer(api, "Bob", "Builder")
    acc = account(api, ada)
    response = issue_response(api, acc, bob)
    assert_validation_error(
        response, api.version, {"customerId": "The customer does not hold this account."}
    )


def test_invalid_embossed_name(api):
    ada = customer(api)
    acc = account(api, ada)
    response = issue_response(api, acc, ada, embossedName="李小龙")
    assert_validation_error(
        response,
        api.version,
        {
            "embossedName": "2 to 26 letters A-Z, digits, spaces and . ' - / (accented Latin "
            "letters are transliterated; other characters are refused)."
        },
    )


def test_a_given_embossed_name_is_transliterated(api):
    ada = customer(api)
    acc = account(api, ada)
    assert issue(api, acc, ada, embossedName="Zoë Ünal")["embossedName"] == "ZOE UNAL"


def test_embossed_name_defaults_to_an_ascii_name(api):
    zoe = customer(api, "Zoë", "Ünal")
    acc = account(api, zoe)
    assert issue(api, acc, zoe)["embossedName"] == "ZOE UNAL"


def test_no_card_on_a_frozen_account(api):
    ada = customer(api)
    acc = account(api, ada)
    assert api.patch(f"/accounts/{acc}", {"status": "frozen"}).status_code == 200
    response = issue_response(api, acc, ada)
    assert_error(
        response,
        api.version,
        422,
        "account_not_active",
        {"accountId": acc, "status": "frozen"},
    )
    assert ids(api, "/cards") == set()


# --- supplementary cards
def test_supplementary_card_on_the_primary_cards_account(api):
    ada = customer(api)
    bob = customer(api, "Bob", "Builder")
    acc = account(api, ada, CURRENT_ACCOUNT)
    primary = issue(api, acc, ada, DEBIT, status="active")
    response = api.post(
        "/cards",
        {
            "primaryCardId": primary["cardId"],
            "customerId": bob,
            "cardProductRid": product_rid(api, DEBIT),
            "form": "physical",
            "deliveryAddress": address(api.version),
        },
    )
    supplementary = created(response, api.version)
    assert supplementary["primaryCardId"] == primary["cardId"]
    assert supplementary["accountId"] == acc
    assert supplementary["customerId"] == bob
    assert supplementary["embossedName"] == "BOB BUILDER"
    assert supplementary["cardId"] != primary["cardId"]
    assert ids(api, "/cards", accountId=acc) == {primary["cardId"], supplementary["cardId"]}
    assert ids(api, "/cards", customerId=bob) == {supplementary["cardId"]}
    # With the primary card's account given explicitly, too.
    explicit = issue(api, acc, bob, DEBIT, primaryCardId=primary["cardId"])
    assert explicit["primaryCardId"] == primary["cardId"]


def test_supplementary_card_rules(api):
    ada = customer(api)
    bob = customer(api, "Bob", "Builder")
    acc = account(api, ada, CURRENT_ACCOUNT)
    other_acc = account(api, ada, CURRENT_ACCOUNT)
    primary = issue(api, acc, ada, DEBIT, status="active")
    supplementary = issue(api, acc, bob, DEBIT, primaryCardId=primary["cardId"])

    def attempt(**fields):
        return api.post(
            "/cards",
            {"customerId": bob, "cardProductRid": product_rid(api, DEBIT), "form": "virtual"}
            | fields,
        )

    # For the same customer as the primary card.
    response = attempt(primaryCardId=primary["cardId"], customerId=ada)
    assert_validation_error(
        response,
        api.version,
        {"customerId": "A supplementary card is for another customer than the primary."},
    )
    # Of a supplementary card.
    response = attempt(primaryCardId=supplementary["cardId"])
    assert_validation_error(
        response,
        api.version,
        {"primaryCardId": "A supplementary card cannot have supplementary cards."},
    )
    # On another account than the primary's.
    response = attempt(primaryCardId=primary["cardId"], accountId=other_acc)
    assert_validation_error(
        response,
        api.version,
        {"accountId": "A supplementary card sits on its primary card's account."},
    )
    # Neither an account nor a primary card.
    response = attempt()
    assert_validation_error(response, api.version, {"accountId": "This field is required."})
    # Of a primary card that is closed.
    assert set_status(api, primary["cardId"], "closed").status_code == 200
    response = attempt(primaryCardId=primary["cardId"])
    assert_error(
        response,
        api.version,
        422,
        "card_not_active",
        {"primaryCardId": primary["cardId"], "status": "closed"},
    )
    assert ids(api, "/cards", accountId=acc) == {primary["cardId"], supplementary["cardId"]}


# --- ids that name nothing here
def test_unknown_and_other_institutions_ids_are_404(api, other_api):
    ada = customer(api)
    acc = account(api, ada)
    card = issue(api, acc, ada)
    theirs = customer(other_api, "Eve")
    their_acc = account(other_api, theirs)
    their_card = issue(other_api, their_acc, theirs)
    base = {
        "accountId": acc,
        "customerId": ada,
        "cardProductRid": product_rid(api, PREPAID),
        "form": "virtual",
    }
    cases = [
        ("accountId", unknown_id("acc"), "No account with this id."),
        ("accountId", their_acc, "No account with this id."),
        ("customerId", unknown_id("cus"), None),
        ("customerId", theirs, None),
        ("cardProductRid", unknown_id("cprd"), "No card product with this rid."),
        ("cardProductRid", product_rid(other_api, PREPAID), "No card product with this rid."),
        ("primaryCardId", unknown_id("card"), "No card with this id."),
        ("primaryCardId", their_card["cardId"], "No card with this id."),
    ]
    for field, value, message in cases:
        response = api.post("/cards", {**base, field: value})
        assert_error(response, api.version, 404, "not_found", message=message)
    assert ids(api, "/cards") == {card["cardId"]}
    for path in ("", "/limits", "/security-settings"):
        assert_error(
            api.get(f"/cards/{their_card['cardId']}{path}"),
            api.version,
            404,
            "not_found",
            message="No card with this id.",
        )
        assert_error(
            api.get(f"/cards/{unknown_id('card')}{path}"),
            api.version,
            404,
            "not_found",
            message="No card with this id.",
        )
    assert ids(other_api, "/cards") == {their_card["cardId"]}


def test_list_cards_with_filters(api):
    ada = customer(api)
    bob = customer(api, "Bob", "Builder")
    ada_acc = account(api, ada)
    bob_acc = account(api, bob)
    first = issue(api, ada_acc, ada, status="active")
    second = issue(api, ada_acc, ada)
    third = issue(api, bob_acc, bob, status="active")
    listed = items_of(api, "/cards", limit=100)
    assert [card["cardId"] for card in listed] == [
        third["cardId"],
        second["cardId"],
        first["cardId"],
    ]
    assert listed[0] == card_of(api, third["cardId"])
    assert ids(api, "/cards", accountId=ada_acc) == {first["cardId"], second["cardId"]}
    assert ids(api, "/cards", customerId=bob) == {third["cardId"]}
    assert ids(api, "/cards", status="active") == {first["cardId"], third["cardId"]}
    assert ids(api, "/cards", status="inactive", accountId=ada_acc) == {second["cardId"]}
    response = api.get("/cards", {"status": "melted"})
    assert response.status_code == 400


# --- idempotency
def test_replaying_post_cards_returns_the_same_card(api):
    ada = customer(api)
    acc = account(api, ada)
    key = new_key()
    body = {
        "accountId": acc,
        "customerId": ada,
        "cardProductRid": product_rid(api, PREPAID),
        "form": "virtual",
    }
    first = api.post("/cards", body, idempotency_key=key)
    replay = api.post("/cards", body, idempotency_key=key)
    assert first.status_code == CREATED[api.version], first.content
    assert (replay.status_code, replay.content) == (first.status_code, first.content)
    assert replay["Idempotent-Replayed"] == "true"
    assert not first.has_header("Idempotent-Replayed")
    card = created(first, api.version)
    assert ids(api, "/cards") == {card["cardId"]}
    # The same key for another body: refused, still one card.
    other = api.post("/cards", {**body, "status": "active"}, idempotency_key=key)
    assert_error(other, api.version, 422, "idempotency_key_reused")
    assert ids(api, "/cards") == {card["cardId"]}
    # A new key is a new card.
    assert len(ids(api, "/cards")) == 1
    issue(api, acc, ada)
    assert len(ids(api, "/cards")) == 2


def test_v2_card_writes_need_an_idempotency_key(api_v2, api_v1):
    ada = customer(api_v2)
    acc = account(api_v2, ada)
    body = {
        "accountId": acc,
        "customerId": ada,
        "cardProductRid": product_rid(api_v2, PREPAID),
        "form": "virtual",
    }
    response = api_v2.post("/cards", body, idempotency_key=None)
    assert_error(response, "v2", 400, "idempotency_key_missing")
    assert ids(api_v2, "/cards") == set()
    # v1: optional.
    card = created(api_v1.post("/cards", body, idempotency_key=None), "v1")
    assert ids(api_v2, "/cards") == {card["cardId"]}


def test_card_lookup_by_pan(api, institution, other_institution):
    ada = customer(api)
    acc = account(api, ada)
    card = issue(api, acc, ada)
    sensitive = sensitive_api(api, institution)
    pan = secrets_of(sensitive, card["cardId"])["pan"]
    found = resource(sensitive.post("/card-lookups", {"pan": pan}), api.version)
    assert found == card_of(api, card["cardId"])
    # Without `cards:sensitive` a PAN is not even looked up.
    assert_error(
        api.post("/card-lookups", {"pan": pan}),
        api.version,
        403,
        "permission_denied",
        SENSITIVE_SCOPE,
    )
    # Another institution does not see it.
    theirs = Api(api.version, issue_key(other_institution, scopes=api_scopes.ALL)[1])
    assert_error(
        theirs.post("/card-lookups", {"pan": pan}),
        api.version,
        404,
        "not_found",
        message="No card with this PAN.",
    )
    # A PAN with a wrong check digit, or no PAN at all.
    bad = pan[:-1] + str((int(pan[-1]) + 1) % 10)
    assert_validation_error(
        sensitive.post("/card-lookups", {"pan": bad}),
        api.version,
        {"pan": "Must be 12 to 19 digits with a valid check digit."},
    )
    assert_validation_error(
        sensitive.post("/card-lookups", {}), api.version, {"pan": "This field is required."}
    )


def test_sensitive_key_of_another_institution_sees_nothing(api, other_institution):
    ada = customer(api)
    acc = account(api, ada)
    card = issue(api, acc, ada)
    theirs = Api(api.version, issue_key(other_institution, scopes=api_scopes.ALL)[1])
    assert_error(
        theirs.get(f"/cards/{card['cardId']}/sensitive-details"), api.version, 404, "not_found"
    )
