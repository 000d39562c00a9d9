"""Recalls TX answers (docs/payments.md, "Recalls TX answers"): the bank that sent a SEPA credit
into one of the institution's accounts asks for the money back (a camt.056, which the partner
bank forwards into the `sepa` inbox), and TX answers with a camt.029 within the rulebooks' 15
TARGET2 business days.

1. **Received** (`inbound_recalls_receive`, from `sepa_files.sepa_file_apply`): each recalled
   transaction is found among the institution's SEPA credits by its end-to-end id and amount
   (and, where several have them, its transaction id, then its settlement date). It names none
   (or several): refused at once, NOOR ("no original transaction received"); its credit went
   back already: refused at once, ARDT. Otherwise `received`, for the institution to answer.
   The same recall told again (the case and cancellation ids of the same bank: a unique index)
   is the one recall.
2. **Answered** (`inbound_recall_answer`, `POST /inbound-recalls/{id}/answers`): accepted, the
   credit's money goes back (from the account it was applied to, which must still have it:
   else 422 `insufficient_funds`, and the institution refuses AM04; or from suspense) to the
   rail's settlement account, where the partner bank (or the clearing) takes it to return it,
   and the credit is `returned` (FOCR); refused, with one of the EPC's reasons. Either way a
   camt.029, validated against its XSD as it is written, kept as an outbound rail file that the
   payments job delivers into the `sepa` outbox; but an `interbank` institution (a bank in the
   clearing) answers an accepted recall by the money itself, as banks do between them: a
   **pacs.004** with reason FOCR to the clearing, naming the original pacs.008 (read back from
   the instant credit's inbound rail file: nothing copied to keep in step).
3. **Unanswered** past its last day: refused NOAS ("no answer from the beneficiary") by the
   payments job (`inbound_recalls_expire`), as the rulebook has the beneficiary's bank do.

Events `inbound_recall.received`, `.accepted`, `.refused`, with the actor who answered (the
system for what it answered itself).
"""

from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.locks import lock_accounts
from accounts.models import Account, StatementLine
from accounts.posting import credit, debit
from accounts.statement_lines import Line, statement_lines_new
from core.actors import SYSTEM, Actor
from core.exceptions import InsufficientFunds, InvalidStateTransition, ValidationFailed
from core.rows import constraint_of, new_row
from events.services import emit_for
from institutions.calendar import local_date

from ..calendar import local_now, target2_days_after
from ..iso20022 import codes, pacs004, pacs008
from ..iso20022.camt029 import (
    ACCEPTED,
    REFUSED,
    RecallAnswer,
    ResolutionOfInvestigation,
    write_resolution,
)
from ..iso20022.camt056 import read_cancellation_request
from ..iso20022.cases import Assignment
from ..iso20022.status_reasons import StatusReason
from ..locks import lock_inbound_entry, lock_inbound_recall
from ..models import InboundEntry, InboundRecall, Rail, RailFile, SepaProfile
from .inbound import _journal, _line, inbound_move
from .outbound_files import outbound_kept
from .sepa_inbound import credit_returned, original_transfer, return_header, told_by_pacs008
from .settlement import rail_account, rail_post

Status = InboundRecall.Status
Entry = InboundEntry.Status
ANSWER_DAYS = 15  # TARGET2 business days (the SCT and SCT Inst rulebooks)
NO_ORIGINAL, RETURNED_ALREADY, NO_ANSWER, SHORT = "NOOR", "ARDT", "NOAS", "AM04"
RECALLED = "FOCR"


# --- 1. received ---------------------------------------------------------------------------------


