"""The cut-off: the approved orders of a window, and the returns of inbound entries TX could not
apply, written into one NACHA file (docs/payments.md, "Cut-offs" and "Exactly once").

A window is an institution's rail's cut-off on a date: the next-day window at `next_day_cutoff`,
each same-day window at its time, local times in the institution's time zone. At a cut-off,
every approved order of the rail whose requested execution date is on or before the window's
date goes into the window's file, in one transaction:

1. the institution's cut-offs are serialized (an advisory lock: two windows' files never draw
   the same trace numbers or file id modifier);
2. the orders made before the cut-off's instant are locked, by id (a credit of an account
   that is not active waits: its held money cannot leave it), and the inbound entries waiting
   to be returned (`payments.services.inbound`); neither: no file;
3. the file is written (`payments.nacha.file`: the orders' batches by SEC code and
   description, entries by order; a batch of returns per originator; the trace numbers
   following the institution's last, `AchProfile.last_trace_sequence`; the next file id
   modifier of the day) and stored with its SHA-256: **one file per window**, a unique index
   of PostgreSQL (a cut-off run twice, or twice at once, makes one file: the second finds the
   window's file, or no approved order left);
4. each order becomes `scheduled` with its file, trace number and effective date; a credit's
   held money leaves the account for the rail's clearing account (its hold captured); each
   return `returned`, with its file and trace number.

Delivering the file to the bank (the outbox, `payments.connector`) makes its orders `sent`.
"""

import hashlib
import unicodedata
from collections import defaultdict
from datetime import date
from typing import NamedTuple

from django.db import IntegrityError, connection, transaction
from django.db.models import Q, prefetch_related_objects
from django.utils import timezone

from accounts.models import Account, Hold
from accounts.services import hold_capture
from events.services import emit_many

from ..calendar import ach_days_after, is_ach_day, local_now, sepa_days_after, window_instant
from ..iso20022 import pacs003, pacs008, pain008
from ..iso20022.interbank import GroupHeader
from ..locks import (
    lock_ach_profile,
    lock_cutoffs,
    lock_mandates,
    lock_payment_orders,
    lock_returning_entries,
)
from ..models import (
    SEPA_RAILS,
    AchProfile,
    InboundEntry,
    Mandate,
    PaymentOrder,
    Rail,
    RailFile,
    RailJournal,
    SepaProfile,
)
from ..nacha.addenda import PaymentAddenda
from ..nacha.batch_header import BatchHeader
from ..nacha.codes import TRANSACTION_CODES, transaction_code
from ..nacha.entry import EntryDetail
from ..nacha.file import Batch, Entry, numbered, write_file
from ..nacha.file_header import FILE_ID_MODIFIERS, FileHeader
from ..nacha.returns import return_entry
from .inbound import emit_inbound
from .order_events import order_event
from .sepa_messages import (
    initiation_credit_transfer,
    interbank_credit_transfer,
    interbank_direct_debit,
    party_name,
    remittance_of,
)
from .settlement import order_journal, rail_label

MIXED = 200  # service class: credits and debits in one batch
MODIFIERS = sorted(FILE_ID_MODIFIERS, key=lambda char: (char.isdigit(), char))  # A-Z, then 0-9
NAME_LENGTH = 22  # the entry's receiver name
ID_LENGTH = 15  # the entry's identification number
BATCH_SIZE = 1000  # orders scheduled a statement (their rows, journals kept and events)
# The clearing an interbank profile's credit transfers settle through, by its proprietary code
# (`ClrSys/Prtry`): EBA CLEARING's STEP2 SCT service, the pan-European one.
CLEARING_SYSTEM = "ST2"


def effective_date(profile: AchProfile, rail: str, window_date: date) -> date:
    """A same-day window's entries settle that day; the next-day window's the next ACH day
    (`payments.calendar`: both skip a day the institution or the Fed is closed)."""
    institution = profile.institution
    if rail == Rail.ACH_SAME_DAY and is_ach_day(institution, window_date):
        return window_date
    return ach_days_after(institution, window_date, 1)


