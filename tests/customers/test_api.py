"""`/customers` over HTTP, in both versions: create, retrieve, update, list."""

import time
from datetime import date, timedelta

import pytest

from api.context import iso_millis
from customers.models import Customer
from customers.services import customer_create
from events.models import Event
from tests.conftest import error_of
from tests.customers.helpers import (
    CREATED_STATUS,
    CUSTOMER_ID,
    SPEC_FIELDS,
    TIMESTAMP,
    address,
    country_field,
    create,
    full_fields,
    resource_of,
)

CUSTOMER_FIELDS = {
    "customerId",
    "firstName",
    "lastName",
    "countryId",
    "email",
    "phone",
    "dateOfBirth",
    "nationalIdLast4",
    "address",
    "metadata",  # v2 only (docs/metadata.md); v1 answers are {data, meta}
    "createdAt",
    "updatedAt",
}
UNKNOWN_ID = "cus_00000000000000000000000000"


def assert_meta(response):
    meta = response.json()["meta"]
    assert set(meta) == {"tranId", "timestamp"}
    assert meta["tranId"] == response["X-Request-Id"]
    assert meta["tranId"].startswith("req_")
    assert TIMESTAMP.match(meta["timestamp"])


def assert_validation_error(response, version, details):
    assert response.status_code == 400, response.content
    payload = response.json()
    if version == "v1":
        assert set(payload) == {"error", "meta"}
    else:
        assert set(payload) == {"code", "message", "details"}
    assert error_of(response, version) == {
        "code": "validation_error",
        "message": "The request is not valid.",
        "details": details,
    }


def assert_not_found(response, version, message="No customer with this id."):
    assert response.status_code == 404, response.content
    assert error_of(response, version) == {"code": "not_found", "message": message}


def stored(customer_id):
    return Customer.objects.get(pk=customer_id)


# --- create
def test_create_with_the_spec_fields(api, institution):
    response = api.post("/customers", SPEC_FIELDS)

    assert response.status_code == CREATED_STATUS[api.version]
    payload = response.json()
    assert set(payload) == (
        {"data", "meta"} if api.version == "v1" else CUSTOMER_FIELDS | {"message", "meta"}
    )
    assert_meta(response)
    body = resource_of(response, api.version)
    assert CUSTOMER_ID.match(body["customerId"])
    assert TIMESTAMP.match(body["createdAt"])
    assert body == {
        "customerId": body["customerId"],
        "firstName": "Ada",
        "lastName": "Lovelace",
        "countryId": "826",
        "email": None,
        "phone": None,
        "dateOfBirth": None,
        "nationalIdLast4": None,
        "address": None,
        **({"metadata": {}} if api.version == "v2" else {}),
        "createdAt": body["createdAt"],
        "updatedAt": body["createdAt"],
        "message": "Customer created.",
    }
    customer = stored(body["customerId"])
    assert customer.institution_id == institution.id
    assert body["createdAt"] == iso_millis(customer.created_at)
    assert (customer.first_name, customer.last_name, customer.country_code) == (
        "Ada",
        "Lovelace",
        "826",
    )


def test_create_with_every_optional_field(api):
    response = api.post("/customers", full_fields(api.version))

    assert response.status_code == CREATED_STATUS[api.version]
    body = resource_of(response, api.version)
    assert body == {
        "customerId": body["customerId"],
        "firstName": "Grace",
        "lastName": "Hopper",
        "countryId": "840",
        "email": "grace@example.com",
        "phone": "+12025550123",
        "dateOfBirth": "1906-12-09",
        "nationalIdLast4": "1120",
        "address": address(api.version),
        **({"metadata": {}} if api.version == "v2" else {}),
        "createdAt": body["createdAt"],
        "updatedAt": body["createdAt"],
        "message": "Customer created.",
    }
    customer = stored(body["customerId"])
    assert customer.email == "grace@example.com"
    assert customer.date_of_birth == date(1906, 12, 9)
    assert customer.address == {
        "line1": "Unter den Linden 1",
        "line2": "3. OG",
        "city": "Berlin",
        "postal_code": "10117",
        "country_code": "276",
    }


def test_address_line2_is_optional(api):
    fields = dict(SPEC_FIELDS, address=address(api.version))
    del fields["address"]["line2"]

    body = create(api, fields)

    assert body["address"] == address(api.version, line2=None)