def inbound_recalls_receive(rail_file: RailFile, content: bytes, now: datetime) -> int:
    """A camt.056 applied in the caller's transaction (module docstring, 1); return how many
    transactions it recalled. `Iso20022Error`: refused whole."""
    request = read_cancellation_request(content)
    institution = rail_file.institution
    due = target2_days_after(local_date(institution, now), ANSWER_DAYS)
    for recalled in request.transactions:
        found, refusal = _credit_of(institution, recalled)
        recall = new_row(
            InboundRecall,
            institution=institution,
            inbound_entry=found,
            file=rail_file,
            case_id=request.assignment.id,
            assigner_bic=request.assignment.assigner_bic,
            assignee_bic=request.assignment.assignee_bic,
            cancellation_id=recalled.cancellation_id,
            original_message_id=recalled.original_message_id,
            original_message_type=recalled.original_message_type,
            original_instruction_id=recalled.original_instruction_id or "",
            original_end_to_end_id=recalled.original_end_to_end_id,
            original_transaction_id=recalled.original_transaction_id,
            original_amount=recalled.original_amount,
            currency=recalled.currency,
            original_settlement_date=recalled.original_settlement_date,
            reason_code=recalled.reason.code,
            reason=recalled.reason_name,
            answer_due=due,
            created_at=now,
            updated_at=now,
        )
        try:
            with transaction.atomic():
                recall.save(force_insert=True)
        except IntegrityError as error:
            if constraint_of(error) != "inbound_recall_once":
                raise
            continue  # told before: the one recall
        _emit(recall, "inbound_recall.received", SYSTEM)
        if refusal:
            _answer(recall, found, code=refusal, actor=SYSTEM, now=now)
    return len(request.transactions)


def _credit_of(institution, recalled) -> tuple[InboundEntry | None, str]:
    """The SEPA credit a recalled transaction names, and the refusal it gets at once ("" when
    it waits for the institution)."""
    credits = list(
        InboundEntry.objects.filter(
            institution=institution,
            rail__in=[Rail.SEPA_CT, Rail.SEPA_INST],
            direction=InboundEntry.Direction.CREDIT,
            end_to_end_id=recalled.original_end_to_end_id,
            amount=recalled.original_amount,
            currency=recalled.currency,
        ).exclude(status=Entry.REJECTED)[:50]
    )
    for narrower in (
        lambda each: each.sepa_reference == recalled.original_transaction_id,
        lambda each: each.settlement_date == recalled.original_settlement_date,
    ):
        if len(credits) > 1:
            credits = [each for each in credits if narrower(each)] or credits
    if len(credits) != 1:
        return None, NO_ORIGINAL
    (found,) = credits
    if found.status in (Entry.RETURNING, Entry.RETURNED):
        return found, RETURNED_ALREADY
    return found, ""


# --- 2. answered ---------------------------------------------------------------------------------


def inbound_recall_answer(
    *, recall: InboundRecall, accept: bool, reason: str | None, actor: Actor
) -> InboundRecall:
    """The institution's answer to a `received` recall (module docstring, 2). 400 for a refusal
    without one of the EPC's reasons, or an acceptance with one; 409 unless `received`, or when
    its credit cannot go back (none, or gone back already: refuse it ARDT or NOOR); 422
    `insufficient_funds` when the account no longer has the money (refuse it AM04)."""
    if accept and reason:
        raise ValidationFailed(details={"reason_code": "An accepted recall has no reason."})
    if not accept and reason not in codes.RECALL_REFUSALS:
        raise ValidationFailed(
            details={"reason_code": "One of " + ", ".join(sorted(codes.RECALL_REFUSALS)) + "."}
        )
    with transaction.atomic(savepoint=False):
        recall = lock_inbound_recall(recall.pk)
        if recall.status != Status.RECEIVED:
            raise InvalidStateTransition(
                f"The recall is {recall.status}.",
                from_state=recall.status,
                to_state=Status.ACCEPTED if accept else Status.REFUSED,
            )
        found = None
        if recall.inbound_entry_id is not None:
            found = lock_inbound_entry(recall.inbound_entry_id)
        account = _can_go_back(found) if accept else None
        _answer(recall, found, code="" if accept else reason, actor=actor, now=timezone.now())
        if accept:
            _money_back(recall, found, account)
    return recall


def _can_go_back(found: InboundEntry | None) -> Account | None:
    """Whether an accepted recall's credit can go back: 409 unless it is applied or in
    suspense, 422 when its account no longer has the money. Returns its account, locked (None
    for a credit in suspense)."""
    if found is None or found.status not in (Entry.APPLIED, Entry.SUSPENSE):
        state = found.status if found is not None else "none"
        raise InvalidStateTransition(
            "The recalled credit cannot go back (refuse the recall: ARDT when it went back "
            "already, NOOR when TX never had it).",
            from_state=state,
            to_state=Entry.RETURNED,
        )
    if found.status == Entry.SUSPENSE:
        return None
    account = lock_accounts([found.account_id])[found.account_id]
    if account.available < found.amount:
        raise InsufficientFunds(details={"available": account.available, "amount": found.amount})
    return account


