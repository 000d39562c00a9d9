"""A bank's database upgraded through TX's history keeps its rows: one database of the test's
own (tests/own_database.py), made at an old release and migrated forward with the real
migration executor, each upgrade's rows written at the release before it through that
release's historical models, then migrated once to the latest migrations (each migration to the
latest costs most of the test: one walk, not one a migration under test), and each checked:

- **the moves** (here): `Institution`, `ApiKey` and `AllowedNetwork` moved from `api` to
  `institutions`, `Transaction` (statement lines, now `StatementLine`) from `transactions` to
  `accounts`, each with its table (docs/architecture.md): the rows read back through the API
  with the key written before the move;
- **accounts/0016 and 0023** (tests/accounts/ledger/balance_after_migration.py): the
  ledger's running balances and the holds' steps backfilled;
- **accounts/0026** (tests/accounts/statement_line_rename.py): the staff keep their
  permissions through the rename, forth, back and forth again.
"""

from types import SimpleNamespace

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection, transaction

from accounts.models import StatementLine
from institutions import keys
from institutions.models import AllowedNetwork, ApiKey, Institution
from tests.accounts import statement_line_rename as rename
from tests.accounts.ledger import balance_after_migration as ledger
from tests.conftest import Api, body_of
from tests.own_database import just_before, made_at, migrate_to_latest

# Where each moved model was (app label, model name) and where it is now.
MOVED = {
    ("api", "institution"): ("institutions", "institution"),
    ("api", "apikey"): ("institutions", "apikey"),
    ("api", "allowednetwork"): ("institutions", "allowednetwork"),
    ("transactions", "transaction"): ("accounts", "statementline"),
}


def written_before_the_moves() -> SimpleNamespace:
    """The database made at the migrations just before the moves, and a bank's rows written
    there through that schema's historical models (its money a balanced journal)."""
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
    funding = old.get_model("accounts", "Account").objects.create(
        institution=institution, kind="internal", internal_code="funding", currency="EUR"
    )
    with transaction.atomic():  # a journal has entries when it commits (a deferred check)
        journal = old.get_model("accounts", "Journal").objects.create(
            institution=institution, kind="adjustment", description="Opening load"
        )
        for side, direction in ((funding, "debit"), (account, "credit")):
            old.get_model("accounts", "Entry").objects.create(
                journal=journal, account=side, direction=direction, amount=1050, currency="EUR"
            )
    old.get_model("accounts", "Account").objects.filter(pk=funding.pk).update(posted=-1050)
    line = old.get_model("transactions", "Transaction").objects.create(
        institution=institution,
        account=account,
        type="CashInc",
        settlement_status="Presentment",
        amount=1050,
        currency="EUR",
        description="Opening load",
    )
    return SimpleNamespace(
        content_type_ids=content_type_ids,
        institution=institution,
        full_key=full_key,
        prefix=prefix,
        api_key=api_key,
        customer=customer,
        product=product,
        account=account,
        line=line,
    )


def checked_after_the_moves(bank: SimpleNamespace) -> None:
    """The moved rows read back at the latest migrations, through the API with the old key."""
    content_type_ids, institution, full_key, prefix = (
        bank.content_type_ids,
        bank.institution,
        bank.full_key,
        bank.prefix,
    )
    api_key, customer, product, account, line = (
        bank.api_key,
        bank.customer,
        bank.product,
        bank.account,
        bank.line,
    )

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
    assert Institution.objects.get(pk=institution.pk).name == "Old Bank"
    migrated_key = ApiKey.objects.get(pk=api_key.pk)
    assert (migrated_key.pk, migrated_key.prefix, migrated_key.institution_id) == (
        api_key.pk,
        prefix,
        institution.pk,
    )
    assert migrated_key.scopes == ["read", "customers:write"]
    assert list(AllowedNetwork.objects.values_list("api_key_id", "cidr")) == [
        (api_key.pk, "127.0.0.1/32")
    ]
    assert StatementLine.objects.get(pk=line.pk).account_id == account.pk

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


@pytest.mark.usefixtures("own_database")
def test_a_bank_upgraded_through_the_releases_keeps_its_rows():
    moved = written_before_the_moves()
    books = ledger.written_before_balance_after()
    staff = rename.written_before_the_rename()
    rename.renamed_forth_and_back(staff)
    migrate_to_latest()
    checked_after_the_moves(moved)
    ledger.checked_after(books)
    rename.checked_after(staff)
