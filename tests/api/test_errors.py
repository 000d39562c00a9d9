"""Every error the HTTP foundation answers, in both versions (docs/design.md sections 4 and 5).

v2 errors are `{code, message, details?}`; v1 errors are `{"error": {...}, "meta": {...}}`. Every
response is JSON (never Django's HTML pages, DEBUG or not) and carries `X-Request-Id`, which is
`meta.tranId` wherever a `meta` is sent.
"""

import json
import re
import types
import uuid
from unittest.mock import ANY

import pytest
from django.db import InterfaceError, OperationalError
from django.test import Client

import core.exceptions as tx
from api.auth import ApiClient, HasApiKey
from api.names import api_details
from api.versions import V2
from api.views import TXView
from customers.models import Customer
from institutions import scopes as api_scopes
from institutions.models import ApiKey
from tests.conftest import Api, body_of
from tests.factories import issue_key

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
REQUEST_ID = re.compile(r"^req_[0-9A-HJKMNP-TV-Z]{26}$")
CUSTOMER = {"firstName": "Ada", "lastName": "Lovelace", "countryId": "826"}
SECRET_TEXT = "db-host-secret.internal:5432 password=hunter2"

NOT_FOUND = {"code": "not_found", "message": "The requested resource does not exist."}
METHOD_NOT_ALLOWED = {
    "code": "method_not_allowed",
    "message": "This method is not allowed on this path.",
}
UNSUPPORTED = {
    "code": "unsupported_media_type",
    "message": "Request bodies must be sent as application/json.",
}
RATE_LIMITED = {
    "code": "rate_limited",
    "message": "Too many requests for this API key. Retry after the time in Retry-After.",
}
UNAVAILABLE = {
    "code": "service_unavailable",
    "message": "The service is temporarily unavailable. Retry later.",
}


def assert_error(response, version, status, error):
    """The exact error body of `version` (v1 wraps it and adds `meta`), always as JSON."""
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    assert REQUEST_ID.match(response["X-Request-Id"])
    payload = response.json()
    if version == "v1":
        assert payload == {
            "error": error,
            "meta": {"tranId": response["X-Request-Id"], "timestamp": ANY},
        }
        assert TIMESTAMP.match(payload["meta"]["timestamp"])
    else:
        assert payload == error


def raise_(exc):
    def raiser(*args, **kwargs):
        raise exc

    return raiser


# --- 404 ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["/nope", "/customers/", "/customers/a/b", "/products", "/Customers"]
)
def test_unknown_path_is_json_404(api, path):
    assert_error(api.get(path), api.version, 404, NOT_FOUND)


@pytest.mark.parametrize("path", ["/TX/v1", "/TX/v1/", "/TX/v2", "/TX/v2/"])
def test_version_root_is_json_404(key, path):
    version = "v1" if path.startswith("/TX/v1") else "v2"
    response = Client().get(path, headers={"x-api-key": key[1]})
    assert_error(response, version, 404, NOT_FOUND)


def test_unknown_path_without_key_is_json_404(version, db):
    response = Api(version, None).post("/nope", {"a": 1})
    assert_error(response, version, 404, NOT_FOUND)


@pytest.mark.parametrize("accept", ["text/html", "*/*"])
def test_unknown_path_with_debug_is_json_404(settings, api, accept):
    settings.DEBUG = True
    response = api.get("/nope", headers={"Accept": accept})
    assert_error(response, api.version, 404, NOT_FOUND)
    assert b"<html" not in response.content.lower()


def test_unknown_customer_is_404(api):
    response = api.get("/customers/cus_01ZZZZZZZZZZZZZZZZZZZZZZZZ")
    assert_error(
        response, api.version, 404, {"code": "not_found", "message": "No customer with this id."}
    )


# --- 405 ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("delete", "/customers", {"v1": "GET, POST, HEAD", "v2": "GET, POST, HEAD"}),
        ("put", "/customers", {"v1": "GET, POST, HEAD", "v2": "GET, POST, HEAD"}),
        # OPTIONS is not offered: DRF's metadata would describe views, not the contract.
        ("options", "/customers", {"v1": "GET, POST, HEAD", "v2": "GET, POST, HEAD"}),
        # v1 takes POST on a PATCH path as PATCH, and says so.
        ("delete", "/customers/cus_x", {"v1": "GET, PATCH, HEAD, POST", "v2": "GET, PATCH, HEAD"}),
        ("put", "/customers/cus_x", {"v1": "GET, PATCH, HEAD, POST", "v2": "GET, PATCH, HEAD"}),
    ],
)
def test_method_not_allowed(api, method, path, allow):
    response = getattr(api.client, method)(api.url(path), headers=api.headers())
    assert_error(response, api.version, 405, METHOD_NOT_ALLOWED)
    assert response["Allow"] == allow[api.version]


