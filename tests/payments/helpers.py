"""What the payment-order tests share: a bank with an ACH profile and a key with every scope,
a customer's USD account loaded, external accounts through the API, and the rails' steps run
at an instant of the test's choosing (the cut-off, the simulated bank, the settlement)."""

import base64
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from zoneinfo import ZoneInfo

from django.db import transaction
from django.utils import timezone

from accounts.models import Account
from core import operations
from core.actors import SYSTEM
from institutions import scopes
from payments.account_ibans import account_iban
from payments.connector import deliver
from payments.iso20022 import camt056, pacs008
from payments.iso20022.cases import Assignment
from payments.iso20022.interbank import GroupHeader
from payments.iso20022.status_reasons import StatusReason
from payments.models import AchProfile, InboundEntry, PaymentOrder, Rail, SepaProfile
from payments.services.cutoff import cutoff_run
from payments.services.debtor_register import debtor_mandate_create
from payments.services.inbound_debits import collection_settle
from payments.services.inbound_files import rail_file_receive
from payments.services.instant_credits import instant_credit_answer
from payments.services.orders import payment_order_create
from payments.services.profiles import sepa_profile_set
from payments.services.rails import rails_run
from payments.services.settlement import order_settle
from sandbox.simulated_bank import (
    Answer,
    Incoming,
    answers_file,
    entries_file,
    simulated_bank_run,
)
from sandbox.simulated_clearing import collection_document
from tests.accounts.api.helpers import created, load
from tests.conftest import Api
from tests.customers.helpers import SPEC_FIELDS
from tests.factories import InstitutionFactory, issue_key

ZONE = "America/New_York"
USD_PRODUCT = {"code": "CBSFinancialContractTypeAPI", "name": "Checking (USD)", "currency": "USD"}


# `manage.py ach_profile`'s arguments for a new profile (the demo's sponsor bank's details).
DEMO_PROFILE_ARGS = [
    "--odfi-routing-number", "011000015", "--odfi-name", "Sponsor Bank",
    "--destination-routing-number", "011000015", "--destination-name", "Federal Reserve",
    "--company-id", "1234567890", "--company-name", "TX Demo Bank",
    "--receiving-routing-number", "026009593",
]  # fmt: skip


def ach_profile(institution, **fields) -> AchProfile:
    """The institution's ACH profile (a sponsor bank's details, set by staff)."""
    return AchProfile.objects.create(
        institution=institution,
        odfi_routing_number="011000015",
        odfi_name="Sponsor Bank",
        destination_routing_number="011000015",
        destination_name="Federal Reserve",
        company_id="1234567890",
        company_name="TX Demo Bank",
        receiving_routing_number="026009593",
        **fields,
    )


def usd_account(api: Api, customer_id: str, load_amount: int = 100_000) -> str:
    """A new USD account of the customer, loaded with `load_amount` cents."""
    rid = created(api.post("/products/accounts", USD_PRODUCT), "v2")["rid"]
    account = created(api.post("/accounts", {"customerId": customer_id, "productRid": rid}), "v2")
    if load_amount:
        load(api, account["accountId"], load_amount, currency="USD")
    return account["accountId"]


def external_body(customer_id: str, account_number: str = "123456789") -> dict:
    return {
        "customerId": customer_id,
        "holderName": "Ada Lovelace",
        "countryCode": "840",
        "currency": "USD",
        "ach": {
            "routingNumber": "021000021",
            "accountNumber": account_number,
            "accountType": "checking",
        },
    }


def order_body(account_id: str, external_id: str, amount: int = 100, direction="credit") -> dict:
    return {
        "accountId": account_id,
        "externalAccountId": external_id,
        "direction": direction,
        "amount": amount,
        "currency": "USD",
        "rail": "ach",
        "secCode": "PPD",
        "description": "RENT",
    }


def unknown_return_file(profile: AchProfile, day: date, trace: str = "091000010000999") -> bytes:
    """A valid NACHA file from the simulated bank returning (R03) an entry TX never sent."""
    answer = Answer(
        due=day.isoformat(),
        kind="return",
        code="R03",
        transaction_code=22,
        routing_number="021000021",
        account_number="123456789",
        amount=100,
        trace_number=trace,
        receiver_name="NOBODY",
        corrected_data="",
        effective_date=day.isoformat(),
    )
    return answers_file(profile, [answer], day)


