"""Inbound SEPA credits: other banks' customers paying into the institution's accounts at their
IBANs (docs/payments.md, "Inbound SEPA"; the IBANs: `payments.account_ibans`). Three ways in:

- a **booking**: the partner bank's camt.054 books a credit on the institution's settlement
  account whose creditor account is one of its accounts' IBANs (`sepa_files`, rail `sepa_ct`).
  The money is at the partner bank already, so TX cannot refuse it: the account takes it, or
  it goes to **suspense** for staff, with the reason code its return would carry;
- an **instant credit**: the clearing offers a pacs.008 (`instant_credits`, rail `sepa_inst`),
  which TX accepts (the account takes it at once) or rejects with its reason, nothing moved;
- an **interbank credit transfer**: to a bank in the clearing (an `interbank` profile), the
  clearing's pacs.008 file of SEPA Credit Transfers (`interbank_credits`, rail `sepa_ct`),
  settled already: the account takes it, or TX returns it to the clearing with a pacs.004.

| the account the IBAN names | a booking | an instant credit | an interbank credit transfer |
|---|---|---|---|
| none (see below) | suspense, AC01 | rejected AC01 | returned AC01 |
| closed | suspense, AC04 | rejected AC04 | returned AC04 |
| frozen | suspense, AC06 | rejected AC06 | returned AC06 |
| otherwise | applied: `rail_settlement` -> account | applied, the same | applied, the same |

None: the IBAN is not of the profile's country and bank code (another institution's, another
bank's), or no customer account in EUR of the institution has its number.

Each is an `InboundEntry` of its rail, recorded, applied or refused in the caller's
transaction, its IBAN sealed where an ACH entry's account number is. **Applied once**: the
institution, the rail, the debtor's bank (a pacs.008's; none for a booking) and the reference
(a booking's account servicer reference, the partner bank's own and unique on its account; a
pacs.008's transaction id, unique for the bank that gave it) are a unique
index (`inbound_entry_sepa_once`): the same credit told again finds its entry, and nothing moves
twice.
"""

from dataclasses import dataclass
from datetime import date, datetime

from django.db import IntegrityError, transaction

from accounts.locks import lock_accounts
from accounts.models import Account
from institutions.calendar import local_date

from ..account_ibans import account_of_iban
from ..calendar import sepa_days_after
from ..iso20022 import codes, pacs004
from ..iso20022.interbank import GroupHeader
from ..iso20022.messages import PACS_008
from ..iso20022.pacs008 import FIToFICreditTransfer, InterbankCreditTransfer
from ..iso20022.remittance import CreditorReference, Unstructured
from ..iso20022.status_reasons import StatusReason
from ..models import InboundEntry, Rail, RailFile, SepaProfile
from .cutoff import CLEARING_SYSTEM
from .inbound import emit_inbound, inbound_apply, inbound_move, inbound_to_suspense

Status = InboundEntry.Status
NO_ACCOUNT, CLOSED, BLOCKED = "AC01", "AC04", "AC06"


@dataclass(frozen=True)
class Credit:
    """One credit as the message told it."""

    reference: str
    amount: int  # cents
    currency: str
    iban: str  # the creditor's: one of the institution's, or not
    debtor_name: str
    end_to_end_id: str
    remittance_info: str
    settlement_date: date
    agent_bic: str = ""  # the debtor's bank (a pacs.008's)


def credit_of(transfer: InterbankCreditTransfer, settlement_date: date) -> Credit:
    """A credit of a clearing's pacs.008 (an instant credit, an interbank credit transfer): its
    key the debtor's bank and the transaction id it gave."""
    return Credit(
        reference=transfer.transaction_id,
        agent_bic=transfer.debtor_bic,
        amount=transfer.amount,
        currency=transfer.currency,
        iban=transfer.creditor_iban,
        debtor_name=transfer.debtor_name,
        end_to_end_id=transfer.end_to_end_id,
        remittance_info=remittance_text(transfer.remittance),
        settlement_date=settlement_date,
    )


def told_by_pacs008(inbound: InboundEntry) -> bool:
    """Whether a SEPA credit came in a clearing's pacs.008, kept as its inbound rail file (an
    instant credit, an interbank credit transfer; a booking names no debtor's bank)."""
    return inbound.rail in (Rail.SEPA_CT, Rail.SEPA_INST) and bool(inbound.sepa_agent_bic)


def original_transfer(message: FIToFICreditTransfer, transfer: InterbankCreditTransfer) -> dict:
    """The facts of a pacs.008's transfer a pacs.004 returning it names (`pacs004`'s
    `ReturnedTransaction` fields)."""
    return {
        "original_message_id": message.header.message_id,
        "original_instruction_id": transfer.instruction_id,
        "original_end_to_end_id": transfer.end_to_end_id,
        "original_transaction_id": transfer.transaction_id,
        "original_settlement_date": message.header.settlement_date,
        "debtor_name": transfer.debtor_name,
        "debtor_iban": transfer.debtor_iban,
        "creditor_name": transfer.creditor_name,
        "creditor_iban": transfer.creditor_iban,
    }


def credit_returned(
    profile: SepaProfile, *, return_id: str, amount: int, currency: str, code: str, original: dict
) -> pacs004.ReturnedTransaction:
    """A pacs.008 credit's whole amount returned by TX (an interbank credit transfer's account
    cannot take it, a recall accepted) with the reason `code`, TX's BIC its originator;
    `original`: the transfer's facts (`original_transfer`, or what a recall names)."""
    return pacs004.ReturnedTransaction(
        return_id=return_id,
        original_message_type=PACS_008.name,
        original_amount=amount,
        returned_amount=amount,
        currency=currency,
        reason=StatusReason(code, originator_bic=profile.bic),
        **original,
    )