def test_post_to_read_only_path_is_405_before_idempotency_checks(api):
    # No Idempotency-Key (required in v2): the method is wrong before the key matters.
    response = api.post("/events", {}, idempotency_key=None)
    assert_error(response, api.version, 405, METHOD_NOT_ALLOWED)


# --- 400 ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("raw", ['{"firstName": "Ada",', "{not json", "[1, 2", "\x00"])
def test_malformed_json_is_400(api, raw):
    response = api.post("/customers", raw)
    assert_error(
        response,
        api.version,
        400,
        {
            "code": "validation_error",
            "message": "The request body is not valid JSON.",
            "details": {"body": ANY},
        },
    )
    assert error_details(response, api.version)["body"].startswith("JSON parse error - ")
    assert Customer.objects.count() == 0


def test_malformed_json_on_patch_is_400(api):
    created = body_of(api.post("/customers", CUSTOMER), api.version)
    response = api.patch(f"/customers/{created['customerId']}", '{"firstName": ')
    assert response.status_code == 400
    assert error_details(response, api.version)["body"].startswith("JSON parse error - ")


def test_invalid_body_is_400_with_field_details(api):
    response = api.post("/customers", {"firstName": "Ada", "countryId": 826, "extra": 1})
    assert_error(
        response,
        api.version,
        400,
        {
            "code": "validation_error",
            "message": "The request is not valid.",
            "details": {"extra": "Unknown field."},
        },
    )
    response = api.post("/customers", {"firstName": "Ada", "countryId": 826})
    assert error_details(response, api.version) == {
        "lastName": "This field is required.",
        "countryId": (
            'Must be an ISO 3166-1 numeric country code as a string of three digits, e.g. "276".'
        ),
    }


def test_non_numeric_content_length_is_400(api):
    response = api.client.post(
        api.url("/customers"),
        data=json.dumps(CUSTOMER),
        content_type="application/json",
        headers=api.headers(idempotency_key=uuid.uuid4()),
        CONTENT_LENGTH="lots",
    )
    assert_error(
        response,
        api.version,
        400,
        {"code": "validation_error", "message": "Content-Length is not a number."},
    )


def test_disallowed_host_is_json_400(version, key):
    response = Client(HTTP_HOST="evil.example").get(
        f"/TX/{version}/customers", headers={"x-api-key": key[1]}
    )
    assert_error(
        response,
        version,
        400,
        {"code": "validation_error", "message": "The request could not be understood."},
    )


def error_details(response, version):
    payload = response.json()
    return (payload["error"] if version == "v1" else payload)["details"]


# --- 403 permission_denied (the permission itself; every operation: tests/api/test_scopes.py) ---


def test_missing_scope_is_permission_denied(key):
    api_key, _ = key  # every scope but cards:sensitive
    client = ApiClient(api_key=api_key, institution=api_key.institution)
    request = types.SimpleNamespace(user=client, method="POST")
    view = types.SimpleNamespace(write_scope="cards:sensitive", allowed_methods=["POST"])
    with pytest.raises(tx.PermissionDenied) as raised:
        HasApiKey().has_permission(request, view)
    assert (raised.value.status, raised.value.code) == (403, "permission_denied")
    assert api_details(raised.value.details, V2) == {"requiredScope": "cards:sensitive"}


def test_write_without_a_declared_scope_is_refused_to_every_key(institution):
    api_key, _ = issue_key(institution, scopes=api_scopes.ALL)
    request = types.SimpleNamespace(
        user=ApiClient(api_key=api_key, institution=api_key.institution), method="PATCH"
    )
    with pytest.raises(tx.PermissionDenied):
        HasApiKey().has_permission(request, types.SimpleNamespace(allowed_methods=["PATCH"]))