def test_v1_and_v2_show_one_customer_with_their_own_address_field(api_v1, api_v2):
    created = create(api_v2, full_fields("v2"))

    as_v1 = resource_of(api_v1.get(f"/customers/{created['customerId']}"), "v1")

    v1_fields = {name: value for name, value in created.items() if name != "metadata"}
    assert as_v1 == dict(v1_fields, address=address("v1"))


def test_address_country_field_of_the_other_version_is_unknown(api):
    other_name = "countryId" if api.version == "v2" else "countryCode"
    fields = dict(SPEC_FIELDS, address=address(api.version))
    fields["address"][other_name] = fields["address"].pop(country_field(api.version))

    response = api.post("/customers", fields)

    assert_validation_error(response, api.version, {f"address.{other_name}": "Unknown field."})
    assert not Customer.objects.exists()


COUNTRY_INVALID = (
    'Must be an ISO 3166-1 numeric country code as a string of three digits, e.g. "276".'
)
REQUIRED = "This field is required."


def _with(**fields):
    return lambda version: dict(SPEC_FIELDS, **fields)


def _without_address_fields(*names):
    def build(version):
        body = dict(SPEC_FIELDS, address=address(version))
        for name in names:
            del body["address"][name]
        return body

    return build


INVALID_CREATES = [
    pytest.param(
        lambda version: {},
        lambda version: {"firstName": REQUIRED, "lastName": REQUIRED, "countryId": REQUIRED},
        id="nothing",
    ),
    pytest.param(
        lambda version: {"firstName": "Ada"},
        lambda version: {"lastName": REQUIRED, "countryId": REQUIRED},
        id="only-first-name",
    ),
    pytest.param(
        _with(countryId="999"),
        lambda version: {"countryId": "999 is not an ISO 3166-1 numeric country code."},
        id="unknown-country",
    ),
    pytest.param(
        _with(countryId=276), lambda version: {"countryId": COUNTRY_INVALID}, id="country-number"
    ),
    pytest.param(
        _with(countryId="27"), lambda version: {"countryId": COUNTRY_INVALID}, id="country-2-digits"
    ),
    pytest.param(
        _with(countryId="DEU"), lambda version: {"countryId": COUNTRY_INVALID}, id="country-alpha3"
    ),
    pytest.param(
        _with(countryId=None),
        lambda version: {"countryId": "This field may not be null."},
        id="country-null",
    ),
    pytest.param(
        lambda version: dict(
            SPEC_FIELDS, address=address(version, **{country_field(version): "999"})
        ),
        lambda version: {
            f"address.{country_field(version)}": "999 is not an ISO 3166-1 numeric country code."
        },
        id="unknown-address-country",
    ),
    pytest.param(
        lambda version: dict(
            SPEC_FIELDS, address=address(version, **{country_field(version): 276})
        ),
        lambda version: {f"address.{country_field(version)}": COUNTRY_INVALID},
        id="address-country-number",
    ),
    pytest.param(
        _with(middleName="Augusta"),
        lambda version: {"middleName": "Unknown field."},
        id="unknown-field",
    ),
    pytest.param(
        _with(firstName="A" * 101),
        lambda version: {"firstName": "Ensure this field has no more than 100 characters."},
        id="first-name-too-long",
    ),
    pytest.param(
        _with(lastName="   "),
        lambda version: {"lastName": "This field may not be blank."},
        id="last-name-blank",
    ),
    pytest.param(
        _with(firstName=7), lambda version: {"firstName": "Not a valid string."}, id="name-number"
    ),
    pytest.param(
        _with(email="ada.example.com"),
        lambda version: {"email": "Enter a valid email address."},
        id="bad-email",
    ),
    pytest.param(
        _with(phone="0151 1234567"),
        lambda version: {"phone": "Must be an E.164 number, e.g. +4915112345678."},
        id="phone-not-e164",
    ),
    pytest.param(
        _with(phone="+4٩١٥١١٢٣٤٥٦٧٨"),
        lambda version: {"phone": "Must be an E.164 number, e.g. +4915112345678."},
        id="phone-non-ascii-digits",
    ),
    pytest.param(
        lambda version: dict(
            SPEC_FIELDS,
            dateOfBirth=(date.today() + timedelta(days=1)).isoformat(),  # noqa: DTZ011
        ),
        lambda version: {"dateOfBirth": "Must be a past date after 1900-01-01."},
        id="born-tomorrow",
    ),
    pytest.param(
        _with(dateOfBirth="1899-12-31"),
        lambda version: {"dateOfBirth": "Must be a past date after 1900-01-01."},
        id="born-before-1900",
    ),
    pytest.param(
        _with(dateOfBirth="1990-02-30"),
        lambda version: {
            "dateOfBirth": "Date has wrong format. Use one of these formats instead: YYYY-MM-DD."
        },
        id="impossible-date",
    ),
    pytest.param(
        _with(nationalId="12"),
        lambda version: {"nationalId": "Must be 4 to 32 letters, digits, spaces, '-' or '/'."},
        id="national-id-short",
    ),
    pytest.param(
        _with(nationalId="1234;DROP"),
        lambda version: {"nationalId": "Must be 4 to 32 letters, digits, spaces, '-' or '/'."},
        id="national-id-bad-characters",
    ),
    pytest.param(
        _with(nationalId=123456789),
        lambda version: {"nationalId": "Not a valid string."},
        id="national-id-number",
    ),
    pytest.param(
        lambda version: [SPEC_FIELDS],
        lambda version: {"body": "Invalid data. Expected a dictionary, but got list."},
        id="json-array",
    ),
    pytest.param(
        _without_address_fields("city", "postalCode"),
        lambda version: {"address.city": REQUIRED, "address.postalCode": REQUIRED},
        id="partial-address",
    ),
    pytest.param(
        lambda version: dict(SPEC_FIELDS, address={"line1": "Unter den Linden 1"}),
        lambda version: {
            "address.city": REQUIRED,
            "address.postalCode": REQUIRED,
            f"address.{country_field(version)}": REQUIRED,
        },
        id="address-line1-only",
    ),
    pytest.param(
        _with(address="Unter den Linden 1, Berlin"),
        lambda version: {"address": "Invalid data. Expected a dictionary, but got str."},
        id="address-string",
    ),
]


