"""The simulated SEPA Instant clearing that ships with TX (docs/payments.md, "SEPA Instant"): it
takes an institution's one-transaction pain.001 (local instrument INST, an `initiation`
profile's, through its partner bank) and answers in real time with a pain.002, or a bank's
(an `interbank` profile's) one-transaction pacs.008 (INST) with a pacs.002, by the creditor
IBAN's scenario in the simulated bank's table (`sandbox.simulated_bank.SEPA_SCENARIOS`, the
SEPA credit transfers' own):

- a rejection scenario (AC01, AC04, AC06, AG01, AM04): `RJCT` with its reason;
- `silent` (account `0000000901`): no answer at all, after the whole timeout;
- `late` (account `0000000902`): no answer within the timeout; the settled answer (`ACSC`) is
  then put in the institution's `sepa` inbox, where the payments job reads it (TX records it
  and changes nothing: the order was rejected `TECH`);
- anything else: `ACSC`, accepted and settled (a recall scenario's transfer too: the partner
  bank, or for a pacs.008 the clearing, keeps its scenario for the recall of it, as it does for
  a file it reads).

The pacs.002 is the one the clearing answers a credit transfers' pacs.008 with
(`_clearing_answers`: ACSC with the original amount and settlement date, or RJCT with the
reason given by the creditor's bank), at once; a return scenario settles (SCT Inst has no
return: its money comes back by a recall). The pain.001 or pacs.008 is read as TX reads any
file (its XSD validated, safely parsed), and a pacs.008 that is not SEPA Instant is refused: a
file it refuses raises, and TX treats it as no answer.

The other way (`offer_credit`): another bank's customer pays one of an institution's accounts
at its IBAN by SEPA Instant. The clearing finds the institution by the IBAN's bank code (its
SEPA profile's, `payments.account_ibans`), offers it a one-transaction pacs.008 and takes TX's
pacs.002 (`payments.services.instant_credits`), timing it against the scheme's timeout: an
answer after it counts as none, as the clearing's own deadline would have it. A credit TX
accepted is then booked on the institution's settlement account by its partner bank, as every
settled instant credit is: a camt.054 in the `sepa` inbox naming the credit's transaction id and
debtor's bank (`simulated_sepa_bank_send`), which TX knows for the money it applied already
(a bank in the clearing, an `interbank` profile, has no partner bank: nothing is booked).

A bank in the clearing itself (an `interbank` SEPA profile) sends its SEPA credit transfers as
pacs.008 files into its `sepa` outbox, and the clearing answers them (`simulated_clearing_run`)
by the creditor IBAN's scenario in the same table: a pacs.002 at once (per transaction ACSC,
settled on the message's settlement date, or RJCT with the scenario's reason; the group ACCP,
PART or RJCT), and for a return scenario a pacs.004 `delay_days` after the settlement date (the
whole amount back, the scenario's reason: AC04, MD07), into the `sepa` inbox. Its recalls
(camt.056, TX's `recalls`) are answered at once by the transfer's recall scenario in the same
table: refused with a camt.029 (RJCR and the code), or accepted with the money back (less
charges for account `0000000403`) in that day's pacs.004, reason FOCR. Its collections
go as pacs.003 files, answered the same way by the debtor IBAN's scenario in the direct debits'
table (`SEPA_DD_SCENARIOS`: RJCT AC04, refunded MD06, returned MD01), on their settlement date
(the due date: the debtor's bank debits its customer then). What is not due yet is kept in its
state file beside the outbox (ids, amounts, dates and codes: no IBAN).

The other way (`send_collection`): another bank's creditor collects from one of an
institution's accounts at its IBAN; the clearing presents a pacs.003 of one collection in the
institution's `sepa` inbox (the institution found by the IBAN's bank code), which the payments
job reads (`payments.services.inbound_debits`: debited on its settlement date, the pacs.003's,
`today`); TX's pacs.002 of a rejection comes back in its outbox, and the clearing takes it, as it
takes TX's pacs.004 of a refund the customer claimed (`payments.services.debtor_refunds`) or of
a collection TX returned on its settlement date (AM04, AC04, AC06), read and validated, with
nothing to answer. So too TX's answers to the recalls of credits it received (`manage.py
simulated_bank --recall-credit`: the camt.056 in the inbox): a pacs.004 FOCR of an accepted
recall, a camt.029 of a refusal (`payments.services.inbound_recalls`).

And (`send_credit`): another bank's customer pays one of an institution's accounts at its IBAN
by a SEPA Credit Transfer; the clearing delivers a pacs.008 of one transfer, settling that day,
in the institution's `sepa` inbox (`payments.services.interbank_credits`); TX's pacs.004 of a
transfer it could not credit comes back in its outbox, and the clearing takes it as the others.
"""

