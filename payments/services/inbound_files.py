"""The bank's files read (docs/payments.md, "Files"): from the inbox folder (`payments.connector`)
or uploaded through the API (`POST /rail-files`). A file is hostile input: it is stored by its
bytes' SHA-256 (the same bytes twice are one file: applied once, a unique index decides), then
validated whole (`payments.nacha.file.parse`: every record, count, hash and total; a SEPA
file, `sepa_files`, against its message's XSD) before anything is applied; a file that is
not valid is kept `refused`, with the record and field that failed, and nothing of it is
applied.

What an accepted file holds, entry by entry (one transaction for the whole file):

- a return (an entry with an addenda 99): its order returned (`returns.order_return`), found by
  the original entry's trace number; an unknown trace number is recorded, not an error;
- a dishonored or a contested dishonored return: recorded against the order it names;
- a notification of change (addenda 98): its external account corrected (`returns.order_change`);
- a live credit or debit, or a prenote, to one of the institution's accounts (an inbound entry):
  recorded, to be applied on its settlement date or returned (`inbound.inbound_entry_receive`);
  the same entry in another file is recorded once.
"""

import hashlib
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from events.services import emit_for

from ..iso20022.errors import Iso20022Error
from ..models import SEPA_RAILS, AchProfile, PaymentOrder, RailFile, RailNotice
from ..nacha.addenda import (
    ContestedReturnAddenda,
    DishonoredReturnAddenda,
    NotificationOfChange,
    ReturnAddenda,
)
from ..nacha.codes import TRANSACTION_CODES, return_reason
from ..nacha.fields import NachaError
from ..nacha.file import parse
from .inbound import inbound_entry_receive
from .returns import order_change, order_return, unknown_return
from .sepa_files import SepaRefused, redacted, sepa_file_apply

MAX_FILE_BYTES = 64 * 1024 * 1024


class FileRefused(Exception):  # noqa: N818 (reads as what happened)
    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


def rail_file_receive(
    *,
    institution,
    rail: str,
    name: str,
    content: bytes,
    now: datetime | None = None,
    keep_refused: bool = True,
) -> RailFile:
    """Store and apply one of the bank's files (module docstring) as it arrives `now`; return
    it, `applied` or `refused`. The same bytes again: the file as it was, nothing applied
    twice. `keep_refused=False` (an upload, whose sender is there to be told): a file that is
    not valid raises `FileRefused` and nothing is stored."""
    digest = hashlib.sha256(content).hexdigest()
    existing = RailFile.objects.filter(institution=institution, sha256=digest).first()
    if existing is not None:
        return existing
    rail_file = RailFile(
        institution=institution,
        rail=rail,
        direction=RailFile.Direction.INBOUND,
        status=RailFile.Status.APPLIED,
        name=name[:200],
        sha256=digest,
        content=content,
    )
    try:
        with transaction.atomic():
            if len(content) > MAX_FILE_BYTES:
                raise FileRefused(f"larger than {MAX_FILE_BYTES} bytes")
            rail_file.save(force_insert=True)
            try:
                if rail in SEPA_RAILS:
                    rail_file.entry_count = sepa_file_apply(
                        rail_file, content, now or timezone.now()
                    )
                    rail_file.save(update_fields=["entry_count"])
                else:
                    _apply(rail_file, content, now or timezone.now())
            except (NachaError, Iso20022Error, SepaRefused) as error:
                raise FileRefused(redacted(str(error))) from None
            emit_file_received(rail_file)
    except FileRefused as refused:
        if not keep_refused:
            raise
        return _refused(rail_file, refused.reason)
    except IntegrityError:  # the same bytes, stored meanwhile by another process
        return RailFile.objects.get(institution=institution, sha256=digest)
    return rail_file


def rail_file_refuse(*, institution, rail: str, name: str, content: bytes, reason: str) -> RailFile:
    """Keep a file of the bank's refused for `reason` that no rail's reader judged (a bank
    statement that is not valid, found in the inbox): its bytes and why, nothing applied. The
    same bytes again: the file as it was."""
    digest = hashlib.sha256(content).hexdigest()
    existing = RailFile.objects.filter(institution=institution, sha256=digest).first()
    if existing is not None:
        return existing
    rail_file = RailFile(
        institution=institution,
        rail=rail,
        direction=RailFile.Direction.INBOUND,
        name=name[:200],
        sha256=digest,
        content=content,
    )
    return _refused(rail_file, redacted(reason))


