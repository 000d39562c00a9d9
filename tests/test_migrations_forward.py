"""A bank's database made before the models moved between apps migrates forward with its rows.

`Institution`, `ApiKey` and `AllowedNetwork` moved from `api` to `institutions`, `Transaction`
(statement lines, now `StatementLine`) from `transactions` to `accounts`, each with its table
(docs/architecture.md). The test makes a database at the migrations just before the moves
(migrated forward from empty with the real migration executor, tests/own_database.py), writes
rows through the historical models of that schema, migrates forward to the latest migrations and
reads the rows back through the API with the key it wrote.
"""

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection

from accounts.models import StatementLine
from institutions import keys
from institutions.models import AllowedNetwork, ApiKey, Institution
from tests.conftest import Api, body_of
from tests.own_database import just_before, made_at, migrate_to_latest

# Where each moved model was (app label, model name) and where it is now.
MOVED = {
    ("api", "institution"): ("institutions", "institution"),
    ("api", "apikey"): ("institutions", "apikey"),
    ("api", "allowednetwork"): ("institutions", "allowednetwork"),
    ("transactions", "transaction"): ("accounts", "statementline"),
}


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("own_database")
def test_a_database_made_before_the_moves_migrates_forward_with_its_rows():
    targets = just_before(("institutions", "0001_initial"))  # the first move
    # The schema of main before the moves.
    assert ("api", "0005_rate_counters") in targets
    assert ("institutions", None) in targets
    assert ("accounts", "0006_remove_hold_hold_captured_within_amount_hold_purpose_and_more") in (
        targets
    )
    assert ("transactions", "0005_transaction_authorization_transaction_card_return_and_more") in (
        targets
    )
    old = made_at(targets)
    # The moved models' content types, as the release before made them (staff
    # permissions hang on them).
    OldContentType = old.get_model("contenttypes", "ContentType")
    content_type_ids = {
        new: OldContentType.objects.get(app_label=old_label[0], model=old_label[1]).pk
        for old_label, new in MOVED.items()
    }

    institution = old.get_model("api", "Institution").objects.create(
        name="Old Bank", currency="EUR", time_zone="Europe/Paris"
    )
    full_key, prefix, secret_hash = keys.generate()
    api_key = old.get_model("api", "ApiKey").objects.create(
        institution=institution,
        name="core banking",
        prefix=prefix,
        secret_hash=secret_hash,
        scopes=["read", "customers:write"],
    )
    old.get_model("api", "AllowedNetwork").objects.create(api_key=api_key, cidr="127.0.0.1/32")
    customer = old.get_model("customers", "Customer").objects.create(
        institution=institution, first_name="Ada", last_name="Lovelace", country_code="250"
    )
    product = old.get_model("accounts", "AccountProduct").objects.create(
        institution=institution,
        code="AccountPrepaidAPI",
        name="Prepaid account",
        kind="prepaid",
        currency="EUR",
    )
    account = old.get_model("accounts", "Account").objects.create(
        institution=institution,
        customer=customer,
        product=product,
        currency="EUR",
        account_number="FR7600000000001",
        posted=1050,
    )
    line = old.get_model("transactions", "Transaction").objects.create(
        institution=institution,
        account=account,
        type="CashInc",
        settlement_status="Presentment",
        amount=1050,
        currency="EUR",
        description="Opening load",
    )
    migrate_to_latest()

    # The tables are the old ones, with their rows; the content types followed the models.
    tables = connection.introspection.table_names()
    assert {"api_institution", "api_apikey", "api_allowednetwork"} <= set(tables)
    assert "transactions_transaction" in tables
    assert "accounts_transaction" not in tables
    assert "institutions_institution" not in tables
    assert {
        (ct.app_label, ct.model): ct.pk
        for ct in ContentType.objects.filter(pk__in=content_type_ids.values())
    } == content_type_ids
    assert not ContentType.objects.filter(app_label="transactions", model="transaction").exists()
    assert Institution.objects.get().name == "Old Bank"
    migrated_key = ApiKey.objects.get()
    assert (migrated_key.pk, migrated_key.prefix, migrated_key.institution_id) == (
        api_key.pk,
        prefix,
        institution.pk,
    )
    assert migrated_key.scopes == ["read", "customers:write"]
    assert list(AllowedNetwork.objects.values_list("api_key_id", "cidr")) == [
        (api_key.pk, "127.0.0.1/32")
    ]
    assert StatementLine.objects.get().account_id == account.pk

    # And the API reads them with the key written before the move (its allowlist applies).
    for version in ("v1", "v2"):
        client = Api(version, full_key)
        response = client.get(f"/customers/{customer.pk}")
        assert response.status_code == 200, response.content
        got = body_of(response, version)
        assert (got["customerId"], got["firstName"], got["lastName"]) == (
            customer.pk,
            "Ada",
            "Lovelace",
        )

        response = client.get(f"/accounts/{account.pk}")
        assert response.status_code == 200, response.content
        got = body_of(response, version)
        assert {k: v for k, v in got.items() if k not in ("createdAt", "updatedAt", "meta")} == {
            "accountId": account.pk,
            "customerId": customer.pk,
            "secondaryCustomerId": None,
            "productRid": product.pk,
            "productCode": "AccountPrepaidAPI",
            "currency": "EUR",
            "status": "active",
            "accountNumber": "FR7600000000001",
            "balances": {"posted": 1050, "pending": 0, "available": 1050, "currency": "EUR"},
            # v2 only: the overdraft limit (docs/overdraft.md), the client's metadata, `{}`
            # for a row older than the column (docs/metadata.md), and no IBAN (no SEPA profile).
            **(
                {"overdraftLimit": 0, "networkOverdraft": 0, "metadata": {}, "iban": None}
                if version == "v2"
                else {}
            ),
        }

        response = client.get(f"/accounts/{account.pk}/transactions")
        assert response.status_code == 200, response.content
        lines = response.json()["data"]
        assert [item.pop("createdAt") for item in lines] == [
            line.created_at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        ]
        assert lines == [
            {
                "transactionId": line.pk,
                "accountId": account.pk,
                "cardId": None,
                "type": "CashInc",
                "settlementStatus": "Presentment",
                "direction": "credit",
                "amount": 1050,
                "currency": "EUR",
                "description": "Opening load",
                "status": "posted",
                "merchant": None,
                "authorizationId": None,
                "returnId": None,
                "holdId": None,
                "transferId": None,
                "adjustmentId": None,
                # v2 only: a fee line's, a foreign payment's (fees.md, card-transactions.md)
                **(
                    {
                        "category": None,
                        "feeId": None,
                        "merchantAmount": None,
                        "merchantCurrency": None,
                        "disputeId": None,
                        "valueAt": None,
                    }
                    if version == "v2"
                    else {}
                ),
            }
        ]

        response = client.get(f"/transactions/{line.pk}")
        assert response.status_code == 200, response.content
        assert body_of(response, version)["transactionId"] == line.pk

        # Outside the allowlist, the same key is refused.
        response = Api(version, full_key, remote_addr="192.0.2.1").get(f"/customers/{customer.pk}")
        assert response.status_code == 403