def inbound_credit_file(profile: AchProfile, account_number: str, amount: int, day: date) -> bytes:
    """A valid NACHA file of another bank's credit to `account_number`, settling on `day`."""
    return entries_file(profile, [Incoming("credit", account_number, amount)], day)


def upload_body(content: bytes, name: str = "returns.ach", rail: str = "ach") -> dict:
    return {"rail": rail, "name": name, "contentBase64": base64.b64encode(content).decode()}


@dataclass
class Bank:
    api: Api
    institution: object
    profile: AchProfile
    customer_id: str
    account_id: str

    def external(self, account_number: str = "123456789", **fields) -> dict:
        body = {**external_body(self.customer_id, account_number), **fields}
        return created(self.api.post("/external-accounts", body), "v2")

    def order(self, external_id: str, amount: int, direction: str = "credit", **fields):
        body = {**order_body(self.account_id, external_id, amount, direction), **fields}
        return self.api.post("/payment-orders", body)

    def ordered(self, external_id: str, amount: int, direction: str = "credit", **fields) -> dict:
        return created(self.order(external_id, amount, direction, **fields), "v2")

    def balances(self) -> tuple[int, int, int]:
        account = Account.objects.get(pk=self.account_id)
        return account.posted, account.pending, account.available

    def get(self, order_id: str) -> dict:
        return self.api.get(f"/payment-orders/{order_id}").json()


def ach_bank(*, load_amount: int = 100_000, zone: str = ZONE, institution=None, **profile) -> Bank:
    """An institution (`institution`, or a new one in `zone`) with an ACH profile, a customer
    and a funded USD account."""
    if institution is None:
        institution = InstitutionFactory(time_zone=zone, currency="USD")
    api = Api("v2", issue_key(institution, scopes=scopes.ALL)[1])
    customer_id = created(api.post("/customers", SPEC_FIELDS), "v2")["customerId"]
    account_id = usd_account(api, customer_id, load_amount)
    return Bank(api, institution, ach_profile(institution, **profile), customer_id, account_id)


def local(day: date, hour: int, minute: int = 0, second: int = 0, zone: str = ZONE) -> datetime:
    return datetime.combine(day, time(hour, minute, second), ZoneInfo(zone))


def cutoff(bank: Bank, day: date, window: str = "16:45", rail: str = Rail.ACH):
    return cutoff_run(profile=bank.profile, rail=rail, window_date=day, window=window)


def rails_at(instant: datetime):
    """The payments job as it would run at `instant`."""
    return operations.run_batches(rails_run, actor=SYSTEM, now=instant)


def bank_answers(bank: Bank, day: date) -> list[str]:
    return simulated_bank_run(institution=bank.institution, today=day)


# --- SEPA ------------------------------------------------------------------------------------
BERLIN = "Europe/Berlin"
EUR_PRODUCT = {"code": "CBSFinancialContractTypeAPI", "name": "Checking (EUR)", "currency": "EUR"}
IBAN = "DE89370400440532013000"  # the IBAN of ISO 13616's and every bank's examples
IBAN_PRINTED = "DE89 3704 0044 0532 0130 00"


def sepa_profile(institution, **fields) -> SepaProfile:
    """The institution's SEPA profile (a fintech on a partner bank, set by staff)."""
    values = {"kind": "initiation", "bic": "COBADEFFXXX", "settlement_iban": "BE71096123456769"}
    return SepaProfile.objects.create(institution=institution, **{**values, **fields})


def eur_account(api: Api, customer_id: str, load_amount: int = 100_000) -> str:
    """A new EUR account of the customer, loaded with `load_amount` cents."""
    rid = created(api.post("/products/accounts", EUR_PRODUCT), "v2")["rid"]
    account = created(api.post("/accounts", {"customerId": customer_id, "productRid": rid}), "v2")
    if load_amount:
        load(api, account["accountId"], load_amount, currency="EUR")
    return account["accountId"]


