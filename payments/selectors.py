"""Reads of payments: one object of the institution (another institution's answers as an
unknown one, 404), and the lists the API pages through."""

from django.db.models import Q
from django.utils import timezone

from core.selectors import get_of_institution
from institutions.models import Institution

from .models import ExternalAccount, InboundEntry, Mandate, PaymentOrder, RailFile, StopPayment


def external_account_get(*, institution: Institution, external_account_id: str) -> ExternalAccount:
    return get_of_institution(
        ExternalAccount.objects.select_related("institution"),
        institution=institution,
        id=external_account_id,
        missing="No external account with this id.",
    )


def external_account_list(*, institution: Institution, customer_id: str | None = None):
    rows = ExternalAccount.objects.filter(institution=institution)
    if customer_id is not None:
        rows = rows.filter(customer_id=customer_id)
    return rows


def payment_order_get(*, institution: Institution, order_id: str) -> PaymentOrder:
    return get_of_institution(
        PaymentOrder.objects.select_related("institution", "external_account"),
        institution=institution,
        id=order_id,
        missing="No payment order with this id.",
    )


def payment_order_list(
    *,
    institution: Institution,
    status: str | None = None,
    account_id: str | None = None,
    external_account_id: str | None = None,
    direction: str | None = None,
):
    rows = PaymentOrder.objects.filter(institution=institution)
    for field, value in (
        ("status", status),
        ("account_id", account_id),
        ("external_account_id", external_account_id),
        ("direction", direction),
    ):
        if value is not None:
            rows = rows.filter(**{field: value})
    return rows


def rail_file_get(*, institution: Institution, file_id: str) -> RailFile:
    return get_of_institution(
        RailFile.objects.defer("content"),
        institution=institution,
        id=file_id,
        missing="No file with this id.",
    )


def rail_file_list(*, institution: Institution, direction: str | None = None):
    rows = RailFile.objects.filter(institution=institution).defer("content")
    if direction is not None:
        rows = rows.filter(direction=direction)
    return rows


def inbound_entry_get(*, institution: Institution, inbound_entry_id: str) -> InboundEntry:
    return get_of_institution(
        InboundEntry.objects.all(),
        institution=institution,
        id=inbound_entry_id,
        missing="No inbound entry with this id.",
    )


def inbound_entry_list(
    *, institution: Institution, status: str | None = None, account_id: str | None = None
):
    rows = InboundEntry.objects.filter(institution=institution)
    if status is not None:
        rows = rows.filter(status=status)
    if account_id is not None:
        rows = rows.filter(account_id=account_id)
    return rows


def stop_payment_get(*, institution: Institution, stop_payment_id: str) -> StopPayment:
    return get_of_institution(
        StopPayment.objects.all(),
        institution=institution,
        id=stop_payment_id,
        missing="No stop payment with this id.",
    )


def stop_payment_list(
    *, institution: Institution, account_id: str | None = None, status: str | None = None
):
    """The institution's stop payments; `status` as shown (`expired`: active past its
    expiry; `active`: active and not expired)."""
    rows = StopPayment.objects.filter(institution=institution)
    if account_id is not None:
        rows = rows.filter(account_id=account_id)
    if status is not None:
        now = timezone.now()
        unexpired = Q(expires_at__isnull=True) | Q(expires_at__gt=now)
        if status == StopPayment.Status.ACTIVE:
            rows = rows.filter(unexpired, status=StopPayment.Status.ACTIVE)
        elif status == StopPayment.Status.EXPIRED:
            rows = rows.filter(status=StopPayment.Status.ACTIVE, expires_at__lte=now)
        else:
            rows = rows.filter(status=status)
    return rows


def mandate_get(*, institution: Institution, mandate_id: str) -> Mandate:
    return get_of_institution(
        Mandate.objects.select_related("institution", "external_account"),
        institution=institution,
        id=mandate_id,
        missing="No mandate with this id.",
    )
