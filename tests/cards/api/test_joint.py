"""Joint accounts over HTTP (spec 2.3 with the v1.1.3 rules): v2 `POST /joint-accounts`, v1
`POST /cards/joint-account`. Both cards are required, each with `cardProductRid`;
`accountTypeRid` is optional; the answer has the account and both cards. Account-only and
single-card requests (v1.1.2 shapes) are 400 and create nothing."""

import pytest

from tests.accounts.api.helpers import unknown_id

from .helpers import (
    CREATED,
    CURRENT_ACCOUNT,
    DEBIT,
    GHS_ACCOUNT,
    PREPAID,
    PREPAID_ACCOUNT,
    PREPAID_VIRTUAL,
    address,
    assert_error,
    assert_validation_error,
    card_of,
    created,
    customer,
    ids,
    joint_path,
    new_key,
    product_rid,
    resource,
)


@pytest.fixture
def holders(api):
    return customer(api), customer(api, "Bob", "Builder")


def card_request(api, customer_id, code=DEBIT, **fields) -> dict:
    return {"customerId": customer_id, "cardProductRid": product_rid(api, code), **fields}


def joint(api, body, **kwargs):
    return api.post(joint_path(api.version), body, **kwargs)


def everything(api) -> tuple[set, set]:
    """The ids of every account and every card of the institution."""
    return ids(api, "/accounts"), ids(api, "/cards")


def test_open_a_joint_debit_account(api, holders):
    ada, bob = holders
    response = joint(
        api,
        {"primaryCard": card_request(api, ada), "secondaryCard": card_request(api, bob)},
    )
    assert response.status_code == CREATED[api.version], response.content
    body = created(response, api.version)
    assert set(body) == {"account", "primaryCard", "secondaryCard"}
    account, primary, secondary = body["account"], body["primaryCard"], body["secondaryCard"]
    assert (account["customerId"], account["secondaryCustomerId"]) == (ada, bob)
    assert (account["productCode"], account["currency"], account["status"]) == (
        CURRENT_ACCOUNT,
        "EUR",
        "active",
    )
    assert account["balances"] == {"posted": 0, "pending": 0, "available": 0, "currency": "EUR"}
    for card, holder in ((primary, ada), (secondary, bob)):
        assert card["accountId"] == account["accountId"]
        assert card["customerId"] == holder
        assert (card["kind"], card["form"], card["status"]) == ("debit", "virtual", "inactive")
        assert card["cardProductRid"] == product_rid(api, DEBIT)
        assert card["primaryCardId"] is None
        assert card["maskedPan"].startswith("400001******")
        assert card_of(api, card["cardId"]) == card
    assert primary["embossedName"] == "ADA LOVELACE"
    assert secondary["embossedName"] == "BOB BUILDER"
    assert primary["cardId"] != secondary["cardId"]
    read = resource(api.get(f"/accounts/{account['accountId']}"), api.version)
    assert read == {**account, "updatedAt": read["updatedAt"]}
    assert everything(api) == (
        {account["accountId"]},
        {primary["cardId"], secondary["cardId"]},
    )
    assert ids(api, "/cards", customerId=bob) == {secondary["cardId"]}


def test_account_type_given(api, holders):
    ada, bob = holders
    for account_code, card_code, currency in [
        (PREPAID_ACCOUNT, PREPAID, "EUR"),
        (GHS_ACCOUNT, PREPAID_VIRTUAL, "GHS"),
        (CURRENT_ACCOUNT, DEBIT, "EUR"),
    ]:
        body = created(
            joint(
                api,
                {
                    "accountTypeRid": product_rid(api, account_code, cards=False),
                    "primaryCard": card_request(api, ada, card_code),
                    "secondaryCard": card_request(api, bob, card_code),
                },
            ),
            api.version,
        )
        assert (body["account"]["productCode"], body["account"]["currency"]) == (
            account_code,
            currency,
        )
        assert body["primaryCard"]["kind"] == body["secondaryCard"]["kind"]
        assert body["primaryCard"]["cardProductRid"] == product_rid(api, card_code)


def test_prepaid_cards_without_account_type_get_a_prepaid_account(api, holders):
    ada, bob = holders
    body = created(
        joint(
            api,
            {
                "primaryCard": card_request(api, ada, PREPAID),
                "secondaryCard": card_request(api, bob, PREPAID_VIRTUAL),
            },
        ),
        api.version,
    )
    assert body["account"]["productCode"] == PREPAID_ACCOUNT
    assert (body["primaryCard"]["kind"], body["secondaryCard"]["kind"]) == ("prepaid", "prepaid")