def sepa_external_body(customer_id: str | None, iban: str = IBAN_PRINTED, **sepa) -> dict:
    body = {
        "holderName": "Ada Lovelace",
        "countryCode": "276",
        "currency": "EUR",
        "sepa": {"iban": iban, "bic": "DEUTDEFF", **sepa},
    }
    if customer_id is not None:
        body["customerId"] = customer_id
    return body


def sepa_order_body(account_id: str, external_id: str, amount: int = 100, **fields) -> dict:
    return {
        "accountId": account_id,
        "externalAccountId": external_id,
        "direction": "credit",
        "amount": amount,
        "currency": "EUR",
        "rail": "sepa_ct",
        **fields,
    }


@dataclass
class SepaBank:
    api: Api
    institution: object
    profile: SepaProfile | None
    customer_id: str
    account_id: str

    def external(self, iban: str = IBAN_PRINTED, **sepa) -> dict:
        body = sepa_external_body(self.customer_id, iban, **sepa)
        return created(self.api.post("/external-accounts", body), "v2")

    def order(self, external_id: str, amount: int = 100, **fields):
        return self.api.post(
            "/payment-orders", sepa_order_body(self.account_id, external_id, amount, **fields)
        )

    def ordered(self, external_id: str, amount: int = 100, **fields) -> dict:
        return created(self.order(external_id, amount, **fields), "v2")

    def balances(self) -> tuple[int, int, int]:
        account = Account.objects.get(pk=self.account_id)
        return account.posted, account.pending, account.available


def sepa_bank(*, load_amount: int = 100_000, profile: bool = True, **fields) -> SepaBank:
    """An institution in Berlin with a SEPA profile (`profile`), a customer and a funded EUR
    account."""
    institution = InstitutionFactory(time_zone=BERLIN, currency="EUR")
    api = Api("v2", issue_key(institution, scopes=scopes.ALL)[1])
    customer_id = created(api.post("/customers", SPEC_FIELDS), "v2")["customerId"]
    account_id = eur_account(api, customer_id, load_amount)
    made = sepa_profile(institution, **fields) if profile else None
    return SepaBank(api, institution, made, customer_id, account_id)


def sepa_settled_order(institution, account_id: str, external_id: str, amount: int = 100) -> str:
    """A `sepa_ct` order of the institution (its SEPA profile set), put in its pain.001,
    delivered and settled by the services, as the payments job and the bank's booking would;
    its id (for the worlds of the guard tests)."""
    order = payment_order_create(
        institution=institution,
        account_id=account_id,
        external_account_id=external_id,
        direction="credit",
        amount=amount,
        currency="EUR",
        rail=Rail.SEPA_CT,
        actor=SYSTEM,
    )
    profile = SepaProfile.objects.get(institution=institution)
    day = order.requested_execution_date
    deliver(cutoff_run(profile=profile, rail=Rail.SEPA_CT, window_date=day, window="23:59"))
    with transaction.atomic():
        order_settle(order=PaymentOrder.objects.get(pk=order.pk), at=timezone.now())
    return order.pk


def recall_of_nothing() -> bytes:
    """A camt.056 of another bank's recalling a credit no institution received (TX refuses it
    NOOR at once: docs/payments.md, "Recalls TX answers")."""
    return recall_camt056()


def recall_camt056(
    end_to_end_id: str = "E2E-1", amount: int = 100, day: date = date(2026, 11, 2)
) -> bytes:
    """A camt.056 of another bank's recalling (DUPL) its credit of `end_to_end_id`, `amount`
    cents settled on `day`."""
    return camt056.write_cancellation_request(
        camt056.CancellationRequest(
            assignment=Assignment(
                id="CASE-1",
                assigner_bic="DEUTDEFFXXX",
                assignee_bic="COBADEFFXXX",
                created_at=datetime(2026, 11, 2, 12, tzinfo=UTC),
            ),
            transactions=(
                camt056.RecalledTransaction(
                    cancellation_id="CXL-1",
                    original_message_id="MSG-1",
                    original_message_type="pacs.008.001.08",
                    original_end_to_end_id=end_to_end_id,
                    original_transaction_id="TX-1",
                    original_amount=amount,
                    original_settlement_date=day,
                    reason=StatusReason("DUPL"),
                ),
            ),
        )
    )


