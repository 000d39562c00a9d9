"""Clients generated from the committed OpenAPI documents (issue 16): openapi-python-client builds
a Python client from openapi/v1.yaml and from openapi/v2.yaml with no warning, with a function
for every operation and a model for every schema, and the README's sandbox walkthrough (a card
payment, step by step) runs through the generated v2 client against a live server.

The generator runs as a client's developer runs it, as a command, with `--fail-on-warning`, and
what it prints is checked too. It formats what it wrote with ruff, which must be on its PATH
(this interpreter's bin/, where the lock installs both) or it warns. Both clients are generated
once per module: it takes a few seconds each.
"""

import importlib
import inspect
import io
import json
import os
import subprocess
import sys
import typing
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from django.conf import settings
from django.core.management import call_command

from accounts.verification import ledger_breaches

ROOT = Path(settings.BASE_DIR)
OPENAPI = ROOT / "openapi"
BIN = Path(sys.executable).parent
VERSIONS = ["v1", "v2"]
# Schemas the generator dropped when a YAML 1.1 reader took country codes for integers (the
# enum of country codes, then every request schema that names a country).
ONCE_DROPPED = {
    "v1": [
        "V1CustomerCreateRequest",
        "V1AddressInputRequest",
        "MerchantInputRequest",
        "MonitoringRuleCreateRequest",
        "PatchedMonitoringRuleUpdateRequest",
        "AuthorizationCreateRequest",
        "ReturnCreateRequest",
        "CountryNumericCode",
    ],
    "v2": [
        "CustomerCreateRequest",
        "AddressInputRequest",
        "MerchantInputRequest",
        "MonitoringRuleCreateRequest",
        "PatchedMonitoringRuleUpdateRequest",
        "AuthorizationCreateV2Request",
        "ReturnCreateRequest",
        "CardCreateRequest",
        "CountryNumericCode",
    ],
}


@dataclass
class Generated:
    package: Path
    returncode: int
    output: str


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> dict[str, Generated]:
    out = tmp_path_factory.mktemp("clients")
    environment = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    clients = {}
    for version in VERSIONS:
        package = out / f"tx_{version}_client"
        result = subprocess.run(  # noqa: S603 (the locked generator, fixed arguments)
            [
                str(BIN / "openapi-python-client"),
                "generate",
                "--path",
                str(OPENAPI / f"{version}.yaml"),
                "--output-path",
                str(package),
                "--meta",
                "none",
                "--fail-on-warning",
            ],
            capture_output=True,
            text=True,
            env=environment,
            timeout=300,
            check=False,
        )
        clients[version] = Generated(package, result.returncode, result.stdout + result.stderr)
    return clients


def generated_package(module) -> Path:
    return Path(module.__file__).parent


def document(version: str) -> dict:
    return yaml.safe_load((OPENAPI / f"{version}.yaml").read_text())


@pytest.mark.parametrize("version", VERSIONS)
def test_generates_without_a_warning(generated, version):
    client = generated[version]
    # It prints one line when all went well; a warning (a dropped schema or endpoint, ruff
    # missing) adds more and, with --fail-on-warning, a non-zero exit.
    assert (client.returncode, client.output) == (0, f"Generating {client.package}\n")


@pytest.mark.parametrize("version", VERSIONS)
def test_every_operation_has_a_function(generated, version):
    operations = {
        operation["operationId"]
        for item in document(version)["paths"].values()
        for method, operation in item.items()
        if method in ("get", "post", "patch", "put", "delete")
    }
    modules = {
        path.stem
        for path in (generated[version].package / "api").rglob("*.py")
        if path.name != "__init__.py"
    }
    assert operations
    assert modules == operations


@pytest.fixture
def importable(generated):
    """Import a generated client package by its version; forgotten after the test."""
    parent = str(next(iter(generated.values())).package.parent)
    sys.path.insert(0, parent)
    try:
        yield lambda version: importlib.import_module(generated[version].package.name)
    finally:
        sys.path.remove(parent)
        for name in [n for n in sys.modules if n.startswith(("tx_v1_client", "tx_v2_client"))]:
            del sys.modules[name]


@pytest.mark.parametrize("version", VERSIONS)
def test_every_schema_is_a_model(importable, version):
    importable(version)
    models = importlib.import_module(f"tx_{version}_client.models")
    schemas = {
        name
        for name, schema in document(version)["components"]["schemas"].items()
        # drf-spectacular's `NullEnum` (enum: [null]) is what a nullable choice may be: the
        # generator makes it None, not a class.
        if schema.get("enum") != [None]
    }
    assert set(ONCE_DROPPED[version]) <= schemas
    assert schemas - set(models.__all__) == set()


@pytest.mark.parametrize("version", VERSIONS)
def test_the_idempotency_key_is_sent_as_a_string(importable, version):
    """httpx sends only strings as headers; the generator passes a header parameter of
    `format: uuid` on as a UUID object, and every write failed before it was sent."""
    client_package = importable(version)
    unset = importlib.import_module(f"{client_package.__name__}.types").Unset
    root = generated_package(client_package)
    writes = 0
    for path in sorted((root / "api").rglob("*.py")):
        if path.name == "__init__.py":
            continue
        name = ".".join((client_package.__name__, *path.relative_to(root).with_suffix("").parts))
        parameter = inspect.signature(importlib.import_module(name).sync_detailed).parameters.get(
            "idempotency_key"
        )
        if parameter is None:
            continue
        writes += 1
        kinds = set(typing.get_args(parameter.annotation)) or {parameter.annotation}
        assert kinds - {unset} == {str}, f"{name}: {parameter.annotation}"
    assert writes == sum(
        method in ("post", "patch")
        for item in document(version)["paths"].values()
        for method in item
    )