def cutoff_run(
    *, profile: AchProfile | SepaProfile, rail: str, window_date: date, window: str
) -> RailFile | None:
    """Write the window's file (module docstring) and return it; None when no order was due.
    The window's file written already: that one (nothing more is written). `profile` is the
    rail's: the ACH profile for ACH's windows, the SEPA profile for SEPA's."""
    institution = profile.institution
    with transaction.atomic():
        lock_cutoffs(institution.pk)
        existing = RailFile.objects.filter(
            institution=institution,
            direction=RailFile.Direction.OUTBOUND,
            rail=rail,
            window_date=window_date,
            window=window,
        ).first()
        if existing is not None:
            return existing
        if rail == Rail.SEPA_DD:
            orders = _due_collections(profile, window_date, window)
            if not orders:
                return None
            return _sepa_dd_file(profile, orders, window_date, window)
        orders = _due_orders(institution, rail, window_date, window)
        if rail in SEPA_RAILS:
            if not orders:
                return None
            return _sepa_file(profile, rail, orders, window_date, window)
        # The inbound entries TX returns go in the first file after they were decided, whatever
        # its window: their return window is short.
        returns = lock_returning_entries(institution.pk)
        if not orders and not returns:
            return None
        settles_on = effective_date(profile, rail, window_date)
        sources, batches = _batches(profile, orders, returns, settles_on)
        profile = lock_ach_profile(institution.pk)
        first = _next_sequence(profile, len(sources))
        batches = numbered(batches, first_trace_sequence=first)
        header = FileHeader(
            immediate_destination=profile.destination_routing_number,
            immediate_origin=profile.odfi_routing_number,
            file_creation_date=window_date,
            file_creation_time=local_now(institution).time().replace(second=0, microsecond=0),
            file_id_modifier=_next_modifier(institution, window_date),
            immediate_destination_name=_ascii(profile.destination_name, 23),
            immediate_origin_name=_ascii(profile.odfi_name, 23),
        )
        content = write_file(header, batches)
        entries = [entry for batch in batches for entry in batch.entries]
        totals = defaultdict(int)
        for entry in entries:
            direction = TRANSACTION_CODES[entry.detail.transaction_code].direction
            totals[direction] += entry.detail.amount
        rail_file = _file(
            institution,
            rail,
            window_date,
            window,
            header.file_id_modifier,
            content,
            "ach",
            entry_count=len(entries),
            debit_total=totals["debit"],
            credit_total=totals["credit"],
        )
        if not _stored(rail_file):
            return None
        profile.last_trace_sequence = first + len(sources) - 1
        profile.save(update_fields=["last_trace_sequence"])
        scheduled = []
        for source, entry in zip(sources, entries, strict=True):
            if isinstance(source, PaymentOrder):
                scheduled.append((source, entry.detail.trace_number))
            else:
                _returned(source, rail_file, entry.detail.trace_number)
        _schedule(scheduled, rail_file, settles_on)
    return rail_file


def _due_orders(institution, rail: str, window_date: date, window: str) -> list[PaymentOrder]:
    """The approved orders of the rail due in the window, locked by id."""
    return lock_payment_orders(
        PaymentOrder.objects.filter(
            institution=institution,
            rail=rail,
            status=PaymentOrder.Status.APPROVED,
            requested_execution_date__lte=window_date,
            # Made before the cut-off's instant: one made at 16:45:00 waits for the next
            # window, however late this runs.
            created_at__lt=window_instant(institution, window_date, window),
        )
        # A credit's held money leaves only an active account (a frozen account's holds
        # wait, docs/money.md): it waits for a window after the account is active again.
        .filter(Q(hold__isnull=True) | Q(account__status=Account.Status.ACTIVE))
    )


def _due_collections(profile: SepaProfile, window_date: date, window: str) -> list[PaymentOrder]:
    """The approved direct debits made before the cut-off's instant whose due date is at least
    one SEPA day after the window's date (the scheme's D-1), locked by id. One whose due date
    has come too close (the job did not run in time) waits: staff cancel it. An interbank
    profile presents a collection in the window one SEPA day before its due date only (the
    pacs.003's one settlement date is the due date): due after the window's date and at the
    latest on the next SEPA day."""
    institution = profile.institution
    next_day = sepa_days_after(institution, window_date, 1)
    if profile.kind == SepaProfile.Kind.INTERBANK:
        due = Q(requested_execution_date__gt=window_date, requested_execution_date__lte=next_day)
    else:
        due = Q(requested_execution_date__gte=next_day)
    return lock_payment_orders(
        PaymentOrder.objects.filter(
            due,
            institution=institution,
            rail=Rail.SEPA_DD,
            status=PaymentOrder.Status.APPROVED,
            created_at__lt=window_instant(institution, window_date, window),
        )
    )