@pytest.mark.parametrize(("body", "details"), INVALID_CREATES)
def test_create_rejects_invalid_input(api, body, details):
    response = api.post("/customers", body(api.version))

    assert_validation_error(response, api.version, details(api.version))
    assert not Customer.objects.exists()
    assert not Event.objects.exists()


# --- retrieve
def test_get_by_id(api):
    created = create(api, full_fields(api.version))

    response = api.get(f"/customers/{created['customerId']}")

    assert response.status_code == 200
    assert set(response.json()) == (
        {"data", "meta"} if api.version == "v1" else CUSTOMER_FIELDS | {"meta"}
    )
    assert_meta(response)
    assert resource_of(response, api.version) == created


def test_get_another_institutions_customer_is_not_found(api, other_api):
    theirs = create(other_api)

    response = api.get(f"/customers/{theirs['customerId']}")
    unknown = api.get(f"/customers/{UNKNOWN_ID}")

    assert_not_found(response, api.version)
    assert error_of(response, api.version) == error_of(unknown, api.version)
    assert set(response.json()) == set(unknown.json())
    assert other_api.get(f"/customers/{theirs['customerId']}").status_code == 200


def test_get_with_a_nul_in_the_id_is_not_found(api):
    response = api.get("/customers/%00")

    assert_not_found(response, api.version, "The requested resource does not exist.")


# --- update
def _age(customer_id):
    """Move the customer's timestamps an hour back so that a change visibly moves `updatedAt`."""
    hour_ago = stored(customer_id).created_at - timedelta(hours=1)
    Customer.objects.filter(pk=customer_id).update(created_at=hour_ago, updated_at=hour_ago)
    return hour_ago