def offered_pacs008(iban: str, transaction_id: str, *, instant: bool) -> bytes:
    return pacs008.write_transfers(
        pacs008.FIToFICreditTransfer(
            header=GroupHeader(
                message_id=f"M-{transaction_id}",
                created_at=datetime(2026, 11, 27, 12, tzinfo=UTC),
                settlement_date=date(2026, 11, 27),
            ),
            transfers=(
                pacs008.InterbankCreditTransfer(
                    end_to_end_id="E2E",
                    transaction_id=transaction_id,
                    amount=100,
                    debtor_name="ACME GMBH",
                    debtor_iban="DE89370400440532013000",
                    debtor_bic="DEUTDEFFXXX",
                    creditor_name="Holder",
                    creditor_iban=iban,
                    creditor_bic="TXSCDEFFXXX",
                    instant=instant,
                ),
            ),
        )
    )


def waiting_recall(api, account_id: str, bank_code: str = "997") -> str:
    """Another bank's instant credit of 100 cents to the account (by its IBAN: the institution's
    SEPA profile issues them under `bank_code`, in Luxembourg: one institution's alone), and that
    bank's recall of it uploaded through `api`: the recall's id, waiting for the institution's
    answer."""
    institution = Account.objects.get(pk=account_id).institution
    sepa_profile_set(institution=institution, iban_country="LU", iban_bank_code=bank_code)
    iban = api.get(f"/accounts/{account_id}").json()["iban"]
    answer = instant_credit_answer(
        institution=institution, content=offered_pacs008(iban, "TX-RECALLED", instant=True)
    )
    assert b"ACCP" in answer
    recall = recall_camt056("E2E", 100, date(2026, 11, 27))
    created(api.post("/rail-files", upload_body(recall, "recall.xml", rail="sepa_ct")), "v2")
    return api.get("/inbound-recalls").json()["data"][0]["inboundRecallId"]


# --- inbound direct debits -------------------------------------------------------------------
COLLECTING_CREDITOR = "DE98ZZZ09999999999"


def applied_collection(
    institution,
    account_id: str,
    *,
    amount: int = 1_000,
    reference: str = "REFUND-1",
    settles_on: date | None = None,
    number: int = 1,
    scheme: str = "CORE",
    mandate: bool = True,
    settle: bool = True,
):
    """Another bank's creditor's collection from the account, presented in a pacs.003 by the
    clearing and read by the services, applied under the customer's mandate (registered when
    `mandate`: else rejected MD01) as the payments job applies it on its settlement date (the
    date not waited for); the institution put in the clearing first when it is not (an
    interbank profile issuing IBANs under bank code 001). Its inbound entry (the refunds' tests
    and the guard tests' worlds). `settle=False`: as read, `received` until its date (the
    refusals')."""
    profile = SepaProfile.objects.filter(institution=institution).first()
    if profile is None:
        profile = sepa_profile(
            institution,
            kind="interbank",
            bic="TXBKLULLXXX",
            settlement_iban="",
            iban_country="LU",
            iban_bank_code="001",
        )
    if mandate:
        debtor_mandate_create(
            institution=institution,
            account_id=account_id,
            creditor_identifier=COLLECTING_CREDITOR,
            mandate_reference=reference,
            actor=SYSTEM,
        )
    iban = account_iban(Account.objects.get(pk=account_id), profile)
    content = collection_document(
        profile=profile,
        iban=iban,
        amount=amount,
        creditor_id=COLLECTING_CREDITOR,
        mandate_reference=reference,
        settles_on=settles_on or timezone.localdate(),
        number=number,
        scheme=scheme,
    )
    rail_file = rail_file_receive(
        institution=institution, rail=Rail.SEPA_CT, name=f"dd-{number}.xml", content=content
    )
    inbound = InboundEntry.objects.get(file=rail_file)
    if settle and inbound.status == InboundEntry.Status.RECEIVED:
        with transaction.atomic():
            collection_settle(inbound=inbound, at=timezone.now())
    return inbound