class _Collection(NamedTuple):
    """A collection as the window's file carries it: its order, mandate, sequence type and the
    mandate's amendment not yet told (None)."""

    order: PaymentOrder
    mandate: Mandate
    sequence: str
    amendment: pain008.Amendment | None


def _sepa_dd_file(
    profile: SepaProfile, orders: list[PaymentOrder], window_date: date, window: str
) -> RailFile | None:
    """The window's direct debits in one file: a pain.008 to the partner bank for an
    `initiation` profile, a pacs.003 to the clearing for an `interbank` one (only the message
    differs). The sequence type is decided here: OOFF for a one-off mandate; FNAL for a
    recurrent mandate's final collection (the rulebooks allow it first too); FRST for its first
    collection in a file (none before it scheduled and not rejected), RCUR after. An amendment
    not yet told is carried on the mandate's collection. Each order's effective date is its
    due date (an interbank profile's: the pacs.003's settlement date)."""
    institution = profile.institution
    rail_file = RailFile(institution=institution)
    message_id = rail_file.pk.replace("_", "-")
    mandates = lock_mandates({order.mandate_id for order in orders})
    collected = set(
        PaymentOrder.objects.filter(mandate_id__in=mandates, file__isnull=False)
        .exclude(status=PaymentOrder.Status.REJECTED)
        .values_list("mandate_id", flat=True)
    )
    collections = []
    for order in orders:
        mandate = mandates[order.mandate_id]
        if mandate.type == Mandate.Type.ONE_OFF:
            sequence = "OOFF"
        elif order.final_collection:
            sequence = "FNAL"
        elif mandate.pk in collected:
            sequence = "RCUR"
        else:
            sequence = "FRST"
            collected.add(mandate.pk)
        order.sequence_type = sequence
        amendment = None
        if mandate.original_reference or mandate.original_external_account_id:
            original = mandate.original_external_account
            amendment = pain008.Amendment(
                original_mandate_id=mandate.original_reference or None,
                original_debtor_iban=original.sepa_iban() if original else None,
            )
        collections.append(_Collection(order, mandate, sequence, amendment))
    if profile.kind == SepaProfile.Kind.INTERBANK:
        settles_on = sepa_days_after(institution, window_date, 1)
        collections, content = _pacs003(profile, collections, message_id, settles_on)
        if not collections:
            return None
    else:
        settles_on = None
        content = _pain008(profile, collections, message_id)
    built = _file(
        institution,
        Rail.SEPA_DD,
        window_date,
        window,
        _next_modifier(institution, window_date),
        content,
        "xml",
        entry_count=len(collections),
        debit_total=sum(each.order.amount for each in collections),
    )
    built.pk = rail_file.pk
    if not _stored(built):
        return None
    by_day, by_sequence = defaultdict(list), defaultdict(list)
    for each in collections:
        by_day[settles_on or each.order.requested_execution_date].append(each.order)
        by_sequence[each.sequence].append(each.order.pk)
    for day in sorted(by_day):
        _schedule([(order, _identification(order)) for order in by_day[day]], built, day)
    for sequence, ids in by_sequence.items():
        PaymentOrder.objects.filter(pk__in=ids).update(sequence_type=sequence)
    amended = {each.mandate.pk for each in collections if each.amendment is not None}
    Mandate.objects.filter(pk__in=amended).update(
        original_reference="", original_external_account=None
    )
    return built


