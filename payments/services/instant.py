"""SEPA Instant (docs/payments.md, "SEPA Instant"): an approved `sepa_inst` order is sent at
once, with no cut-off and on any day, as a one-transaction message (local instrument INST)
handed to the clearing, which answers within the scheme's timeout: for an `initiation` profile
(a fintech on a partner bank) a pain.001 answered by a pain.002, for an `interbank` one (a bank
in the clearing) a pacs.008 answered by a pacs.002. Only the messages differ:

1. **sent** (`instant_send`, in one transaction): the order's row locked and moved from
   `approved` to `sent` (anything else: nothing is sent: two senders at once send once), its
   message written, validated against its XSD and kept as an outbound `RailFile`; its money
   stays held on the account while it is in flight;
2. **the exchange** (after that commit, outside any transaction): the clearing
   (`SEPA_INSTANT_CLEARING`, the simulated clearing that ships with TX) gets the file and at
   most `SEPA_INSTANT_TIMEOUT_SECONDS` to answer;
3. **the answer**, stored as an inbound `RailFile` and applied by the SEPA files' reader
   (`inbound_files.rail_file_receive`, whose pain.002 and pacs.002 readers hand a `sepa_inst`
   order's status to `instant_answers.instant_status`): `ACSC` settles it (its hold captured
   into the rail clearing account and moved on to the settlement account in one transaction,
   the journals of a SEPA credit transfer's cut-off and settlement); `RJCT` rejects it (its
   hold released, the ISO reason kept raw and normalized);
4. **no answer in time** (nothing, an error of the clearing, or an answer after the deadline):
   `rejected` with reason `TECH`, its hold released. An answer for an order no longer `sent`
   (late, or twice) changes nothing and is recorded as a notice with the order, for
   reconciliation.

A crash between 1 and 4 is mended by the payments job (`instant_sweep`): an order `approved`
for longer than the timeout (its sending never ran) is sent; an order `sent` for more than
twice the timeout is rejected `TECH`. An order is never sent twice: only `approved` is sent.
"""

import logging
import time
from datetime import date, datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.module_loading import import_string

from accounts.models import Account
from cards.dates import today_of

from ..calendar import local_now
from ..iso20022 import pacs008
from ..iso20022.interbank import GroupHeader
from ..locks import lock_payment_order
from ..models import PaymentOrder, Rail, RailFile, SepaProfile
from .instant_answers import instant_timed_out
from .order_events import emit_order
from .outbound_files import outbound_kept
from .sepa_messages import initiation_credit_transfer, interbank_credit_transfer

Status = PaymentOrder.Status
logger = logging.getLogger("tx.rails")
# The clearing an interbank profile's instant payments settle through, by its proprietary code
# (`ClrSys/Prtry`): EBA CLEARING's RT1 (docs/payments.md, "SEPA Instant", says why).
CLEARING_SYSTEM = "RT1"


def timeout_seconds() -> float:
    return float(settings.SEPA_INSTANT_TIMEOUT_SECONDS)


def clearing():
    return import_string(settings.SEPA_INSTANT_CLEARING)()


def instant_send(order_id: str, *, now: datetime | None = None) -> PaymentOrder:
    """Send an approved instant order and apply the clearing's answer (module docstring);
    return the order as it is then. An order not `approved` (sent by another process, or
    cancelled): nothing."""
    if not settings.SEPA_INSTANT_CLEARING:
        # None configured (production names its own): nothing is sent, the order waits.
        return PaymentOrder.objects.get(pk=order_id)
    sent = _sent(order_id, now or timezone.now())
    if sent is None:
        return PaymentOrder.objects.get(pk=order_id)
    order, rail_file, content, answer_kind = sent
    timeout = timeout_seconds()
    started = time.monotonic()
    try:
        answer = clearing().exchange(
            institution=order.institution, content=content, timeout=timeout
        )
    except Exception as error:  # noqa: BLE001 (any failure of the clearing is no answer)
        # The clearing could not be reached: as if it had not answered. Its message is not
        # logged (it may quote the file, IBANs and all).
        logger.error(  # noqa: TRY400
            "SEPA Instant clearing failed",
            extra={"payment_order_id": order.pk, "error": type(error).__name__},
        )
        answer = None
    in_time = answer is not None and time.monotonic() - started <= timeout
    if not in_time:
        instant_timed_out(order.pk, now=timezone.now())
    if answer is not None:
        from .inbound_files import rail_file_receive  # it reads SEPA files through this module

        rail_file_receive(
            institution=order.institution,
            rail=Rail.SEPA_INST,
            name=f"{rail_file.name.removesuffix('.xml')}-{answer_kind}.xml",
            content=answer,
        )
    # An answer that named nothing of the order (or was refused whole): no answer.
    instant_timed_out(order.pk, now=timezone.now())
    return PaymentOrder.objects.get(pk=order.pk)