def test_scope_present_is_permitted(institution):
    api_key, _ = issue_key(institution, scopes=api_scopes.ALL)
    request = types.SimpleNamespace(
        user=ApiClient(api_key=api_key, institution=api_key.institution), method="GET"
    )
    view = types.SimpleNamespace(read_scope="cards:sensitive", allowed_methods=["GET"])
    assert HasApiKey().has_permission(request, view) is True


# --- 413 ---------------------------------------------------------------------------------------


def padded(body: dict, size: int) -> str:
    """`body` as JSON padded with trailing whitespace (still valid JSON) to exactly `size` bytes."""
    raw = json.dumps(body)
    assert len(raw) <= size
    return raw + " " * (size - len(raw))


def test_body_over_limit_is_413(settings, api):
    settings.MAX_BODY_BYTES = 100
    response = api.post("/customers", padded(CUSTOMER, 101))
    assert_error(
        response,
        api.version,
        413,
        {"code": "payload_too_large", "message": "The request body is larger than 100 bytes."},
    )
    assert Customer.objects.count() == 0


def test_body_at_limit_is_accepted(settings, api):
    settings.MAX_BODY_BYTES = 100
    response = api.post("/customers", padded(CUSTOMER, 100))
    assert response.status_code == (201 if api.version == "v2" else 200), response.content
    assert Customer.objects.count() == 1


def test_body_over_limit_is_413_before_authentication(settings, version, db):
    settings.MAX_BODY_BYTES = 100
    response = Api(version, None).post("/customers", padded(CUSTOMER, 5000))
    assert_error(
        response,
        version,
        413,
        {"code": "payload_too_large", "message": "The request body is larger than 100 bytes."},
    )


# --- 415 ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content_type", "raw"),
    [
        ("text/plain", '{"firstName": "Ada"}'),
        ("application/x-www-form-urlencoded", "firstName=Ada&lastName=Lovelace"),
        ("application/xml", "<customer/>"),
    ],
)
def test_non_json_body_is_415(api, content_type, raw):
    response = api.post("/customers", raw, content_type=content_type)
    assert_error(response, api.version, 415, UNSUPPORTED)
    assert Customer.objects.count() == 0


def test_non_json_body_on_patch_is_415(api):
    created = body_of(api.post("/customers", CUSTOMER), api.version)
    response = api.patch(f"/customers/{created['customerId']}", "x", content_type="text/plain")
    assert_error(response, api.version, 415, UNSUPPORTED)


def test_v1_non_json_body_without_idempotency_key_is_415(api_v1):
    response = api_v1.post("/customers", "a=b", content_type="text/plain", idempotency_key=None)
    assert_error(response, "v1", 415, UNSUPPORTED)


def test_json_with_charset_is_accepted(api):
    response = api.post("/customers", CUSTOMER, content_type="application/json; charset=utf-8")
    assert response.status_code == (201 if api.version == "v2" else 200), response.content


def test_html_accept_still_gets_json(api):
    response = api.get("/customers", headers={"Accept": "text/html"})
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.json()["data"] == []


# --- 429 ---------------------------------------------------------------------------------------

# A fixed clock 15.25 s into a 60 s window: the window ends 44.75 s later, Retry-After says 45.
WINDOW_START = 1_800_000_000


@pytest.fixture
def clock(monkeypatch):
    now = types.SimpleNamespace(value=WINDOW_START + 15.25)
    monkeypatch.setattr("api.ratelimit.time", types.SimpleNamespace(time=lambda: now.value))
    return now


@pytest.fixture
def limited(settings, clock):
    settings.RATE_LIMIT_REQUESTS = 3
    settings.RATE_LIMIT_WINDOW_SECONDS = 60
    return clock


def test_rate_limit(api, limited):
    for _ in range(3):
        assert api.get("/customers").status_code == 200
    response = api.get("/customers")
    assert_error(response, api.version, 429, RATE_LIMITED)
    assert response["Retry-After"] == "45"
    # Writes count against the same budget and are refused before they run.
    response = api.post("/customers", CUSTOMER)
    assert_error(response, api.version, 429, RATE_LIMITED)
    assert Customer.objects.count() == 0


def test_rate_limit_is_per_key(api, institution, limited):
    for _ in range(4):
        api.get("/customers")
    assert api.get("/customers").status_code == 429
    other = Api(api.version, issue_key(institution)[1])
    assert other.get("/customers").status_code == 200