def return_header(profile: SepaProfile, message_id: str, instructed_bic, now: datetime):
    """The group header of a pacs.004 of TX's (a credit's return, a recall's, a refund's): TX
    the instructing bank by the profile's BIC, to `instructed_bic` (the clearing), settled
    through the clearing on the first SEPA day from today; `message_id` a row's id, `-` for
    `_` (the SEPA character set has none)."""
    institution = profile.institution
    return GroupHeader(
        message_id=message_id.replace("_", "-"),
        created_at=now.replace(microsecond=0),
        settlement_date=sepa_days_after(institution, local_date(institution, now), 0),
        clearing_system=CLEARING_SYSTEM,
        instructing_agent_bic=profile.bic,
        instructed_agent_bic=instructed_bic,
    )


def remittance_text(remittance) -> str:
    """A credit's remittance information as its entry keeps it: the line, or the reference."""
    if isinstance(remittance, Unstructured):
        return remittance.text
    if isinstance(remittance, CreditorReference):
        return remittance.reference
    return ""


def refusal_of(account: Account | None) -> str:
    """Why `account` cannot take a credit (the module docstring's rows); "" when it can."""
    if account is None:
        return NO_ACCOUNT
    if account.status == Account.Status.CLOSED:
        return CLOSED
    if account.status == Account.Status.FROZEN:
        return BLOCKED
    return ""


def sepa_credit_receive(
    *,
    profile: SepaProfile,
    rail_file: RailFile,
    credit: Credit,
    at: datetime,
    refused: str,
    refusal: str = "",
) -> tuple[InboundEntry, bool]:
    """Record one credit and apply it, or refuse it, in the caller's transaction: `refused` is
    the state a credit the account cannot take moves to (a booking's `suspense`, an instant
    credit's `rejected`, an interbank credit transfer's `returning`: the caller writes its
    pacs.004 and moves it on to `returned`); return its entry and whether
    it is new (False: the same credit, recorded before, as it was). `refusal`: an instant
    credit the caller rejects with that code whatever its account (its account not looked
    at)."""
    found = None if refusal else account_of_iban(profile, credit.iban)
    if found is not None:  # locked before its status decides (a freeze at the same moment)
        found = lock_accounts([found.pk])[found.pk]
    inbound = InboundEntry(
        institution_id=profile.institution_id,
        file=rail_file,
        rail=rail_file.rail,
        direction=InboundEntry.Direction.CREDIT,
        amount=credit.amount,
        currency=credit.currency,
        company_name=credit.debtor_name[:70],
        company_id="",
        company_entry_description="",
        sepa_reference=credit.reference,
        sepa_agent_bic=credit.agent_bic,
        end_to_end_id=credit.end_to_end_id,
        remittance_info=credit.remittance_info[:140],
        account=found,
        settlement_date=credit.settlement_date,
        status=Status.RECEIVED,
    )
    for field, value in inbound.sealed_account_number(credit.iban).items():
        setattr(inbound, field, value)
    try:
        with transaction.atomic():
            inbound.save(force_insert=True)
    except IntegrityError:  # the same credit, told before: as it was
        return _recorded(profile, rail_file.rail, credit), False
    inbound.institution = profile.institution
    emit_inbound(inbound, "inbound_entry.received")
    code = refusal or refusal_of(found)
    reason = codes.reason(code).normalized if code else ""
    if not code:
        inbound_apply(inbound, found, at=at)
    elif refused == Status.REJECTED:
        inbound_reject(inbound, code, at=at)
    elif refused == Status.RETURNING:
        inbound_move(
            inbound,
            Status.RETURNING,
            "inbound_entry.returning",
            at=at,
            return_code=code,
            return_reason=reason,
        )
    else:
        inbound_to_suspense(inbound, at=at, return_code=code, return_reason=reason)
    return inbound, True


def instant_credits_booked(
    profile: SepaProfile, transaction_id: str | None, agent_bic: str | None
) -> list[InboundEntry]:
    """The instant credits TX accepted that a booking naming this interbank transaction id (and
    debtor's bank, when it names one) may be: the partner bank booking money TX applied when it
    answered ACCP. A transaction id is unique for the bank that gave it, so without the bank
    two may answer (the caller tells them apart, or does not guess)."""
    if not transaction_id:
        return []
    found = InboundEntry.objects.filter(
        institution_id=profile.institution_id,
        rail=Rail.SEPA_INST,
        direction=InboundEntry.Direction.CREDIT,
        sepa_reference=transaction_id,
    ).exclude(status=Status.REJECTED)
    if agent_bic:
        found = found.filter(sepa_agent_bic=agent_bic)
    return list(found[:2])


def inbound_reject(
    inbound: InboundEntry, code: str, *, at: datetime, actor=None, **event_data
) -> None:
    """An instant credit, or a collection from an account (`inbound_debits`, `debtor_refusals`),
    refused before settlement: nothing moved, its reason kept; the event by `actor` (None: the
    current) with `event_data`."""
    inbound_move(
        inbound,
        Status.REJECTED,
        "inbound_entry.rejected",
        at=at,
        actor=actor,
        event_data=event_data,
        return_code=code,
        return_reason=codes.reason(code).normalized,
    )


def _recorded(profile: SepaProfile, rail: str, credit: Credit) -> InboundEntry:
    return InboundEntry.objects.get(
        institution_id=profile.institution_id,
        rail=rail,
        sepa_agent_bic=credit.agent_bic,
        sepa_reference=credit.reference,
    )