def _pain008(profile: SepaProfile, collections: list[_Collection], message_id: str) -> bytes:
    """The pain.008 (`payments.iso20022.pain008`) of an initiation profile: a collection
    instruction per due date, scheme and sequence type, to the profile's settlement account
    under its creditor identifier, a direct debit per order with its mandate."""
    institution = profile.institution
    groups = defaultdict(list)
    for order, mandate, sequence, amendment in collections:
        debit = pain008.DirectDebit(
            end_to_end_id=order.end_to_end_id,
            amount=order.amount,
            mandate_id=mandate.reference,
            mandate_signed_on=mandate.signature_date,
            debtor_name=party_name(order.external_account.holder_name),
            debtor_iban=order.external_account.sepa_iban(),
            debtor_bic=order.external_account.sepa_bic or None,
            remittance=remittance_of(order),
            amendment=amendment,
        )
        groups[(order.requested_execution_date, mandate.scheme, sequence)].append(debit)
    instructions = []
    for number, key in enumerate(sorted(groups), start=1):
        day, scheme, sequence = key
        instructions.append(
            pain008.CollectionInstruction(
                payment_information_id=f"{message_id}-{number}",
                requested_collection_date=day,
                local_instrument=scheme,
                sequence_type=sequence,
                creditor_name=party_name(institution.name),
                creditor_iban=profile.settlement_iban,
                creditor_bic=profile.bic or None,
                creditor_id=profile.creditor_identifier,
                debits=tuple(groups[key]),
            )
        )
    initiation = pain008.DirectDebitInitiation(
        message_id=message_id,
        created_at=local_now(institution).replace(microsecond=0),
        initiating_party=party_name(institution.name),
        payments=tuple(instructions),
    )
    return pain008.write_initiation(initiation)  # validated against its XSD as written


def _pacs003(
    profile: SepaProfile, collections: list[_Collection], message_id: str, day: date
) -> tuple[list[_Collection], bytes | None]:
    """The pacs.003 (`payments.iso20022.pacs003`) of an interbank profile, and the collections
    in it: the institution the instructing bank and every creditor's bank (its BIC), settling
    through the clearing (`CLEARING_SYSTEM`) on the due date `day`, a direct debit per order
    with its transaction id, payment type and mandate. A collection that cannot be written
    between banks (`interbank_direct_debit`) is left out and waits `approved`."""
    # The creditor accounts' rows, one query for the file.
    prefetch_related_objects([each.order for each in collections], "account")
    written = []
    for each in collections:
        debit = interbank_direct_debit(
            each.order,
            profile,
            each.mandate,
            each.sequence,
            each.amendment,
            _identification(each.order),
        )
        if debit is not None:
            written.append((each, debit))
    if not written:
        return [], None
    message = pacs003.FIToFIDirectDebit(
        header=_interbank_header(profile, message_id, day),
        debits=tuple(debit for _, debit in written),
    )
    # Validated against its XSD and read back as written.
    return [each for each, _ in written], pacs003.write_debits(message)


def _interbank_header(profile: SepaProfile, message_id: str, day: date) -> GroupHeader:
    """An interbank profile's group header: the institution the instructing bank (its BIC),
    settling through the clearing (CLRG, `CLEARING_SYSTEM`) on `day`."""
    return GroupHeader(
        message_id=message_id,
        created_at=local_now(profile.institution).replace(microsecond=0),
        settlement_date=day,
        clearing_system=CLEARING_SYSTEM,
        instructing_agent_bic=profile.bic,
    )


def _file(institution, rail, window_date, window, modifier, content, extension, **totals):
    return RailFile(
        institution=institution,
        rail=rail,
        direction=RailFile.Direction.OUTBOUND,
        status=RailFile.Status.WRITTEN,
        name=f"{institution.pk}-{window_date:%Y%m%d}-{window.replace(':', '')}-"
        f"{modifier}.{extension}",
        sha256=hashlib.sha256(content).hexdigest(),
        content=content,
        window_date=window_date,
        window=window,
        file_id_modifier=modifier,
        **totals,
    )


def _stored(rail_file: RailFile) -> bool:
    """The window's file row inserted; False when another process made the window's file
    meanwhile (the unique index of one file per window)."""
    try:
        with transaction.atomic():
            rail_file.save(force_insert=True)
    except IntegrityError:
        return False
    return True


def _sepa_file(
    profile: SepaProfile, rail: str, orders: list[PaymentOrder], window_date: date, window: str
) -> RailFile | None:
    """The window's SEPA credit transfers in one file: a pain.001 to the partner bank for an
    `initiation` profile, a pacs.008 to the clearing for an `interbank` one (only the message
    differs: the window, the lock, the file and the scheduling are the same). Its message id is
    the file's id (the answers name it); an order's trace number is its id's last 15
    characters (a pacs.008's transaction id)."""
    institution = profile.institution
    rail_file = RailFile(institution=institution)
    message_id = rail_file.pk.replace("_", "-")  # the SEPA character set has no "_"
    if profile.kind == SepaProfile.Kind.INTERBANK:
        orders, content = _pacs008(profile, orders, message_id, window_date)
        if not orders:
            return None
    else:
        content = initiation_credit_transfer(profile, rail, orders, message_id, window_date)
    built = _file(
        institution,
        rail,
        window_date,
        window,
        _next_modifier(institution, window_date),
        content,
        "xml",
        entry_count=len(orders),
        credit_total=sum(order.amount for order in orders),
    )
    built.pk = rail_file.pk
    if not _stored(built):
        return None
    _schedule([(order, _identification(order)) for order in orders], built, window_date)
    return built


