"""Inbound SEPA Instant credits (docs/payments.md, "Inbound SEPA"): the clearing offers the
institution a pacs.008 of credits to its accounts' IBANs and TX answers at once with a
pacs.002, within the scheme's timeout: the mirror of `instant` (TX's own instant orders, whose
pain.001 the clearing answers). The clearing calls `instant_credit_answer` (the simulated
clearing that ships with TX: `sandbox.simulated_clearing.SimulatedClearing.offer_credit`).

In one transaction: the pacs.008 read as every inbound document is (its XSD, the safe parser;
refused whole: kept `refused`, no answer, and the clearing rejects it on its timeout), kept as
an inbound rail file of rail `sepa_inst` (its bytes once, by their SHA-256), each credit
accepted or rejected (`sepa_inbound.sepa_credit_receive`: `ACCP` applied to the account at
once; `RJCT` AC01, AC04, AC06, nothing moved; a transfer that is not SEPA Instant, an
account whose row another transaction holds past the wait allowed, or a posting the ledger
refuses, `RJCT` MS03), and the
answer written, validated against its XSD and kept as an outbound rail file. The same credit
offered again (its debtor bank's BIC and transaction id) is answered as it was the first time,
nothing moved twice.

**Within the timeout.** Nothing here waits on anything but the database: the row locks of the
accounts are waited for at most a third of `SEPA_INSTANT_TIMEOUT_SECONDS` (`lock_timeout`),
so an account held by a long transaction is answered MS03 in time rather than accepted late.
"""

import hashlib
from datetime import datetime

from django.conf import settings
from django.db import IntegrityError, OperationalError, connection, transaction
from django.utils import timezone

from core.exceptions import TXError

from ..iso20022 import pacs002, pacs008
from ..iso20022.errors import Iso20022Error
from ..iso20022.status_reasons import StatusReason
from ..models import InboundEntry, Rail, RailFile, SepaProfile
from .inbound_files import emit_file_received, rail_file_refuse
from .sepa_files import redacted
from .sepa_inbound import credit_of, sepa_credit_receive

ORIGINAL_MESSAGE = "pacs.008.001.08"
ACCEPTED, REJECTED = "ACCP", "RJCT"
UNSPECIFIED = "MS03"  # EPC: reason not specified (the bank's own)


def instant_credit_answer(
    *, institution, content: bytes, now: datetime | None = None
) -> bytes | None:
    """TX's pacs.002 to the clearing's pacs.008 `content` of credits to `institution`'s accounts
    (module docstring); None when the document is refused whole (or the institution has no
    SEPA profile)."""
    now = now or timezone.now()
    name = f"clearing-pacs008-{hashlib.sha256(content).hexdigest()[:16]}.xml"
    try:
        message = pacs008.read_transfers(content)
    except Iso20022Error as error:
        rail_file_refuse(
            institution=institution,
            rail=Rail.SEPA_INST,
            name=name,
            content=content,
            reason=redacted(str(error)),
        )
        return None
    profile = SepaProfile.objects.filter(institution=institution).first()
    if profile is None:
        rail_file_refuse(
            institution=institution,
            rail=Rail.SEPA_INST,
            name=name,
            content=content,
            reason="instant credits to the institution's accounts, and it has no SEPA profile",
        )
        return None
    with transaction.atomic():
        rail_file = _stored(institution, name, content, len(message.transfers))
        _wait_at_most(settings.SEPA_INSTANT_TIMEOUT_SECONDS / 3)
        entries = [_received(profile, rail_file, transfer, now) for transfer in message.transfers]
        answer = _answer(profile, message, entries, now)
        _keep_answer(institution, name, answer, len(entries), now)
    return answer