import json
import os
import time
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from datetime import time as clock

from django.conf import settings

from cards.dates import today_of
from payments.account_ibans import profile_of_iban
from payments.connector import folder
from payments.iso20022 import (
    camt029,
    camt056,
    pacs002,
    pacs003,
    pacs004,
    pacs008,
    pain001,
    pain002,
)
from payments.iso20022.interbank import GroupHeader
from payments.iso20022.mandates import Amendment
from payments.iso20022.remittance import Unstructured
from payments.iso20022.status_reasons import StatusReason
from payments.models import SepaProfile
from payments.services.cutoff import CLEARING_SYSTEM
from payments.services.instant import CLEARING_SYSTEM as INSTANT_CLEARING_SYSTEM
from payments.services.instant_credits import instant_credit_answer

from .simulated_bank import (
    SEPA_DD_SCENARIOS,
    SEPA_SCENARIOS,
    IncomingSepa,
    german_iban,
    put_file,
    recall_resolution,
    recall_returned,
    recall_scenarios,
    simulated_sepa_bank_remember,
    simulated_sepa_bank_send,
    state_of,
)

# The other banks of the clearing: the debtor's (a German bank's BIC) and the clearing's own.
DEBTOR_BIC = "DEUTDEFFXXX"
CLEARING_BIC = "TXSCDEFFXXX"


@dataclass(frozen=True)
class Offered:
    """What became of an instant credit offered: TX's status (ACCP, RJCT; None: no answer in
    time), its reason, and how long TX took."""

    status: str | None
    reason: str | None
    seconds: float


ORIGINAL_MESSAGE = "pain.001.001.09"


class SimulatedClearing:
    def exchange(self, *, institution, content: bytes, timeout: float) -> bytes | None:
        """The clearing's answer to `content`, a pain.001's pain.002 (an initiation profile's,
        through its partner bank) or a pacs.008's pacs.002 (an interbank profile's), or None
        when it says nothing within `timeout` seconds."""
        interbank = b"pacs.008" in content[:400]
        if interbank:
            message = pacs008.read_transfers(content)
            if not all(transfer.instant for transfer in message.transfers):
                raise ValueError("a pacs.008 that is not SEPA Instant (no local instrument INST)")
            transfers, message_id = message.transfers, message.header.message_id
        else:
            initiation = pain001.read_initiation(content)
            transfers, message_id = tuple(initiation.transfers()), initiation.message_id
        kinds = set()
        for transfer in transfers:
            scenario = SEPA_SCENARIOS.get(transfer.creditor_iban)
            kinds.add(scenario.kind if scenario is not None else "settle")
        if "silent" in kinds:
            time.sleep(timeout)
            return None
        if interbank:
            answer = _instant_status_report(message)
            _remember_recalls(institution, message.transfers)
        else:
            answer = status_report(initiation, [_instant_status(each) for each in transfers])
            simulated_sepa_bank_remember(institution=institution, initiation=initiation)
        if "late" in kinds:
            time.sleep(timeout)
            inbox = folder(institution.pk, "sepa", "inbox")
            put_file(inbox, f"simulated-clearing-{message_id}.xml", answer)
            return None
        return answer


def _instant_status(transfer) -> pain002.TransactionStatus:
    """A pain.001's transfer's status: RJCT with its scenario's reason, or ACSC."""
    scenario = SEPA_SCENARIOS.get(transfer.creditor_iban)
    rejected = scenario is not None and scenario.kind == "reject"
    return pain002.TransactionStatus(
        original_end_to_end_id=transfer.end_to_end_id,
        status="RJCT" if rejected else "ACSC",
        reasons=(StatusReason(scenario.code),) if rejected else (),
    )