def _pacs008(
    profile: SepaProfile, orders: list[PaymentOrder], message_id: str, day: date
) -> tuple[list[PaymentOrder], bytes | None]:
    """The pacs.008 (`payments.iso20022.pacs008`) of an interbank profile, and the orders in
    it: the institution the instructing bank and every debtor's bank (its BIC), settling
    through the clearing (CLRG, STEP2's SCT service, `CLEARING_SYSTEM`) on the window's date,
    a TARGET2 business day (the cut-off runs on SEPA days only), a transfer per order with its
    transaction id. An order that cannot be written between banks (`interbank_credit_transfer`)
    is left out and waits `approved`."""
    # The debtors' names, one query for the file.
    prefetch_related_objects([order.account for order in orders], "customer")
    written = []
    for order in orders:
        transfer = interbank_credit_transfer(order, profile, _identification(order))
        if transfer is not None:
            written.append((order, transfer))
    if not written:
        return [], None
    message = pacs008.FIToFICreditTransfer(
        header=_interbank_header(profile, message_id, day),
        transfers=tuple(transfer for _, transfer in written),
    )
    # Validated against its XSD and read back as written.
    return [order for order, _ in written], pacs008.write_transfers(message)


def _schedule(
    orders: list[tuple[PaymentOrder, str]], rail_file: RailFile, settles_on: date
) -> None:
    """The orders (each with its trace number) `scheduled` in the file; a credit's money
    leaves the account for the rail's clearing (its hold captured, a posting each). The rows
    of `BATCH_SIZE` orders, their journals kept as theirs and their events are written a
    statement for all of them (a 10,000-order file cost seven statements an order:
    bench/README.md, "cutoff.py")."""
    now = timezone.now()
    for start in range(0, len(orders), BATCH_SIZE):
        batch = orders[start : start + BATCH_SIZE]
        kept, events = [], []
        for order, trace in batch:
            order.institution = rail_file.institution  # loaded: no query for its event
            if order.hold is not None:
                journal = order_journal(order, f"{rail_label(order)} credit in a file")
                hold_capture(
                    hold=order.hold,
                    purpose=Hold.Purpose.PAYMENT_ORDER,
                    counterparty=Account.InternalCode.RAIL_CLEARING,
                    journal=journal,
                )
                kept.append(RailJournal(journal=journal, order=order))
            order.status = PaymentOrder.Status.SCHEDULED
            order.file = rail_file
            order.trace_number = trace
            order.effective_date = settles_on
            order.updated_at = now
            events.append(
                order_event(
                    order, "payment_order.scheduled", file_id=rail_file.pk, trace_number=trace
                )
            )
        with connection.cursor() as cursor:
            cursor.execute(
                _SCHEDULED_SQL,
                [
                    PaymentOrder.Status.SCHEDULED,
                    rail_file.pk,
                    settles_on,
                    now,
                    [order.pk for order, _ in batch],
                    [trace for _, trace in batch],
                ],
            )
        RailJournal.objects.bulk_create(kept)
        emit_many(events)


_SCHEDULED_SQL = f"""
    UPDATE {PaymentOrder._meta.db_table} o
       SET status = %s, file_id = %s, effective_date = %s, updated_at = %s,
           trace_number = t.trace
      FROM unnest(%s::text[], %s::text[]) AS t(id, trace)
     WHERE o.id = t.id
"""  # noqa: S608 (the table's name, no input)