def test_patch_changes_only_the_given_fields(api):
    created = create(api, full_fields(api.version))
    cid = created["customerId"]
    _age(cid)
    before = resource_of(api.get(f"/customers/{cid}"), api.version)

    response = api.patch(
        f"/customers/{cid}", {"firstName": "Amazing", "email": "amazing@example.com"}
    )

    assert response.status_code == 200, response.content
    assert_meta(response)
    after = resource_of(response, api.version)
    assert after == dict(
        before, firstName="Amazing", email="amazing@example.com", updatedAt=after["updatedAt"]
    )
    assert after["updatedAt"] > before["updatedAt"]
    assert after["createdAt"] == before["createdAt"]
    assert resource_of(api.get(f"/customers/{cid}"), api.version) == after


def test_patch_null_clears_the_optional_fields(api):
    cid = create(api, full_fields(api.version))["customerId"]

    response = api.patch(
        f"/customers/{cid}",
        {"email": None, "phone": None, "dateOfBirth": None, "nationalId": None, "address": None},
    )

    assert response.status_code == 200, response.content
    body = resource_of(response, api.version)
    assert {
        name: body[name] for name in ("email", "phone", "dateOfBirth", "nationalIdLast4", "address")
    } == {
        "email": None,
        "phone": None,
        "dateOfBirth": None,
        "nationalIdLast4": None,
        "address": None,
    }
    assert (body["firstName"], body["lastName"], body["countryId"]) == ("Grace", "Hopper", "840")
    customer = stored(cid)
    assert customer.national_id_encrypted is None
    assert customer.national_id_last4 is None
    assert customer.address_line1 is None
    assert customer.address_country_code is None


def test_patch_replaces_the_address_whole(api):
    cid = create(api, full_fields(api.version))["customerId"]
    new_address = {
        "line1": "Rue de Rivoli 1",
        "city": "Paris",
        "postalCode": "75001",
        country_field(api.version): "250",
    }

    response = api.patch(f"/customers/{cid}", {"address": new_address})

    assert response.status_code == 200, response.content
    assert resource_of(response, api.version)["address"] == dict(new_address, line2=None)
    assert stored(cid).address_line2 is None


@pytest.mark.parametrize(
    ("change", "details"),
    [
        pytest.param(
            lambda version: {"address": {"line1": "Rue de Rivoli 1"}},
            lambda version: {
                "address.city": REQUIRED,
                "address.postalCode": REQUIRED,
                f"address.{country_field(version)}": REQUIRED,
            },
            id="partial-address",
        ),
        pytest.param(
            lambda version: {"firstName": None},
            lambda version: {"firstName": "This field may not be null."},
            id="required-field-null",
        ),
        pytest.param(
            lambda version: {"countryId": "999"},
            lambda version: {"countryId": "999 is not an ISO 3166-1 numeric country code."},
            id="unknown-country",
        ),
        pytest.param(
            lambda version: {"customerId": "cus_x"},
            lambda version: {"customerId": "Unknown field."},
            id="read-only-field",
        ),
        pytest.param(
            lambda version: {"email": "nope", "lastName": "Valid"},
            lambda version: {"email": "Enter a valid email address."},
            id="one-bad-field",
        ),
    ],
)
def test_patch_rejects_invalid_input_and_changes_nothing(api, change, details):
    created = create(api, full_fields(api.version))
    cid = created["customerId"]

    response = api.patch(f"/customers/{cid}", change(api.version))

    assert_validation_error(response, api.version, details(api.version))
    assert resource_of(api.get(f"/customers/{cid}"), api.version) == created
    assert not Event.objects.filter(type="customer.updated").exists()


def test_patch_another_institutions_customer_is_not_found_and_changes_nothing(api, other_api):
    theirs = create(other_api)

    response = api.patch(f"/customers/{theirs['customerId']}", {"firstName": "Mallory"})

    assert_not_found(response, api.version)
    assert resource_of(other_api.get(f"/customers/{theirs['customerId']}"), api.version) == theirs
    assert not Event.objects.filter(type="customer.updated").exists()


def test_patch_unknown_customer_is_not_found(api):
    response = api.patch(f"/customers/{UNKNOWN_ID}", {"firstName": "Nobody"})

    assert_not_found(response, api.version)


def test_patch_without_a_change_keeps_updated_at(api):
    cid = create(api, full_fields(api.version))["customerId"]
    _age(cid)
    before = resource_of(api.get(f"/customers/{cid}"), api.version)

    response = api.patch(
        f"/customers/{cid}",
        {"firstName": "Grace", "nationalId": "078-05-1120", "address": address(api.version)},
    )

    assert response.status_code == 200
    assert resource_of(response, api.version) == before
    assert not Event.objects.filter(type="customer.updated").exists()