def _instant_status_report(message) -> bytes:
    """The pacs.002 of an instant pacs.008: the credit transfers' own answer (`_clearing_answers`:
    ACSC settled on the message's settlement date, or RJCT with the scenario's reason given by
    the creditor's bank), made now. SCT Inst has no return: a return scenario settles."""
    items = [(each, each.creditor_iban, each.creditor_bic) for each in message.transfers]
    report, _ = _clearing_answers(
        message, items, SEPA_SCENARIOS, INTERBANK_MESSAGE, message.header.settlement_date
    )
    now = datetime.now(UTC).replace(microsecond=0)
    return pacs002.write_status_report(replace(report, created_at=now))


def _remember_recalls(institution, transfers) -> None:
    """Keep the recall scenarios of an instant pacs.008 (which never reaches the outbox the
    clearing reads) in the clearing's state file, for the recalls of its transfers."""
    scenarios = recall_scenarios(transfers)
    if not scenarios:
        return
    path = _state_path(institution)
    state = state_of(path)
    state.setdefault("recalls", {}).update(scenarios)
    path.write_text(json.dumps(state))


def status_report(initiation, statuses: list) -> bytes:
    rejected = sum(each.status == "RJCT" for each in statuses)
    group = "RJCT" if rejected == len(statuses) else "PART" if rejected else "ACSC"
    return pain002.write_status_report(
        pain002.PaymentStatusReport(
            message_id=f"SIMCLR-{initiation.message_id}"[:35],
            created_at=datetime.now(UTC).replace(microsecond=0),
            original_message_id=initiation.message_id,
            original_message_type=ORIGINAL_MESSAGE,
            group_status=group,
            payments=(
                pain002.PaymentStatus(
                    original_payment_information_id=initiation.payments[0].payment_information_id,
                    transactions=tuple(statuses),
                ),
            ),
        )
    )


def offer_credit(
    *,
    iban: str,
    amount: int,
    transaction_id: str,
    debtor_name: str = "ACME GMBH",
    debtor_iban: str = german_iban("0532013000"),
    remittance: str = "Invoice 2026-11",
    institution=None,
) -> Offered:
    """Offer an instant credit of `amount` cents to `iban` to the institution whose bank code it
    carries (or `institution`, as a misrouted offer would), as a pacs.008 of one transaction;
    return what TX answered (module docstring). `transaction_id`: the debtor bank's, unique for
    it (the same id offered again is the same credit)."""
    if institution is None:
        profile = profile_of_iban(iban)
        if profile is None:
            return Offered(status="RJCT", reason="AC01", seconds=0.0)  # no participant has it
        institution = profile.institution
    now = datetime.now(UTC).replace(microsecond=0)
    content = pacs008.write_transfers(
        pacs008.FIToFICreditTransfer(
            header=GroupHeader(
                message_id=f"SIMCLR-{transaction_id}"[:35],
                created_at=now,
                settlement_date=now.date(),
                clearing_system=INSTANT_CLEARING_SYSTEM,
                instructing_agent_bic=CLEARING_BIC,
            ),
            transfers=(
                pacs008.InterbankCreditTransfer(
                    end_to_end_id=f"E2E-{transaction_id}"[:35],
                    transaction_id=transaction_id,
                    amount=amount,
                    debtor_name=debtor_name,
                    debtor_iban=debtor_iban,
                    debtor_bic=DEBTOR_BIC,
                    creditor_name="Account holder",
                    creditor_iban=iban,
                    creditor_bic=CLEARING_BIC,
                    remittance=Unstructured(remittance) if remittance else None,
                    instant=True,
                    accepted_at=now,
                ),
            ),
        )
    )
    started = time.monotonic()
    answer = instant_credit_answer(institution=institution, content=content)
    seconds = time.monotonic() - started
    if answer is None or seconds > float(settings.SEPA_INSTANT_TIMEOUT_SECONDS):
        return Offered(status=None, reason=None, seconds=seconds)
    status = pacs002.read_status_report(answer).transactions[0]
    reason = status.reasons[0].code if status.reasons else None
    interbank = SepaProfile.objects.filter(
        institution=institution, kind=SepaProfile.Kind.INTERBANK
    ).exists()
    if status.status == "ACCP" and not interbank:  # a bank in the clearing has no partner bank
        simulated_sepa_bank_send(
            institution=institution,
            credits=[
                IncomingSepa(
                    iban=iban,
                    amount=amount,
                    debtor_name=debtor_name,
                    debtor_iban=debtor_iban,
                    remittance=remittance,
                    end_to_end_id=f"E2E-{transaction_id}"[:35],
                    transaction_id=transaction_id,
                    debtor_bic=DEBTOR_BIC,
                )
            ],
            today=now.date(),
        )
    return Offered(status=status.status, reason=reason, seconds=seconds)


