"""The simulated sponsor bank (ODFI) that ships with TX (docs/payments.md, "The simulated bank"):
every test and the demo exchange real NACHA files with it, as a bank would over its SFTP
folders. No machine here reaches a bank.

`simulated_bank_run(institution, today)` reads each file TX delivered into the institution's
ACH outbox that it has not read yet, and answers every entry by the scenario its DFI account
number names (`SCENARIOS`), with real NACHA files written into the inbox:

| account number | the bank's answer |
|---|---|
| `1111000001` | returned R01 (insufficient funds), the day after the entry settles |
| `1111000002` | returned R02 (account closed), the day after |
| `1111000003` | returned R03 (no account), the day after |
| `1111000010` | returned R10 (not authorized), 30 days after: inside its 60-day window |
| `1111000029` | returned R29 (corporate, not authorized), 5 days after: late (its window is 2) |
| `2222000001` | a notification of change C01: the account number is 9876543210 |
| `2222000005` | a notification of change C05: the account is a savings account |
| `3333000019` | rejected at once, before it settles: R19 (amount field error) |
| anything else | settles: the bank says nothing (ACH is silent on success) |

An answer is due on a date (the entry's effective date plus its delay in calendar days; a
rejection on the day the file was sent); each run writes what is due by `today` (default: the
institution's date) into one file, and keeps what is not due yet in its own state file beside
the outbox, as a bank keeps its queue. Its returns' trace numbers are the simulated RDFI's.
"""

import json
import os
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

from stdnum import iban as stdnum_iban

from cards.dates import today_of
from payments.connector import folder
from payments.iso20022 import camt029, camt054, camt056, pacs008, pain001, pain002, pain008
from payments.iso20022.cases import Assignment
from payments.iso20022.remittance import Unstructured
from payments.iso20022.status_reasons import StatusReason
from payments.models import AchProfile, SepaProfile
from payments.nacha.addenda import NotificationOfChange
from payments.nacha.batch_header import BatchHeader
from payments.nacha.codes import transaction_code
from payments.nacha.entry import EntryDetail
from payments.nacha.file import Batch, Entry, numbered, parse, write_file
from payments.nacha.file_header import FileHeader
from payments.nacha.returns import return_code_of, return_entry, routing_of
from payments.services.sepa_inbound import told_by_pacs008

# The simulated RDFI's identification: its returns' trace numbers start with it.
RDFI = "09100001"
RDFI_ROUTING = "091000019"
# The other banks whose customers send entries to TX's (their ODFI's identification).
ORIGINATORS = "09100001"


@dataclass(frozen=True)
class Scenario:
    kind: str  # "return", "change", "reject"
    code: str
    delay_days: int = 1
    corrected_data: str = ""


SCENARIOS = {
    "1111000001": Scenario("return", "R01"),
    "1111000002": Scenario("return", "R02"),
    "1111000003": Scenario("return", "R03"),
    "1111000010": Scenario("return", "R10", delay_days=30),
    "1111000029": Scenario("return", "R29", delay_days=5),
    "2222000001": Scenario("change", "C01", delay_days=0, corrected_data="9876543210"),
    "2222000005": Scenario("change", "C05", delay_days=0, corrected_data="32"),
    "3333000019": Scenario("reject", "R19", delay_days=0),
}


@dataclass(frozen=True)
class Answer:
    due: str  # ISO date
    kind: str
    code: str
    transaction_code: int
    routing_number: str
    account_number: str
    amount: int
    trace_number: str
    receiver_name: str
    corrected_data: str
    effective_date: str
    identification_number: str = ""


@dataclass(frozen=True)
class Incoming:
    """An entry another bank sends to one of TX's accounts (a payroll credit, a biller's
    debit), through the simulated sponsor bank."""

    direction: str  # "credit": money in; "debit": money out
    account_number: str
    amount: int
    company_name: str = "ACME PAYROLL"
    company_id: str = "9876543210"
    description: str = "PAYROLL"
    receiver_name: str = ""
    account_type: str = "checking"
    prenote: bool = False


def state_file(institution, family: str) -> Path:
    """The simulated bank's state of an institution's rail family, beside its outbox: what it
    read, what is due, its counters (no account number, no IBAN)."""
    return folder(institution.pk, family, "outbox").parent / ".simulated-bank.json"


