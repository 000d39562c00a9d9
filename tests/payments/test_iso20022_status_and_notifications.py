"""pain.002.001.10 (the bank's status report on TX's pain.001) and camt.054.001.08 (the bank's
debit and credit notifications, returns among them): what TX writes (for the simulated bank)
validates against the official XSD, independently too, and re-parses to the same report; the
reader keeps every status and reason code as sent, normalizes the known ones, and refuses a
document that does not add up."""

import datetime

import pytest

from payments.iso20022 import codes
from payments.iso20022.camt054 import (
    AccountNotification,
    BankTransactionCode,
    DebitCreditNotification,
    Entry,
    ReturnReason,
    TransactionDetails,
    read_notification,
    write_notification,
)
from payments.iso20022.errors import Iso20022Error
from payments.iso20022.messages import CAMT_054, PAIN_002
from payments.iso20022.pain001 import read_initiation, write_initiation
from payments.iso20022.pain002 import (
    PaymentStatus,
    PaymentStatusReport,
    TransactionStatus,
    read_status_report,
    write_status_report,
)
from payments.iso20022.remittance import CreditorReference, Unstructured
from payments.iso20022.status_reasons import StatusReason
from tests.payments.iso20022_helpers import (
    CREATED,
    CREDITOR_IBAN_FR,
    CREDITOR_IBAN_NL,
    DEBTOR_IBAN,
    RF_REFERENCE,
    independently_valid,
    initiation,
)

# --- pain.002 ----------------------------------------------------------------------------------


def status_report() -> PaymentStatusReport:
    """The answer to the initiation of the helpers: the first block partly accepted (one
    transaction settled, one rejected AC04, one rejected AM04 with text), the second rejected
    whole (AG01); every reason code of the profile appears."""
    return PaymentStatusReport(
        message_id="BANK-STS-0001",
        created_at=CREATED + datetime.timedelta(hours=2),
        original_message_id="TX-MSG-0001",
        original_message_type="pain.001.001.09",
        group_status="PART",
        payments=(
            PaymentStatus(
                original_payment_information_id="TX-PMT-0001",
                status="PART",
                transactions=(
                    TransactionStatus(
                        original_end_to_end_id="E2E-1",
                        status="ACSC",
                        account_servicer_reference="BANKREF-1",
                    ),
                    TransactionStatus(
                        original_end_to_end_id="E2E-2",
                        status="RJCT",
                        reasons=(StatusReason("AC04"),),
                    ),
                    TransactionStatus(
                        original_end_to_end_id="E2E-3",
                        status="RJCT",
                        reasons=(
                            StatusReason("AM04", additional_information=("Funds short",)),
                            StatusReason("X-42", proprietary=True),
                        ),
                    ),
                ),
            ),
            PaymentStatus(
                original_payment_information_id="TX-PMT-0002",
                status="RJCT",
                reasons=(StatusReason("AG01"),),
                transactions=(
                    TransactionStatus(
                        original_end_to_end_id="E2E-4",
                        status="RJCT",
                        reasons=(StatusReason("AG01"),),
                    ),
                ),
            ),
        ),
    )


def test_written_status_report_validates_and_round_trips():
    made = status_report()
    data = write_status_report(made)
    independently_valid(data, PAIN_002)
    assert read_status_report(data) == made


def test_status_report_answers_the_initiation_it_names():
    sent = read_initiation(write_initiation(initiation()))
    report = read_status_report(write_status_report(status_report()))
    assert report.original_message_id == sent.message_id
    answered = {each.original_end_to_end_id for each in report.transactions()}
    assert answered == {transfer.end_to_end_id for transfer in sent.transfers()}


@pytest.mark.parametrize(
    ("code", "normalized"),
    [
        ("AC01", "no_account"),
        ("AC04", "account_closed"),
        ("AC06", "account_frozen"),
        ("AG01", "transaction_forbidden"),
        ("AM04", "insufficient_funds"),
        ("MS03", "refused_by_bank"),
        ("MD06", "refund_requested"),
        ("TECH", "technical_problem"),
        ("ZZ99", "unknown"),
    ],
)
def test_reason_codes_are_kept_raw_beside_their_normalized_name(code, normalized):
    assert StatusReason(code).normalized == normalized
    assert codes.reason(code).code == code


def test_a_proprietary_reason_is_read_as_unknown():
    assert StatusReason("X-42", proprietary=True).normalized == "unknown"


def test_unknown_statuses_and_reasons_are_read_not_refused():
    data = (
        write_status_report(status_report())
        .replace(b"<TxSts>ACSC</TxSts>", b"<TxSts>ZZZZ</TxSts>")
        .replace(b"<Cd>AC04</Cd>", b"<Cd>ZZ99</Cd>")
    )
    report = read_status_report(data)
    first, second = report.payments[0].transactions[:2]
    assert first.status == "ZZZZ"
    assert second.reasons == (StatusReason("ZZ99"),)
    assert second.reasons[0].normalized == "unknown"


def test_a_reason_given_only_as_text_is_read_as_narrative():
    data = write_status_report(status_report()).replace(
        b"<Rsn>\n            <Cd>AC04</Cd>\n          </Rsn>",
        b"<AddtlInf>Account closed on 1 March</AddtlInf>",
    )
    second = read_status_report(data).payments[0].transactions[1]
    assert second.reasons == (StatusReason("NARR", False, ("Account closed on 1 March",)),)


