"""Property-based conformance of the running API to its own OpenAPI documents (schemathesis).

Generated requests go through the whole Django stack (WSGI, middleware, DRF) with a valid key;
each response must be no server error, have a documented status code, content type and
headers, and match the documented body schema. Requests the schema cannot fully describe
(a cursor the server never issued, a date of birth in the future) may be answered with a
documented 400: that is conformance, and we do not assert that every schema-valid input passes.

One pytest test per operation and version (schemathesis's `parametrize()`), so that pytest-xdist
spreads them over its workers; each checks by itself that its generated requests reached the
operation (the `answered` fixture), since workers share no memory. Both versions are fuzzed in
full: a v1 operation runs the same view and service as its v2 twin, but not the same input
serializer, request rules or document (`countryId`, an optional `Idempotency-Key`, POST as PATCH,
v1-only paths, the envelope and 200 on create), and about nine generated cases in ten come from
schemathesis's coverage phase: boundary and invalid values of every field and header of the
version's own document.
"""

from datetime import date, timedelta

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections, transaction
from django.test import override_settings
from django.utils import timezone
from hypothesis import HealthCheck, settings
from schemathesis import checks
from schemathesis.specs.openapi import checks as openapi_checks

from accounts.models import AccountProduct, StatementLine
from accounts.services import (
    account_create,
    account_product_create,
    adjustment_create,
    fee_charge,
    hold_place,
)
from authorizations.services import (
    authorization_create,
    authorization_present,
    card_return_create,
)
from cards.models import CardProduct
from cards.services import card_issue
from core import operations
from core.actors import SYSTEM
from customers.services import customer_create
from disputes.services.filing import dispute_create
from events.models import Event
from institutions import scopes as api_scopes
from monitoring.services import alerts_raise, monitoring_rule_create, screen
from payments.models import InboundEntry, InboundRecall
from payments.services.debtor_register import blocked_creditor_create, debtor_mandate_create
from payments.services.external_accounts import (
    external_account_create,
    sepa_external_account_create,
)
from payments.services.inbound_files import rail_file_receive
from payments.services.mandates import mandate_create
from payments.services.orders import payment_order_create
from payments.services.stop_payments import stop_payment_create
from reconciliation.models import BankStatement
from reconciliation.services.expected_payments import expected_payment_create
from reconciliation.services.matching import reconcile
from reconciliation.services.statements import bank_statement_receive
from tests.factories import InstitutionFactory, issue_key
from tests.payments.helpers import (
    IBAN,
    USD_PRODUCT,
    ach_profile,
    inbound_credit_file,
    recall_of_nothing,
    sepa_profile,
)
from tests.reconciliation.test_settlements import settlement_of
from tests.reconciliation.test_statements import DAY
from transfers.batches import transfer_batch_create
from transfers.services import transfer_create
from webhooks.services import webhook_endpoint_create

application = get_wsgi_application()
CHECKS = [
    checks.not_a_server_error,
    openapi_checks.status_code_conformance,
    openapi_checks.content_type_conformance,
    openapi_checks.response_headers_conformance,
    openapi_checks.response_schema_conformance,
]

# Loaded at collection, where the database is out of reach: the schema's per-address rate
# limit (counted in the database, tests/api/test_ratelimit.py) is off for these two requests.
with override_settings(RATE_LIMIT_SCHEMA_REQUESTS=0):
    v1 = schemathesis.openapi.from_wsgi("/TX/v1/schema?format=json", application)
    v2 = schemathesis.openapi.from_wsgi("/TX/v2/schema?format=json", application)


MERCHANT = {"name": "Corner Shop", "mcc": "5411", "country_code": "826", "channel": "pos"}


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    """A key and, for the paths that name an object, real objects of its institution: a random
    id would only ever reach the 404 branch.

    Built once per module and worker (it was 0.15 s of each of the 156 tests), in a transaction
    rolled back after the module's last test. Each test runs inside it, in the savepoint
    pytest-django's `db` opens and rolls back (the `tenant` fixture), so every test starts from
    these same rows whatever the operations before it wrote."""
    # As Django's test client does: a request must not close the test's database connection.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    # Marked as Django's TestCase marks its class-wide transaction (setUpTestData's): a durable
    # block of the code under test may open inside it, as it may inside the test's own.
    outer = transaction.atomic()
    outer._from_testcase = True
    try:
        with django_db_blocker.unblock(), outer:
            yield _build_world()
            transaction.set_rollback(True)
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@pytest.fixture
def tenant(world, db, cached_keys):
    """The world, in the test's own savepoint. No operation changes the key: it is read from the
    database once per test (cached_keys), as production reads it once per few seconds."""
    return world