def _money_back(recall: InboundRecall, found: InboundEntry, account: Account | None) -> None:
    """An accepted recall's credit, from its account (or suspense) back to the rail's
    settlement account (the partner bank returns it from there): `returned`, FOCR, in the
    answer's file."""
    settlement = _rail(found, Account.InternalCode.RAIL_SETTLEMENT)
    journal = _journal(found, f"recalled ({recall.reason_code})")
    lines = []
    if account is not None:
        source = debit(account.pk, found.amount)
        lines = statement_lines_new(
            lines=[Line(account, StatementLine.Type.CASH_DEC, found.amount, _line(found))],
            currency=found.currency,
            journal=journal,
        )
    else:
        source = debit(_rail(found, Account.InternalCode.RAIL_SUSPENSE), found.amount, check="")
    rail_post(
        inbound=found,
        institution_id=found.institution_id,
        currency=found.currency,
        moves=[source, credit(settlement, found.amount, check="")],
        journal=journal,
        lines=lines,
    )
    reason = codes.reason(RECALLED)
    inbound_move(
        found,
        Entry.RETURNED,
        "inbound_entry.returned",
        at=timezone.now(),
        return_code=RECALLED,
        return_reason=reason.normalized,
        return_file=recall.answer_file,
        return_trace_number=_return_id(recall) if _interbank(recall.institution) else "",
    )


def _rail(found: InboundEntry, code: str) -> str:
    return rail_account(found.institution, code, found.currency).pk


def _answer(
    recall: InboundRecall, found: InboundEntry | None, *, code: str, actor: Actor, now: datetime
) -> None:
    """Record the answer (`code`: a refusal's, "" to accept) and write its camt.029 (an
    interbank institution's acceptance: its pacs.004)."""
    recall.status = Status.REFUSED if code else Status.ACCEPTED
    recall.answer_code = code
    recall.answer_reason = codes.recall_refusal(code).normalized if code else ""
    recall.answered_at = recall.updated_at = now
    if not code and _interbank(recall.institution):
        recall.answer_file = _return_file(recall, found, now)
    else:
        recall.answer_file = _answer_file(recall, now)
    recall.save(
        update_fields=[
            "status",
            "answer_code",
            "answer_reason",
            "answered_at",
            "answer_file",
            "updated_at",
        ]
    )
    _emit(recall, f"inbound_recall.{recall.status}", actor)


def _answer_file(recall: InboundRecall, now: datetime) -> RailFile:
    """The camt.029 of one answer, from the partner bank (the institution's agent) to the bank
    that recalled, naming the recall's case and its original transaction."""
    institution = recall.institution
    profile = SepaProfile.objects.get(institution=institution)
    reference = recall.pk.replace("_", "-")  # the SEPA character set has no "_"
    content = write_resolution(  # validated against its XSD as written
        ResolutionOfInvestigation(
            assignment=Assignment(
                id=reference,
                assigner_bic=profile.bic,
                assignee_bic=recall.assigner_bic,
                created_at=local_now(institution).replace(microsecond=0),
            ),
            status=REFUSED if recall.answer_code else ACCEPTED,
            recall_case_id=recall.case_id,
            transactions=(
                RecallAnswer(
                    status_id=reference,
                    original_message_id=recall.original_message_id,
                    original_message_type=recall.original_message_type,
                    original_instruction_id=recall.original_instruction_id or None,
                    original_end_to_end_id=recall.original_end_to_end_id,
                    original_transaction_id=recall.original_transaction_id,
                    original_amount=recall.original_amount,
                    original_settlement_date=recall.original_settlement_date,
                    currency=recall.currency,
                    reason=StatusReason(recall.answer_code) if recall.answer_code else None,
                ),
            ),
        )
    )
    return _kept(recall, Rail.SEPA_CT, content, now)


def _interbank(institution) -> bool:
    """Whether the institution is a bank in the clearing (its SEPA profile `interbank`)."""
    return SepaProfile.objects.filter(
        institution=institution, kind=SepaProfile.Kind.INTERBANK
    ).exists()


def _return_id(recall: InboundRecall) -> str:
    """The pacs.004's return id (`RtrId`), the credit's return trace number: the recall's."""
    return recall.pk[-15:]