# --- the README's sandbox, through the generated v2 client ------------------------------------


def new_key() -> str:
    return str(uuid.uuid4())


def endpoint(module: str):
    """A module of the generated v2 client's `api` package: one operation, its sync_detailed."""
    return importlib.import_module(f"tx_v2_client.api.{module}")


@pytest.mark.django_db(transaction=True)
def test_readme_sandbox_through_the_generated_v2_client(importable, live_server):
    client_package = importable("v2")
    models = importlib.import_module("tx_v2_client.models")
    accounts = endpoint("accounts.accounts_balances_v2")
    cards = endpoint("cards.cards_list_v2")
    authorize = endpoint("card_transactions.card_authorizations_create_v2")
    present = endpoint("card_transactions.card_authorizations_presentments_create_v2")
    give_back = endpoint("card_transactions.card_returns_create_v2")
    reverse = endpoint("card_transactions.card_authorizations_reversals_create_v2")
    statement = endpoint("transactions.cards_transactions_list_v2")

    # `scripts/run` seeds the demo bank and prints its key (loopback only, every scope).
    out = io.StringIO()
    call_command("seed_demo", "--json", stdout=out)
    secret = json.loads(out.getvalue())["apiKey"]
    client = client_package.AuthenticatedClient(
        base_url=live_server.url, token=secret, prefix="", auth_header_name="x-api-key"
    )

    def balances(account_id):
        response = accounts.sync_detailed(account_id, client=client)
        assert response.status_code == 200, response.content
        b = response.parsed
        return b.posted, b.pending, b.available

    def merchant(name, mcc, channel):
        return models.MerchantInputRequest(
            name=name,
            mcc=mcc,
            country_code=models.CountryNumericCode("276"),
            channel=models.MerchantChannel(channel),
        )

    with client:
        # GET /cards: note a cardId and its accountId (each demo customer has one).
        response = cards.sync_detailed(client=client)
        assert response.status_code == 200, response.content
        listed = response.parsed.data
        assert {(c.status, c.form, c.kind) for c in listed} == {("active", "virtual", "prepaid")}
        assert len(listed) == 3
        card, account = listed[0].card_id, listed[0].account_id
        assert balances(account) == (100_000, 0, 100_000)

        # 1. Authorization: 25.00 EUR at a shop. Approved: a hold, an Unsettled transaction.
        response = authorize.sync_detailed(
            client=client,
            idempotency_key=new_key(),
            body=models.AuthorizationCreateV2Request(
                card_id=card,
                amount=2500,
                currency=models.CurrencyCode("EUR"),
                type_=models.AuthorizationType("Goods"),
                merchant=merchant("Corner Shop", "5411", "contactless"),
            ),
        )
        assert response.status_code == 201, response.content
        auth = response.parsed
        assert (auth.approved, auth.status, auth.amount, auth.account_id) == (
            True,
            "pending",
            2500,
            account,
        )
        assert auth.hold_id and auth.transaction_id
        assert balances(account) == (100_000, 2500, 97_500)

        # 2. Presentment (clearing) for 27.50 (a tip: up to 20% more).
        response = present.sync_detailed(
            auth.authorization_id,
            client=client,
            idempotency_key=new_key(),
            body=models.PresentmentCreateRequest(amount=2750),
        )
        assert response.status_code == 201, response.content
        assert (response.parsed.status, response.parsed.presented_amount) == ("presented", 2750)
        assert balances(account) == (97_250, 0, 97_250)

        # 3. Return (merchant refund) of 5.00: credited at once.
        response = give_back.sync_detailed(
            client=client,
            idempotency_key=new_key(),
            body=models.ReturnCreateRequest(
                card_id=card,
                amount=500,
                currency=models.CurrencyCode("EUR"),
                authorization_id=auth.authorization_id,
                merchant=merchant("Corner Shop", "5411", "pos"),
            ),
        )
        assert response.status_code == 201, response.content
        refund = response.parsed
        assert (refund.amount, refund.authorization_id) == (500, auth.authorization_id)
        assert balances(account) == (97_750, 0, 97_750)

        # 4. Another authorization, then its reversal: the hold is released.
        response = authorize.sync_detailed(
            client=client,
            idempotency_key=new_key(),
            body=models.AuthorizationCreateV2Request(
                card_id=card,
                amount=4000,
                currency=models.CurrencyCode("EUR"),
                type_=models.AuthorizationType("Cash"),
                merchant=merchant("ATM Mitte", "6011", "atm"),
            ),
        )
        assert response.status_code == 201, response.content
        cash = response.parsed
        assert (cash.approved, cash.status) == (True, "pending")
        assert balances(account) == (97_750, 4000, 93_750)
        response = reverse.sync_detailed(
            cash.authorization_id, client=client, idempotency_key=new_key()
        )
        assert response.status_code == 201, response.content
        assert response.parsed.status == "reversed"
        assert balances(account) == (97_750, 0, 97_750)

        # All of it, newest first.
        response = statement.sync_detailed(card, client=client)
        assert response.status_code == 200, response.content
        lines = [
            (line.type_, line.settlement_status, line.direction, line.amount, line.status)
            for line in response.parsed.data
        ]
        assert lines == [
            ("Cash", "Unsettled", "debit", 4000, "reversed"),
            ("Return", "Presentment", "credit", 500, "posted"),
            ("Goods", "Presentment", "debit", 2750, "posted"),
        ]
    assert ledger_breaches() == []
