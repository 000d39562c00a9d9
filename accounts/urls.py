from django.urls import path

from api.versions import V2

from .apis.accounts import (
    AccountAdjustmentsView,
    AccountBalancesView,
    AccountDetailView,
    AccountListView,
    AccountLookupView,
)
from .apis.fees import FeeDetailView, FeeListView
from .apis.holds import HoldCapturesView, HoldDetailView, HoldListView
from .apis.products import (
    AccountProductDetailView,
    AccountProductListCreateView,
    AccountProductListView,
)
from .apis.program_funding import (
    ProgramFundingAccountDetailView,
    ProgramFundingAccountListView,
    ProgramFundingAdjustmentsView,
)


def product_urls(version: str):
    """v1, the legacy line, lists account products; v2 also makes and changes them
    (docs/products.md)."""
    if version != V2:
        return [
            path("products/accounts", AccountProductListView.as_view(), name="account-products")
        ]
    return [
        path("products/accounts", AccountProductListCreateView.as_view(), name="account-products"),
        path(
            "products/accounts/<id:productRid>",
            AccountProductDetailView.as_view(),
            name="account-product",
        ),
    ]


def program_funding_urls(version: str):
    """v2 only, as the decisioning endpoints whose just-in-time programs they fund
    (docs/decisioning.md)."""
    if version != V2:
        return []
    return [
        path(
            "program-funding-accounts",
            ProgramFundingAccountListView.as_view(),
            name="program-funding-accounts",
        ),
        path(
            "program-funding-accounts/adjustments",
            ProgramFundingAdjustmentsView.as_view(),
            name="program-funding-adjustments",
        ),
        path(
            "program-funding-accounts/<id:accountId>",
            ProgramFundingAccountDetailView.as_view(),
            name="program-funding-account",
        ),
    ]


def account_urls(version: str):
    """Built when `config.urls` asks (after `api.urls` has registered the `id` converter)."""
    return (
        product_urls(version)
        + program_funding_urls(version)
        + [
            path("accounts", AccountListView.as_view(), name="accounts"),
            path("accounts/<id:accountId>", AccountDetailView.as_view(), name="account"),
            path(
                "accounts/<id:accountId>/balances", AccountBalancesView.as_view(), name="balances"
            ),
            path(
                "accounts/<id:accountId>/adjustments",
                AccountAdjustmentsView.as_view(),
                name="adjustments",
            ),
            path("account-lookups", AccountLookupView.as_view(), name="account-lookups"),
            path("fees", FeeListView.as_view(), name="fees"),
            path("fees/<id:feeId>", FeeDetailView.as_view(), name="fee"),
            path("holds", HoldListView.as_view(), name="holds"),
            path("holds/<id:holdId>", HoldDetailView.as_view(), name="hold"),
            path("holds/<id:holdId>/captures", HoldCapturesView.as_view(), name="hold-captures"),
        ]
    )