def test_v1_accepts_post_to_a_customer_as_patch(api_v1):
    cid = create(api_v1, full_fields("v1"))["customerId"]

    response = api_v1.post(f"/customers/{cid}", {"lastName": "Murray"}, idempotency_key=None)

    assert response.status_code == 200, response.content
    assert resource_of(response, "v1")["lastName"] == "Murray"
    assert stored(cid).last_name == "Murray"
    assert Event.objects.filter(type="customer.updated", object_id=cid).count() == 1


def test_v2_post_to_a_customer_is_method_not_allowed(api_v2):
    created = create(api_v2, full_fields("v2"))

    response = api_v2.post(f"/customers/{created['customerId']}", {"lastName": "Murray"})

    assert response.status_code == 405
    assert response.json() == {
        "code": "method_not_allowed",
        "message": "This method is not allowed on this path.",
    }
    assert resource_of(api_v2.get(f"/customers/{created['customerId']}"), "v2") == created


# --- list
def list_page(api, **params):
    response = api.get("/customers", params)
    assert response.status_code == 200, response.content
    payload = response.json()
    assert set(payload) == {"data", "nextCursor", "hasMore", "meta"}
    assert payload["hasMore"] is (payload["nextCursor"] is not None)
    return payload


def test_list_is_newest_first_in_the_version_shape(api):
    created = []
    for first_name in ("First", "Second", "Third"):
        created.append(
            create(api, dict(SPEC_FIELDS, firstName=first_name, address=address(api.version)))
        )
        time.sleep(0.002)  # ids order by millisecond; two in one millisecond have no order

    payload = list_page(api)

    assert payload["data"] == list(reversed(created))
    assert payload["nextCursor"] is None
    assert payload["hasMore"] is False


def test_list_is_empty_without_customers(api):
    payload = list_page(api)

    assert (payload["data"], payload["nextCursor"], payload["hasMore"]) == ([], None, False)


@pytest.mark.parametrize(
    ("count", "limit", "sizes"), [(7, 3, [3, 3, 1]), (6, 3, [3, 3]), (2, 1, [1, 1])]
)
def test_list_pages_walk_every_customer_exactly_once(api, institution, count, limit, sizes):
    ids = {
        customer_create(
            institution=institution, first_name=f"C{n}", last_name="X", country_code="276"
        ).id
        for n in range(count)
    }
    seen, page_sizes, cursor = [], [], None
    while True:
        payload = list_page(api, limit=limit, **({"cursor": cursor} if cursor else {}))
        page_sizes.append(len(payload["data"]))
        seen.extend(item["customerId"] for item in payload["data"])
        cursor = payload["nextCursor"]
        if not payload["hasMore"]:
            break

    assert page_sizes == sizes
    assert seen == sorted(ids, reverse=True)


def test_list_default_limit_is_20(api, institution):
    for n in range(21):
        customer_create(
            institution=institution, first_name=f"C{n}", last_name="X", country_code="276"
        )

    payload = list_page(api)

    assert len(payload["data"]) == 20
    assert payload["hasMore"] is True
    assert len(list_page(api, limit=100)["data"]) == 21


@pytest.mark.parametrize("limit", ["0", "101", "x", "-1", "1.5", "", "²"])
def test_list_rejects_a_limit_outside_1_to_100(api, limit):
    response = api.get("/customers", {"limit": limit})

    assert_validation_error(response, api.version, {"limit": "Must be an integer from 1 to 100."})


@pytest.mark.parametrize("cursor", ["%%%", "not-a-cursor", "AA", "x" * 200])
def test_list_rejects_an_invalid_cursor(api, cursor):
    response = api.get("/customers", {"cursor": cursor})

    assert_validation_error(response, api.version, {"cursor": "Not a valid cursor."})


def test_list_never_shows_another_institutions_customers(api, other_api):
    mine = create(api)
    theirs = create(other_api)

    assert [item["customerId"] for item in list_page(api)["data"]] == [mine["customerId"]]
    assert [item["customerId"] for item in list_page(other_api)["data"]] == [theirs["customerId"]]