def test_physical_joint_cards_with_the_version_address(api, holders):
    ada, bob = holders
    body = created(
        joint(
            api,
            {
                "primaryCard": card_request(
                    api,
                    ada,
                    form="physical",
                    deliveryAddress=address(api.version),
                    embossedName="Ada King",
                ),
                "secondaryCard": card_request(api, bob, form="virtual"),
            },
        ),
        api.version,
    )
    country = "countryId" if api.version == "v1" else "countryCode"
    assert body["primaryCard"]["deliveryAddress"] == {
        "line1": "Unter den Linden 1",
        "line2": None,
        "city": "Berlin",
        "postalCode": "10117",
        country: "276",
    }
    assert body["primaryCard"]["embossedName"] == "ADA KING"
    assert (body["secondaryCard"]["form"], body["secondaryCard"]["deliveryAddress"]) == (
        "virtual",
        None,
    )


def test_rejected_shapes_create_nothing(api, holders):
    ada, bob = holders
    primary, secondary = card_request(api, ada), card_request(api, bob)
    current = product_rid(api, CURRENT_ACCOUNT, cards=False)
    required = "This field is required."
    cases = [
        # v1.1.2's account-only request.
        ({"accountTypeRid": current}, {"primaryCard": required, "secondaryCard": required}),
        ({}, {"primaryCard": required, "secondaryCard": required}),
        # Single card, either one.
        ({"primaryCard": primary}, {"secondaryCard": required}),
        ({"accountTypeRid": current, "primaryCard": primary}, {"secondaryCard": required}),
        ({"secondaryCard": secondary}, {"primaryCard": required}),
        # A card object without its product.
        (
            {"primaryCard": primary, "secondaryCard": {"customerId": bob}},
            {"secondaryCard.cardProductRid": required},
        ),
        (
            {"primaryCard": {"customerId": ada}, "secondaryCard": secondary},
            {"primaryCard.cardProductRid": required},
        ),
        (
            {"primaryCard": {}, "secondaryCard": {}},
            {
                "primaryCard.customerId": required,
                "primaryCard.cardProductRid": required,
                "secondaryCard.customerId": required,
                "secondaryCard.cardProductRid": required,
            },
        ),
        # Null cards.
        (
            {"primaryCard": None, "secondaryCard": None},
            {
                "primaryCard": "This field may not be null.",
                "secondaryCard": "This field may not be null.",
            },
        ),
        (
            {"primaryCard": primary, "secondaryCard": None},
            {"secondaryCard": "This field may not be null."},
        ),
        # Not objects.
        (
            {"primaryCard": primary, "secondaryCard": product_rid(api, DEBIT)},
            {"secondaryCard": "Invalid data. Expected a dictionary, but got str."},
        ),
        # The same customer twice.
        (
            {"primaryCard": primary, "secondaryCard": card_request(api, ada)},
            {"secondaryCard.customerId": "The two holders must be different customers."},
        ),
        # A card that does not fit the account type.
        (
            {
                "accountTypeRid": current,
                "primaryCard": primary,
                "secondaryCard": card_request(api, bob, PREPAID),
            },
            {
                "secondaryCard.cardProductRid": "A prepaid card needs a prepaid account "
                "(AccountPrepaidAPI or GHSAccountPrepaidAPI).",
            },
        ),
        (
            {"primaryCard": primary, "secondaryCard": card_request(api, bob, PREPAID)},
            {
                "secondaryCard.cardProductRid": "A prepaid card needs a prepaid account "
                "(AccountPrepaidAPI or GHSAccountPrepaidAPI).",
            },
        ),
        # A physical card without an address, a virtual one with one.
        (
            {"primaryCard": {**primary, "form": "physical"}, "secondaryCard": secondary},
            {"primaryCard.deliveryAddress": "A physical card needs a delivery address."},
        ),
        (
            {
                "primaryCard": primary,
                "secondaryCard": {**secondary, "deliveryAddress": address(api.version)},
            },
            {"secondaryCard.deliveryAddress": "A virtual card is not delivered: leave this out."},
        ),
        # Unknown fields.
        (
            {"primaryCard": primary, "secondaryCard": secondary, "accountId": "acc_x"},
            {"accountId": "Unknown field."},
        ),
    ]
    for body, details in cases:
        assert_validation_error(joint(api, body), api.version, details)
    assert everything(api) == (set(), set())