def _return_file(recall: InboundRecall, found: InboundEntry, now: datetime) -> RailFile:
    """An interbank institution's acceptance: the pacs.004 returning the credit to the clearing
    with reason FOCR, TX the instructing bank, the whole amount (TX keeps no charges)."""
    institution = recall.institution
    profile = SepaProfile.objects.get(institution=institution)
    clearing_bic, original = _original(recall, found)
    content = pacs004.write_return(  # validated against its XSD as it is written
        pacs004.PaymentReturn(
            header=return_header(profile, recall.pk, clearing_bic, now),
            transactions=(
                credit_returned(
                    profile,
                    return_id=_return_id(recall),
                    amount=found.amount,
                    currency=found.currency,
                    code=RECALLED,
                    original=original,
                ),
            ),
        )
    )
    return _kept(recall, found.rail, content, now)


def _original(recall: InboundRecall, found: InboundEntry) -> tuple[str | None, dict]:
    """The bank that instructed the credit (the clearing) and the original transfer's facts a
    return names, as the clearing's pacs.008 that offered the instant credit told them (read
    back from its inbound rail file: nothing copied to keep in step); a credit no pacs.008
    told (a booking) as the recall names it, without its parties. An interbank profile's
    credit transfer (`interbank_credits`) was told by the clearing's pacs.008 too."""
    named = {
        "original_message_id": recall.original_message_id,
        "original_instruction_id": recall.original_instruction_id or None,
        "original_end_to_end_id": recall.original_end_to_end_id,
        "original_transaction_id": recall.original_transaction_id,
        "original_settlement_date": recall.original_settlement_date,
    }
    if not told_by_pacs008(found):
        return None, named
    message = pacs008.read_transfers(bytes(found.file.content))
    for transfer in message.transfers:
        if (transfer.transaction_id, transfer.debtor_bic) == (
            found.sepa_reference,
            found.sepa_agent_bic,
        ):
            return message.header.instructing_agent_bic, original_transfer(message, transfer)
    return None, named


def _kept(recall: InboundRecall, rail: str, content: bytes, now: datetime) -> RailFile:
    """The answer's file, outbound, for the payments job to deliver into the `sepa` outbox."""
    institution = recall.institution
    return outbound_kept(
        RailFile(institution=institution),
        rail=rail,
        name=f"{institution.pk}-recall-answer-{recall.pk}.xml",
        content=content,
        entry_count=1,
        created_at=now,
        updated_at=now,
    )


def recalled_credit_booked(institution, end_to_end_id: str | None, booked) -> bool:
    """Whether a debit of the settlement account returning a credit (FOCR) is the partner bank
    giving back a credit whose recall TX accepted: money TX moved when it accepted."""
    if not end_to_end_id or booked is None:
        return False
    return InboundRecall.objects.filter(
        institution=institution,
        status=Status.ACCEPTED,
        original_end_to_end_id=end_to_end_id,
        original_amount=booked[0],
        currency=booked[1],
    ).exists()


# --- 3. unanswered -------------------------------------------------------------------------------


def inbound_recalls_expire(*, now: datetime | None = None) -> int:
    """Every recall still `received` past its last day refused NOAS (module docstring, 3);
    return how many. Each in its own transaction, under its lock: one answered meanwhile is
    left as it is."""
    now = now or timezone.now()
    count = 0
    waiting = InboundRecall.objects.filter(status=Status.RECEIVED).select_related("institution")
    for recall in waiting.only("pk", "answer_due", "institution"):
        if local_date(recall.institution, now) <= recall.answer_due:
            continue
        with transaction.atomic():
            recall = lock_inbound_recall(recall.pk)
            if recall.status != Status.RECEIVED:
                continue
            _answer(recall, None, code=NO_ANSWER, actor=SYSTEM, now=now)
            count += 1
    return count


def _emit(recall: InboundRecall, event_type: str, actor: Actor) -> None:
    data = {
        "inbound_recall_id": recall.pk,
        "inbound_entry_id": recall.inbound_entry_id,
        "status": recall.status,
        "reason_code": recall.reason_code,
        "original_end_to_end_id": recall.original_end_to_end_id,
        "amount": recall.original_amount,
        "currency": recall.currency,
    }
    if recall.answer_code:
        data["answer_code"] = recall.answer_code
    emit_for(recall, event_type, data=data, actor=actor)
