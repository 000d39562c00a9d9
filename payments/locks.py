"""The row locks of payments (docs/money.md, "Locking"): an order or an inbound entry, then its
account's rows through the posting functions; an external account alone. A cut-off takes the
institution's cut-off lock, then locks the orders of its window and the inbound entries to
return, by id, then a direct-debit window's mandates, by id, then its ACH profile (the trace
numbers), then writes its window's file row (the unique index decides the window's one file,
`payments.services.cutoff`). A mandate, a stop payment and a customer's debtor mandate or
blocked creditor are locked alone by their own changes. A recall is locked after its order when
both are (a return of the order), else alone; a recall TX answers before its credit (an inbound
entry), then the account; a customer's refund of a direct debit locks the debit (an inbound
entry), then the account."""

from django.db import connection
from django.db.models import QuerySet

from .models import (
    AchProfile,
    BlockedCreditor,
    DebtorMandate,
    ExternalAccount,
    InboundEntry,
    InboundRecall,
    Mandate,
    PaymentOrder,
    Recall,
    SepaProfile,
    StopPayment,
)


def lock_external_account(external_id: str) -> ExternalAccount:
    return ExternalAccount.objects.select_for_update().get(pk=external_id)


def lock_payment_order(order_id: str) -> PaymentOrder:
    """The order, its row locked (FOR UPDATE, that row only) until the transaction ends."""
    return (
        PaymentOrder.objects.select_for_update(of=("self",))
        .select_related("external_account", "account", "institution", "hold")
        .get(pk=order_id)
    )


def lock_payment_orders(orders: QuerySet) -> list[PaymentOrder]:
    """`orders` locked as they are read, by id (one order for every path)."""
    return list(
        orders.select_for_update(of=("self",))
        .select_related("external_account", "account", "hold")
        .order_by("pk")
    )


def lock_cutoffs(institution_id: str) -> None:
    """The institution's cut-offs, one at a time, until the transaction ends (a transaction
    advisory lock): two windows' files never draw the same trace numbers or file id modifier."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            [f"payments.cutoff:{institution_id}"],
        )


def lock_ach_profile(institution_id: str) -> AchProfile | None:
    return AchProfile.objects.select_for_update().filter(institution_id=institution_id).first()


def lock_sepa_profile(institution_id: str) -> SepaProfile | None:
    return SepaProfile.objects.select_for_update().filter(institution_id=institution_id).first()


def lock_inbound_entry(inbound_id: str) -> InboundEntry:
    return (
        InboundEntry.objects.select_for_update(of=("self",))
        .select_related("institution")
        .get(pk=inbound_id)
    )


def lock_returning_entries(institution_id: str) -> list[InboundEntry]:
    """The institution's inbound entries waiting to go back in its next file, by id."""
    return list(
        InboundEntry.objects.select_for_update()
        .filter(institution_id=institution_id, status=InboundEntry.Status.RETURNING)
        .order_by("pk")
    )


def lock_register_row(row: DebtorMandate | BlockedCreditor) -> DebtorMandate | BlockedCreditor:
    """A customer's debtor mandate or blocked creditor alone (its cancellation)."""
    return type(row).objects.select_for_update().get(pk=row.pk)


def lock_stop_payment(stop_id: str) -> StopPayment:
    """A stop payment alone (its cancellation)."""
    return StopPayment.objects.select_for_update().get(pk=stop_id)


def lock_mandate(mandate_id: str) -> Mandate:
    """A mandate alone: its amendment, cancellation, or a collection made under it."""
    return (
        Mandate.objects.select_for_update(of=("self",))
        .select_related("institution", "external_account")
        .get(pk=mandate_id)
    )


def lock_mandates(mandate_ids) -> dict[str, Mandate]:
    """The mandates of a direct-debit cut-off's orders, by id (one order for every path)."""
    return {
        mandate.pk: mandate
        for mandate in Mandate.objects.select_for_update(of=("self",))
        .filter(pk__in=mandate_ids)
        .select_related("original_external_account")
        .order_by("pk")
    }


def lock_recall(recall_id: str) -> Recall:
    """A recall, its row locked (after its order's, when both are: a return locks the order
    first)."""
    return (
        Recall.objects.select_for_update(of=("self",))
        .select_related("order", "order__external_account")
        .get(pk=recall_id)
    )


def lock_recalls(recalls: QuerySet) -> list[Recall]:
    """`recalls` locked as they are read, by id."""
    return list(recalls.select_for_update(of=("self",)).select_related("order").order_by("pk"))


def lock_inbound_recall(recall_id: str) -> InboundRecall:
    """A recall TX answers, its row locked (before its credit's and the account's)."""
    return InboundRecall.objects.select_for_update(of=("self",)).get(pk=recall_id)
