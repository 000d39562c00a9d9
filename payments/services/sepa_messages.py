"""What TX's SEPA messages say of an order and of the institution (the cut-off's pain.001 and
an instant payment's alike, and an interbank profile's pacs.008 and pacs.003): a credit transfer
or a collection of an order, and a party's name as ISO 20022 takes it."""

from datetime import date, datetime

from ..account_ibans import account_iban
from ..calendar import local_now
from ..iso20022 import pacs003, pacs008, pain001
from ..iso20022.mandates import Amendment
from ..iso20022.remittance import CreditorReference, Unstructured
from ..models import Mandate, PaymentOrder, Rail, SepaProfile


def remittance_of(order: PaymentOrder) -> CreditorReference | Unstructured | None:
    """The order's remittance: its structured creditor reference, or its free text, or none."""
    if order.creditor_reference:
        return CreditorReference(order.creditor_reference)
    if order.remittance_info:
        return Unstructured(order.remittance_info)
    return None


def credit_transfer(order: PaymentOrder) -> pain001.CreditTransfer:
    """The order as a pain.001 credit transfer."""
    external = order.external_account
    return pain001.CreditTransfer(
        end_to_end_id=order.end_to_end_id,
        amount=order.amount,
        creditor_name=party_name(external.holder_name),
        creditor_iban=external.sepa_iban(),
        creditor_bic=external.sepa_bic or None,
        remittance=remittance_of(order),
    )


def interbank_credit_transfer(
    order: PaymentOrder,
    profile: SepaProfile,
    transaction_id: str,
    *,
    accepted_at: datetime | None = None,
) -> pacs008.InterbankCreditTransfer | None:
    """The order as a pacs.008 transfer of an interbank profile: its customer the debtor, by
    the account's IBAN (`account_ibans`), the institution the debtor's bank by its BIC, the
    creditor's bank by the external account's (between banks a BIC is required); with
    `accepted_at`, a SEPA Instant one (local instrument INST, its acceptance time the
    rulebook's time stamp, AT-T056). None when the order cannot be written so (no IBAN of the
    account, no BIC of the creditor's bank: the order creation refuses both; an order made
    before its profile changed waits)."""
    external = order.external_account
    debtor_iban = account_iban(order.account, profile)
    if debtor_iban is None or not external.sepa_bic:
        return None
    customer = order.account.customer
    return pacs008.InterbankCreditTransfer(
        end_to_end_id=order.end_to_end_id,
        transaction_id=transaction_id,
        amount=order.amount,
        debtor_name=party_name(f"{customer.first_name} {customer.last_name}"),
        debtor_iban=debtor_iban,
        debtor_bic=profile.bic,
        creditor_name=party_name(external.holder_name),
        creditor_iban=external.sepa_iban(),
        creditor_bic=external.sepa_bic,
        remittance=remittance_of(order),
        instant=accepted_at is not None,
        accepted_at=accepted_at,
    )


def interbank_direct_debit(
    order: PaymentOrder,
    profile: SepaProfile,
    mandate: Mandate,
    sequence_type: str,
    amendment: Amendment | None,
    transaction_id: str,
) -> pacs003.InterbankDirectDebit | None:
    """The collection as a pacs.003 direct debit of an interbank profile: the institution the
    creditor under its creditor identifier (the mandate is with it, as in a pain.008), the
    money for the customer's account by its IBAN (`account_ibans`), the institution the
    creditor's bank by its BIC, the debtor's bank by the external account's. None when it
    cannot be written so (no IBAN of the account, no BIC of the debtor's bank: the order
    creation refuses both; one made before its profile changed waits)."""
    external = order.external_account
    creditor_iban = account_iban(order.account, profile)
    if creditor_iban is None or not external.sepa_bic:
        return None
    return pacs003.InterbankDirectDebit(
        end_to_end_id=order.end_to_end_id,
        transaction_id=transaction_id,
        amount=order.amount,
        local_instrument=mandate.scheme,
        sequence_type=sequence_type,
        mandate_id=mandate.reference,
        mandate_signed_on=mandate.signature_date,
        amendment=amendment,
        creditor_id=profile.creditor_identifier,
        creditor_name=party_name(profile.institution.name),
        creditor_iban=creditor_iban,
        creditor_bic=profile.bic,
        debtor_name=party_name(external.holder_name),
        debtor_iban=external.sepa_iban(),
        debtor_bic=external.sepa_bic,
        remittance=remittance_of(order),
    )


def party_name(text: str) -> str:
    """A name as a pain.001 takes it (at most its length; the SEPA character set was checked
    when the name was stored)."""
    return text.strip()[: pain001.NAME_LIMIT]


def initiation_credit_transfer(
    profile: SepaProfile, rail: str, orders: list[PaymentOrder], message_id: str, day: date
) -> bytes:
    """The pain.001 (`payments.iso20022.pain001`) of an initiation profile: one payment
    instruction from the profile's settlement account (the partner bank its agent), executed
    `day` (a cut-off window's SEPA day, or today for an instant payment: local instrument INST
    for rail `sepa_inst`), a transfer per order by its end-to-end id; validated against its XSD
    as it is written."""
    institution = profile.institution
    initiation = pain001.CreditTransferInitiation(
        message_id=message_id,
        created_at=local_now(institution).replace(microsecond=0),
        initiating_party=party_name(institution.name),
        payments=(
            pain001.PaymentInstruction(
                payment_information_id=f"{message_id}-1",
                requested_execution_date=day,
                debtor_name=party_name(institution.name),
                debtor_iban=profile.settlement_iban,
                debtor_bic=profile.bic or None,
                transfers=tuple(credit_transfer(order) for order in orders),
                instant=rail == Rail.SEPA_INST,
            ),
        ),
    )
    return pain001.write_initiation(initiation)  # validated against its XSD as written