def _batches(
    profile: AchProfile,
    orders: list[PaymentOrder],
    returns: list[InboundEntry],
    settles_on: date,
) -> tuple[list, list[Batch]]:
    """The file's batches, and what each of their entries is for, in the entries' order: the
    orders in one batch per SEC code and description (the batch header carries both), in
    order of their ids; then the returns of inbound entries, one batch per originator (a
    return's batch header is its entry's: SEC code, company and description), from the
    institution's receiving routing number."""
    grouped: dict[tuple, list] = defaultdict(list)
    for order in orders:
        grouped[("order", order.sec_code, order.description)].append(order)
    for inbound in returns:
        key = (
            "return",
            inbound.sec_code,
            inbound.company_entry_description,
            inbound.company_name,
            inbound.company_id,
        )
        grouped[key].append(inbound)
    sources, batches = [], []
    for key, group in grouped.items():
        if key[0] == "order":
            _, sec_code, description = key
            header = _header(
                profile, sec_code, description, profile.company_name, profile.company_id, settles_on
            )
            entries = tuple(_entry(order) for order in group)
        else:
            _, sec_code, description, company_name, company_id = key
            header = _header(profile, sec_code, description, company_name, company_id, settles_on)
            header = header.replace(odfi_identification=profile.receiving_routing_number[:8])
            entries = tuple(_return_entry(profile, inbound) for inbound in group)
        sources += group
        batches.append(Batch(header, entries))
    return sources, batches


def _header(profile, sec_code, description, company_name, company_id, settles_on) -> BatchHeader:
    return BatchHeader(
        service_class_code=MIXED,
        company_name=_ascii(company_name, 16),
        company_identification=company_id,
        standard_entry_class_code=sec_code,
        company_entry_description=description,
        effective_entry_date=settles_on,
        odfi_identification=profile.odfi_routing_number[:8],
    )


def _return_entry(profile: AchProfile, inbound: InboundEntry) -> Entry:
    return return_entry(
        original_transaction_code=inbound.transaction_code,
        original_trace_number=inbound.trace_number,
        original_rdfi_identification=profile.receiving_routing_number[:8],
        account_number=inbound.account_number(),
        amount=inbound.amount,
        receiver_name=inbound.receiver_name,
        identification_number=inbound.identification_number,
        return_reason_code=inbound.return_code,
    )


def _returned(inbound: InboundEntry, rail_file: RailFile, trace: str) -> None:
    inbound.status = InboundEntry.Status.RETURNED
    inbound.return_file = rail_file
    inbound.return_trace_number = trace
    inbound.updated_at = timezone.now()
    inbound.save(update_fields=["status", "return_file", "return_trace_number", "updated_at"])
    emit_inbound(inbound, "inbound_entry.returned")


def _entry(order: PaymentOrder) -> Entry:
    external = order.external_account
    detail = EntryDetail(
        transaction_code=transaction_code(
            order.direction, external.ach_account_type, prenote=order.prenote
        ),
        routing_number=external.ach_routing_number,
        dfi_account_number=external.ach_account_number(),
        amount=order.amount,
        trace_number="0" * 15,  # numbered() gives each its own
        identification_number=_identification(order),
        receiver_name=_ascii(external.holder_name, NAME_LENGTH),
        # WEB: the payment type code, a single payment (S) unless told otherwise.
        discretionary_data="S " if order.sec_code == PaymentOrder.SecCode.WEB else "",
    )
    addenda = ()
    if order.remittance_info:
        addenda = (
            PaymentAddenda(
                payment_related_information=order.remittance_info,
                entry_detail_sequence_number="0000000",
            ),
        )
    return Entry(detail, addenda)


def _identification(order: PaymentOrder) -> str:
    """The entry's identification number: the order's id's last 15 characters (unique: an id's
    random part), how the bank's returns find the order besides the trace number."""
    return order.pk[-ID_LENGTH:]


def _ascii(text: str, most: int) -> str:
    """A name as NACHA's alphanumeric fields take it: accents dropped, uppercase, printable
    ASCII, cut to `most` characters."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return "".join(char for char in plain.upper() if 32 <= ord(char) < 127)[:most]


def _next_sequence(profile: AchProfile, count: int) -> int:
    """The first trace sequence of a file of `count` entries: after the institution's last
    (its profile's row locked), from 1 again when the 7 digits would run out."""
    first = profile.last_trace_sequence + 1
    return first if first + count - 1 <= 9_999_999 else 1


def _next_modifier(institution, day: date) -> str:
    used = set(
        RailFile.objects.filter(
            institution=institution, direction=RailFile.Direction.OUTBOUND, window_date=day
        ).values_list("file_id_modifier", flat=True)
    )
    for modifier in MODIFIERS:
        if modifier not in used:
            return modifier
    raise RuntimeError(f"{institution.pk} has written 36 files on {day}: no file id modifier left")