def test_the_other_versions_country_key_is_rejected(api, holders):
    ada, bob = holders
    other = address("v2" if api.version == "v1" else "v1")
    wrong = "countryCode" if api.version == "v1" else "countryId"
    response = joint(
        api,
        {
            "primaryCard": card_request(api, ada, form="physical", deliveryAddress=other),
            "secondaryCard": card_request(api, bob),
        },
    )
    assert_validation_error(
        response, api.version, {f"primaryCard.deliveryAddress.{wrong}": "Unknown field."}
    )
    assert everything(api) == (set(), set())


def test_ids_that_name_nothing_are_404_and_create_nothing(api, other_api, holders):
    ada, bob = holders
    eve = customer(other_api, "Eve")
    cases = [
        {"accountTypeRid": unknown_id("aprd")},
        {"accountTypeRid": product_rid(other_api, CURRENT_ACCOUNT, cards=False)},
        {"secondaryCard": card_request(api, unknown_id("cus"))},
        {"secondaryCard": card_request(api, eve)},
        {"secondaryCard": {"customerId": bob, "cardProductRid": unknown_id("cprd")}},
        {"primaryCard": {"customerId": ada, "cardProductRid": product_rid(other_api, DEBIT)}},
    ]
    for override in cases:
        body = {
            "primaryCard": card_request(api, ada),
            "secondaryCard": card_request(api, bob),
        } | override
        assert_error(joint(api, body), api.version, 404, "not_found")
    assert everything(api) == (set(), set())
    assert everything(other_api) == (set(), set())


def test_each_version_has_its_own_path(api_v1, api_v2):
    ada, bob = customer(api_v2), customer(api_v2, "Bob", "Builder")
    body = {
        "primaryCard": card_request(api_v2, ada),
        "secondaryCard": card_request(api_v2, bob),
    }
    # v1 has no /joint-accounts; in v2, /cards/joint-account is the card path (no POST there).
    assert_error(api_v1.post("/joint-accounts", body), "v1", 404, "not_found")
    assert_error(api_v2.post("/cards/joint-account", body), "v2", 405, "method_not_allowed")
    assert_error(api_v2.get("/cards/joint-account"), "v2", 404, "not_found")
    assert_error(api_v1.get("/cards/joint-account"), "v1", 405, "method_not_allowed")
    assert everything(api_v2) == (set(), set())
    # Each answers on its own.
    v1 = created(api_v1.post("/cards/joint-account", body), "v1")
    v2 = created(api_v2.post("/joint-accounts", body), "v2")
    assert v1["account"]["accountId"] != v2["account"]["accountId"]
    assert len(everything(api_v2)[1]) == 4


def test_replay_opens_one_joint_account(api, holders):
    ada, bob = holders
    body = {"primaryCard": card_request(api, ada), "secondaryCard": card_request(api, bob)}
    key = new_key()
    first = joint(api, body, idempotency_key=key)
    replay = joint(api, body, idempotency_key=key)
    assert first.status_code == CREATED[api.version]
    assert (replay.status_code, replay.content) == (first.status_code, first.content)
    assert replay["Idempotent-Replayed"] == "true"
    opened = created(first, api.version)
    assert everything(api) == (
        {opened["account"]["accountId"]},
        {opened["primaryCard"]["cardId"], opened["secondaryCard"]["cardId"]},
    )


def test_a_joint_account_is_a_normal_account(api, holders):
    """Both holders' cards move its money; a third customer cannot get a card on it."""
    ada, bob = holders
    body = created(
        joint(
            api, {"primaryCard": card_request(api, ada), "secondaryCard": card_request(api, bob)}
        ),
        api.version,
    )
    account_id = body["account"]["accountId"]
    carol = customer(api, "Carol", "Danvers")
    response = api.post(
        "/cards",
        {
            "accountId": account_id,
            "customerId": carol,
            "cardProductRid": product_rid(api, DEBIT),
            "form": "virtual",
        },
    )
    assert_validation_error(
        response, api.version, {"customerId": "The customer does not hold this account."}
    )
    # Bob, the second holder, may have another card on it.
    response = api.post(
        "/cards",
        {
            "accountId": account_id,
            "customerId": bob,
            "cardProductRid": product_rid(api, DEBIT),
            "form": "virtual",
        },
    )
    assert created(response, api.version)["customerId"] == bob