def _stored(institution, name: str, content: bytes, count: int) -> RailFile:
    """The offer as an inbound rail file; the same bytes offered before: that file."""
    digest = hashlib.sha256(content).hexdigest()
    existing = RailFile.objects.filter(institution=institution, sha256=digest).first()
    if existing is not None:
        return existing
    rail_file = RailFile(
        institution=institution,
        rail=Rail.SEPA_INST,
        direction=RailFile.Direction.INBOUND,
        status=RailFile.Status.APPLIED,
        name=name,
        sha256=digest,
        content=content,
        entry_count=count,
    )
    try:
        with transaction.atomic():
            rail_file.save(force_insert=True)
    except IntegrityError:  # the same bytes, offered at the same moment
        return RailFile.objects.get(institution=institution, sha256=digest)
    emit_file_received(rail_file)
    return rail_file


def _wait_at_most(seconds: float) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL lock_timeout = '{max(int(seconds * 1000), 1)}ms'")


def _received(profile, rail_file: RailFile, transfer, now: datetime) -> InboundEntry:
    credit = credit_of(transfer, now.date())
    refusal = "" if transfer.instant else UNSPECIFIED
    try:
        with transaction.atomic():
            entry, _ = sepa_credit_receive(
                profile=profile,
                rail_file=rail_file,
                credit=credit,
                at=now,
                refused=InboundEntry.Status.REJECTED,
                refusal=refusal,
            )
    except (OperationalError, TXError):
        # The account's row held past the wait allowed (refused in time), or the ledger refusing
        # the posting (a balance out of its column's range): MS03, nothing booked.
        entry, _ = sepa_credit_receive(
            profile=profile,
            rail_file=rail_file,
            credit=credit,
            at=now,
            refused=InboundEntry.Status.REJECTED,
            refusal=UNSPECIFIED,
        )
    return entry


def _answer(profile, message, entries: list[InboundEntry], now: datetime) -> bytes:
    statuses = []
    for transfer, entry in zip(message.transfers, entries, strict=True):
        accepted = entry.status == InboundEntry.Status.APPLIED
        statuses.append(
            pacs002.InterbankTransactionStatus(
                original_end_to_end_id=transfer.end_to_end_id,
                original_transaction_id=transfer.transaction_id,
                original_instruction_id=transfer.instruction_id,
                status=ACCEPTED if accepted else REJECTED,
                reasons=() if accepted else (StatusReason(entry.return_code or UNSPECIFIED),),
                accepted_at=now.replace(microsecond=0) if accepted else None,
                original_amount=transfer.amount,
            )
        )
    rejected = sum(each.status == REJECTED for each in statuses)
    group = REJECTED if rejected == len(statuses) else "PART" if rejected else ACCEPTED
    return pacs002.write_status_report(  # validated against its XSD as it is written
        pacs002.InterbankStatusReport(
            message_id=f"TX-{message.header.message_id}"[:35],
            created_at=now.replace(microsecond=0),
            original_message_id=message.header.message_id,
            original_message_type=ORIGINAL_MESSAGE,
            group_status=group,
            transactions=tuple(statuses),
            original_count=len(statuses),
            instructing_agent_bic=profile.bic,
            instructed_agent_bic=message.header.instructing_agent_bic,
        )
    )


def _keep_answer(institution, name: str, answer: bytes, count: int, now: datetime) -> None:
    """The answer kept as an outbound rail file (`GET /rail-files/{id}/content`); the same
    bytes answered before: kept already."""
    digest = hashlib.sha256(answer).hexdigest()
    if RailFile.objects.filter(institution=institution, sha256=digest).exists():
        return
    try:
        with transaction.atomic():
            RailFile.objects.create(
                institution=institution,
                rail=Rail.SEPA_INST,
                direction=RailFile.Direction.OUTBOUND,
                status=RailFile.Status.DELIVERED,
                name=name.replace("pacs008", "pacs002"),
                sha256=digest,
                content=answer,
                entry_count=count,
                delivered_at=now,
            )
    except IntegrityError:  # the same answer, kept at the same moment
        return
