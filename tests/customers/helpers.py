"""What the customer tests share: request bodies per version and the shape of responses."""

import re

from tests.conftest import body_of

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
CUSTOMER_ID = re.compile(r"^cus_[0-9A-Z]{26}$")
CREATED_STATUS = {"v1": 200, "v2": 201}

SPEC_FIELDS = {"firstName": "Ada", "lastName": "Lovelace", "countryId": "826"}


def country_field(version: str) -> str:
    """The address's country field: `countryCode` in v2, `countryId` in v1."""
    return "countryCode" if version == "v2" else "countryId"


def address(version: str, **overrides) -> dict:
    return {
        "line1": "Unter den Linden 1",
        "line2": "3. OG",
        "city": "Berlin",
        "postalCode": "10117",
        country_field(version): "276",
        **overrides,
    }


def full_fields(version: str) -> dict:
    return {
        "firstName": "Grace",
        "lastName": "Hopper",
        "countryId": "840",
        "email": "grace@example.com",
        "phone": "+12025550123",
        "dateOfBirth": "1906-12-09",
        "nationalId": "078-05-1120",
        "address": address(version),
    }


def resource_of(response, version: str) -> dict:
    """The resource of a success body without the v2 `meta` sidecar (v1 keeps it outside)."""
    body = dict(body_of(response, version))
    if version == "v2":
        body.pop("meta")
    return body


def create(api, fields=None) -> dict:
    """Create a customer through the API and return its resource (without `message`)."""
    response = api.post("/customers", SPEC_FIELDS if fields is None else fields)
    assert response.status_code == CREATED_STATUS[api.version], response.content
    body = resource_of(response, api.version)
    body.pop("message")
    return body