# --- SEPA credit transfers and direct debits of an `interbank` profile -------------------------
INTERBANK_MESSAGE = "pacs.008.001.08"
COLLECTION_MESSAGE = "pacs.003.001.08"


def _state_path(institution):
    """The clearing's state file of the institution, beside its `sepa` outbox."""
    return folder(institution.pk, "sepa", "outbox").parent / ".simulated-clearing.json"


def cleared_institutions() -> list:
    """The institutions in the clearing: an interbank SEPA profile's."""
    return [
        profile.institution
        for profile in SepaProfile.objects.filter(kind=SepaProfile.Kind.INTERBANK)
        .select_related("institution")
        .order_by("pk")
    ]


def simulated_clearing_run(*, institution, today: date | None = None) -> list[str]:
    """Answer the pacs.008 and pacs.003 files the institution delivered into its `sepa` outbox
    (module docstring): a pacs.002 for each on its settlement date (a pacs.008's is its day),
    and the pacs.004 returns due by `today` in one file; return the names of the files
    written."""
    today = today or today_of(institution)
    profile = SepaProfile.objects.get(institution=institution)
    outbox = folder(institution.pk, "sepa", "outbox")
    inbox = folder(institution.pk, "sepa", "inbox")
    state_path = _state_path(institution)
    state = state_of(state_path)
    written = []

    def put(content: bytes, kind: str) -> None:
        state["written"] += 1
        name = f"simulated-clearing-{kind}-{today:%Y%m%d}-{state['written']:04d}.xml"
        put_file(inbox, name, content)
        written.append(name)

    for entry in sorted(os.scandir(outbox), key=lambda item: item.name):
        if entry.name.startswith(".") or entry.name in state["read"] or not entry.is_file():
            continue
        with open(entry.path, "rb") as handle:
            content = handle.read()
        if b"pacs.002" in content[:400]:
            # TX's rejections of the collections the clearing presented (`send_collection`):
            # taken, nothing to answer.
            state["read"].append(entry.name)
            continue
        if b"pacs.004" in content[:400]:
            # TX's refunds of collections it paid, its returns of collections on their
            # settlement date and of credits whose recall it accepted: read as any document (a
            # file the clearing refuses raises), settled to the other bank, nothing to answer.
            pacs004.read_return(content)
            state["read"].append(entry.name)
            continue
        if b"camt.029" in content[:400]:
            # TX's refusals of recalls of credits it received: read, passed on to the bank
            # that recalled, nothing to answer.
            camt029.read_resolution(content)
            state["read"].append(entry.name)
            continue
        if b"camt.056" in content[:400]:
            # TX's recall of a transfer it sent: answered at once by the beneficiary's bank,
            # by the scenario the clearing kept of the transfer.
            refusals, back = _recall_answers(
                camt056.read_cancellation_request(content), state.setdefault("recalls", {}), today
            )
            for resolution in refusals:
                put(camt029.write_resolution(resolution), "camt029")
            state["due"] += back
            state["read"].append(entry.name)
            continue
        if b"pacs.003" in content[:400]:
            message = pacs003.read_debits(content)
            items = [(each, each.debtor_iban, each.debtor_bic) for each in message.debits]
            scenarios, original_type = SEPA_DD_SCENARIOS, COLLECTION_MESSAGE
        else:
            message = pacs008.read_transfers(content)
            items = [(each, each.creditor_iban, each.creditor_bic) for each in message.transfers]
            scenarios, original_type = SEPA_SCENARIOS, INTERBANK_MESSAGE
            state.setdefault("recalls", {}).update(recall_scenarios(message.transfers))
        if message.header.settlement_date > today:
            continue  # answered on its settlement date
        report, due = _clearing_answers(message, items, scenarios, original_type, today)
        put(pacs002.write_status_report(report), "pacs002")
        state["due"] += due
        state["read"].append(entry.name)
    due = [each for each in state["due"] if date.fromisoformat(each["due"]) <= today]
    state["due"] = [each for each in state["due"] if date.fromisoformat(each["due"]) > today]
    if due:
        put(pacs004.write_return(_returns(profile, due, today, state["written"] + 1)), "pacs004")
    state_path.write_text(json.dumps(state))
    return written