def _refused(rail_file: RailFile, reason: str) -> RailFile:
    """Keep a refused file (its bytes and why), nothing of it applied: its application was
    rolled back whole, its row with it."""
    rail_file.status = RailFile.Status.REFUSED
    rail_file.error = reason[:500]
    rail_file.entry_count = 0
    try:
        with transaction.atomic():
            rail_file.save(force_insert=True)
            emit_file_received(rail_file)
    except IntegrityError:  # the same bytes, refused meanwhile by another process
        return RailFile.objects.get(institution=rail_file.institution, sha256=rail_file.sha256)
    return rail_file


def emit_file_received(rail_file: RailFile) -> None:
    """`rail_file.received`: the file's id, rail, status, entries and, refused, why (never its
    name, which is the bank's, nor anything of its content)."""
    emit_for(
        rail_file,
        "rail_file.received",
        data={
            "file_id": rail_file.pk,
            "rail": rail_file.rail,
            "status": rail_file.status,
            "entry_count": rail_file.entry_count,
            "error": rail_file.error,
        },
    )


def _apply(rail_file: RailFile, content: bytes, now: datetime) -> None:
    parsed = parse(content)  # the whole file validated first: NachaError refuses it
    institution = rail_file.institution
    count = 0
    for header, entry in parsed.entries():
        count += 1
        if TRANSACTION_CODES[entry.detail.transaction_code].kind != "return_or_noc":
            profile = AchProfile.objects.filter(institution=institution).first()
            if profile is None:
                raise FileRefused(
                    "entries to the institution's accounts, and it has no ACH profile"
                )
            inbound_entry_receive(profile=profile, rail_file=rail_file, header=header, entry=entry)
            continue
        addenda = entry.addenda[0] if entry.addenda else None
        if isinstance(addenda, NotificationOfChange):
            _change(institution, rail_file, addenda)
        elif isinstance(addenda, ReturnAddenda | DishonoredReturnAddenda | ContestedReturnAddenda):
            _return(institution, rail_file, addenda, now)
        else:
            raise FileRefused(
                f"entry {entry.detail.trace_number}: a return or change entry without its addenda"
            )
    rail_file.entry_count = count
    rail_file.save(update_fields=["entry_count"])


def _order_of(institution, trace: str) -> PaymentOrder | None:
    return (
        PaymentOrder.objects.filter(institution=institution, trace_number=trace)
        .select_related("institution")
        .first()
    )


def _return(institution, rail_file: RailFile, addenda, now) -> None:
    if isinstance(addenda, DishonoredReturnAddenda):
        code, kind = addenda.dishonored_return_reason_code, RailNotice.Kind.DISHONORED
    elif isinstance(addenda, ContestedReturnAddenda):
        code, kind = addenda.contested_return_reason_code, RailNotice.Kind.CONTESTED
    else:
        code, kind = addenda.return_reason_code, RailNotice.Kind.RETURN
    reason = return_reason(code)
    trace = addenda.original_entry_trace_number
    order = _order_of(institution, trace)
    if order is None or kind != RailNotice.Kind.RETURN:
        # A dishonored or contested return answers a return (TX originates none yet):
        # recorded against the order it names, for staff and reconciliation.
        notice = unknown_return(
            institution=institution, reason=reason, trace=trace, rail_file=rail_file, kind=kind
        )
        if order is not None:
            notice.order = order
            notice.save(update_fields=["order"])
        return
    order_return(order=order, reason=reason, rail_file=rail_file, at=now)


def _change(institution, rail_file: RailFile, addenda: NotificationOfChange) -> None:
    trace = addenda.original_entry_trace_number
    order = _order_of(institution, trace)
    if order is None:
        RailNotice.objects.create(
            institution=institution,
            file=rail_file,
            kind=RailNotice.Kind.CHANGE,
            code=addenda.change_code,
            reason="notification_of_change",
            original_trace_number=trace,
        )
        return
    correction = addenda.correction()
    corrections = {}
    if correction.routing_number:
        corrections["routing_number"] = correction.routing_number
    if correction.account_number:
        corrections["account_number"] = correction.account_number
    if correction.transaction_code is not None:
        kind = TRANSACTION_CODES.get(correction.transaction_code)
        if kind is not None:
            corrections["account_type"] = kind.account_type
    order_change(
        order=order, change_code=addenda.change_code, corrections=corrections, rail_file=rail_file
    )
