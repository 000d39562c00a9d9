"""`api.names`: the domain's names in each version's, for error details and v1's serializers.

v1's renames are one table (`V1_RENAMES`); it must say exactly how `openapi/v1.yaml` differs
from `openapi/v2.yaml` in field names, and the error paths must find every object it renames.
"""

from pathlib import Path

import pytest
import yaml

from api.addresses import Address, AddressInput, V1Address, V1AddressInput
from api.names import OBJECT_FIELDS, V1_RENAMES, api_details, api_path, camel
from tests.conftest import error_of

ROOT = Path(__file__).resolve().parent.parent.parent
# v1 wraps a resource in `{data, meta}` and an error in `{error, meta}`: not a renamed object.
ENVELOPES = ({"data", "meta"}, {"error", "meta"})


def components(version: str) -> dict:
    document = yaml.safe_load((ROOT / "openapi" / f"{version}.yaml").read_text())
    return document["components"]["schemas"]


def refs(schema) -> set[str]:
    """The components a schema refers to, at any depth."""
    found = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "$ref":
                found.add(value.rsplit("/", 1)[-1])
            else:
                found |= refs(value)
    elif isinstance(schema, list):
        for item in schema:
            found |= refs(item)
    return found


def objects_held(schemas: dict) -> dict[str, set[str]]:
    """component -> the objects (V1_RENAMES keys) it is, by the fields that hold it."""
    held: dict[str, set[str]] = {}
    for schema in schemas.values():
        for name, prop in (schema.get("properties") or {}).items():
            for component in refs(prop):
                if name in OBJECT_FIELDS:
                    held.setdefault(component, set()).add(OBJECT_FIELDS[name])
    return held


# Fields v2 added that the legacy v1 line neither takes nor shows, wherever they appear.
V2_ONLY = {
    "metadata": "docs/metadata.md",
    "overdraftLimit": "docs/overdraft.md",
    # A presentment that is not final (multiple presentments).
    "final": "docs/card-transactions.md",
}


def test_v1_has_none_of_the_fields_only_v2_has():
    for name, schema in components("v1").items():
        assert not set(schema.get("properties") or {}) & set(V2_ONLY), name


def test_v1_renames_are_exactly_how_the_v1_schema_differs_from_v2():
    v1, v2 = components("v1"), components("v2")
    objects = objects_held(v2)
    applied = set()
    compared = 0
    for name, schema in v1.items():
        twin = name if name in v2 else name.replace("V1", "", 1)
        if twin not in v2 or "properties" not in schema or "properties" not in v2[twin]:
            continue
        v1_fields = set(schema["properties"])
        if v1_fields in ENVELOPES:
            continue
        renames = {}
        for object_name in objects.get(twin, ()):
            renames |= V1_RENAMES.get(object_name, {})
        v2_fields = set(v2[twin]["properties"]) - set(V2_ONLY)
        assert v1_fields == {renames.get(field, field) for field in v2_fields}, name
        applied |= {(field, renames[field]) for field in v2_fields if field in renames}
        compared += 1
    assert compared > 20  # the comparison did run over the documents
    table = {
        (v2_name, v1_name) for names in V1_RENAMES.values() for v2_name, v1_name in names.items()
    }
    assert applied == table  # no rename in the table that the v1 document does not make


def test_every_field_holding_a_renamed_object_is_known_to_the_error_paths():
    for version in ("v1", "v2"):
        schemas = components(version)
        renamed = {name for name in schemas if "Address" in name}
        holders = {
            field
            for schema in schemas.values()
            for field, prop in (schema.get("properties") or {}).items()
            if refs(prop) & renamed
        }
        assert holders == set(OBJECT_FIELDS), version


def test_v1_address_serializers_are_v2s_with_the_tables_names_in_the_same_places():
    for v2_class, v1_class in ((Address, V1Address), (AddressInput, V1AddressInput)):
        v2_fields, v1_fields = v2_class().fields, v1_class().fields
        assert list(v1_fields) == ["line1", "line2", "city", "postalCode", "countryId"]
        assert list(v2_fields) == ["line1", "line2", "city", "postalCode", "countryCode"]
        assert v1_fields["countryId"].source == v2_fields["countryCode"].source == "country_code"
        assert type(v1_fields["countryId"]) is type(v2_fields["countryCode"])
        assert v1_class.__name__ == f"V1{v2_class.__name__}"
        assert issubclass(v1_class, v2_class)


@pytest.mark.parametrize(
    ("path", "v2", "v1"),
    [
        ("account_id", "accountId", "accountId"),
        ("remaining_tries", "remainingTries", "remainingTries"),
        ("secondary_card.customer_id", "secondaryCard.customerId", "secondaryCard.customerId"),
        (
            "primary_card.card_product_id",
            "primaryCard.cardProductRid",
            "primaryCard.cardProductRid",
        ),
        # An account's product (`ProductRetired` on account opening).
        ("product_id", "productRid", "productRid"),
        ("limit_per_transaction", "perTransaction", "perTransaction"),
        ("limit_daily_cash", "dailyCash", "dailyCash"),
        ("limit_daily", "daily", "daily"),
        ("delivery_address", "deliveryAddress", "deliveryAddress"),
        (
            "delivery_address.country_code",
            "deliveryAddress.countryCode",
            "deliveryAddress.countryId",
        ),
        ("address.postal_code", "address.postalCode", "address.postalCode"),
        (
            "primary_card.delivery_address.country_code",
            "primaryCard.deliveryAddress.countryCode",
            "primaryCard.deliveryAddress.countryId",
        ),
        # Already the API's names (raised by the API layer): unchanged, but v1's renames apply.
        ("destination", "destination", "destination"),
        ("address.countryCode", "address.countryCode", "address.countryId"),
        # A merchant's country is not an address's: not renamed in v1.
        ("merchant.country_code", "merchant.countryCode", "merchant.countryCode"),
    ],
)
def test_api_path(path, v2, v1):
    assert (api_path(path, "v2"), api_path(path, "v1")) == (v2, v1)


def test_camel_leaves_camel_case_alone():
    assert [camel(name) for name in ("accountId", "body", "tranId", "from")] == [
        "accountId",
        "body",
        "tranId",
        "from",
    ]


def test_only_keys_are_translated_and_order_is_kept():
    details = {"rule_ids": ["mrl_1"], "account_currency": "EUR", "status": "max_count"}
    assert api_details(details, "v2") == {
        "ruleIds": ["mrl_1"],
        "accountCurrency": "EUR",
        "status": "max_count",
    }
    assert list(api_details(details, "v1")) == ["ruleIds", "accountCurrency", "status"]
    assert api_details(None, "v2") is None
    assert api_details(["not", "a", "dict"], "v1") == ["not", "a", "dict"]


def test_a_clients_unknown_snake_case_field_is_answered_in_its_own_name(api):
    """A serializer's refusal is in the version's names already: never translated."""
    body = {"firstName": "Ada", "lastName": "Lovelace", "countryId": "826", "first_name": "x"}
    response = api.post("/customers", body)

    assert response.status_code == 400
    assert error_of(response, api.version)["details"] == {"first_name": "Unknown field."}