def _clearing_answers(
    message, items: list, scenarios: dict, original_type: str, today: date
) -> tuple[pacs002.InterbankStatusReport, list[dict]]:
    """The pacs.002 of a pacs.008 or pacs.003 (a status per transaction by the scenario of its
    other party's IBAN: the creditor's of a transfer, the debtor's of a collection, given by
    that party's bank) and the returns it makes due."""
    header = message.header
    settled_on = header.settlement_date
    statuses, due, rejected = [], [], 0
    for item, iban, bic in items:
        scenario = scenarios.get(iban)
        kind = scenario.kind if scenario is not None else "settle"
        reasons = ()
        if kind == "reject":
            rejected += 1
            reasons = (StatusReason(scenario.code, originator_bic=bic),)
        statuses.append(
            pacs002.InterbankTransactionStatus(
                original_end_to_end_id=item.end_to_end_id,
                original_transaction_id=item.transaction_id,
                status="RJCT" if kind == "reject" else "ACSC",
                reasons=reasons,
                original_amount=item.amount,
                original_settlement_date=settled_on,
            )
        )
        if kind == "return":
            back = settled_on + timedelta(days=scenario.delay_days)
            due.append(
                {
                    "due": back.isoformat(),
                    "message_id": header.message_id,
                    "message_type": original_type,
                    "end_to_end_id": item.end_to_end_id,
                    "transaction_id": item.transaction_id,
                    "amount": item.amount,
                    "settled_on": settled_on.isoformat(),
                    "code": scenario.code,
                    "originator_bic": bic,
                }
            )
    group = "RJCT" if rejected == len(statuses) else "PART" if rejected else "ACCP"
    report = pacs002.InterbankStatusReport(
        message_id=f"SIMCLR-STS-{header.message_id}"[:35],
        created_at=datetime.combine(today, clock(12, 0), tzinfo=UTC),
        instructing_agent_bic=CLEARING_BIC,
        instructed_agent_bic=header.instructing_agent_bic,
        original_message_id=header.message_id,
        original_message_type=original_type,
        original_count=len(statuses),
        original_control_sum=message.total,
        group_status=group,
        transactions=tuple(statuses),
    )
    return report, due


def _returns(profile, due: list[dict], today: date, number: int) -> pacs004.PaymentReturn:
    """One pacs.004 of the returns due: each the whole amount back with the scenario's reason,
    given by the other party's bank (a collection's: the debtor's refund or claim, MD06 or
    MD01, through its bank)."""
    return pacs004.PaymentReturn(
        header=GroupHeader(
            message_id=f"SIMCLR-RTR-{today:%Y%m%d}-{number:04d}",
            created_at=datetime.combine(today, clock(12, 0), tzinfo=UTC),
            settlement_date=today,
            clearing_system=CLEARING_SYSTEM,
            instructing_agent_bic=CLEARING_BIC,
            instructed_agent_bic=profile.bic,
        ),
        transactions=tuple(
            pacs004.ReturnedTransaction(
                return_id=f"RTR-{each['transaction_id']}"[:35],
                original_message_id=each["message_id"],
                original_message_type=each.get("message_type", INTERBANK_MESSAGE),
                original_end_to_end_id=each["end_to_end_id"],
                original_transaction_id=each["transaction_id"],
                original_amount=each["amount"],
                returned_amount=each.get("returned", each["amount"]),
                reason=StatusReason(
                    each["code"],
                    originator_bic=each.get("originator_bic", each.get("creditor_bic")),
                ),
                original_settlement_date=date.fromisoformat(each["settled_on"]),
            )
            for each in due
        ),
    )