def _sent(order_id: str, now: datetime) -> tuple[PaymentOrder, RailFile, bytes, str] | None:
    """Step 1 of the module docstring, in one transaction: the order, its file, the message and
    the kind of answer it awaits (`pain002`, `pacs002`); None when there is nothing to send:
    the order is not `approved` (an order is sent once), its account is not active (its held
    money cannot leave: it waits, as a cut-off's orders do), the institution has no SEPA
    profile, or an interbank profile's order cannot be written between banks (its account has
    no IBAN, its creditor's bank no BIC: made before the profile changed, it waits, as in a
    cut-off)."""
    with transaction.atomic():
        order = lock_payment_order(order_id)
        if order.rail != Rail.SEPA_INST or order.status != Status.APPROVED:
            return None
        if order.account.status != Account.Status.ACTIVE:
            return None
        institution = order.institution
        profile = SepaProfile.objects.filter(institution=institution).first()
        if profile is None:
            return None
        rail_file = RailFile(institution=institution)
        message_id = rail_file.pk.replace("_", "-")  # the SEPA character set has no "_"
        day = today_of(institution)
        trace_number = order.pk[-15:]
        if profile.kind == SepaProfile.Kind.INTERBANK:
            content = _pacs008(order, profile, message_id, day, trace_number)
            if content is None:
                return None
            answer_kind = "pacs002"
        else:
            content = initiation_credit_transfer(profile, Rail.SEPA_INST, [order], message_id, day)
            answer_kind = "pain002"
        outbound_kept(
            rail_file,
            rail=Rail.SEPA_INST,
            name=f"{institution.pk}-inst-{order.pk}.xml",
            content=content,
            entry_count=1,
            status=RailFile.Status.DELIVERED,
            credit_total=order.amount,
            delivered_at=now,
        )
        order.status = Status.SENT
        order.file = rail_file
        order.trace_number = trace_number
        order.effective_date = day
        order.sent_at = order.updated_at = now
        order.save(
            update_fields=[
                "status",
                "file",
                "trace_number",
                "effective_date",
                "sent_at",
                "updated_at",
            ]
        )
        emit_order(order, "payment_order.sent", file_id=rail_file.pk)
    return order, rail_file, content, answer_kind


def _pacs008(
    order: PaymentOrder, profile: SepaProfile, message_id: str, day: date, trace_number: str
) -> bytes | None:
    """An interbank profile's pacs.008 of the one order (the cut-off's transfer,
    `interbank_credit_transfer`): the institution the instructing bank and the debtor's bank
    (its BIC), settled through the clearing (CLRG, `CLEARING_SYSTEM`) `day`, its transaction
    id the order's trace number, local instrument INST with its acceptance time; None when the
    order cannot be written between banks."""
    now = local_now(order.institution)
    transfer = interbank_credit_transfer(order, profile, trace_number, accepted_at=now)
    if transfer is None:
        return None
    message = pacs008.FIToFICreditTransfer(
        header=GroupHeader(
            message_id=message_id,
            created_at=now.replace(microsecond=0),
            settlement_date=day,
            clearing_system=CLEARING_SYSTEM,
            instructing_agent_bic=profile.bic,
        ),
        transfers=(transfer,),
    )
    return pacs008.write_transfers(message)  # validated against its XSD and read back


def instant_sweep(*, now: datetime | None = None) -> tuple[int, int]:
    """What a crash left (module docstring): the instant orders approved for longer than the
    timeout sent, the ones sent for more than twice the timeout rejected `TECH`; return how
    many of each."""
    now = now or timezone.now()
    timeout = timedelta(seconds=timeout_seconds())
    waiting = PaymentOrder.objects.filter(
        rail=Rail.SEPA_INST, status=Status.APPROVED, updated_at__lt=now - timeout
    ).values_list("pk", flat=True)
    sent = sum(instant_send(order_id).status != Status.APPROVED for order_id in list(waiting[:200]))
    stale = PaymentOrder.objects.filter(
        rail=Rail.SEPA_INST, status=Status.SENT, sent_at__lt=now - 2 * timeout
    ).values_list("pk", flat=True)
    timed_out = sum(instant_timed_out(order_id, now=now) for order_id in list(stale[:200]))
    return sent, timed_out
