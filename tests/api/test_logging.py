"""Structured logs (docs/design.md section 4, `api.jsonlog`): one `tx.access` line per request, the
request's `tranId` on every line it writes, and no secret (API key, national id) in any line."""

import io
import json
import logging
import uuid

import pytest
from django.db import OperationalError

from api.jsonlog import JsonFormatter
from tests.conftest import Api, body_of

NATIONAL_ID = "QX-7730-KLM-5521"
CUSTOMER = {"firstName": "Ada", "lastName": "Lovelace", "countryId": "826"}


def access_records(caplog):
    return [record for record in caplog.records if record.name == "tx.access"]


def test_one_access_line_per_request(caplog, api, institution, key):
    caplog.set_level(logging.INFO)
    responses = [
        api.get("/customers", params={"limit": "5"}),
        api.post("/customers", CUSTOMER),
        api.get("/nope"),
        Api(api.version, None).get("/customers"),
    ]
    records = access_records(caplog)
    assert len(records) == len(responses)

    expected = [
        ("GET", f"/TX/{api.version}/customers", 200, institution.id, key[0].id),
        (
            "POST",
            f"/TX/{api.version}/customers",
            201 if api.version == "v2" else 200,
            institution.id,
            key[0].id,
        ),
        ("GET", f"/TX/{api.version}/nope", 404, None, None),
        ("GET", f"/TX/{api.version}/customers", 401, None, None),
    ]
    for record, response, (method, path, status, institution_id, key_id) in zip(
        records, responses, expected, strict=True
    ):
        assert response.status_code == status
        assert record.levelname == "INFO"
        assert record.getMessage() == "request"
        line = json.loads(JsonFormatter().format(record))
        assert line == {
            "time": line["time"],
            "level": "INFO",
            "logger": "tx.access",
            "message": "request",
            "tranId": response["X-Request-Id"],
            "institution": institution_id,
            "apiKeyId": key_id,
            "method": method,
            "path": path,  # never the query string
            "status": status,
            "durationMs": line["durationMs"],
        }
        assert isinstance(line["durationMs"], float)
        assert 0 <= line["durationMs"] < 10_000


def test_access_line_for_a_replay(caplog, api_v2):
    caplog.set_level(logging.INFO)
    key = uuid.uuid4()
    api_v2.post("/customers", CUSTOMER, idempotency_key=key)
    replay = api_v2.post("/customers", CUSTOMER, idempotency_key=key)
    records = access_records(caplog)
    assert [record.status for record in records] == [201, 201]
    assert records[1].tranId == replay["X-Request-Id"]
    assert records[0].tranId != records[1].tranId


def test_error_lines_carry_the_tran_id(caplog, monkeypatch, api):
    caplog.set_level(logging.INFO)

    def crash(**kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("customers.apis.customer_list", crash)
    crashed = api.get("/customers")

    def unavailable(**kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr("customers.apis.customer_list", unavailable)
    down = api.get("/customers")

    assert (crashed.status_code, down.status_code) == (500, 503)
    errors = [record for record in caplog.records if record.name == "tx.errors"]
    assert [(record.levelname, record.tranId) for record in errors] == [
        ("ERROR", crashed["X-Request-Id"]),
        ("ERROR", down["X-Request-Id"]),
    ]
    assert errors[0].exc_info[0] is RuntimeError


def test_every_line_written_during_a_request_carries_its_tran_id(monkeypatch, api):
    """Not only our own lines: any logger, anywhere (`install_tran_id_on_records`)."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.addHandler(handler)
    from customers import apis

    real_list = apis.customer_list

    def noisy_list(**kwargs):
        logging.getLogger("somewhere.deep").warning("listing customers")
        return real_list(**kwargs)

    monkeypatch.setattr("customers.apis.customer_list", noisy_list)
    try:
        response = api.get("/customers")
        logging.getLogger("somewhere.deep").warning("outside any request")
    finally:
        root.removeHandler(handler)

    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    deep = [line for line in lines if line["logger"] == "somewhere.deep"]
    assert response.status_code == 200
    assert [(line["message"], line.get("tranId")) for line in deep] == [
        ("listing customers", response["X-Request-Id"]),
        ("outside any request", None),
    ]


def all_log_text(records) -> str:
    """Every captured record as each formatter would write it, exception text included."""
    json_formatter, plain = JsonFormatter(), logging.Formatter()
    return "\n".join(
        f"{json_formatter.format(record)}\n{plain.format(record)}\n{vars(record)!r}"
        for record in records
    )


@pytest.mark.parametrize("debug", [False, True])
def test_secrets_never_reach_the_logs(caplog, settings, monkeypatch, api, key, debug):
    settings.DEBUG = debug
    caplog.set_level(logging.DEBUG)
    secret = key[1]
    secret_part = secret.split("_", 2)[2]
    with_id = {**CUSTOMER, "nationalId": NATIONAL_ID}

    created = api.post("/customers", with_id)
    assert created.status_code in (200, 201)
    customer_id = body_of(created, api.version)["customerId"]
    statuses = [
        api.patch(f"/customers/{customer_id}", {"nationalId": NATIONAL_ID[::-1]}).status_code,
        api.post("/customers", {"nationalId": NATIONAL_ID, "firstName": "Ada"}).status_code,
        api.post("/customers", '{"nationalId": "' + NATIONAL_ID + '", ').status_code,
        api.post("/customers", with_id, content_type="text/plain").status_code,
        Api(api.version, secret + "x").post("/customers", with_id).status_code,
        Api(api.version, secret, remote_addr="198.51.100.7")
        .post("/customers", with_id)
        .status_code,
    ]

    def crash(**kwargs):
        raise RuntimeError("the service crashed")

    monkeypatch.setattr("customers.apis.customer_create", crash)
    statuses.append(api.post("/customers", with_id).status_code)

    assert statuses == [200, 400, 400, 415, 401, 403, 500]
    text = all_log_text(caplog.records)
    assert "Traceback" in text  # the 500 was logged, exception text included
    assert len(access_records(caplog)) == 8
    for sensitive in (NATIONAL_ID, NATIONAL_ID[::-1], secret, secret_part):
        assert sensitive not in text