def _build_world() -> dict:
    """The institution, its objects and a key with every scope."""
    institution = InstitutionFactory()
    customer = customer_create(
        institution=institution, first_name="Ada", last_name="Lovelace", country_code="826"
    )
    product = AccountProduct.objects.get(institution=institution, code="AccountPrepaidAPI")
    source, destination = (
        account_create(
            institution=institution,
            customer=customer,
            product=product,
            currency="EUR",
        )
        for _ in range(2)
    )
    adjustment_create(
        account=source, direction="credit", amount=10**9, currency="EUR", actor=SYSTEM
    )
    transfer = transfer_create(
        institution=institution,
        source=source,
        destination=destination,
        amount=500,
        currency="EUR",
        actor=SYSTEM,
    )
    batch = operations.run(  # its items run as parts of an operation
        transfer_batch_create,
        institution=institution,
        mode="atomic",
        items=[
            {
                "source": {"account_id": source.id},
                "destination": {"account_id": destination.id},
                "amount": 500,
                "currency": "EUR",
                "reference": "pay-0001",
            }
        ],
        actor=SYSTEM,
    ).value
    hold = hold_place(
        account=source,
        amount=300,
        currency="EUR",
        expires_at=timezone.now() + timedelta(days=1),
        actor=SYSTEM,
    )
    card = card_issue(
        account=source,
        customer=customer,
        product=CardProduct.objects.get(institution=institution, code="PREPAID_STANDARD"),
        form=CardProduct.Form.VIRTUAL,
        status="active",
    )
    rule = monitoring_rule_create(
        institution=institution,
        name="Large transfers",
        kind="amount_threshold",
        action="alert",
        amount=100,
        currency="EUR",
    )
    [alert] = alerts_raise(
        screening=screen(card=card, amount=500, currency="EUR", merchant=None),
        card=card,
        amount=500,
        currency="EUR",
        merchant=None,
        subject_type="transfer",
        subject_id=transfer.id,
    )
    authorization = authorization_create(
        card=card,
        amount=700,
        currency="EUR",
        type="Goods",
        merchant=MERCHANT,
        actor=SYSTEM,
    )
    card_return = card_return_create(
        card=card, amount=200, currency="EUR", merchant=MERCHANT, actor=SYSTEM
    )
    disputed = authorization_create(
        card=card, amount=900, currency="EUR", type="Goods", merchant=MERCHANT, actor=SYSTEM
    )
    authorization_present(authorization=disputed, actor=SYSTEM)
    dispute = dispute_create(
        authorization=disputed,
        amount=400,
        reason="not_received",
        cardholder_contacted_at=timezone.now(),
        actor=SYSTEM,
    )
    fee = fee_charge(account=source, kind="monthly", amount=100, period="2026-01")
    endpoint = webhook_endpoint_create(
        institution=institution, url="https://hooks.example.com/tx", event_types=["*"]
    ).endpoint
    payments = _payments(institution, customer)
    # What the account's customer told its bank of SEPA direct debits (docs/payments.md).
    debtor_mandate = debtor_mandate_create(
        institution=institution,
        account_id=source.id,
        creditor_identifier="DE98ZZZ09999999999",
        mandate_reference="SCHEMATHESIS-D",
        actor=SYSTEM,
    )
    blocked = blocked_creditor_create(
        institution=institution,
        account_id=source.id,
        creditor_identifier="DE98ZZZ09999999999",
        actor=SYSTEM,
    )
    return {
        # With the scope: /sensitive-details answers more than 403.
        "key": issue_key(institution, scopes=api_scopes.ALL)[1],
        "path_ids": {
            "customerId": customer.id,
            "eventId": Event.objects.get(object_id=customer.id).id,
            "accountId": source.id,
            "holdId": hold.id,
            "transferId": transfer.id,
            "batchId": batch.id,
            "transactionId": StatementLine.objects.filter(account=source).first().id,
            "cardId": card.id,
            "ruleId": rule.id,
            "alertId": alert.id,
            "authorizationId": authorization.id,
            "returnId": card_return.id,
            "endpointId": endpoint.id,
            "productRid": product.id,
            "cardProductRid": card.product_id,
            "feeId": fee.id,
            "disputeId": dispute.id,
            "month": "2026-01",
            "debtorMandateId": debtor_mandate.id,
            "blockedCreditorId": blocked.id,
            **payments,
        },
    }