def test_a_transaction_status_without_the_end_to_end_id_is_refused():
    data = write_status_report(status_report()).replace(
        b"<OrgnlEndToEndId>E2E-2</OrgnlEndToEndId>", b""
    )
    with pytest.raises(Iso20022Error) as caught:
        read_status_report(data)
    assert caught.value.reason == "OrgnlEndToEndId is missing"
    assert caught.value.path == ("/Document/CstmrPmtStsRpt/OrgnlPmtInfAndSts[1]/TxInfAndSts[2]")


# --- camt.054 ----------------------------------------------------------------------------------

SEPA_ISSUED = BankTransactionCode("PMNT", "ICDT", "ESCT")
SEPA_RECEIVED = BankTransactionCode("PMNT", "RCDT", "ESCT")
SEPA_RETURNED = BankTransactionCode("PMNT", "ICDT", "RRTN")


def notification() -> DebitCreditNotification:
    """The partner bank's notification for TX's account: the batch of the first block booked
    as one debit with its two transactions, a credit received with a structured reference,
    and the return of a transfer (AC04), credited back."""
    booked = datetime.date(2025, 3, 4)
    return DebitCreditNotification(
        message_id="BANK-NTF-0001",
        created_at=CREATED + datetime.timedelta(days=1),
        notifications=(
            AccountNotification(
                id="NTF-1",
                account_iban=DEBTOR_IBAN,
                created_at=CREATED + datetime.timedelta(days=1),
                entries=(
                    Entry(
                        amount=310,
                        currency="EUR",
                        direction="debit",
                        status="BOOK",
                        booking_date=booked,
                        value_date=booked,
                        account_servicer_reference="BANKREF-B1",
                        bank_transaction_code=SEPA_ISSUED,
                        transactions=(
                            TransactionDetails(
                                message_id="TX-MSG-0001",
                                payment_information_id="TX-PMT-0001",
                                end_to_end_id="E2E-1",
                                amount=105,
                                currency="EUR",
                                direction="debit",
                                creditor_name="Creditor 1",
                                creditor_iban=CREDITOR_IBAN_FR,
                                remittance=Unstructured("Invoice 1"),
                            ),
                            TransactionDetails(
                                end_to_end_id="E2E-2",
                                amount=205,
                                currency="EUR",
                                direction="debit",
                            ),
                        ),
                    ),
                    Entry(
                        reference="N2",
                        amount=5000,
                        currency="EUR",
                        direction="credit",
                        status="BOOK",
                        booking_date=booked,
                        bank_transaction_code=SEPA_RECEIVED,
                        transactions=(
                            TransactionDetails(
                                end_to_end_id="NOTPROVIDED",
                                transaction_id="INST-TX-1",  # a settled instant credit's
                                account_servicer_reference="BANKREF-C1",
                                debtor_name="Payer SARL",
                                debtor_iban=CREDITOR_IBAN_FR,
                                debtor_agent_bic="DEUTDEFFXXX",
                                remittance=CreditorReference(RF_REFERENCE),
                            ),
                        ),
                    ),
                    Entry(
                        amount=305,
                        currency="EUR",
                        direction="credit",
                        status="BOOK",
                        booking_date=booked + datetime.timedelta(days=2),
                        bank_transaction_code=SEPA_RETURNED,
                        transactions=(
                            TransactionDetails(
                                end_to_end_id="E2E-3",
                                amount=305,
                                currency="EUR",
                                direction="credit",
                                creditor_iban=CREDITOR_IBAN_NL,
                                return_reason=ReturnReason("AC04", False, ("Closed",)),
                            ),
                        ),
                    ),
                ),
            ),
        ),
    )


def test_written_notification_validates_and_round_trips():
    made = notification()
    data = write_notification(made)
    independently_valid(data, CAMT_054)
    assert read_notification(data) == made


def test_a_return_carries_its_reason_raw_and_normalized():
    returned = read_notification(write_notification(notification())).entries()[2]
    reason = returned.transactions[0].return_reason
    assert (reason.code, reason.normalized) == ("AC04", "account_closed")
    assert returned.bank_transaction_code == SEPA_RETURNED


def test_entry_transactions_must_add_up():
    data = write_notification(notification()).replace(
        b'<Amt Ccy="EUR">2.05</Amt>', b'<Amt Ccy="EUR">2.06</Amt>'
    )
    with pytest.raises(Iso20022Error) as caught:
        read_notification(data)
    assert caught.value.reason == (
        "the entry's amount is 3.10, but its transactions add up to 3.11"
    )
    assert caught.value.path == "/Document/BkToCstmrDbtCdtNtfctn/Ntfctn/Ntry[1]/Amt"


def test_a_booking_date_and_time_is_read_as_its_date():
    data = write_notification(notification()).replace(
        b"<BookgDt>\n        <Dt>2025-03-06</Dt>",
        b"<BookgDt>\n        <DtTm>2025-03-06T08:00:00+01:00</DtTm>",
    )
    assert read_notification(data).entries()[2].booking_date == datetime.date(2025, 3, 6)


def test_an_account_not_identified_by_iban_is_refused():
    data = write_notification(notification()).replace(
        f"<Acct>\n        <Id>\n          <IBAN>{DEBTOR_IBAN}</IBAN>".encode(),
        b"<Acct>\n        <Id>\n          <Othr><Id>12345</Id></Othr>",
    )
    with pytest.raises(Iso20022Error, match="not identified by an IBAN"):
        read_notification(data)


def test_a_notification_is_not_a_status_report():
    with pytest.raises(Iso20022Error, match="is a camt.054.001.08 document, not pain.002"):
        read_status_report(write_notification(notification()))
