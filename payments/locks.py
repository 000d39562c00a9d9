"""The row locks of payments (docs/money.md, "Locking"): an order, then its account's rows
through the posting functions; an external account alone. A cut-off locks the orders of its
window, by id, after taking its window's file row (the unique index decides the window's one
file, `payments.services.cutoff`)."""

from django.db import connection
from django.db.models import QuerySet

from .models import ExternalAccount, PaymentOrder


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
