"""A payment order's events (`payment_order.*`, docs/events.md): what each carries of the order,
written at once (`emit_order`) or made for a batch job to write with others (`order_event`)."""

from events.models import Event
from events.services import emit_for, event_for

from ..models import PaymentOrder


def order_event_data(order: PaymentOrder) -> dict:
    return {
        "payment_order_id": order.pk,
        "account_id": order.account_id,
        "external_account_id": order.external_account_id,
        "direction": order.direction,
        "amount": order.amount,
        "currency": order.currency,
        "rail": order.rail,
        "status": order.status,
        "prenote": order.prenote,
        **({"end_to_end_id": order.end_to_end_id} if order.end_to_end_id else {}),
    }


def emit_order(order: PaymentOrder, event_type: str, **extra) -> None:
    emit_for(order, event_type, data={**order_event_data(order), **extra})


def order_event(order: PaymentOrder, event_type: str, **extra) -> Event:
    """`emit_order`'s event, not written yet: a batch job writes its orders' at once
    (`events.services.emit_many`)."""
    return event_for(order, event_type, data={**order_event_data(order), **extra})