def _recall_answers(request, scenarios: dict, today: date) -> tuple[list, list[dict]]:
    """The beneficiary's bank's answers to a camt.056 of TX's (an interbank profile's), by each
    transfer's recall scenario (`SEPA_SCENARIOS`, kept by end-to-end id when its pacs.008 was
    read): refused, a camt.029 with the scenario's code; accepted, the money back (less the
    bank's charges for `recall_charged`) in today's pacs.004 with reason FOCR, and no
    camt.029 (between banks the return is the answer)."""
    refusals, due = [], []
    for transaction in request.transactions:
        kind, code = scenarios.get(transaction.original_end_to_end_id, ["", ""])
        if kind == "recall_refused":
            refusals.append(recall_resolution(request, transaction, code, "SIMCLR"))
            continue
        amount = transaction.original_amount
        due.append(
            {
                "due": today.isoformat(),
                "message_id": transaction.original_message_id,
                "message_type": transaction.original_message_type,
                "end_to_end_id": transaction.original_end_to_end_id,
                "transaction_id": transaction.original_transaction_id,
                "amount": amount,
                "returned": recall_returned(kind, amount),
                "settled_on": transaction.original_settlement_date.isoformat(),
                "code": "FOCR",
                "originator_bic": request.assignment.assignee_bic,
            }
        )
    return refusals, due


# A creditor of another bank, collecting from the institutions' customers.
CREDITOR_NAME = "ACME GMBH"
CREDITOR_IBAN = german_iban("0532013000")


def send_collection(
    *,
    iban: str,
    amount: int,
    creditor_id: str,
    mandate_reference: str,
    today: date | None = None,
    sequence_type: str = "RCUR",
    original_mandate_reference: str | None = None,
) -> tuple[object, str]:
    """Another bank's creditor (`creditor_id`) collects `amount` cents from the account at
    `iban` under `mandate_reference`, due `today` (the institution's): a pacs.003 of one
    collection in the `sepa` inbox of the institution whose bank code the IBAN carries; return
    the institution and the file's name. The transaction ids come from the clearing's state
    file (the same id is the same collection). `original_mandate_reference`: the mandate's
    reference was amended since the debtor's bank last saw it (its amendment carried)."""
    profile = profile_of_iban(iban)
    if profile is None:
        raise ValueError("no institution of the clearing has this IBAN's bank code")
    institution = profile.institution
    today = today or today_of(institution)
    state_path = _state_path(institution)
    state = state_of(state_path)
    state["written"] += 1
    number = state["collections_sent"] = state.get("collections_sent", 0) + 1
    content = collection_document(
        profile=profile,
        iban=iban,
        amount=amount,
        creditor_id=creditor_id,
        mandate_reference=mandate_reference,
        settles_on=today,
        number=number,
        sequence_type=sequence_type,
        original_mandate_reference=original_mandate_reference,
    )
    name = f"simulated-clearing-pacs003-{today:%Y%m%d}-{state['written']:04d}.xml"
    put_file(folder(institution.pk, "sepa", "inbox"), name, content)
    state_path.write_text(json.dumps(state))
    return institution, name