def test_rate_limit_resets_in_the_next_window(api, limited):
    for _ in range(3):
        assert api.get("/customers").status_code == 200
    assert api.get("/customers").status_code == 429
    limited.value = WINDOW_START + 60.5
    assert api.get("/customers").status_code == 200


def test_rate_limit_zero_means_unlimited(settings, api, clock):
    settings.RATE_LIMIT_REQUESTS = 0
    for _ in range(5):
        assert api.get("/customers").status_code == 200


# --- 500 and 503 -------------------------------------------------------------------------------


def assert_internal_error(response, version):
    tran_id = response["X-Request-Id"]
    assert_error(
        response,
        version,
        500,
        {
            "code": "internal_error",
            "message": "An internal error occurred.",
            "details": {"tranId": tran_id},
        },
    )
    for leak in (b"Traceback", b"RuntimeError", b"apis.py", SECRET_TEXT.encode()):
        assert leak not in response.content


@pytest.mark.parametrize("debug", [False, True])
def test_unexpected_exception_is_json_500(settings, monkeypatch, api, debug):
    settings.DEBUG = debug
    monkeypatch.setattr("customers.apis.customer_list", raise_(RuntimeError(SECRET_TEXT)))
    assert_internal_error(api.get("/customers"), api.version)


@pytest.mark.parametrize("debug", [False, True])
def test_unexpected_exception_in_a_write_is_json_500(settings, monkeypatch, api, debug):
    settings.DEBUG = debug
    monkeypatch.setattr("customers.apis.customer_create", raise_(RuntimeError(SECRET_TEXT)))
    assert_internal_error(api.post("/customers", CUSTOMER), api.version)


@pytest.mark.parametrize("debug", [False, True])
def test_exception_outside_drf_error_handling_is_json_500(settings, monkeypatch, api, debug):
    # finalize_response runs after DRF's exception handling: the error reaches Django.
    settings.DEBUG = debug
    monkeypatch.setattr(TXView, "finalize_response", raise_(RuntimeError(SECRET_TEXT)))
    assert_internal_error(api.get("/customers"), api.version)


@pytest.mark.parametrize("error", [OperationalError, InterfaceError])
def test_database_unavailable_is_503(monkeypatch, api, error):
    monkeypatch.setattr("customers.apis.customer_list", raise_(error(SECRET_TEXT)))
    response = api.get("/customers")
    assert_error(response, api.version, 503, UNAVAILABLE)
    assert response["Retry-After"] == "5"
    assert SECRET_TEXT.encode() not in response.content


def test_database_unavailable_during_authentication_is_503(monkeypatch, api):
    monkeypatch.setattr(ApiKey.objects, "select_related", raise_(OperationalError(SECRET_TEXT)))
    response = api.get("/customers")
    assert_error(response, api.version, 503, UNAVAILABLE)
    assert response["Retry-After"] == "5"


# --- X-Request-Id and meta ---------------------------------------------------------------------


def test_request_id_is_meta_tran_id_and_unique(api):
    responses = [
        api.get("/customers"),
        api.post("/customers", CUSTOMER),
        api.get("/nope"),
        api.post("/customers", "{"),
        Api(api.version, None).get("/customers"),
        api.client.delete(api.url("/customers"), headers=api.headers()),
    ]
    ids = [response["X-Request-Id"] for response in responses]
    assert all(REQUEST_ID.match(tran_id) for tran_id in ids)
    assert len(set(ids)) == len(ids)
    for response in responses:
        meta = response.json().get("meta")
        if api.version == "v1" or response.status_code < 400:
            assert meta == {"tranId": response["X-Request-Id"], "timestamp": ANY}
            assert TIMESTAMP.match(meta["timestamp"]), meta["timestamp"]
        else:
            assert meta is None  # v2 errors are `{code, message, details?}` only


def test_success_bodies_carry_meta(api):
    response = api.get("/customers")
    assert set(response.json()) == {"data", "nextCursor", "hasMore", "meta"}
    created = api.post("/customers", CUSTOMER)
    assert created.json()["meta"]["tranId"] == created["X-Request-Id"]
    if api.version == "v1":
        assert set(created.json()) == {"data", "meta"}