def state_of(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {"read": [], "due": [], "written": 0}


def put_file(inbox: Path, name: str, content: bytes) -> None:
    """A file into an inbox whole: written aside, then renamed (the reader never sees half)."""
    partial = inbox / f".{name}.partial"
    partial.write_bytes(content)
    os.replace(partial, inbox / name)


def simulated_bank_send(*, institution, entries: list[Incoming], settles_on: date) -> str:
    """Other banks' entries to the institution's accounts, as its sponsor bank forwards them:
    one file (`entries_file`) in its inbox; return the file's name. Trace numbers follow the
    simulated originators' last, kept in the bank's state file."""
    profile = AchProfile.objects.get(institution=institution)
    inbox = folder(institution.pk, "ach", "inbox")
    state_path = state_file(institution, "ach")
    state = state_of(state_path)
    first = state.get("sent", 0) + 1
    state["sent"] = first + len(entries) - 1
    content = entries_file(profile, entries, settles_on, first_sequence=first)
    name = f"simulated-bank-entries-{settles_on:%Y%m%d}-{first:07d}.ach"
    put_file(inbox, name, content)
    state_path.write_text(json.dumps(state))
    return name


def entries_file(
    profile: AchProfile, entries: list[Incoming], settles_on: date, *, first_sequence: int = 1
) -> bytes:
    """A file of live entries (and prenotes) to the institution's receiving routing number,
    one PPD batch per originator, settling on `settles_on`."""
    grouped: dict[tuple, list[Entry]] = {}
    for each in entries:
        detail = EntryDetail(
            transaction_code=transaction_code(
                each.direction, each.account_type, prenote=each.prenote
            ),
            routing_number=profile.receiving_routing_number,
            dfi_account_number=each.account_number,
            amount=each.amount,
            trace_number="0" * 15,
            receiver_name=each.receiver_name.upper(),
        )
        key = (each.company_name.upper(), each.company_id, each.description.upper())
        grouped.setdefault(key, []).append(Entry(detail))
    batches = [
        Batch(
            BatchHeader(
                service_class_code=200,
                company_name=name,
                company_identification=company_id,
                standard_entry_class_code="PPD",
                company_entry_description=description,
                effective_entry_date=settles_on,
                odfi_identification=ORIGINATORS,
            ),
            tuple(group),
        )
        for (name, company_id, description), group in grouped.items()
    ]
    header = FileHeader(
        immediate_destination=profile.odfi_routing_number,
        immediate_origin=RDFI_ROUTING,
        file_creation_date=settles_on,
        immediate_destination_name=profile.odfi_name[:23].upper(),
        immediate_origin_name="SIMULATED BANK",
    )
    return write_file(header, numbered(batches, first_trace_sequence=first_sequence))


def banked_institutions() -> list:
    """The institutions the simulated bank serves: an ACH profile's, an initiation SEPA
    profile's."""
    ach = [profile.institution for profile in AchProfile.objects.select_related("institution")]
    seen = {institution.pk for institution in ach}
    sepa = [
        profile.institution
        for profile in SepaProfile.objects.filter(kind=SepaProfile.Kind.INITIATION)
        .select_related("institution")
        .order_by("pk")
        if profile.institution_id not in seen
    ]
    return ach + sepa


def simulated_bank_run(*, institution, today: date | None = None) -> list[str]:
    """Answer what TX sent (module docstring; and its SEPA files, `simulated_sepa_bank_run`,
    when the institution has a SEPA profile); return the names of the files written."""
    today = today or today_of(institution)
    sepa = []
    if SepaProfile.objects.filter(
        institution=institution, kind=SepaProfile.Kind.INITIATION
    ).exists():
        sepa = simulated_sepa_bank_run(institution=institution, today=today)
    return _ach_bank_run(institution, today) + sepa


def _ach_bank_run(institution, today: date) -> list[str]:
    outbox = folder(institution.pk, "ach", "outbox")
    inbox = folder(institution.pk, "ach", "inbox")
    state_path = state_file(institution, "ach")
    state = state_of(state_path)
    for entry in sorted(os.scandir(outbox), key=lambda item: item.name):
        if entry.name.startswith(".") or entry.name in state["read"] or not entry.is_file():
            continue
        with open(entry.path, "rb") as handle:
            state["due"] += [asdict(answer) for answer in _answers(handle.read())]
        state["read"].append(entry.name)
    due = [Answer(**each) for each in state["due"] if date.fromisoformat(each["due"]) <= today]
    state["due"] = [each for each in state["due"] if date.fromisoformat(each["due"]) > today]
    written = []
    if due:
        profile = AchProfile.objects.get(institution=institution)
        name = f"simulated-bank-{today:%Y%m%d}-{len(os.listdir(inbox)):04d}.ach"
        put_file(inbox, name, answers_file(profile, due, today))
        written.append(name)
    state_path.write_text(json.dumps(state))
    return written


def _answers(content: bytes) -> list[Answer]:
    parsed = parse(content)
    answers = []
    for header, entry in parsed.entries():
        detail = entry.detail
        scenario = SCENARIOS.get(detail.dfi_account_number.strip())
        if scenario is None:
            continue
        effective = header.effective_entry_date
        # A rejection comes back on the day the file was sent, before the entry settles; the
        # rest a number of days after the effective date.
        after = parsed.header.file_creation_date if scenario.kind == "reject" else effective
        due = after + timedelta(days=scenario.delay_days)
        answers.append(
            Answer(
                due=due.isoformat(),
                kind=scenario.kind,
                code=scenario.code,
                transaction_code=detail.transaction_code,
                routing_number=detail.routing_number,
                account_number=detail.dfi_account_number.strip(),
                amount=detail.amount,
                trace_number=detail.trace_number,
                receiver_name=detail.receiver_name,
                identification_number=detail.identification_number,
                corrected_data=scenario.corrected_data,
                effective_date=effective.isoformat(),
            )
        )
    return answers


def answers_file(profile: AchProfile, answers: list[Answer], today: date) -> bytes:
    """One file of returns and changes, from the simulated RDFI to TX's ODFI."""
    entries = []
    for answer in answers:
        if answer.kind != "change":
            entries.append(
                return_entry(
                    original_transaction_code=answer.transaction_code,
                    original_trace_number=answer.trace_number,
                    original_rdfi_identification=answer.routing_number[:8],
                    account_number=answer.account_number,
                    amount=answer.amount,
                    receiver_name=answer.receiver_name,
                    identification_number=answer.identification_number,
                    return_reason_code=answer.code,
                )
            )
            continue
        addenda = NotificationOfChange(
            change_code=answer.code,
            original_entry_trace_number=answer.trace_number,
            original_rdfi_identification=answer.routing_number[:8],
            corrected_data=answer.corrected_data,
            trace_number="0" * 15,
        )
        detail = EntryDetail(
            transaction_code=return_code_of(answer.transaction_code),
            routing_number=routing_of(answer.trace_number[:8]),
            dfi_account_number=answer.account_number,
            amount=0,
            trace_number="0" * 15,
            identification_number=answer.identification_number,
            receiver_name=answer.receiver_name,
        )
        entries.append(Entry(detail, (addenda,)))
    changes = [e for e in entries if isinstance(e.addenda[0], NotificationOfChange)]
    returns = [e for e in entries if not isinstance(e.addenda[0], NotificationOfChange)]
    batches = [
        Batch(
            BatchHeader(
                service_class_code=200,
                company_name=profile.company_name,
                company_identification=profile.company_id,
                standard_entry_class_code=sec,
                company_entry_description="RETURN" if sec == "PPD" else "NOC",
                effective_entry_date=today,
                odfi_identification=RDFI,
            ),
            tuple(group),
        )
        for sec, group in (("PPD", returns), ("COR", changes))
        if group
    ]
    header = FileHeader(
        immediate_destination=profile.odfi_routing_number,
        immediate_origin=RDFI_ROUTING,
        file_creation_date=today,
        immediate_destination_name=profile.odfi_name[:23].upper(),
        immediate_origin_name="SIMULATED BANK",
    )
    return write_file(header, numbered(batches))


# --- SEPA: the partner bank of an `initiation` SEPA profile ------------------------------------


def german_iban(account: str) -> str:
    """A German IBAN (bank code 37040044) of a 10-digit account, its check digits computed."""
    bban = "37040044" + account
    return "DE" + stdnum_iban.calc_check_digits("DE00" + bban) + bban


# The SEPA scenarios, keyed by the creditor's IBAN (electronic form) as the ACH ones are by
# account number: a rejection in the bank's pain.002 on the day it reads the pain.001, or a
# return in a camt.054 `delay_days` after the transfer was booked. Anything else is accepted
# (ACCP) and booked (camt.054) on its requested execution date.
SEPA_SCENARIOS = {
    german_iban("0000000101"): Scenario("reject", "AC01", delay_days=0),
    german_iban("0000000104"): Scenario("reject", "AC04", delay_days=0),
    german_iban("0000000106"): Scenario("reject", "AC06", delay_days=0),
    german_iban("0000000111"): Scenario("reject", "AG01", delay_days=0),
    german_iban("0000000114"): Scenario("reject", "AM04", delay_days=0),
    german_iban("0000000204"): Scenario("return", "AC04", delay_days=2),
    german_iban("0000000207"): Scenario("return", "MD07", delay_days=3),
    # SEPA Instant only (`sandbox.simulated_clearing`): the clearing never answers, or answers
    # (settled) only after the scheme's timeout. A credit transfer to either is accepted.
    german_iban("0000000901"): Scenario("silent", "", delay_days=0),
    german_iban("0000000902"): Scenario("late", "ACSC", delay_days=0),
    # A recall (camt.056) of a transfer to these: refused (camt.029 RJCR) with the code, or
    # accepted with the money returned less the beneficiary bank's charges. A recall of any
    # other transfer is accepted, the whole amount returned (camt.054, FOCR) the same day.
    german_iban("0000000401"): Scenario("recall_refused", "NOAS", delay_days=0),
    german_iban("0000000402"): Scenario("recall_refused", "ARDT", delay_days=0),
    german_iban("0000000403"): Scenario("recall_charged", "FOCR", delay_days=0),
}
# What the beneficiary's bank keeps of an accepted recall's money (`recall_charged`): EUR 5.00.
RECALL_CHARGES = 500


def simulated_sepa_bank_run(*, institution, today: date | None = None) -> list[str]:
    """Answer the pain.001 files TX delivered into the institution's `sepa` outbox (the
    scenarios above): a pain.002 for each file at once, and the camt.054 bookings and returns
    due by `today` in one file; a camt.056 (a recall) with a camt.029 at once and, accepted,
    the money back (FOCR) in that day's camt.054; return the names of the files written. What
    is not due yet is kept in the bank's state file beside the outbox (end-to-end ids, amounts,
    dates and recall scenarios: no IBAN)."""
    today = today or today_of(institution)
    outbox = folder(institution.pk, "sepa", "outbox")
    inbox = folder(institution.pk, "sepa", "inbox")
    state_path = state_file(institution, "sepa")
    state = state_of(state_path)
    written = []

    def put(content: bytes, kind: str) -> None:
        state["written"] += 1
        name = f"simulated-bank-{kind}-{today:%Y%m%d}-{state['written']:04d}.xml"
        put_file(inbox, name, content)
        written.append(name)

    for entry in sorted(os.scandir(outbox), key=lambda item: item.name):
        if entry.name.startswith(".") or entry.name in state["read"] or not entry.is_file():
            continue
        with open(entry.path, "rb") as handle:
            content = handle.read()
        recalls = state.setdefault("recalls", {})
        if b"camt.029" in content[:400]:
            # TX's answer to a recall the bank forwarded: an accepted one's money leaves the
            # settlement account, back to the bank that recalled it, in the day's camt.054.
            resolution = camt029.read_resolution(content)
            if resolution.accepted:
                state["due"] += [
                    {
                        "end_to_end_id": each.original_end_to_end_id,
                        "amount": each.original_amount,
                        "kind": "recall_return",
                        "code": "FOCR",
                        "due": today.isoformat(),
                    }
                    for each in resolution.transactions
                ]
            state["read"].append(entry.name)
            continue
        if b"camt.056" in content[:400]:
            resolutions, due = _recall_answers(camt056.read_cancellation_request(content), recalls)
            for resolution in resolutions:
                put(camt029.write_resolution(resolution), "camt029")
            state["due"] += [{**each, "due": today.isoformat()} for each in due]
            state["read"].append(entry.name)
            continue
        if b"pain.008" in content[:400]:
            report, due = _collection_answers(pain008.read_initiation(content), today)
        else:
            initiation = pain001.read_initiation(content)
            report, due = _sepa_answers(initiation, today)
            recalls.update(_recall_scenarios(initiation))
        put(pain002.write_status_report(report), "pain002")
        state["due"] += due
        state["read"].append(entry.name)
    due = [each for each in state["due"] if date.fromisoformat(each["due"]) <= today]
    state["due"] = [each for each in state["due"] if date.fromisoformat(each["due"]) > today]
    if due:
        profile = SepaProfile.objects.get(institution=institution)
        put(sepa_notification(profile.settlement_iban, due, today, state["written"] + 1), "camt054")
    state_path.write_text(json.dumps(state))
    return written


def _sepa_answers(initiation, today: date) -> tuple[pain002.PaymentStatusReport, list[dict]]:
    """The status report of a pain.001 (a status per transfer, ACCP or RJCT with its reason),
    and the camt.054 entries it makes due: a booking on the execution date of each accepted
    transfer, and a return `delay_days` after it for a return scenario."""
    statuses, due, rejected = [], [], 0
    for payment in initiation.payments:
        for transfer in payment.transfers:
            scenario = SEPA_SCENARIOS.get(transfer.creditor_iban)
            if scenario is not None and scenario.kind == "reject":
                rejected += 1
                statuses.append(
                    pain002.TransactionStatus(
                        original_end_to_end_id=transfer.end_to_end_id,
                        status="RJCT",
                        reasons=(StatusReason(scenario.code),),
                    )
                )
                continue
            statuses.append(
                pain002.TransactionStatus(
                    original_end_to_end_id=transfer.end_to_end_id, status="ACCP"
                )
            )
            booked = max(payment.requested_execution_date, today)
            answer = {"end_to_end_id": transfer.end_to_end_id, "amount": transfer.amount}
            due.append({**answer, "due": booked.isoformat(), "kind": "booking", "code": ""})
            if scenario is not None and scenario.kind == "return":
                back = booked + timedelta(days=scenario.delay_days)
                returned = {"due": back.isoformat(), "kind": "return", "code": scenario.code}
                due.append({**answer, **returned})
    group = "RJCT" if rejected == len(statuses) else "PART" if rejected else "ACCP"
    report = pain002.PaymentStatusReport(
        message_id=f"SIMBANK-STS-{initiation.message_id}"[:35],
        created_at=datetime.combine(today, time(12, 0), tzinfo=UTC),
        original_message_id=initiation.message_id,
        original_message_type="pain.001.001.09",
        group_status=group,
        payments=(
            pain002.PaymentStatus(
                original_payment_information_id=initiation.payments[0].payment_information_id,
                transactions=tuple(statuses),
            ),
        ),
    )
    return report, due


def simulated_sepa_bank_remember(*, institution, initiation) -> None:
    """Keep the recall scenarios of a pain.001 the bank does not read from the outbox (a SEPA
    Instant one: it went to the clearing) in its state file, for the recalls of its transfers."""
    scenarios = _recall_scenarios(initiation)
    if not scenarios:
        return
    state_path = state_file(institution, "sepa")
    state = state_of(state_path)
    state.setdefault("recalls", {}).update(scenarios)
    state_path.write_text(json.dumps(state))


def _recall_scenarios(initiation) -> dict[str, list]:
    """The recall scenario of each transfer that has one, by end-to-end id (the bank keeps no
    IBAN in its state): [kind, code]."""
    return recall_scenarios(
        transfer for payment in initiation.payments for transfer in payment.transfers
    )


def recall_scenarios(transfers) -> dict[str, list]:
    """`_recall_scenarios` of any transfers with an end-to-end id and a creditor IBAN (a
    pain.001's, a pacs.008's)."""
    return {
        transfer.end_to_end_id: [scenario.kind, scenario.code]
        for transfer in transfers
        if (scenario := SEPA_SCENARIOS.get(transfer.creditor_iban)) is not None
        and scenario.kind.startswith("recall_")
    }


def _recall_answers(request, scenarios: dict) -> tuple[list, list[dict]]:
    """A camt.029 per recalled transaction (accepted, or refused with the scenario's code) and
    the returns (FOCR) of the accepted ones, for the day's camt.054."""
    resolutions, due = [], []
    for transaction in request.transactions:
        kind, code = scenarios.get(transaction.original_end_to_end_id, ["", ""])
        refused = kind == "recall_refused"
        resolutions.append(
            recall_resolution(request, transaction, code if refused else None, "SIMBANK")
        )
        if not refused:
            due.append(
                {
                    "end_to_end_id": transaction.original_end_to_end_id,
                    "amount": recall_returned(kind, transaction.original_amount),
                    "kind": "return",
                    "code": "FOCR",
                }
            )
    return resolutions, due


def recall_resolution(request, transaction, refusal: str | None, sender: str):
    """The camt.029 answering one recalled transaction of `request`: accepted, or refused with
    the code `refusal`, from the bank it was assigned to back to the one that asked."""
    return camt029.ResolutionOfInvestigation(
        assignment=Assignment(
            id=f"{sender}-RES-{transaction.cancellation_id}"[:35],
            assigner_bic=request.assignment.assignee_bic,
            assignee_bic=request.assignment.assigner_bic,
            created_at=request.assignment.created_at,
        ),
        status=camt029.REFUSED if refusal else camt029.ACCEPTED,
        recall_case_id=request.assignment.id,
        transactions=(
            camt029.RecallAnswer(
                status_id=f"{sender}-{transaction.cancellation_id}"[:35],
                original_message_id=transaction.original_message_id,
                original_message_type=transaction.original_message_type,
                original_end_to_end_id=transaction.original_end_to_end_id,
                original_transaction_id=transaction.original_transaction_id,
                original_amount=transaction.original_amount,
                original_settlement_date=transaction.original_settlement_date,
                reason=StatusReason(refusal) if refusal else None,
            ),
        ),
    )


def recall_returned(kind: str, amount: int) -> int:
    """What an accepted recall of `amount` cents brings back: all of it, or less the
    beneficiary bank's charges (`recall_charged`)."""
    return amount - (RECALL_CHARGES if kind == "recall_charged" and amount > RECALL_CHARGES else 0)


# The direct debits' scenarios, keyed by the debtor's IBAN: the debtor's refund (MD06, within 8
# weeks) or its claim of no valid mandate (MD01, within 13 months) `delay_days` after the
# collection was booked, or the debtor bank's rejection (AC04, MS02) at once.
SEPA_DD_SCENARIOS = {
    german_iban("0000000304"): Scenario("reject", "AC04", delay_days=0),
    german_iban("0000000306"): Scenario("return", "MD06", delay_days=10),
    german_iban("0000000301"): Scenario("return", "MD01", delay_days=30),
}


def _collection_answers(initiation, today: date) -> tuple[pain002.PaymentStatusReport, list[dict]]:
    """A pain.008's status report, and its camt.054 entries: each accepted collection booked (a
    credit of the settlement account) on its due date, refunded later for a return scenario."""
    statuses, due, rejected = [], [], 0
    for payment in initiation.payments:
        for debit in payment.debits:
            scenario = SEPA_DD_SCENARIOS.get(debit.debtor_iban)
            if scenario is not None and scenario.kind == "reject":
                rejected += 1
                statuses.append(
                    pain002.TransactionStatus(
                        original_end_to_end_id=debit.end_to_end_id,
                        status="RJCT",
                        reasons=(StatusReason(scenario.code),),
                    )
                )
                continue
            statuses.append(
                pain002.TransactionStatus(original_end_to_end_id=debit.end_to_end_id, status="ACCP")
            )
            booked = max(payment.requested_collection_date, today)
            answer = {"end_to_end_id": debit.end_to_end_id, "amount": debit.amount, "dd": True}
            due.append({**answer, "due": booked.isoformat(), "kind": "booking", "code": ""})
            if scenario is not None and scenario.kind == "return":
                back = booked + timedelta(days=scenario.delay_days)
                returned = {"due": back.isoformat(), "kind": "return", "code": scenario.code}
                due.append({**answer, **returned})
    group = "RJCT" if rejected == len(statuses) else "PART" if rejected else "ACCP"
    report = pain002.PaymentStatusReport(
        message_id=f"SIMBANK-STS-{initiation.message_id}"[:35],
        created_at=datetime.combine(today, time(12, 0), tzinfo=UTC),
        original_message_id=initiation.message_id,
        original_message_type="pain.008.001.08",
        group_status=group,
        payments=(
            pain002.PaymentStatus(
                original_payment_information_id=initiation.payments[0].payment_information_id,
                transactions=tuple(statuses),
            ),
        ),
    )
    return report, due


def sepa_notification(account_iban: str, due: list[dict], today: date, number: int = 1) -> bytes:
    """A camt.054 of the settlement account: a booked debit per transfer booked, a credit back
    with its return reason per transfer returned; a direct debit the other way round (booked a
    credit, refunded a debit); a received credit TX gave back on a recall, a debit (FOCR)."""
    entries = []
    for each in due:
        # A credit another bank recalled and TX gave back: a debit, returned (FOCR).
        recalled = each["kind"] == "recall_return"
        returned = each["kind"] == "return" or recalled
        collection = each.get("dd", False) or recalled
        entries.append(
            camt054.Entry(
                amount=each["amount"],
                currency="EUR",
                direction="credit" if returned != collection else "debit",
                status="BOOK",
                bank_transaction_code=camt054.BankTransactionCode(
                    domain="PMNT",
                    family="RCDT" if recalled else "IDDT" if collection else "ICDT",
                    subfamily=("UPDD" if collection and not recalled else "RRTN")
                    if returned
                    else ("ESDD" if collection else "ESCT"),
                ),
                booking_date=today,
                value_date=today,
                transactions=(
                    camt054.TransactionDetails(
                        end_to_end_id=each["end_to_end_id"],
                        amount=each["amount"],
                        currency="EUR",
                        return_reason=camt054.ReturnReason(each["code"]) if returned else None,
                    ),
                ),
            )
        )
    return camt054.write_notification(
        camt054.DebitCreditNotification(
            message_id=f"SIMBANK-NTF-{today:%Y%m%d}-{number:04d}",
            created_at=datetime.combine(today, time(12, 0), tzinfo=UTC),
            notifications=(
                camt054.AccountNotification(
                    id=f"SIMBANK-{today:%Y%m%d}-{number:04d}",
                    account_iban=account_iban,
                    entries=tuple(entries),
                ),
            ),
        )
    )


@dataclass(frozen=True)
class IncomingSepa:
    """A credit another bank's customer sends to one of the institution's accounts, by its
    IBAN, which the partner bank books on the settlement account (docs/payments.md, "Inbound
    SEPA")."""

    iban: str
    amount: int
    debtor_name: str = "ACME GMBH"
    debtor_iban: str = german_iban("0532013000")
    remittance: str = "Invoice 2026-11"
    # A SEPA Instant credit's, which the clearing settled and the bank books afterwards: its
    # end-to-end id, the debtor bank's transaction id and BIC.
    end_to_end_id: str = ""
    transaction_id: str = ""
    debtor_bic: str = ""


def simulated_sepa_bank_send(
    *, institution, credits: list[IncomingSepa], today: date
) -> str | None:
    """Other banks' SEPA credits to the institution's accounts, as its partner bank books them:
    one camt.054 of its settlement account in the `sepa` inbox, a booked credit per credit with
    the bank's own reference (the account servicer reference, from the bank's state file);
    return the file's name. An instant credit is booked once, however often it was offered
    (None: nothing left to book)."""
    profile = SepaProfile.objects.get(institution=institution)
    inbox = folder(institution.pk, "sepa", "inbox")
    state_path = state_file(institution, "sepa")
    state = state_of(state_path)
    instant = set(state.get("instant_credits", []))
    credits = [each for each in credits if each.transaction_id not in instant]
    if not credits:
        return None
    state["instant_credits"] = sorted(instant | {c.transaction_id for c in credits} - {""})
    state["written"] += 1
    first = state.get("credits", 0) + 1
    state["credits"] = first + len(credits) - 1
    entries = []
    for number, credit in enumerate(credits, start=first):
        reference = f"SIMBANK-CRD-{number:08d}"
        entries.append(
            camt054.Entry(
                amount=credit.amount,
                currency="EUR",
                direction="credit",
                status="BOOK",
                bank_transaction_code=camt054.BankTransactionCode(
                    domain="PMNT", family="RCDT", subfamily="ESCT"
                ),
                booking_date=today,
                value_date=today,
                account_servicer_reference=reference,
                transactions=(
                    camt054.TransactionDetails(
                        end_to_end_id=credit.end_to_end_id or f"SIMBANK-E2E-{number:08d}",
                        transaction_id=credit.transaction_id or None,
                        account_servicer_reference=reference,
                        amount=credit.amount,
                        currency="EUR",
                        debtor_name=credit.debtor_name,
                        debtor_iban=credit.debtor_iban,
                        creditor_iban=credit.iban,
                        debtor_agent_bic=credit.debtor_bic or None,
                        remittance=Unstructured(credit.remittance) if credit.remittance else None,
                    ),
                ),
            )
        )
    content = camt054.write_notification(
        camt054.DebitCreditNotification(
            message_id=f"SIMBANK-CRD-{today:%Y%m%d}-{first:08d}",
            created_at=datetime.combine(today, time(12, 0), tzinfo=UTC),
            notifications=(
                camt054.AccountNotification(
                    id=f"SIMBANK-CRD-{today:%Y%m%d}-{first:08d}",
                    account_iban=profile.settlement_iban,
                    entries=tuple(entries),
                ),
            ),
        )
    )
    name = f"simulated-bank-credits-{today:%Y%m%d}-{state['written']:04d}.xml"
    put_file(inbox, name, content)
    state_path.write_text(json.dumps(state))
    return name


def simulated_sepa_bank_recall(*, institution, inbound_entry, reason: str, today: date) -> str:
    """The bank that sent a SEPA credit TX received (`inbound_entry`) recalls it with `reason`
    (DUPL, TECH, FRAD, AC03, AM09, CUST): a camt.056 the partner bank (or, to an `interbank`
    institution, the clearing) forwards into the `sepa` inbox, naming the credit as the sending
    bank knows it (its end-to-end id, its transaction id and message: an instant credit's own
    pacs.008, or an interbank credit transfer's; a booking's made up, amount and settlement
    date); return the file's name. The
    bank's recall ids come from its state file."""
    profile = SepaProfile.objects.get(institution=institution)
    inbox = folder(institution.pk, "sepa", "inbox")
    state_path = state_file(institution, "sepa")
    state = state_of(state_path)
    state["written"] += 1
    number = state["recalls_sent"] = state.get("recalls_sent", 0) + 1
    reference = f"SIMBANK-RCL-{number:08d}"
    told = told_by_pacs008(inbound_entry)  # the pacs.008 the clearing delivered it in
    content = camt056.write_cancellation_request(
        camt056.CancellationRequest(
            assignment=Assignment(
                id=reference,
                assigner_bic=inbound_entry.sepa_agent_bic or "DEUTDEFFXXX",
                assignee_bic=profile.bic,
                created_at=datetime.combine(today, time(12, 0), tzinfo=UTC),
            ),
            transactions=(
                camt056.RecalledTransaction(
                    cancellation_id=reference,
                    original_message_id=(
                        pacs008.read_transfers(bytes(inbound_entry.file.content)).header.message_id
                        if told
                        else f"SIMBANK-MSG-{number:08d}"
                    ),
                    original_message_type="pacs.008.001.08",
                    original_end_to_end_id=inbound_entry.end_to_end_id or "NOTPROVIDED",
                    original_transaction_id=(
                        inbound_entry.sepa_reference if told else f"SIMBANK-TX-{number:08d}"
                    ),
                    original_amount=inbound_entry.amount,
                    original_settlement_date=inbound_entry.settlement_date,
                    reason=StatusReason(reason),
                ),
            ),
        )
    )
    name = f"simulated-bank-recall-{today:%Y%m%d}-{state['written']:04d}.xml"
    put_file(inbox, name, content)
    state_path.write_text(json.dumps(state))
    return name
