"""`GET /products/accounts`: the institution's three account types, the same in both versions.
(Products the bank makes and changes, v2 only: tests/accounts/api/test_products_by_bank.py.)"""

import re

import pytest

from accounts.models import AccountProduct
from tests.conftest import Api, error_of
from tests.factories import InstitutionFactory, issue_key

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
PRODUCT_FIELDS = {
    "rid",
    "code",
    "name",
    "kind",
    "currency",
    "allowsOverdraft",
    "maxOverdraftLimit",
    "monthlyFee",
    "debitHoldDays",
    "status",
    "createdAt",
    "updatedAt",
}


def products_of(api) -> dict:
    response = api.get("/products/accounts")
    assert response.status_code == 200, response.content
    payload = response.json()
    assert set(payload) == {"data", "nextCursor", "hasMore", "meta"}
    assert (payload["nextCursor"], payload["hasMore"]) == (None, False)
    assert set(payload["meta"]) == {"tranId", "timestamp"}
    for product in payload["data"]:
        assert set(product) == PRODUCT_FIELDS
        assert TIMESTAMP.match(product["createdAt"])
        assert product.pop("updatedAt") == product.pop("createdAt")
    by_code = {product["code"]: product for product in payload["data"]}
    assert len(by_code) == len(payload["data"])
    return by_code


def expected_products(institution, currency):
    rids = dict(AccountProduct.objects.filter(institution=institution).values_list("code", "id"))
    return {
        "AccountPrepaidAPI": {
            "rid": rids["AccountPrepaidAPI"],
            "code": "AccountPrepaidAPI",
            "name": "Prepaid account",
            "kind": "prepaid",
            "currency": currency,
            "allowsOverdraft": False,
            "maxOverdraftLimit": 0,
            "monthlyFee": 0,
            "debitHoldDays": None,
            "status": "active",
        },
        "CBSFinancialContractTypeAPI": {
            "rid": rids["CBSFinancialContractTypeAPI"],
            "code": "CBSFinancialContractTypeAPI",
            "name": "Current account",
            "kind": "current",
            "currency": currency,
            "allowsOverdraft": False,
            "maxOverdraftLimit": 0,
            "monthlyFee": 0,
            "debitHoldDays": None,
            "status": "active",
        },
        "GHSAccountPrepaidAPI": {
            "rid": rids["GHSAccountPrepaidAPI"],
            "code": "GHSAccountPrepaidAPI",
            "name": "Prepaid account (GHS)",
            "kind": "prepaid",
            "currency": "GHS",
            "allowsOverdraft": False,
            "maxOverdraftLimit": 0,
            "monthlyFee": 0,
            "debitHoldDays": None,
            "status": "active",
        },
    }


def test_lists_exactly_the_three_seeded_products(api, institution):
    assert products_of(api) == expected_products(institution, "EUR")


def test_ghs_product_is_in_ghs_whatever_the_institution_currency(version, db):
    institution = InstitutionFactory(currency="USD")
    api = Api(version, issue_key(institution)[1])

    products = products_of(api)

    assert products == expected_products(institution, "USD")
    assert products["GHSAccountPrepaidAPI"]["currency"] == "GHS"


def test_another_institutions_products_never_appear(api, other_api, institution, other_institution):
    mine = products_of(api)
    theirs = products_of(other_api)

    assert mine == expected_products(institution, "EUR")
    assert theirs == expected_products(other_institution, "EUR")
    assert not {p["rid"] for p in mine.values()} & {p["rid"] for p in theirs.values()}


@pytest.mark.parametrize(("version", "method"), [("v1", "post"), ("v1", "patch"), ("v2", "patch")])
def test_writing_to_products_is_method_not_allowed(api, version, method):
    """v1 only lists; v2 makes products with POST (and changes one at its own path)."""
    response = getattr(api, method)("/products/accounts", {"code": "AccountPrepaidAPI"})

    assert response.status_code == 405
    assert error_of(response, api.version) == {
        "code": "method_not_allowed",
        "message": "This method is not allowed on this path.",
    }
    assert AccountProduct.objects.count() == 3