def send_credit(*, iban: str, amount: int, today: date | None = None) -> tuple[object, str]:
    """Another bank's customer pays `amount` cents to the account at `iban` by a SEPA Credit
    Transfer, settling `today` (the institution's): a pacs.008 of one transfer in the `sepa`
    inbox of the institution whose bank code the IBAN carries; return the institution and the
    file's name. The transaction ids come from the clearing's state file."""
    profile = profile_of_iban(iban)
    if profile is None:
        raise ValueError("no institution of the clearing has this IBAN's bank code")
    institution = profile.institution
    today = today or today_of(institution)
    outbox = folder(institution.pk, "sepa", "outbox")
    state_path = outbox.parent / ".simulated-clearing.json"
    state = state_of(state_path)
    state["written"] += 1
    number = state["credits_sent"] = state.get("credits_sent", 0) + 1
    content = credit_document(
        profile=profile, iban=iban, amount=amount, settles_on=today, number=number
    )
    name = f"simulated-clearing-pacs008-{today:%Y%m%d}-{state['written']:04d}.xml"
    put_file(folder(institution.pk, "sepa", "inbox"), name, content)
    state_path.write_text(json.dumps(state))
    return institution, name


def _presented_header(profile, kind: str, settles_on: date, number: int) -> GroupHeader:
    """The group header of a document the clearing presents to the institution (`kind` CT, a
    pacs.008; DD, a pacs.003), made at 08:00 of the day it settles, through STEP2."""
    return GroupHeader(
        message_id=f"SIMCLR-MSG-{kind}-{settles_on:%Y%m%d}-{number:06d}",
        created_at=datetime.combine(settles_on, clock(8, 0), tzinfo=UTC),
        settlement_date=settles_on,
        clearing_system=CLEARING_SYSTEM,
        instructing_agent_bic=CLEARING_BIC,
        instructed_agent_bic=profile.bic,
    )


def credit_document(*, profile, iban: str, amount: int, settles_on: date, number: int) -> bytes:
    """The pacs.008 of one SEPA Credit Transfer (`send_credit`'s) from another bank's customer,
    settling on `settles_on` through STEP2, its ids by `number`."""
    transaction_id = f"SIMCLR-CT-{settles_on:%Y%m%d}-{number:06d}"
    return pacs008.write_transfers(
        pacs008.FIToFICreditTransfer(
            header=_presented_header(profile, "CT", settles_on, number),
            transfers=(
                pacs008.InterbankCreditTransfer(
                    end_to_end_id=f"E2E-{transaction_id}"[:35],
                    transaction_id=transaction_id,
                    amount=amount,
                    debtor_name=CREDITOR_NAME,
                    debtor_iban=CREDITOR_IBAN,
                    debtor_bic=DEBTOR_BIC,
                    creditor_name="Account holder",
                    creditor_iban=iban,
                    creditor_bic=profile.bic,
                    remittance=Unstructured(f"Invoice {number}"),
                ),
            ),
        )
    )


def collection_document(
    *,
    profile,
    iban: str,
    amount: int,
    creditor_id: str,
    mandate_reference: str,
    settles_on: date,
    number: int,
    sequence_type: str = "RCUR",
    original_mandate_reference: str | None = None,
    scheme: str = "CORE",
) -> bytes:
    """The pacs.003 of one collection (`send_collection`'s), settling on `settles_on`, its ids
    by `number`, under the `scheme` (CORE or B2B)."""
    transaction_id = f"SIMCLR-DD-{settles_on:%Y%m%d}-{number:06d}"
    return pacs003.write_debits(
        pacs003.FIToFIDirectDebit(
            header=_presented_header(profile, "DD", settles_on, number),
            debits=(
                pacs003.InterbankDirectDebit(
                    end_to_end_id=f"E2E-{transaction_id}"[:35],
                    transaction_id=transaction_id,
                    amount=amount,
                    local_instrument=scheme,
                    sequence_type=sequence_type,
                    mandate_id=mandate_reference,
                    mandate_signed_on=date(2025, 1, 15),
                    amendment=Amendment(original_mandate_id=original_mandate_reference)
                    if original_mandate_reference
                    else None,
                    creditor_id=creditor_id,
                    creditor_name=CREDITOR_NAME,
                    creditor_iban=CREDITOR_IBAN,
                    creditor_bic=DEBTOR_BIC,  # the other bank of the clearing
                    debtor_name="Account holder",
                    debtor_iban=iban,
                    debtor_bic=profile.bic,
                    remittance=Unstructured(f"Invoice {number}"),
                ),
            ),
        )
    )
