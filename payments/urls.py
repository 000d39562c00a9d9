from django.urls import path

from api.versions import V2

from .apis.debtors import (
    BlockedCreditorCancellationsView,
    BlockedCreditorListView,
    DebtorMandateCancellationsView,
    DebtorMandateListView,
    InboundEntryRefundsView,
    InboundEntryRefusalsView,
)
from .apis.external_accounts import ExternalAccountDetailView, ExternalAccountListView, PrenoteView
from .apis.inbound_entries import InboundEntryDetailView, InboundEntryListView
from .apis.inbound_recalls import (
    InboundRecallAnswersView,
    InboundRecallDetailView,
    InboundRecallListView,
)
from .apis.mandates import MandateCancellationsView, MandateDetailView, MandateListView
from .apis.orders import (
    CancellationsView,
    PaymentOrderDetailView,
    PaymentOrderListView,
    RecallsView,
)
from .apis.rail_files import RailFileContentView, RailFileDetailView, RailFileListView
from .apis.stop_payments import (
    StopPaymentCancellationsView,
    StopPaymentDetailView,
    StopPaymentListView,
)


def payment_urls(version: str):
    """v2 only: the legacy line has no payment orders (docs/payments.md)."""
    if version != V2:
        return []
    return [
        path("external-accounts", ExternalAccountListView.as_view(), name="external-accounts"),
        path(
            "external-accounts/<id:externalAccountId>",
            ExternalAccountDetailView.as_view(),
            name="external-account",
        ),
        path(
            "external-accounts/<id:externalAccountId>/prenotes",
            PrenoteView.as_view(),
            name="external-account-prenotes",
        ),
        path("payment-orders", PaymentOrderListView.as_view(), name="payment-orders"),
        path(
            "payment-orders/<id:paymentOrderId>",
            PaymentOrderDetailView.as_view(),
            name="payment-order",
        ),
        path(
            "payment-orders/<id:paymentOrderId>/cancellations",
            CancellationsView.as_view(),
            name="payment-order-cancellations",
        ),
        path(
            "payment-orders/<id:paymentOrderId>/recalls",
            RecallsView.as_view(),
            name="payment-order-recalls",
        ),
        path("mandates", MandateListView.as_view(), name="mandates"),
        path("mandates/<id:mandateId>", MandateDetailView.as_view(), name="mandate"),
        path(
            "mandates/<id:mandateId>/cancellations",
            MandateCancellationsView.as_view(),
            name="mandate-cancellations",
        ),
        path("stop-payments", StopPaymentListView.as_view(), name="stop-payments"),
        path(
            "stop-payments/<id:stopPaymentId>",
            StopPaymentDetailView.as_view(),
            name="stop-payment",
        ),
        path(
            "stop-payments/<id:stopPaymentId>/cancellations",
            StopPaymentCancellationsView.as_view(),
            name="stop-payment-cancellations",
        ),
        path(
            "accounts/<id:accountId>/debtor-mandates",
            DebtorMandateListView.as_view(),
            name="account-debtor-mandates",
        ),
        path(
            "accounts/<id:accountId>/debtor-mandates/<id:debtorMandateId>/cancellations",
            DebtorMandateCancellationsView.as_view(),
            name="account-debtor-mandate-cancellations",
        ),
        path(
            "accounts/<id:accountId>/blocked-creditors",
            BlockedCreditorListView.as_view(),
            name="account-blocked-creditors",
        ),
        path(
            "accounts/<id:accountId>/blocked-creditors/<id:blockedCreditorId>/cancellations",
            BlockedCreditorCancellationsView.as_view(),
            name="account-blocked-creditor-cancellations",
        ),
        path("inbound-recalls", InboundRecallListView.as_view(), name="inbound-recalls"),
        path(
            "inbound-recalls/<id:inboundRecallId>",
            InboundRecallDetailView.as_view(),
            name="inbound-recall",
        ),
        path(
            "inbound-recalls/<id:inboundRecallId>/answers",
            InboundRecallAnswersView.as_view(),
            name="inbound-recall-answers",
        ),
        path("inbound-entries", InboundEntryListView.as_view(), name="inbound-entries"),
        path(
            "inbound-entries/<id:inboundEntryId>",
            InboundEntryDetailView.as_view(),
            name="inbound-entry",
        ),
        path(
            "inbound-entries/<id:inboundEntryId>/refunds",
            InboundEntryRefundsView.as_view(),
            name="inbound-entry-refunds",
        ),
        path(
            "inbound-entries/<id:inboundEntryId>/refusals",
            InboundEntryRefusalsView.as_view(),
            name="inbound-entry-refusals",
        ),
        path("rail-files", RailFileListView.as_view(), name="rail-files"),
        path("rail-files/<id:fileId>", RailFileDetailView.as_view(), name="rail-file"),
        path(
            "rail-files/<id:fileId>/content",
            RailFileContentView.as_view(),
            name="rail-file-content",
        ),
    ]