def _payments(institution, customer) -> dict:
    """An ACH profile, an external account, a payment order, another bank's credit read from
    its file (the file and its inbound entry), a customer's stop payment, a day's statement
    of the bank, an expected payment, the statement's breaks and a card network's settlement
    (docs/reconciliation.md), made by the services (a test client's request would connect the
    signals the module's transaction needs off)."""
    profile = ach_profile(institution)
    checking = account_product_create(institution=institution, **USD_PRODUCT)
    usd = account_create(
        institution=institution, customer=customer, product=checking, currency="USD"
    )
    external = external_account_create(
        institution=institution,
        customer_id=customer.id,
        holder_name="Ada Lovelace",
        country_code="840",
        currency="USD",
        routing_number="021000021",
        account_number="123456789",
        account_type="checking",
        actor=SYSTEM,
    )
    order = payment_order_create(
        institution=institution,
        account_id=usd.id,
        external_account_id=external.id,
        direction="debit",  # a collection: no funds held
        amount=2_500,
        currency="USD",
        rail="ach",
        sec_code="PPD",
        description="RENT",
        actor=SYSTEM,
    )
    credit = inbound_credit_file(profile, usd.account_number, 1_200, timezone.localdate())
    rail_file = rail_file_receive(
        institution=institution, rail="ach", name="in.ach", content=credit
    )
    inbound = InboundEntry.objects.get(file=rail_file)
    stop = stop_payment_create(
        institution=institution, account_id=usd.id, company_id="1234509876", actor=SYSTEM
    )
    # A SEPA direct debit mandate: a creditor identifier on the SEPA profile, the debtor's IBAN.
    sepa_profile(institution, creditor_identifier="DE98ZZZ09999999999")
    debtor = sepa_external_account_create(
        institution=institution,
        customer_id=customer.id,
        holder_name="Ada Lovelace",
        country_code="276",
        currency="EUR",
        iban=IBAN,
        actor=SYSTEM,
    )
    mandate = mandate_create(
        institution=institution,
        external_account_id=debtor.id,
        reference="SCHEMATHESIS-1",
        signature_date=date(2026, 1, 15),
        scheme="CORE",
        type="recurrent",
        actor=SYSTEM,
    )
    statement, _ = bank_statement_receive(
        institution=institution, fmt="mt940", name="day.mt940", content=DAY["mt940"]
    )
    # Money announced, and the statement matched: its lines broken (nothing in the ledger).
    expected = expected_payment_create(
        institution=institution, currency="EUR", direction="debit", amount=9
    )
    run = reconcile(statement=BankStatement.objects.get(pk=statement.pk))
    # Another bank's recall of a credit TX never had: refused at once (NOOR).
    recall_file = rail_file_receive(
        institution=institution, rail="sepa_ct", name="recall.xml", content=recall_of_nothing()
    )
    return {
        "externalAccountId": external.id,
        "paymentOrderId": order.id,
        "fileId": rail_file.id,
        "inboundEntryId": inbound.id,
        "stopPaymentId": stop.id,
        "mandateId": mandate.id,
        "statementId": statement.id,
        "settlementId": settlement_of(institution).id,
        "expectedPaymentId": expected.id,
        "breakId": run.break_rows[0].id,
        "inboundRecallId": InboundRecall.objects.get(file=recall_file).id,
        "reconciliationId": run.run.id,
    }


# Statuses that say a request was refused before the operation's own logic ran.
DOOR = {401, 403, 405, 413, 415, 429}


@pytest.fixture
def answered(request):
    """The statuses one operation's generated requests got back. At least one must come from the
    operation's own logic, so that its test cannot pass by never reaching the view (every request
    refused at the door)."""
    statuses: set[int] = set()
    yield statuses
    assert statuses - DOOR, f"{request.node.name}: only refused at the door: {sorted(statuses)}"


def _check(case, tenant, answered):
    for name in case.path_parameters or {}:
        case.path_parameters[name] = tenant["path_ids"][name]
    # The WSGI transport sets no peer address: give it the loopback the key is allowed from.
    response = case.call_and_validate(
        headers={"x-api-key": tenant["key"]},
        checks=CHECKS,
        environ_base={"REMOTE_ADDR": "127.0.0.1"},
    )
    answered.add(response.status_code)


@v1.parametrize()
@settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_v1_conforms_to_its_schema(case, tenant, answered):
    _check(case, tenant, answered)


@v2.parametrize()
@settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_v2_conforms_to_its_schema(case, tenant, answered):
    _check(case, tenant, answered)


@pytest.mark.parametrize("schema", [v1, v2], ids=["v1", "v2"])
def test_every_documented_operation_has_its_conformance_test(schema):
    """`parametrize()` makes one test of each operation schemathesis loads (one it cannot load
    becomes a failing test): none of the documented operations is left out."""
    documented = {
        (method.upper(), path)
        for path, operations in schema.raw_schema["paths"].items()
        for method in operations
    }
    tested = {
        (result.ok().method.upper(), result.ok().path) for result in schema.get_all_operations()
    }
    assert tested == documented, sorted(documented ^ tested)
